//! The data every method writes (docs/design.md §2.5): incompressible, not dedupable, generated
//! before any timing, and held in bounded buffers reused across the file.
//!
//! # What a file holds
//!
//! Each file of each run has a [`Stream`]: a key, hashed from the seed and the file's
//! name (which names the case, the run and the file, so every run and every file has a
//! stream of its own), and a period `P` of at most [`PERIOD`]. The byte at file offset
//! `o` is `pattern[o mod P]`, where `pattern` is the seed's [`PERIOD`] bytes of
//! xoshiro256++ output, except that the first [`STAMP`] bytes of every 4 KiB file block
//! `b` are XORed with `tag(key, b)`, one SplitMix64 step of `key ^ b`.
//!
//! No two 4 KiB blocks of a run are equal, so deduplicating storage (ZFS dedup, VDO,
//! btrfs dedupe, arrays that compare before they write) has nothing to fold: blocks at
//! different places in the period differ in their 4 KiB of random bytes; blocks at the
//! same place in one file differ in their tags, because `b -> tag(key, b)` is a
//! bijection; in different files or runs the keys differ, and two tags meet with a
//! probability of about 2^-64 per pair of blocks. What is not defeated: dedup by content
//! chunks smaller than 4 KiB and not aligned to blocks would still find the 4088 bytes
//! that repeat every period. `P` is a multiple of the page size, so an aligned file
//! offset has an aligned source in memory, as O_DIRECT needs.
//!
//! # How it is written without generating data in the timed span
//!
//! Every writer (a thread's part) has a buffer of its own ([`Writer`]): its period of
//! the pattern, then a tail as long as its longest call, so that a call starting
//! anywhere in the period reads contiguous memory (the tail continues the pattern). A
//! [`Cursor`] hands out `[pos, pos + len)` for the next `len` file bytes; each 4 KiB
//! block of the buffer remembers which file block it is stamped for, and a block that
//! now stands for another (the cursor went round the period since) gets its 8 bytes
//! XORed with the old tag and the new one. That is a compare per block and one hash and
//! an 8-byte XOR per block and lap: the hot loops stay a `pwrite` from a buffer. Per
//! writer, because threads writing one file are at different blocks at the same
//! position of the period, and file-per-thread files have different keys.
//!
//! # Requests in flight
//!
//! A block must not be re-stamped while a request still reads it. Calls that return
//! before the next one is made (write, pwrite, fwrite, the mmap copies, a whole
//! writev/pwritev batch, which is taken in one piece) have nothing in flight.
//! io_uring keeps up to `qd` requests in flight, completed in any order:
//! [`Cursor::take_in_flight`] refuses a range that would re-stamp a block the oldest
//! request in flight may still read, so the driver waits for completions instead; and
//! so that it seldom has to, the writer's period is at least twice the bytes of the
//! other `qd - 1` requests (plus two blocks).
//!
//! # Memory
//!
//! The writers of a run share [`WRITERS_BUDGET`]: a writer's period is
//! `min(PERIOD, WRITERS_BUDGET / writers)` (8 MiB up to 8 writers, 656 KiB at 100),
//! rounded up to a page, but at least `2 × (qd - 1) × call + 8 KiB` for io_uring (1 MiB
//! at 128 × 4 KiB); above [`PERIOD`] it is rounded to a multiple of it, and the stream's
//! period stays [`PERIOD`]. Each writer adds its tail (one call: `chunk × iov`). The
//! buffers are made for a run, before it, and given back after it, kept for the next
//! run's writers of the same length (`writer::spare`): the full suite's 100 io_uring
//! threads at 128 × 4 KiB take 100 × 1 MiB.
//!
//! Under `--source memory` ([`Shape::from_memory`], docs/measurement.md) a writer's
//! period is instead its part's length, up to its share of 1 GiB, and the buffers are
//! flushed from the CPU caches after they are stamped ([`Streams::evict`]).

use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::{SplitMix64, Xoshiro256PlusPlus};

/// The pages a writer's buffer is made of (`crate::huge` says how much they matter).
pub use plan::Pages;
use plan::data_source::MEMORY_BUDGET;

mod writer;

pub use writer::{Cursor, Streams, Writer};

/// The longest period of the pattern. Far above any filesystem's compression window
/// (btrfs compresses 128 KiB extents), and a multiple of every page size.
pub const PERIOD: usize = 8 << 20;

/// The unit in which no two pieces of a run are equal, and that every stamp marks.
pub const BLOCK: usize = 4096;

/// Bytes at the start of every block that carry its tag.
pub const STAMP: usize = 8;

/// The periods of one run's writers together, unless io_uring's requests in flight
/// need more (see the module doc).
pub const WRITERS_BUDGET: usize = 64 << 20;

/// The seed's pattern: [`PERIOD`] bytes of pseudo-random data that every stream of the
/// run is made from. Made once; read-only.
pub struct Source {
    seed: u64,
    pattern: Box<[u8]>,
}

impl Source {
    pub fn new(seed: u64) -> Source {
        let mut pattern = vec![0u8; PERIOD].into_boxed_slice();
        fill_pattern(seed, &mut pattern);
        Source { seed, pattern }
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The first `period` bytes of the pattern.
    pub fn pattern(&self, period: usize) -> &[u8] {
        &self.pattern[..period]
    }
}

/// The [`PERIOD`] bytes of the pattern for `seed`.
pub fn fill_pattern(seed: u64, out: &mut [u8]) {
    Xoshiro256PlusPlus::seed_from_u64(seed).fill_bytes(out);
}

/// What one file of one run holds (see the module doc): a key and a period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stream {
    key: u64,
    period: usize,
}

impl Stream {
    /// The stream a timed run writes into the file `name`.
    pub fn timed(seed: u64, name: &str, period: usize) -> Stream {
        Stream::new(seed, "timed", name, period)
    }

    /// The stream the `overwrite` state fills the file `name` with before the run: not
    /// the one the run then writes.
    pub fn prefill(seed: u64, name: &str, period: usize) -> Stream {
        Stream::new(seed, "prefill", name, period)
    }

    fn new(seed: u64, role: &str, name: &str, period: usize) -> Stream {
        assert!(period > 0 && period % BLOCK == 0 && period <= PERIOD, "a stream's period is whole blocks");
        let text: Vec<u8> = role.bytes().chain([0]).chain(name.bytes()).collect();
        let mut key = mix(seed ^ text.len() as u64);
        for word in text.chunks(8) {
            let mut bytes = [0u8; 8];
            bytes[..word.len()].copy_from_slice(word);
            key = mix(key ^ u64::from_le_bytes(bytes));
        }
        Stream { key, period }
    }

    pub fn period(&self) -> usize {
        self.period
    }

    /// The tag XORed into the first bytes of file block `block`.
    #[inline]
    pub fn tag(&self, block: u64) -> u64 {
        mix(self.key ^ block)
    }

    /// Writes into `out` the bytes of this stream at file offsets `offset..`.
    pub fn fill(&self, source: &Source, offset: u64, out: &mut [u8]) {
        let pattern = source.pattern(self.period);
        let mut done = 0;
        while done < out.len() {
            let position = ((offset + done as u64) % self.period as u64) as usize;
            let run = (self.period - position).min(out.len() - done);
            out[done..done + run].copy_from_slice(&pattern[position..position + run]);
            done += run;
        }
        // The stamps: the first STAMP bytes of every block that `out` reaches, clipped
        // to `out` where a block starts before it or its stamp ends after it.
        let end = offset + out.len() as u64;
        let mut block = offset / BLOCK as u64;
        while block * (BLOCK as u64) < end {
            let start = block * BLOCK as u64;
            let tag = self.tag(block).to_le_bytes();
            let (from, to) = (start.max(offset), (start + STAMP as u64).min(end));
            for at in from..to {
                out[(at - offset) as usize] ^= tag[(at - start) as usize];
            }
            block += 1;
        }
    }

    /// Checks `data`, read from file offset `offset`, against the stream. Returns the
    /// file offset of the first wrong byte.
    pub fn first_mismatch(&self, source: &Source, offset: u64, data: &[u8]) -> Option<u64> {
        const PIECE: usize = 1 << 16;
        let mut expected = vec![0u8; PIECE.min(data.len())];
        let mut done = 0;
        while done < data.len() {
            let actual = &data[done..(done + PIECE).min(data.len())];
            let expected = &mut expected[..actual.len()];
            let at = offset + done as u64;
            self.fill(source, at, expected);
            // Slice equality is a memcmp; only a piece that differs is searched byte by byte.
            if expected != actual {
                let index = expected.iter().zip(actual).position(|(a, b)| a != b).unwrap_or(0);
                return Some(at + index as u64);
            }
            done += actual.len();
        }
        None
    }
}

/// One SplitMix64 step: a bijection of 64-bit words that scatters its input.
#[inline]
fn mix(word: u64) -> u64 {
    SplitMix64::seed_from_u64(word).next_u64()
}

/// What a run's buffers must hold: how many writers, the longest piece one call takes
/// from the source, and for methods with requests in flight, the bytes the others may
/// still hold while one more is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub writers: usize,
    pub max_take: usize,
    pub in_flight: usize,
    /// Under `--source memory`: the bytes of the longest part, which its writer's buffer
    /// holds without wrapping (up to its share of [`MEMORY_BUDGET`]); 0 for a buffer
    /// reused lap after lap.
    pub streamed: usize,
    pub pages: Pages,
}

impl Shape {
    /// `queue_depth` is `Some` for methods that keep requests in flight (io_uring).
    pub fn new(writers: u32, chunk: u64, iov: u32, queue_depth: Option<u32>, bytes: u64) -> Shape {
        // A vectored call takes its iovecs in one piece; a call never exceeds the size.
        let call = chunk.saturating_mul(u64::from(iov.max(1))).min(bytes).max(1) as usize;
        let others = queue_depth.map_or(0, |depth| depth.max(1) as usize - 1);
        let in_flight = call.saturating_mul(others).min(bytes as usize);
        Shape { writers: writers.max(1) as usize, max_take: call, in_flight, streamed: 0, pages: Pages::Ordinary }
    }

    /// The same writers with buffers of these pages.
    pub fn with_pages(self, pages: Pages) -> Shape {
        Shape { pages, ..self }
    }

    /// The same writers streaming their data from memory (`--source memory`): each
    /// buffer as long as the longest part, `part_bytes`, so that no byte of it is read
    /// twice in a run, up to the writers' share of [`MEMORY_BUDGET`] (a buffer that wraps
    /// then is still far larger than any last-level cache).
    pub fn from_memory(self, part_bytes: u64) -> Shape {
        Shape { streamed: usize::try_from(part_bytes).unwrap_or(usize::MAX).max(1), ..self }
    }

    /// Each writer's period (see the module doc): a multiple of the page size, and of
    /// [`PERIOD`] when above it.
    pub fn period(&self) -> usize {
        let page = page_size().max(BLOCK);
        let share = if self.streamed > 0 {
            self.streamed.min(MEMORY_BUDGET / self.writers)
        } else {
            (WRITERS_BUDGET / self.writers).min(PERIOD)
        };
        let room = if self.in_flight > 0 { 2 * self.in_flight + 2 * BLOCK } else { 0 };
        let period = round_up(share.max(room).max(page), page);
        if period > PERIOD { round_up(period, PERIOD) } else { period }
    }

    /// The period of the streams the writers write: theirs, up to [`PERIOD`].
    pub fn stream_period(&self) -> usize {
        self.period().min(PERIOD)
    }
}

pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 { size as usize } else { 4096 }
}

fn round_up(value: usize, multiple: usize) -> usize {
    value.div_ceil(multiple) * multiple
}

#[cfg(test)]
mod tests {
    use super::*;
    use plan::DEFAULT_SEED;
    use std::collections::HashSet;

    #[test]
    fn same_seed_same_bytes_other_seed_other_bytes() {
        let mut a = vec![0u8; 4096];
        let mut b = vec![0u8; 4096];
        let mut c = vec![0u8; 4096];
        fill_pattern(1, &mut a);
        fill_pattern(1, &mut b);
        fill_pattern(2, &mut c);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn data_is_not_trivially_compressible() {
        let source = Source::new(DEFAULT_SEED);
        let mut bytes = vec![0u8; 4096];
        Stream::timed(DEFAULT_SEED, "f", PERIOD).fill(&source, 0, &mut bytes);
        let mut seen = [0usize; 256];
        for &byte in &bytes {
            seen[byte as usize] += 1;
        }
        // Uniform bytes: every value appears, none dominates (expected 16 each).
        assert!(seen.iter().all(|&count| count > 0 && count < 64), "{seen:?}");
    }

    #[test]
    fn no_two_blocks_of_two_files_over_several_periods_are_equal() {
        let source = Source::new(3);
        let period = 64 << 10;
        let mut blocks = HashSet::new();
        for name in ["case0000-run0-f0.dat", "case0000-run0-f1.dat", "case0000-run1-f0.dat"] {
            let mut data = vec![0u8; 5 * period + 100];
            Stream::timed(3, name, period).fill(&source, 0, &mut data);
            for block in data.chunks_exact(BLOCK) {
                assert!(blocks.insert(block.to_vec()), "{name}: a block repeats");
            }
            // Only the stamps tell the laps apart: the rest of each block repeats.
            assert_eq!(data[STAMP..BLOCK], data[period + STAMP..period + BLOCK]);
        }
    }

    #[test]
    fn fill_is_the_pattern_with_the_first_bytes_of_each_block_stamped() {
        let source = Source::new(5);
        let stream = Stream::timed(5, "x", 2 * BLOCK);
        let mut data = vec![0u8; 5 * BLOCK];
        stream.fill(&source, 0, &mut data);
        let pattern = source.pattern(2 * BLOCK);
        for (block, bytes) in data.chunks(BLOCK).enumerate() {
            let position = block % 2 * BLOCK;
            let tag = stream.tag(block as u64).to_le_bytes();
            for index in 0..BLOCK {
                let stamp = if index < STAMP { tag[index] } else { 0 };
                assert_eq!(bytes[index], pattern[position + index] ^ stamp, "block {block} byte {index}");
            }
        }
        // Any piece, from any offset, is the same bytes (the stamps cut in two included).
        for (offset, len) in [(3, 10), (BLOCK - 2, 7), (BLOCK + 5, 3 * BLOCK), (4 * BLOCK + 7, 1)] {
            let mut piece = vec![0u8; len];
            stream.fill(&source, offset as u64, &mut piece);
            assert_eq!(piece, data[offset..offset + len], "{offset}+{len}");
        }
    }

    #[test]
    fn a_mismatch_is_reported_at_its_file_offset_and_a_wrong_stamp_is_one() {
        let source = Source::new(3);
        let stream = Stream::timed(3, "a", PERIOD);
        let offset = PERIOD as u64 * 2 + 100;
        let mut data = vec![0u8; 300_000];
        stream.fill(&source, offset, &mut data);
        assert_eq!(stream.first_mismatch(&source, offset, &data), None);
        data[123_456] ^= 1;
        assert_eq!(stream.first_mismatch(&source, offset, &data), Some(offset + 123_456));
        // Another run's stream differs in the stamps only, and that is seen.
        let other = Stream::timed(3, "b", PERIOD);
        let mut theirs = vec![0u8; 3 * BLOCK];
        other.fill(&source, BLOCK as u64, &mut theirs);
        let bad = stream.first_mismatch(&source, BLOCK as u64, &theirs).unwrap();
        assert!(bad < BLOCK as u64 + STAMP as u64, "{bad}");
    }

    #[test]
    fn prefill_and_timed_streams_of_one_file_differ() {
        let (timed, prefill) = (Stream::timed(1, "f", PERIOD), Stream::prefill(1, "f", PERIOD));
        assert_ne!(timed, prefill);
        assert_ne!(timed.tag(0), prefill.tag(0));
        assert_ne!(Stream::timed(1, "f", PERIOD), Stream::timed(2, "f", PERIOD));
    }

    #[test]
    fn periods_share_the_budget_and_leave_room_for_requests_in_flight() {
        let page = page_size().max(BLOCK);
        // One writer of 1 MiB calls: the whole period.
        let one = Shape::new(1, 1 << 20, 1, None, 1 << 30);
        assert_eq!((one.period(), one.max_take, one.stream_period()), (PERIOD, 1 << 20, PERIOD));
        // 16 writers share the budget; a vectored call is taken whole.
        let sixteen = Shape::new(16, 4096, 128, None, 1 << 30);
        assert_eq!((sixteen.period(), sixteen.max_take), (WRITERS_BUDGET / 16, 512 << 10));
        // 100 io_uring writers at 128 x 4 KiB: twice the other requests, not the share.
        let uring = Shape::new(100, 4096, 1, Some(128), 409_600_000);
        assert_eq!(uring.period(), round_up(2 * 127 * 4096 + 2 * BLOCK, page));
        assert!(uring.period() * uring.writers <= 105 << 20);
        // More in flight than the pattern: a multiple of it; the stream keeps PERIOD.
        let deep = Shape::new(1, 1 << 20, 1, Some(128), 1 << 30);
        assert_eq!((deep.period(), deep.stream_period()), (32 * PERIOD, PERIOD));
        // One request at a time holds nothing back: a call of 1 GiB needs no more.
        assert_eq!(Shape::new(1, 1 << 30, 1, Some(1), 1 << 30).period(), PERIOD);
        // A call is never longer than the size.
        assert_eq!(Shape::new(1, 1 << 30, 4, None, 5000).max_take, 5000);
        for writers in [1, 3, 7, 100, 1024] {
            let period = Shape::new(writers, 4096, 1, Some(2), 1 << 20).period();
            assert_eq!(period % page, 0, "{writers}");
            assert!(period >= 2 * 4096 + 2 * BLOCK, "{writers}");
        }
    }

    #[test]
    fn streaming_from_memory_holds_each_part_once_up_to_the_memory_budget() {
        let page = page_size().max(BLOCK);
        // A part of 1 GiB from one writer: a buffer of all of it, the stream's period kept.
        let whole = Shape::new(1, 1 << 20, 1, None, 1 << 30).from_memory(1 << 30);
        assert_eq!((whole.period(), whole.stream_period()), (1 << 30, PERIOD));
        // A part of 1 MiB + 1 byte: its pages, no more (a period of its own).
        let small = Shape::new(1, 4096, 1, None, (1 << 20) + 1).from_memory((1 << 20) + 1);
        assert_eq!(small.period(), round_up((1 << 20) + 1, page));
        // Parts of 4 GiB from 4 writers: the budget shared, each a multiple of PERIOD.
        let big = Shape::new(4, 1 << 20, 1, None, 16 << 30).from_memory(4 << 30);
        assert_eq!(big.period(), MEMORY_BUDGET / 4);
        assert_eq!(big.period() % PERIOD, 0);
        // io_uring's room for requests in flight still counts where it is more.
        let uring = Shape::new(1, 1 << 20, 1, Some(128), 1 << 30).from_memory(64 << 20);
        assert_eq!(uring.period(), 32 * PERIOD);
        // The cached shape is untouched by the choice's existence.
        assert_eq!(Shape::new(1, 1 << 20, 1, None, 1 << 30).streamed, 0);
    }
}
