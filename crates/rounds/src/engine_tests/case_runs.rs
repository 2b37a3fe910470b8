//! A case's runs driven as `run` drives them, by the rounds' `run_case` (a warm-up and
//! the runs through the scheduler), on real files: every engine writes its stream, the
//! files are removed, mmap's refusals and the stonewall. They live above `measure`, which
//! knows nothing of the rounds (measure/case_runs/tests.rs tests its parts alone).

use crate::run_case;
use executors::case_runs::RunSettings;
use executors::case_runs::test_settings as settings;
use measure::source::{Shape, Source, Stream};
use measure::target::Scratch;
use plan::catalog;
use plan::{Case, Durability, FileState, Layout};
use result::Status;

#[test]
fn every_method_writes_its_stream_including_a_short_last_chunk() {
    let parent = tempfile::tempdir().unwrap();
    let scratch = Scratch::create(parent.path()).unwrap();
    let source = Source::new(9);
    let size = 3 * 4096 + 1000; // not a multiple of the chunk
    // Every write method (creation methods write no data).
    for (index, method) in catalog::native().iter().filter(|m| m.creation.is_none()).enumerate() {
        // pwritev2-append appends, so only to an empty file.
        let state = if method.sized_file_refusal().is_some() { FileState::Empty } else { FileState::Overwrite };
        let case = Case::new(method, state, 4096, 3, Durability::End, size);
        let result = run_case(index, &case, &scratch, &source, &settings(true), &mut || {});
        if method.name == "pwritev2-atomic" && result.status == Status::Unsupported {
            // Atomic writes need a unit statx offers, and 4 KiB x3 calls are no power of two.
            assert!(result.error.as_deref().unwrap_or("").contains("statx"), "{:?}", result.error);
            continue;
        }
        assert_eq!(result.status, Status::Ok, "{}: {:?}", method.name, result.error);
        assert_eq!(result.runs.len(), 2, "warm-up runs are discarded");
        let name = format!("case{index:04}-run2-f0.dat");
        let data = std::fs::read(scratch.path().join(&name)).unwrap();
        assert_eq!(data.len() as u64, size, "{}", method.name);
        let stream = Stream::timed(
            9,
            &name,
            Shape::new(case.threads, case.chunk_bytes, case.iov, case.queue_depth, case.bytes).stream_period(),
        );
        assert_eq!(stream.first_mismatch(&source, 0, &data), None, "{}", method.name);
    }
}

#[test]
fn durability_none_has_zero_sync_time_and_files_are_removed() {
    let parent = tempfile::tempdir().unwrap();
    let scratch = Scratch::create(parent.path()).unwrap();
    let source = Source::new(9);
    let case = Case::new(catalog::by_name("pwrite").unwrap(), FileState::Empty, 4096, 1, Durability::None, 1 << 16);
    let mut calls = 0;
    let result = run_case(0, &case, &scratch, &source, &settings(false), &mut || calls += 1);
    assert_eq!(calls, 3);
    assert!(result.runs.iter().all(|run| run.sync_seconds == 0.0 && run.write_seconds > 0.0));
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0);
}

#[test]
fn mmap_refuses_the_empty_state_with_the_reason() {
    let parent = tempfile::tempdir().unwrap();
    let scratch = Scratch::create(parent.path()).unwrap();
    let source = Source::new(9);
    for method in ["mmap", "mmap-maps", "mmap-fds", "mmap-populate"] {
        let case = Case::new(catalog::by_name(method).unwrap(), FileState::Empty, 4096, 1, Durability::End, 8192);
        let result = run_case(0, &case, &scratch, &source, &settings(false), &mut || {});
        assert_eq!(result.status, Status::Unsupported, "{method}");
        let reason = result.error.unwrap();
        assert!(reason.contains("mmap cannot extend a file") && reason.contains("sparse state"), "{reason}");
        let sparse = Case { state: FileState::Sparse, ..case };
        let result = run_case(0, &sparse, &scratch, &source, &settings(false), &mut || {});
        assert!(result.status == Status::Ok || method == "mmap-populate", "{method}: {:?}", result.error);
    }
}

#[test]
fn stonewalled_writers_stop_after_their_first_call_at_the_latest_and_record_their_bytes() {
    let parent = tempfile::tempdir().unwrap();
    let scratch = Scratch::create(parent.path()).unwrap();
    let source = Source::new(9);
    let size = 64 << 20;
    // A wall of 1 ns has passed before any check: every writer makes its one first call
    // (a writer always writes something), then stops. Each engine that can stop does.
    let stopped = RunSettings { stonewall: Some(std::time::Duration::from_nanos(1)), ..settings(false) };
    let engines = ["pwrite", "write", "writev", "pwritev", "pwritev2", "fwrite", "mmap", "mmap-maps", "io_uring"];
    for (index, name) in engines.into_iter().enumerate() {
        let threads = if name == "write" || name == "writev" || name == "fwrite" { 1 } else { 2 };
        // A map cannot extend a file: the mapped methods start from a sized one.
        let state = if name.starts_with("mmap") { FileState::Sparse } else { FileState::Empty };
        let case = Case::new(catalog::by_name(name).unwrap(), state, 1 << 20, 1, Durability::End, size)
            .with_threads(threads, Layout::OneFile);
        // io_uring with 4 requests in flight: none goes in past the wall.
        let case = if name == "io_uring" { case.with_queue_depth(4) } else { case };
        let result = run_case(index, &case, &scratch, &source, &stopped, &mut || {});
        assert_eq!(result.status, Status::Ok, "{name}: {:?}", result.error);
        for run in &result.runs {
            let wall = run.stonewall.as_ref().expect("a stonewalled run says what it wrote");
            // One call, chunk or request of 1 MiB each (fwrite's handed to stdio whole).
            let per_writer: u64 = 1 << 20;
            assert_eq!(wall.writer_bytes, vec![per_writer; threads as usize], "{name}");
            assert_eq!(
                (wall.bytes, wall.of_bytes, wall.stopped),
                (per_writer * threads as u64, size, threads),
                "{name}"
            );
            // The figure divides the case's bytes by the span scaled up to them.
            let scale = size as f64 / wall.bytes as f64;
            assert!((run.write_time() / run.write_seconds - scale).abs() < 1e-9 * scale, "{name}");
        }
    }
    // A wall far away: nobody is stopped, every part is written whole.
    let far = RunSettings { stonewall: Some(std::time::Duration::from_secs(3600)), ..settings(false) };
    let case = Case::new(catalog::by_name("pwrite").unwrap(), FileState::Empty, 4096, 1, Durability::End, 1 << 20)
        .with_threads(2, Layout::OneFile);
    let result = run_case(19, &case, &scratch, &source, &far, &mut || {});
    for run in &result.runs {
        let wall = run.stonewall.as_ref().unwrap();
        assert_eq!((wall.bytes, wall.stopped, wall.writer_bytes.clone()), (1 << 20, 0, vec![1 << 19; 2]));
        assert_eq!(run.write_time(), run.write_seconds);
    }
    // mmap-populate faults its whole part in first: refused, with the reason.
    let populate = catalog::by_name("mmap-populate").unwrap();
    let mmap = Case::new(populate, FileState::Sparse, 1 << 20, 1, Durability::End, size);
    let refused = run_case(20, &mmap, &scratch, &source, &stopped, &mut || {});
    assert_eq!(refused.status, Status::Unsupported);
    let why = refused.error.unwrap();
    assert!(why.contains("--stonewall: mmap-populate cannot stop at the wall: it faults its whole part in"), "{why}");
}
