//! Bad input ends in exit status 2 and one clear line: never a panic, never a backtrace.

mod common;

use common::{stderr_of, writebench};

fn assert_usage_error(args: &[&str], expected: &str) {
    let output = writebench(args);
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: one line expected, got:\n{stderr}");
    assert!(stderr.starts_with("writebench: "), "{args:?}: {stderr}");
    assert!(stderr.contains(expected), "{args:?}: expected '{expected}' in: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(output.stdout.is_empty(), "{args:?}: nothing on stdout for bad input");
}

#[test]
fn bad_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    for (size, expected) in [
        ("12XB", "unknown unit 'XB'"),
        ("abc", "invalid size 'abc'"),
        ("0", "at least 1 byte"),
        ("1.5B", "whole number of bytes"),
        ("99999999999TiB", "too large"),
    ] {
        assert_usage_error(&["run", path, "--size", size], expected);
    }
    assert_usage_error(&["run", path, "--size=-5MiB"], "invalid size '-5MiB'");
    assert_usage_error(&["run", path, "--size", "-5MiB"], "unexpected argument '-5'");
    assert_usage_error(&["run", path, "--chunks", "4KiB,zz"], "invalid size 'zz'");
    assert_usage_error(&["run", path, "--chunks", "2MiB", "--size", "1MiB"], "larger than --size");
}

#[test]
fn unknown_methods_states_and_options() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    assert_usage_error(&["run", path, "--methods", "write,mmap_private"], "unknown method 'mmap_private'");
    assert_usage_error(&["run", path, "--methods", ""], "empty item");
    assert_usage_error(&["run", path, "--states", "full"], "unknown state 'full'");
    assert_usage_error(&["run", path, "--durability", "always"], "unknown durability 'always'");
    assert_usage_error(&["run", path, "--iov", "0"], "out of range");
    assert_usage_error(&["run", path, "--repeat", "many"], "invalid value 'many'");
    assert_usage_error(&["run", path, "--suite", "huge"], "invalid value 'huge'");
    assert_usage_error(&["run", path, "--no-such-option"], "unexpected argument '--no-such-option'");
    assert_usage_error(&["fly"], "unrecognized subcommand 'fly'");
}

#[test]
fn missing_or_unusable_paths() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("does-not-exist");
    assert_usage_error(&["run", missing.to_str().unwrap()], "No such file or directory");
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    assert_usage_error(&["run", file.to_str().unwrap()], "is not a directory");
    let export = dir.path().join("no-dir").join("r.json");
    assert_usage_error(
        &["run", dir.path().to_str().unwrap(), "--export-json", export.to_str().unwrap()],
        "does not exist",
    );
    // Nothing was created while refusing.
    assert_eq!(common::entries(dir.path()), vec!["a-file"]);
}

#[test]
fn help_and_version_succeed() {
    let help = writebench(&["run", "--help"]);
    assert_eq!(help.status.code(), Some(0));
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("Examples:") && text.contains("--export-csv"), "{text}");
    let version = writebench(&["--version"]);
    assert_eq!(version.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("writebench "));
}

#[test]
fn malformed_command_lines_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let file = file.to_str().unwrap();
    let missing = dir.path().join("missing");
    let missing = missing.to_str().unwrap();
    let table: &[&[&str]] = &[
        &["run", path, "--size", ""],
        &["run", path, "--size", "MiB"],
        &["run", path, "--size", "1..5MiB"],
        &["run", path, "--size", "0.1B"],
        &["run", path, "--size", "18446744073709551616"],
        &["run", path, "--size", "17179869184GiB"],
        &["run", path, "--size", "1 PiB"],
        &["run", path, "--size", "1e6"],
        &["run", path, "--chunks", ""],
        &["run", path, "--chunks", ","],
        &["run", path, "--chunks", "4KiB,"],
        &["run", path, "--chunks", "0B"],
        &["run", path, "--chunks", "1GiB,2GiB"],
        &["run", path, "--chunks", "8MiB", "--size", "4MiB"],
        &["run", path, "--iov", "1025"],
        &["run", path, "--iov", "-1"],
        &["run", path, "--iov", "1,2,x"],
        &["run", path, "--iov", "99999999999999999999999"],
        &["run", path, "--threads", "0"],
        &["run", path, "--threads", "1025"],
        &["run", path, "--threads", "1.5"],
        &["run", path, "--threads", ""],
        &["run", path, "--qd", "4097"],
        &["run", path, "--qd", "0"],
        &["run", path, "--qd", "32768"],
        &["run", path, "--layout", "one-file,striped"],
        &["run", path, "--layout", ""],
        &["run", path, "--methods", "WRITE"],
        &["run", path, "--methods", "write,,pwrite"],
        &["run", path, "--methods", " , "],
        &["run", path, "--states", "empty,dense"],
        &["run", path, "--durability", "fsync-each"],
        &["run", path, "--repeat", "0"],
        &["run", path, "--repeat", "1000001"],
        &["run", path, "--repeat", "-3"],
        &["run", path, "--repeat", "4294967296"],
        &["run", path, "--warmup", "1000001"],
        &["run", path, "--warmup", "x"],
        &["run", path, "--seed", "-1"],
        &["run", path, "--seed", "18446744073709551616"],
        &["run", path, "--suite", "slow"],
        &["run", path, "--size"],
        &["run", path, path],
        &["run", file],
        &["run", missing],
        &["run", "/proc/self/comm"],
        &["run", path, "--export-json", path],
        &["run", path, "--export-csv", "/nonexistent-dir/r.csv"],
        &["run", path, "--export-json"],
        &["run", path, "--unknown"],
        &["clean", file],
        &["clean", missing],
        &["clean", path, "--force"],
        &["walk"],
    ];
    assert!(table.len() >= 40);
    for args in table {
        let output = writebench(args);
        let stderr = stderr_of(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: one line expected, got:\n{stderr}");
        assert!(stderr.starts_with("writebench: "), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked") && !stderr.contains("backtrace"), "{args:?}: {stderr}");
    }
    assert_eq!(common::entries(dir.path()), vec!["a-file"], "nothing created while refusing");
}
