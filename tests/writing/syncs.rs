//! Who syncs what, seen by strace: with a file per thread each writer syncs its own
//! file; `every:N` counts the calls of the case across its threads; mmap's fsync modes
//! add an fsync to msync and its fdatasync modes do not.

use crate::common;

use common::{Tmpfs, Traced, read_json};
use std::collections::BTreeSet;

/// Runs `writebench run DIR ARGS` (one run per case, not verified) under strace.
fn trace(dir: &std::path::Path, calls: &str, args: &[&str]) -> (Vec<Traced>, serde_json::Value) {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let mut argv = vec!["run", dir.to_str().unwrap()];
    argv.extend_from_slice(args);
    argv.extend_from_slice(&["--repeat", "1", "--warmup", "0", "--no-verify", "--export-json", json.to_str().unwrap()]);
    let (calls, output) = common::strace(calls, &argv);
    assert!(output.status.success(), "writebench under strace failed: {}", common::stderr_of(&output));
    (calls, read_json(&json))
}

fn assert_all_ok(result: &serde_json::Value) {
    for case in result["cases"].as_array().unwrap() {
        assert_eq!(case["status"], "ok", "{}: {}", case["id"], case["error"]);
    }
}

/// The main thread: the one that made the first traced call (the duration probe, before
/// any writer thread exists).
fn main_tid(calls: &[Traced]) -> u32 {
    calls.first().expect("traced calls").tid
}

#[test]
fn with_a_file_per_thread_each_writer_fsyncs_its_own_file() {
    let fs = Tmpfs::mount("64M");
    let args = ["--methods", "pwrite,write", "--states", "empty", "--chunks", "64KiB", "--size", "1MiB"];
    let (calls, result) =
        trace(&fs.path(), "fsync", &[&args[..], &["--threads", "3", "--layout", "file-per-thread"]].concat());
    assert_all_ok(&result);
    let main = main_tid(&calls);
    for case in 0..2 {
        let mut syncers = BTreeSet::new();
        for file in 0..3 {
            let name = format!("case{case:04}-run0-f{file}.dat>");
            // Preparing the file fsyncs it too, from the main thread, before the run.
            let writers: Vec<u32> =
                calls.iter().filter(|c| c.line.contains(&name) && c.tid != main).map(|c| c.tid).collect();
            assert_eq!(writers.len(), 1, "{name}: one fsync from a writer thread, not the main one");
            syncers.insert(writers[0]);
        }
        assert_eq!(syncers.len(), 3, "case {case}: each file by its own writer");
    }
}

/// fdatasync calls made by writer threads in a run of 64 pwrite calls by 2 threads into
/// one file under `mode`.
fn writer_syncs(mode: &str) -> usize {
    let fs = Tmpfs::mount("64M");
    let args = ["--methods", "pwrite", "--states", "empty", "--chunks", "4KiB", "--size", "256KiB"];
    let mode_args = ["--threads", "2", "--layout", "one-file", "--durability", mode];
    let (calls, result) = trace(&fs.path(), "fdatasync", &[&args[..], &mode_args].concat());
    assert_all_ok(&result);
    let main = main_tid(&calls);
    calls.iter().filter(|c| c.tid != main && c.line.contains(".dat>")).count()
}

#[test]
fn every_n_counts_the_calls_of_the_case_across_its_threads() {
    assert_eq!(writer_syncs("every-fdatasync:4"), 16, "64 calls, a sync every 4");
    // 64 = 10 x 6 + 4: ten syncs, and one for the four calls left (not one per thread).
    assert_eq!(writer_syncs("every-fdatasync:6"), 11);
    assert_eq!(writer_syncs("every-fdatasync:64"), 1, "one sync for 64 calls, not one per thread");
}

/// For each msync of the mmap case's file, the next traced call of the same thread.
fn after_each_msync(mode: &str) -> Vec<String> {
    let fs = Tmpfs::mount("64M");
    let args = ["--methods", "mmap", "--states", "sparse", "--chunks", "64KiB", "--size", "1MiB"];
    let (calls, result) = trace(
        &fs.path(),
        "msync,fsync,fdatasync,munmap",
        &[&args[..], &["--threads", "1", "--durability", mode]].concat(),
    );
    assert_all_ok(&result);
    // The duration probe writes through a mapping too, before the case: its msync ends
    // with the fsync of its own file (probe-mapped), the last call naming a probe file.
    let case_from = calls.iter().rposition(|c| c.line.contains("/probe-")).map_or(0, |probe| probe + 1);
    let mut next = Vec::new();
    for (index, call) in calls.iter().enumerate().skip(case_from).filter(|(_, c)| c.line.starts_with("msync(")) {
        let following = calls[index + 1..].iter().find(|c| c.tid == call.tid).map(|c| c.line.clone());
        next.push(following.unwrap_or_default());
    }
    next
}

#[test]
fn mmap_every_n_adds_an_fsync_to_msync_and_every_fdatasync_n_does_not() {
    // 16 chunks, a sync every 4 chunks: 4 msyncs each time.
    let fsync = after_each_msync("every:4");
    assert_eq!(fsync.len(), 4, "{fsync:?}");
    assert!(fsync.iter().all(|next| next.starts_with("fsync(") && next.contains("case0000-run0-f0.dat>")), "{fsync:?}");
    let fdatasync = after_each_msync("every-fdatasync:4");
    assert_eq!(fdatasync.len(), 4, "{fdatasync:?}");
    // msync is the data sync itself; what follows is the next msync, or munmap.
    assert!(fdatasync.iter().all(|next| !next.starts_with("fsync(")), "{fdatasync:?}");
}
