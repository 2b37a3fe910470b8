//! Unit tests of a case's runs, with the mock executor (`executor::Mock`) and real files.

use super::test_settings as settings;
use super::*;
use measure::executor::{Cpu, Interval, Mock, PartTimes};
use plan::Layout;

#[test]
fn split_covers_the_size_at_chunk_boundaries() {
    // 10 chunks of 100 over 3 threads: 4, 3, 3 chunks; the last is 50 bytes short.
    let parts = split(950, 100, 3, 1);
    assert_eq!(
        parts,
        vec![
            Part { file: 0, offset: 0, len: 400 },
            Part { file: 0, offset: 400, len: 300 },
            Part { file: 0, offset: 700, len: 250 },
        ]
    );
    let per_file = split(950, 100, 3, 3);
    assert_eq!(
        per_file.iter().map(|p| (p.file, p.offset, p.len)).collect::<Vec<_>>(),
        vec![(0, 0, 400), (1, 0, 300), (2, 0, 250)]
    );
    assert_eq!(split(5, 4096, 1, 1), vec![Part { file: 0, offset: 0, len: 5 }]);
    // More threads than chunks: the extra threads get nothing (the plan avoids this).
    assert_eq!(split(100, 100, 2, 1)[1].len, 0);
}

#[test]
fn ranks_shares_cover_the_size_once_at_chunk_boundaries() {
    let pwrite = catalog::by_name("pwrite").unwrap();
    let size = 10 * 4096 + 100;
    for layout in plan::RankLayout::ALL {
        let case = Case::new(pwrite, FileState::Prealloc, 4096, 1, Durability::End, size)
            .with_threads(2, Layout::OneFile)
            .with_ranks(3, layout);
        let shares: Vec<Share> = (0..3).map(|rank| Share::of_rank(&case, rank, 3)).collect();
        let total: u64 = shares.iter().flat_map(|s| &s.parts).map(|p| p.len).sum();
        assert_eq!(total, size, "{layout:?}: every byte once");
        if layout == plan::RankLayout::SharedFile {
            // One file: the ranks' ranges follow each other without a gap or an overlap.
            let mut ranges: Vec<(u64, u64)> =
                shares.iter().flat_map(|s| &s.parts).map(|p| (p.offset, p.offset + p.len)).collect();
            ranges.sort();
            assert!(ranges.windows(2).all(|pair| pair[0].1 == pair[1].0), "{ranges:?}");
            assert!(ranges.iter().all(|r| r.0 % 4096 == 0));
            assert_eq!((ranges[0].0, ranges[5].1), (0, size));
            assert!(shares.iter().all(|s| s.file_lens == [size] && s.shape == shares[0].shape));
            assert_eq!(shares.iter().map(|s| s.joins).collect::<Vec<_>>(), [false, true, true]);
        } else {
            // A file per rank, from offset 0, its threads sharing it.
            assert!(
                shares
                    .iter()
                    .all(|s| s.parts[0].offset == 0 && s.file_lens[0] == s.parts.iter().map(|p| p.len).sum::<u64>())
            );
            assert_eq!(shares[2].suffix, "-rank2");
        }
    }
}

fn part(start: f64, end: f64, synced: Option<f64>, user: f64, sys: f64) -> PartTimes {
    PartTimes { start, end, synced, cpu: Some(Cpu { user, sys }), written: None }
}

/// One run of a two-thread pwrite case into real files, with the times `execution`
/// says instead of measured ones.
fn run_with(execution: Execution, files: u32, durability: Durability) -> Run {
    let parent = tempfile::tempdir().unwrap();
    let scratch = Scratch::create(parent.path()).unwrap();
    let source = Source::new(9);
    let settings = settings(false);
    let case = Case::new(catalog::by_name("pwrite").unwrap(), FileState::Empty, 4096, 1, durability, 8192)
        .with_threads(2, if files > 1 { Layout::FilePerThread } else { Layout::OneFile });
    let parts = split(case.bytes, case.chunk_bytes, case.threads, case.files);
    let file_lens = if files > 1 { vec![4096, 4096] } else { vec![8192] };
    let executor = Box::new(Mock(execution));
    let work = WriteCase {
        case: &case,
        parts,
        file_lens,
        shape: shape_of(&case),
        shared: false,
        joins: false,
        executor,
        scratch: &scratch,
        source: &source,
        device: None,
        settings: &settings,
    };
    let mut runs =
        WriteRuns { work, files: RunFiles::new(&scratch, "case0000".into(), files, false), last_written: None };
    let run = runs.run_once(0).unwrap();
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0, "the run's files are removed");
    run
}

fn close_enough(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn one_file_write_span_is_first_start_to_last_end_and_closing_after_the_sync_is_sync_time() {
    let execution = Execution {
        setup_seconds: 0.25,
        lead_seconds: 0.25,
        parts: vec![part(1.0, 3.0, None, 0.1, 0.2), part(1.125, 2.5, None, 0.3, 0.4)],
        sync: Some(Interval { start: 3.25, end: 4.0 }),
        close: Some(Interval { start: 4.0, end: 4.5 }),
        cpu: Some(Cpu { user: 0.01, sys: 0.02 }),
        ring: None,
        ranks: Vec::new(),
    };
    let run = run_with(execution, 1, Durability::End);
    assert!(close_enough(run.write_seconds, 2.0), "{run:?}");
    // The sync (0.75) and the munmap that had to wait for it (0.5): not write time.
    assert!(close_enough(run.sync_seconds, 1.25), "{run:?}");
    assert_eq!(run.thread_seconds, [2.0, 1.5]);
    assert_eq!(run.setup_seconds, 0.25);
    assert!(close_enough(run.user_seconds.unwrap(), 0.41) && close_enough(run.sys_seconds.unwrap(), 0.62), "{run:?}");
    // A new file's one span: the open and create (real, short) before the executor's
    // call, its lead (0.25), the writes (2.0; not the writers' start, 1.0, as the write
    // span); durable: on through the sync and the munmap (1.25) and the directory's fsync.
    let new_file = run.new_file_seconds.unwrap();
    assert!((2.25..2.45).contains(&new_file), "{run:?}");
    let durable = run.new_file_durable_seconds.unwrap();
    assert!((1.25..1.45).contains(&(durable - new_file)), "{run:?}");
    assert_eq!(run.prepare_sync_seconds, None, "no fsync of a new file's preparation");
    assert!(run.prepare_seconds.unwrap() < new_file - 2.25 + 1e-9, "{run:?}");
}

#[test]
fn file_per_thread_sync_span_runs_from_the_last_write_to_the_last_sync() {
    let execution = Execution {
        setup_seconds: 0.0,
        lead_seconds: 0.0,
        // Part 0 ends last (3.0); part 1 ends first but its sync returns last (4.0).
        parts: vec![part(1.0, 3.0, Some(3.5), 0.0, 0.0), part(1.0, 2.5, Some(4.0), 0.0, 0.0)],
        sync: None,
        close: None,
        cpu: Some(Cpu::default()),
        ring: None,
        ranks: Vec::new(),
    };
    let run = run_with(execution, 2, Durability::End);
    assert!(close_enough(run.write_seconds, 2.0) && close_enough(run.sync_seconds, 1.0), "{run:?}");
}

#[test]
fn without_a_sync_closing_steps_end_the_write_span() {
    let execution = Execution {
        setup_seconds: 0.0,
        lead_seconds: 0.0,
        parts: vec![part(0.5, 1.0, None, 0.0, 0.0), part(0.5, 1.5, None, 0.0, 0.0)],
        sync: None,
        close: Some(Interval { start: 1.5, end: 1.75 }),
        cpu: Some(Cpu::default()),
        ring: None,
        ranks: Vec::new(),
    };
    let run = run_with(execution, 1, Durability::None);
    assert!(close_enough(run.write_seconds, 1.25) && run.sync_seconds == 0.0, "{run:?}");
    // No sync, no durable span; the closing steps are in the new file's span.
    assert!((1.25..1.45).contains(&run.new_file_seconds.unwrap()), "{run:?}");
    assert_eq!(run.new_file_durable_seconds, None);
}
