//! Failures are results, not numbers (docs/design.md §2.6), and the exit status says whether
//! anything was measured.

use crate::common;

use common::{LoopFs, Tmpfs, entries, read_json, stderr_of, writebench};

#[test]
fn enospc_on_a_small_tmpfs_is_a_failed_case_without_throughput() {
    let tmpfs = Tmpfs::mount("8m");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let csv = out.path().join("r.csv");
    let output = writebench(&[
        "run",
        tmpfs.path().to_str().unwrap(),
        "--size",
        "64MiB",
        // The run could not fit and would be refused up front: this is about the failure.
        "--no-space-check",
        "--methods",
        "write,pwritev",
        "--states",
        "empty",
        "--chunks",
        "1MiB",
        "--iov",
        "4",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--threads",
        "1",
        // The quick suite's durability part (direct+end, odsync) would add cases.
        "--durability",
        "end",
        "--export-json",
        json.to_str().unwrap(),
        "--export-csv",
        csv.to_str().unwrap(),
    ]);
    // No case succeeded: exit status 1 (item 9).
    assert_eq!(output.status.code(), Some(1), "{}", stderr_of(&output));
    let result = read_json(&json);
    let cases = result["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    for case in cases {
        assert_eq!(case["status"], "failed");
        let error = case["error"].as_str().unwrap();
        assert!(error.contains("No space left on device"), "{error}");
        assert!(case["stats"].is_null() && case["durable_stats"].is_null());
        assert_eq!(case["runs"].as_array().unwrap().len(), 0);
    }
    assert_eq!(entries(&tmpfs.path()), Vec::<String>::new(), "the scratch directory is gone");
    // Said in the header, with the OS's words, though no case was measured.
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("not measured: 2 strategies") && stdout.contains("No space left on device"), "{stdout}");
    let csv = std::fs::read_to_string(&csv).unwrap();
    assert_eq!(csv.lines().count(), 3, "header + one row per failed case:\n{csv}");
}

#[test]
fn unsupported_preallocation_is_reported_and_the_other_cases_still_run() {
    // ext2 has no extents, so fallocate(2) answers EOPNOTSUPP: the prealloc state is
    // unsupported there, while the same write into an empty file works.
    let fs = LoopFs::make("ext2", 32);
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let output = writebench(&[
        "run",
        fs.path().to_str().unwrap(),
        "--size",
        "1MiB",
        "--methods",
        "pwrite",
        "--states",
        "empty,prealloc",
        "--chunks",
        "64KiB",
        "--repeat",
        "2",
        "--warmup",
        "0",
        "--threads",
        "1",
        "--durability",
        "end",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    // Some case succeeded: exit status 0 (item 9).
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let result = read_json(&json);
    assert_eq!(result["target"]["fs_type"], "ext2");
    let cases = result["cases"].as_array().unwrap();
    assert_eq!(cases[0]["state"], "empty");
    assert_eq!(cases[0]["status"], "ok");
    assert_eq!(cases[0]["runs"].as_array().unwrap().len(), 2);
    assert_eq!(cases[1]["state"], "prealloc");
    assert_eq!(cases[1]["status"], "unsupported");
    let error = cases[1]["error"].as_str().unwrap();
    assert!(error.contains("fallocate") && error.contains("Operation not supported"), "{error}");
    assert!(cases[1]["stats"].is_null());
    assert_eq!(entries(&fs.path()), vec!["lost+found"], "only what mkfs made is left");
}

#[test]
fn a_mapped_write_that_would_not_fit_fails_instead_of_dying_of_sigbus() {
    // A page fault with no space left raises SIGBUS, which would kill writebench with
    // no result and leave the scratch directory behind; the mmap methods check the
    // free space first and fail the case with ENOSPC like write(2) would.
    let tmpfs = Tmpfs::mount("8m");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let output = writebench(&[
        "run",
        tmpfs.path().to_str().unwrap(),
        "--size",
        "64MiB",
        // The run could not fit and would be refused up front: this is about the failure.
        "--no-space-check",
        "--methods",
        "mmap,mmap-maps,mmap-fds,mmap-populate",
        "--states",
        "sparse",
        "--chunks",
        "1MiB",
        "--threads",
        "1,2",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr_of(&output));
    let cases = read_json(&json)["cases"].as_array().unwrap().clone();
    assert_eq!(cases.len(), 4 * 2, "4 methods x 1 or 2 threads");
    for case in &cases {
        assert_eq!(case["status"], "failed", "{}", case["id"]);
        let error = case["error"].as_str().unwrap();
        assert!(error.contains("SIGBUS") && error.contains("No space left on device"), "{error}");
    }
    assert_eq!(entries(&tmpfs.path()), Vec::<String>::new(), "the scratch directory is gone");
}

#[test]
fn a_device_that_fails_writeback_fails_the_case_at_fsync_and_the_error_is_not_masked() {
    // A 256 MiB ext4 image on a 48 MiB tmpfs: ext4 accepts 64 MiB into the page cache,
    // then the loop device cannot store the writeback and fsync reports it (EIO, or
    // ENOSPC as the loop driver passes it on); the journal aborts and ext4 goes
    // read-only, so the run's own cleanup fails too and must not hide the first error.
    // (48 MiB: the duration probe's 32 MiB must fit; `discard` gives them back after.)
    let backing = Tmpfs::mount("48m");
    let fs = LoopFs::make_in(&backing.path(), "ext4", 256, "loop,discard");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let output = writebench(&[
        "run",
        fs.path().to_str().unwrap(),
        "--methods",
        "write,pwrite",
        "--states",
        "empty",
        "--chunks",
        "1MiB",
        "--size",
        "64MiB",
        "--threads",
        "1",
        "--durability",
        "end",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(1), "nothing was measured: {stderr}");
    let result = read_json(&json);
    let cases = result["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    for case in cases {
        assert_eq!(case["status"], "failed", "{case}");
        assert!(case["stats"].is_null() && case["runs"].as_array().is_none_or(|r| r.is_empty()), "{case}");
    }
    // Rounds are shuffled: whichever case ran first met the failing writeback.
    let errors: Vec<&str> = cases.iter().map(|case| case["error"].as_str().unwrap()).collect();
    let first = errors.iter().find(|error| error.starts_with("fsync"));
    let first = first.unwrap_or_else(|| panic!("the first error is the writeback's, not the cleanup's: {errors:?}"));
    assert!(first.contains("(os error 5)") || first.contains("(os error 28)"), "{first}");
    // The scratch directory cannot be removed from a read-only filesystem: said, not hidden.
    assert!(stderr.contains("could not remove scratch directory"), "{stderr}");
}
