//! io_uring's own write paths: every:N as fsyncs linked to the write that completes
//! each batch (counted in the result, since strace sees `io_uring_enter` but not its
//! SQEs), registered files and SQPOLL; every case's data read back (`--verify`).

use crate::common;

use common::{LoopFs, run_result};

/// 250 calls of 4 KiB: 125 per thread with two, at chunk boundaries.
const CALLS: u64 = 250;
const SIZE: &str = "1024000";

/// The cases of `run_result` on `dir` with `args` after the common ones.
fn cases(dir: &std::path::Path, args: &[&str]) -> Vec<serde_json::Value> {
    let mut all = vec!["--size", SIZE, "--chunks", "4KiB", "--states", "empty", "--repeat", "2", "--warmup", "0"];
    all.extend_from_slice(&["--verify", "--layout", "one-file"]);
    all.extend_from_slice(args);
    let (result, _) = run_result(dir, &all);
    result["cases"].as_array().unwrap().clone()
}

/// every:N into one file: a linked fsync per N calls of the case, one fsync on its own
/// for the calls left at the end, none cancelled on a healthy filesystem.
fn check_every(cases: &[serde_json::Value], where_: &str) {
    assert_eq!(cases.len(), 2 * 2 * 2, "{where_}: 2 modes x 2 thread counts x 2 depths");
    for case in cases {
        let id = case["id"].as_str().unwrap();
        assert_eq!(case["status"], "ok", "{where_} {id}: {}", case["error"]);
        let durability = case["durability"].as_str().unwrap();
        let n: u64 = durability.rsplit(':').next().unwrap().parse().unwrap();
        let datasync = durability.starts_with("every-fdatasync");
        for run in case["runs"].as_array().unwrap() {
            let ring = &run["ring"];
            assert_eq!(ring["linked_fsyncs"], CALLS / n, "{where_} {id}: {ring}");
            assert_eq!(ring["linked_writes"], CALLS / n, "{where_} {id}: {ring}");
            assert_eq!(ring["fsyncs"], u64::from(CALLS % n != 0), "{where_} {id}: {ring}");
            assert_eq!(ring["cancelled_fsyncs"], 0, "{where_} {id}: {ring}");
            let flags: Vec<&str> = ring["sqe_flags"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
            assert!(flags.contains(&"IOSQE_IO_LINK"), "{where_} {id}: {flags:?}");
            assert_eq!(flags.contains(&"IORING_FSYNC_DATASYNC"), datasync, "{where_} {id}: {flags:?}");
            assert_eq!(run["sync_seconds"], 0.0, "{where_} {id}: every:N syncs inside the write span");
        }
    }
}

const EVERY: [&str; 8] =
    ["--methods", "io_uring", "--durability", "every:4,every-fdatasync:3", "--threads", "1,2", "--qd", "1,32"];

#[test]
fn every_n_through_io_uring_links_its_fsyncs_and_writes_every_byte_on_tmpfs() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    check_every(&cases(dir.path(), &EVERY), "tmpfs");
}

#[test]
fn every_n_through_io_uring_links_its_fsyncs_and_writes_every_byte_on_ext4() {
    let fs = LoopFs::make("ext4", 64);
    check_every(&cases(&fs.path(), &EVERY), "ext4");
}

#[test]
fn every_n_through_io_uring_with_a_file_per_thread_counts_the_case_and_writes_every_byte() {
    // Each writer links fsyncs to its own file's writes; the count is the case's, so
    // the linked fsyncs are as many as one thread makes, and each file with calls not
    // yet synced at its end gets one fsync of its own.
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let args = ["--methods", "io_uring", "--durability", "every:4", "--threads", "2", "--qd", "1,32"];
    let mut all = vec!["--size", SIZE, "--chunks", "4KiB", "--states", "empty", "--repeat", "2", "--warmup", "0"];
    all.extend_from_slice(&["--verify", "--layout", "file-per-thread"]);
    all.extend_from_slice(&args);
    let (result, _) = run_result(dir.path(), &all);
    let cases = result["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    for case in cases {
        assert_eq!(case["status"], "ok", "{}: {}", case["id"], case["error"]);
        for run in case["runs"].as_array().unwrap() {
            let ring = &run["ring"];
            assert_eq!(ring["linked_fsyncs"], CALLS / 4, "{}: {ring}", case["id"]);
            assert!(ring["fsyncs"].as_u64().unwrap() <= 2, "{}: {ring}", case["id"]);
        }
    }
}

#[test]
fn strace_sees_io_uring_enter_and_no_sync_call_from_the_writer_only_the_recorded_linked_fsyncs() {
    // The SQEs are not in strace's view: the fsyncs go through io_uring_enter, and the
    // result's counts say how many were linked. No fdatasync(2) on the case's file: the
    // untimed sync between runs is an fsync.
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let args = [
        "run",
        dir.path().to_str().unwrap(),
        "--methods",
        "io_uring",
        "--durability",
        "every-fdatasync:5",
        "--size",
        SIZE,
        "--chunks",
        "4KiB",
        "--qd",
        "32",
        "--threads",
        "1",
        "--states",
        "empty",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--export-json",
        json.to_str().unwrap(),
    ];
    let (calls, output) = common::strace("io_uring_enter,fdatasync", &args);
    assert!(output.status.success(), "{}", common::stderr_of(&output));
    let result = common::read_json(&json);
    let ring = &result["cases"][0]["runs"][0]["ring"];
    assert_eq!(ring["linked_fsyncs"], CALLS / 5, "{ring}");
    // The estimate's probe (`probe-*` files) times fdatasync(2) itself; the case's file
    // gets none.
    let direct: Vec<&str> = calls
        .iter()
        .map(|call| call.line.as_str())
        .filter(|line| line.starts_with("fdatasync(") && !line.contains("/probe-"))
        .collect();
    assert!(direct.is_empty(), "the syncs are SQEs, not calls: {direct:?}");
    let enters = calls.iter().filter(|call| call.line.starts_with("io_uring_enter(")).count() as u64;
    // Each batch waits for its fsync: at least one io_uring_enter per linked fsync.
    assert!(enters >= CALLS / 5, "{enters} io_uring_enter calls");
}

#[test]
fn registered_files_and_sqpoll_are_cases_like_the_others_verified_and_recorded() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let args = [
        "--methods",
        "io_uring,io_uring-regfile,io_uring-sqpoll",
        "--durability",
        "none,end,every:8",
        "--threads",
        "1,2",
        "--qd",
        "32",
    ];
    let cases = cases(dir.path(), &args);
    assert_eq!(cases.len(), 3 * 3 * 2);
    let mut sqpoll_total: std::collections::BTreeMap<String, f64> = std::collections::BTreeMap::new();
    for case in &cases {
        let id = case["id"].as_str().unwrap();
        let method = case["method"].as_str().unwrap();
        if case["status"] == "unsupported" {
            // SQPOLL may be forbidden here: then the kernel's words say so.
            assert_eq!(method, "io_uring-sqpoll", "{id}");
            assert!(case["error"].as_str().unwrap().contains("SQPOLL"), "{id}: {}", case["error"]);
            continue;
        }
        assert_eq!(case["status"], "ok", "{id}: {}", case["error"]);
        for run in case["runs"].as_array().unwrap() {
            let ring = &run["ring"];
            let flags: Vec<&str> = ring["sqe_flags"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
            assert_eq!(flags.contains(&"IOSQE_FIXED_FILE"), method == "io_uring-regfile", "{id}: {flags:?}");
            assert_eq!(flags.contains(&"IORING_SETUP_SQPOLL"), method == "io_uring-sqpoll", "{id}: {flags:?}");
            let sqpoll_cpu = ring["sqpoll_cpu_seconds"].as_f64();
            assert_eq!(sqpoll_cpu.is_some(), method == "io_uring-sqpoll", "{id}: {ring}");
            // The polling thread works for the writer: it has CPU time of its own. A
            // run of 1 MiB can fall under the clock's grain, so it is summed per case.
            if let Some(seconds) = sqpoll_cpu {
                assert!(seconds >= 0.0, "{id}: {ring}");
                *sqpoll_total.entry(id.to_string()).or_insert(0.0) += seconds;
            }
            match case["durability"].as_str().unwrap() {
                // end: one IORING_OP_FSYNC on the one file, in the sync span.
                "end" => assert_eq!(ring["fsyncs"], 1, "{id}: {ring}"),
                "every:8" => assert_eq!(ring["linked_fsyncs"], CALLS / 8, "{id}: {ring}"),
                _ => assert_eq!(ring["linked_fsyncs"], 0, "{id}: {ring}"),
            }
        }
    }
    for (id, seconds) in &sqpoll_total {
        assert!(*seconds > 0.0, "{id}: the polling thread used no CPU in any run");
    }
}
