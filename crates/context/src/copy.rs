//! The memory-copy ceiling per size class (docs/measurement.md, "The memory-copy ceiling
//! at a case's size"). A buffered write of a file of N bytes copies the writer's source
//! (its data period, at most 8 MiB, read round and round) into N bytes of page cache: a
//! small file's copy stays in the CPU caches and runs faster than a copy into a buffer
//! larger than them. So the copy is measured at a few destination sizes, the classes,
//! each from a source of at most 8 MiB, as a writer's is; a case is held against the
//! class at or above its bytes (`Calibration::copy_rates`).

use std::hint::black_box;
use std::sync::Barrier;
use std::time::Instant;

use serde::{Deserialize, Serialize};

/// The longest source a copy reads: the native writers' data period (docs/measurement.md).
pub const SOURCE: usize = 8 << 20;
/// The largest piece a copy call takes, as a large write hands the kernel.
const PIECE: usize = 1 << 20;
/// The smallest class: a smaller file is held against it (docs/measurement.md).
pub const SMALLEST: u64 = 1 << 20;
/// Each class's step up from the one below, from [`SMALLEST`].
const STEP: u64 = 4;
/// The bytes a pass copies at least: a small class is copied over and over, so that a
/// pass lasts long enough (about a millisecond) for the clock reads and the threads'
/// start at the barrier to be small next to it.
const PASS_AT_LEAST: usize = 16 << 20;

/// The memory copy at one size class, best pass, bytes per second.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CopyClass {
    /// The destination's size in all (the threads share it out): the class holds the
    /// cases of up to this many bytes that no smaller class holds.
    pub bytes: u64,
    /// One thread.
    pub bytes_per_s: f64,
    /// Every CPU at once: the bytes of all threads over the span from the first start
    /// to the last end.
    pub all_bytes_per_s: f64,
}

/// The classes a calibration measures, ascending: powers of 4 from 1 MiB below
/// `largest`, then `largest` itself, and each of `case_sizes` in between, so that a
/// run's own cases each have a class of exactly their size (the ladder alone would hold
/// a 32 MiB case against a 64 MiB copy, which the caches may not help as much).
pub fn classes(largest: u64, case_sizes: &[u64]) -> Vec<u64> {
    let largest = largest.max(SMALLEST);
    let ladder = std::iter::successors(Some(SMALLEST), |&size| size.checked_mul(STEP)).take_while(|&s| s < largest);
    let mut classes: Vec<u64> = ladder
        .chain(case_sizes.iter().copied().filter(|&size| (SMALLEST..largest).contains(&size)))
        .chain([largest])
        .collect();
    classes.sort_unstable();
    classes.dedup();
    classes
}

/// Each of `classes` (ascending, bytes) copied by one thread and by `threads` at once,
/// the best of `passes` passes each. One source and one destination (the largest
/// class) serve every class and thread count: the memory this takes is the largest
/// class and the source, whatever the CPUs.
pub fn measure(classes: &[u64], threads: usize, passes: usize) -> Vec<CopyClass> {
    let threads = threads.max(1);
    let largest = classes.iter().copied().max().unwrap_or(SMALLEST) as usize;
    // Pseudo-random, not zeros: the source's pages and the destination's are all really
    // touched (faulted in) before any pass is timed.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let source: Vec<u8> = (0..SOURCE)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    let mut destination = vec![1u8; largest.max(threads * 4096)];
    let one = rates(classes, 1, passes, &source, &mut destination);
    let all = if threads > 1 { rates(classes, threads, passes, &source, &mut destination) } else { one.clone() };
    classes
        .iter()
        .zip(one.iter().zip(&all))
        .map(|(&bytes, (&one, &all))| CopyClass { bytes, bytes_per_s: one, all_bytes_per_s: all })
        .collect()
}

/// How `threads` threads copy a class: each its slice of the destination, in pieces,
/// from the start of the source, `laps` times over.
#[derive(Debug, Clone, Copy)]
struct Shape {
    slice: usize,
    piece: usize,
    source: usize,
    laps: usize,
}

impl Shape {
    fn new(class: u64, threads: usize) -> Shape {
        let slice = (class as usize / threads / 4096 * 4096).max(4096);
        let piece = slice.min(PIECE);
        let slice = slice / piece * piece;
        // A writer reads no more of its period than it writes: a file smaller than the
        // period reads that much of it.
        let source = slice.min(SOURCE);
        let laps = (class as usize).max(PASS_AT_LEAST).div_ceil(slice * threads);
        Shape { slice, piece, source, laps }
    }
}

/// The best pass of each class, `threads` threads at once, in bytes per second.
fn rates(classes: &[u64], threads: usize, passes: usize, source: &[u8], destination: &mut [u8]) -> Vec<f64> {
    let shapes: Vec<Shape> = classes.iter().map(|&class| Shape::new(class, threads)).collect();
    let region = destination.len() / threads;
    let barrier = Barrier::new(threads);
    let spans: Vec<Vec<(Instant, Instant)>> = std::thread::scope(|scope| {
        let workers: Vec<_> = destination
            .chunks_exact_mut(region)
            .take(threads)
            .map(|mine| {
                let (barrier, shapes) = (&barrier, &shapes);
                scope.spawn(move || {
                    let mut spans = Vec::with_capacity(shapes.len() * passes);
                    for shape in shapes {
                        let mine = &mut mine[..shape.slice];
                        for _ in 0..passes {
                            barrier.wait();
                            let start = Instant::now();
                            let mut from = 0;
                            for _ in 0..shape.laps {
                                for piece in mine.chunks_exact_mut(shape.piece) {
                                    piece.copy_from_slice(&source[from..from + shape.piece]);
                                    from = (from + shape.piece) % shape.source;
                                }
                                // Every lap's stores are kept: none may be skipped as
                                // overwritten by the next.
                                black_box(&mut *mine);
                            }
                            spans.push((start, Instant::now()));
                        }
                    }
                    spans
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("a copying thread does not panic")).collect()
    });
    shapes
        .iter()
        .enumerate()
        .map(|(class, shape)| {
            let copied = (shape.slice * threads * shape.laps) as f64;
            (class * passes..(class + 1) * passes)
                .map(|pass| {
                    let start = spans.iter().map(|s| s[pass].0).min().expect("one thread at least");
                    let end = spans.iter().map(|s| s[pass].1).max().expect("one thread at least");
                    copied / end.duration_since(start).as_secs_f64().max(1e-9)
                })
                .fold(0.0, f64::max)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;

    #[test]
    fn the_classes_climb_by_four_to_the_largest_and_take_in_the_cases_sizes() {
        assert_eq!(classes(64 * MIB, &[]), [MIB, 4 * MIB, 16 * MIB, 64 * MIB]);
        assert_eq!(classes(256 * MIB, &[]), [MIB, 4 * MIB, 16 * MIB, 64 * MIB, 256 * MIB]);
        // A run's sizes between get classes of their own; smaller and larger ones do not
        // (the smallest and the largest class hold them), nor do repeats.
        let sizes = [32 * MIB, 16 * MIB, 4096, GIB, 32 * MIB, 3 * MIB];
        assert_eq!(classes(64 * MIB, &sizes), [MIB, 3 * MIB, 4 * MIB, 16 * MIB, 32 * MIB, 64 * MIB]);
        assert_eq!(classes(6 * MIB, &[]), [MIB, 4 * MIB, 6 * MIB]);
        assert_eq!(classes(4096, &[]), [MIB]);
    }

    #[test]
    fn a_shape_copies_the_class_from_a_source_no_larger_than_it_in_pieces_that_fit() {
        let small = Shape::new(MIB, 2);
        assert_eq!((small.slice, small.piece, small.source), (512 << 10, 512 << 10, 512 << 10));
        assert_eq!(small.laps * small.slice * 2, PASS_AT_LEAST, "a pass copies 16 MiB at least");
        let large = Shape::new(256 * MIB, 2);
        assert_eq!((large.slice, large.piece, large.source, large.laps), (128 << 20, PIECE, SOURCE, 1));
        let many = Shape::new(MIB, 1024);
        assert_eq!((many.slice, many.piece), (4096, 4096));
    }

    #[test]
    fn every_class_is_measured_in_order_at_one_thread_and_at_all() {
        let measured = measure(&[MIB, 4 * MIB], 2, 2);
        assert_eq!(measured.iter().map(|c| c.bytes).collect::<Vec<_>>(), [MIB, 4 * MIB]);
        for class in &measured {
            // Anything from an old laptop to a large server: 0.5 to 1000 GB/s.
            assert!((0.5e9..1000e9).contains(&class.bytes_per_s), "{class:?}");
            assert!((0.5e9..2000e9).contains(&class.all_bytes_per_s), "{class:?}");
        }
    }
}
