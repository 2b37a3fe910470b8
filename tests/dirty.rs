//! Dirty memory around each run: recorded before and after, and a run that starts
//! while much earlier data still waits for writeback says so. One test, in order, so
//! that the quiet part cannot run beside the dirty one.

mod common;

use std::process::Command;

use common::{Tmpfs, case_line, run_result};

/// A run on `dir` of `size` in 1 MiB calls; returns the case and the table's line.
fn run_on(dir: &std::path::Path, size: &str) -> (serde_json::Value, String) {
    let args = ["--methods", "write", "--states", "overwrite", "--chunks", "1MiB", "--threads", "1"];
    let (result, stdout) =
        run_result(dir, &[&args[..], &["--durability", "none", "--size", size, "--repeat", "3"]].concat());
    (result["cases"][0].clone(), case_line(&stdout))
}

#[test]
fn a_run_that_starts_with_much_dirty_data_says_so_and_a_quiet_one_does_not() {
    let tmpfs = Tmpfs::mount("256m");
    // Quiet: whatever earlier tests left dirty is written back first. tmpfs pages are
    // never counted as dirty, so the run itself adds nothing.
    assert!(Command::new("sync").status().unwrap().success());
    let (case, line) = run_on(&tmpfs.path(), "64MiB");
    for run in case["runs"].as_array().unwrap() {
        for key in ["dirty_before_bytes", "writeback_before_bytes", "dirty_after_bytes", "writeback_after_bytes"] {
            assert!(run[key].as_u64().is_some(), "runs[].{key}: {run}");
        }
    }
    // Only the dirty note is asked after: another program busy on the CPU beside the
    // test (a build) is its own note, and says nothing of dirty memory.
    assert!(!line.contains("dirty"), "{line}");

    // Dirty: 256 MiB written into the page cache of a file on the machine's disk and not
    // synced (below the background writeback threshold, it waits there for up to 30 s).
    let disk = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let file = disk.path().join("dirty.dat");
    let status = Command::new("dd")
        .args(["if=/dev/zero", "bs=1M", "count=256", "status=none"])
        .arg(format!("of={}", file.display()))
        .status()
        .expect("dd(1) is needed for this test");
    assert!(status.success());
    let (case, line) = run_on(&tmpfs.path(), "4MiB");
    std::fs::remove_file(&file).unwrap();
    let first = &case["runs"][0];
    let waiting = first["dirty_before_bytes"].as_u64().unwrap() + first["writeback_before_bytes"].as_u64().unwrap();
    assert!(waiting > 64 << 20, "the first run started with {waiting} bytes dirty");
    assert!(line.contains("started with up to"), "{line}");
    assert!(line.contains("dirty (earlier writeback overlapped)"), "{line}");
}
