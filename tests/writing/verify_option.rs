//! `--verify` reads every run's files back after the timed span: it passes for every
//! method and layout, and a byte changed between the write and the check fails the
//! case with that byte's offset.

use crate::common;

use common::{entries, read_json, stderr_of, writebench};

const METHODS: &str =
    "write,pwrite,writev,pwritev,fwrite,mmap,mmap-maps,mmap-fds,mmap-populate,io_uring,io_uring-fixed";

#[test]
fn verify_passes_for_every_method_state_and_layout() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let output = writebench(&[
        "run",
        dir.path().to_str().unwrap(),
        "--size",
        "3000000", // not a multiple of the chunk: a short last call
        "--methods",
        METHODS,
        "--states",
        "empty,sparse,overwrite",
        "--chunks",
        "64KiB",
        "--iov",
        "4",
        "--threads",
        "1,2",
        "--qd",
        "8",
        "--durability",
        "end",
        "--repeat",
        "1",
        "--warmup",
        "1",
        "--verify",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let result = read_json(&json);
    assert_eq!(result["options"]["verify"], true);
    let cases = result["cases"].as_array().unwrap();
    for method in METHODS.split(',') {
        assert!(cases.iter().any(|c| c["method"] == method), "{method} has a case");
    }
    assert!(cases.iter().any(|c| c["files"] == 2), "a file-per-thread case");
    for case in cases {
        let method = case["method"].as_str().unwrap();
        if method.starts_with("mmap") && case["state"] == "empty" {
            // A map cannot extend a file: refused with the reason, not measured as sparse.
            assert_eq!(case["status"], "unsupported", "{}", case["id"]);
            assert!(case["error"].as_str().unwrap().contains("which is the sparse state"), "{}", case["error"]);
            continue;
        }
        assert_eq!(case["status"], "ok", "{}: {}", case["id"], case["error"]);
    }
    assert_eq!(entries(dir.path()), Vec::<String>::new());
}

#[test]
fn a_corrupted_byte_fails_the_case_with_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let output = writebench(&[
        "run",
        dir.path().to_str().unwrap(),
        "--size",
        "1MiB",
        "--methods",
        "pwrite,mmap",
        "--states",
        "sparse",
        "--chunks",
        "64KiB",
        "--threads",
        "1",
        "--durability",
        "end",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--verify",
        "--corrupt-for-test",
        "654321",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr_of(&output));
    let cases = read_json(&json)["cases"].as_array().unwrap().clone();
    assert_eq!(cases.len(), 2);
    for case in &cases {
        assert_eq!(case["status"], "failed");
        let error = case["error"].as_str().unwrap();
        assert!(error.contains("first at offset 654321"), "{error}");
    }
    assert_eq!(entries(dir.path()), Vec::<String>::new());
}

#[test]
fn the_quick_suite_verifies_unless_told_not_to() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let path = dir.path().to_str().unwrap();
    let common = [
        "--size",
        "256KiB",
        "--methods",
        "pwrite",
        "--states",
        "empty",
        "--durability",
        "end",
        "--repeat",
        "1",
        "--warmup",
        "0",
    ];
    for (extra, verify) in [(None, true), (Some("--no-verify"), false)] {
        let mut args = vec!["run", path, "--export-json", json.to_str().unwrap()];
        args.extend_from_slice(&common);
        args.extend(extra);
        let output = writebench(&args);
        assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
        assert_eq!(read_json(&json)["options"]["verify"], verify);
    }
    let seed = writebench(&["run", path, "--suite", "seed", "--verify", "--no-verify"]);
    assert_eq!(seed.status.code(), Some(2), "--verify and --no-verify conflict");
}

/// Runs `--verify --corrupt-for-test CORRUPTION` over `args` (one run, no warm-up) and
/// returns each case's (id, status, error).
fn corrupted(args: &[&str], corruption: &str) -> Vec<(String, String, String)> {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let mut argv = vec!["run", dir.path().to_str().unwrap(), "--durability", "end", "--repeat", "1", "--warmup", "0"];
    argv.extend_from_slice(args);
    argv.extend_from_slice(&["--verify", "--corrupt-for-test", corruption, "--export-json", json.to_str().unwrap()]);
    let output = writebench(&argv);
    assert_eq!(output.status.code(), Some(1), "every case fails: {}", stderr_of(&output));
    assert_eq!(entries(dir.path()), Vec::<String>::new());
    let text = |value: &serde_json::Value| value.as_str().unwrap_or_default().to_string();
    let cases = read_json(&json)["cases"].as_array().unwrap().clone();
    assert!(!cases.is_empty());
    cases.iter().map(|case| (text(&case["id"]), text(&case["status"]), text(&case["error"]))).collect()
}

#[test]
fn a_byte_past_the_first_mib_and_the_first_period_is_found_even_in_a_stamp() {
    // 9 MiB + 3 blocks + 5: in the stamp of a block of the second lap of the period.
    let offset = (9 << 20) + 3 * 4096 + 5;
    let args = [
        "--size",
        "12MiB",
        "--methods",
        "pwrite,pwritev,mmap,io_uring",
        "--states",
        // Sized: a map cannot extend an empty file.
        "sparse",
        "--chunks",
        "1MiB",
        "--threads",
        "1",
    ];
    for (id, status, error) in corrupted(&args, &offset.to_string()) {
        assert_eq!(status, "failed", "{id}");
        assert!(
            error.contains(&format!("verify of file 0: data differs from what was written, first at offset {offset}")),
            "{id}: {error}"
        );
    }
}

#[test]
fn a_byte_of_the_second_file_of_a_run_is_found() {
    let args = [
        "--size",
        "12MiB",
        "--methods",
        "write,pwrite,io_uring",
        "--states",
        "empty",
        "--chunks",
        "1MiB",
        "--threads",
        "2",
        "--layout",
        "file-per-thread",
    ];
    // Each of the two files holds 6 MiB from offset 0; this is late in the second one.
    for (id, status, error) in corrupted(&args, "1:5000000") {
        assert_eq!(status, "failed", "{id}");
        assert!(id.contains(" f2 "), "{id}");
        assert!(
            error.contains("verify of file 1: data differs from what was written, first at offset 5000000"),
            "{id}: {error}"
        );
    }
}

#[test]
fn a_file_shorter_or_longer_than_what_was_written_fails_the_case() {
    let one_file = [
        "--size",
        "3000000",
        "--methods",
        "pwrite,mmap",
        "--states",
        "sparse,overwrite",
        "--chunks",
        "64KiB",
        "--threads",
        "1",
    ];
    for (id, status, error) in corrupted(&one_file, "short") {
        assert_eq!(status, "failed", "{id}");
        assert!(
            error.contains("verify of file 0: the file is shorter than the 3000000 bytes written"),
            "{id}: {error}"
        );
    }
    let two_files =
        ["--size", "3000000", "--methods", "pwrite", "--states", "empty", "--chunks", "64KiB", "--threads", "2"];
    let cases = corrupted(&[&two_files[..], &["--layout", "file-per-thread"]].concat(), "1:long");
    for (id, status, error) in cases {
        assert_eq!(status, "failed", "{id}");
        // 46 chunks of 64 KiB (the last one short), 23 for each thread.
        let second = 3_000_000 - 23 * 65_536;
        assert!(
            error.contains(&format!("verify of file 1: the file is longer than the {second} bytes written")),
            "{id}: {error}"
        );
    }
}
