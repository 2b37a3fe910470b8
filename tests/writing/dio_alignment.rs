//! One O_DIRECT alignment: the result file's `target.dio_*` and the alignment every
//! O_DIRECT case is checked against come from the same place, and the file says which.

use crate::common;

use common::{LoopFs, Tmpfs, read_json, stderr_of, writebench};

/// Runs direct cases of a 100-byte chunk (refused) and a 4 KiB one; returns the result.
fn direct_run(path: &std::path::Path) -> serde_json::Value {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let output = writebench(&[
        "run",
        path.to_str().unwrap(),
        "--methods",
        "pwrite",
        "--states",
        "empty",
        "--chunks",
        "100B,4KiB",
        "--size",
        "64KiB",
        "--threads",
        "1",
        "--durability",
        "direct",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    read_json(&json)
}

fn check_one_source(result: &serde_json::Value) {
    let target = &result["target"];
    let offset = target["dio_offset_align"].as_u64().unwrap_or_else(|| panic!("dio_offset_align recorded: {target}"));
    assert!(target["dio_mem_align"].as_u64().is_some(), "{target}");
    let source = target["dio_align_source"].as_str().unwrap_or_else(|| panic!("dio_align_source recorded: {target}"));
    let cases = result["cases"].as_array().unwrap();
    let refused = cases.iter().find(|c| c["chunk_bytes"] == 100).unwrap();
    assert_eq!(refused["status"], "unsupported", "{refused}");
    let error = refused["error"].as_str().unwrap();
    // The runner's reason names the alignment and the source the result file records.
    assert!(error.contains(&format!("multiples of {offset} bytes here ({source})")), "{error} vs {target}");
    let aligned = cases.iter().find(|c| c["chunk_bytes"] == 4096).unwrap();
    assert_eq!(aligned["status"], "ok", "{aligned}");
}

#[test]
fn tmpfs_records_the_alignment_the_runner_uses_and_where_it_came_from() {
    // Defect 1.14: tmpfs gives no STATX_DIOALIGN, so the file said null while the
    // runner assumed 4096.
    let fs = Tmpfs::mount("16M");
    let result = direct_run(&fs.path());
    check_one_source(&result);
    assert_eq!(result["target"]["dio_offset_align"], 4096);
    assert!(result["target"]["dio_align_source"].as_str().unwrap().starts_with("assumed 4096"));
}

#[test]
fn ext4_records_the_alignment_the_runner_uses_and_where_it_came_from() {
    let fs = LoopFs::make("ext4", 64);
    let result = direct_run(&fs.path());
    check_one_source(&result);
}
