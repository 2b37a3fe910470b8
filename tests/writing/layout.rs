//! `--layout` defaults to both layouts wherever a method has them, as its help says,
//! and a combination the user asked for that yields no case is said, not dropped
//! silently: one line each on stderr, or exit 2 when nothing is left.

use crate::common;

use common::{read_json, stderr_of, writebench};

fn run(dir: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let json = dir.join("r.json");
    let mut argv = vec!["run", dir.to_str().unwrap(), "--size", "1MiB", "--states", "empty", "--chunks", "256KiB"];
    argv.extend_from_slice(&["--durability", "none", "--repeat", "1", "--warmup", "0", "--export-json"]);
    argv.push(json.to_str().unwrap());
    argv.extend_from_slice(extra);
    writebench(&argv)
}

#[test]
fn without_layout_threads_get_both_layouts_where_the_method_has_them() {
    // Defect 1.12: writev had no case at all and pwritev only one file (the parts of
    // the quick suite but one defaulted to one file).
    let dir = tempfile::tempdir().unwrap();
    let output = run(dir.path(), &["--threads", "2", "--methods", "writev,pwritev", "--iov", "2"]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let ids: Vec<String> = read_json(&dir.path().join("r.json"))["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        ids,
        ["writev empty 256KiB x2 t2 f2 none", "pwritev empty 256KiB x2 t2 none", "pwritev empty 256KiB x2 t2 f2 none"]
    );
    // The default covers what each method has: nothing was asked that is not there.
    assert!(!stderr_of(&output).contains("no case for"), "{}", stderr_of(&output));
}

#[test]
fn a_requested_layout_a_method_cannot_do_is_said_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let output = run(dir.path(), &["--threads", "2,8", "--methods", "write,pwrite", "--layout", "one-file"]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let stderr = stderr_of(&output);
    let notes: Vec<&str> = stderr.lines().filter(|line| line.contains("no case for")).collect();
    assert_eq!(
        notes,
        [
            "writebench: no case for write with 2 threads into one file: write writes at the file position, so threads cannot share one file",
            "writebench: no case for write with 8 threads in 256 KiB chunks: 1 MiB makes only 4 calls",
            "writebench: no case for pwrite with 8 threads in 256 KiB chunks: 1 MiB makes only 4 calls",
        ]
    );
    let cases = read_json(&dir.path().join("r.json"))["cases"].as_array().unwrap().len();
    assert_eq!(cases, 1, "pwrite t2 into one file");
}

#[test]
fn nothing_left_exits_2_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let output = run(dir.path(), &["--threads", "2", "--methods", "write", "--layout", "one-file"]);
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("select no case") && stderr.contains("write writes at the file position"), "{stderr}");
    assert!(common::entries(dir.path()).is_empty());
}
