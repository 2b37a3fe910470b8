//! Device accounting: on a loop device every run says what the device was asked to
//! write, and a case that syncs at the end wrote at least its size there; on tmpfs
//! there is no block device, and the table says so.

mod common;

use common::{LoopFs, Tmpfs, case_line, run_result};

fn run_on(dir: &std::path::Path, durability: &str) -> (serde_json::Value, String) {
    let args = ["--methods", "pwrite", "--states", "empty", "--chunks", "256KiB", "--threads", "1"];
    run_result(dir, &[&args[..], &["--durability", durability, "--size", "8MiB", "--repeat", "3"]].concat())
}

#[test]
fn a_loop_device_reports_what_each_run_wrote_to_it() {
    let fs = LoopFs::make("ext4", 64);
    let (result, stdout) = run_on(&fs.path(), "end");
    let device = result["target"]["block_device"].as_str().expect("a block device under the loop mount");
    assert!(device.starts_with("loop"), "{device}");
    let target = &result["target"];
    assert!(target["block_device_parents"][0].as_str().unwrap().starts_with("backing file "));
    let queue = &target["block_queue"];
    assert!(queue["logical_block_size"].as_u64().unwrap() >= 512, "{queue}");
    assert!(queue["rotational"].is_boolean() && queue["scheduler"].is_string(), "{queue}");
    let (free, size) = (target["free_bytes"].as_u64().unwrap(), target["size_bytes"].as_u64().unwrap());
    assert!(0 < free && free < size && size <= 64 << 20, "{free} of {size}");
    let case = &result["cases"][0];
    for run in case["runs"].as_array().unwrap() {
        let io = &run["device"];
        let written = io["bytes_written"].as_u64().expect("every run has device figures");
        // An fsync at the end: the data (8 MiB) and the metadata reached the device.
        assert!(written >= 8 << 20, "{written} bytes to the device");
        assert!(io["write_ops"].as_u64().unwrap() > 0);
        assert!((0.0..=100.0).contains(&io["util_pct"].as_f64().unwrap()));
    }
    assert!(stdout.contains(&format!("device: {device}, on backing file")), "{stdout}");
    let line = case_line(&stdout);
    assert!(line.contains("to device 8."), "{line}");
}

#[test]
fn tmpfs_has_no_block_device() {
    let tmpfs = Tmpfs::mount("64m");
    let (result, stdout) = run_on(&tmpfs.path(), "none");
    assert!(result["target"]["block_device"].is_null());
    for run in result["cases"][0]["runs"].as_array().unwrap() {
        assert!(run.get("device").is_none(), "{run}");
    }
    assert!(stdout.contains(&format!("note: no block device under {}", tmpfs.path().display())), "{stdout}");
}
