//! Durability modes on real filesystems: O_DIRECT really opens with O_DIRECT (seen by
//! strace), aligned chunks write every byte, unaligned ones are refused with the reason;
//! every run has a write and a sync span, and the sync span is where it should be.

use crate::common;

use std::process::Command;

use common::{LoopFs, Tmpfs, assert_file_holds_its_stream, entries, read_json};
use writebench::measure::source::Source;

#[test]
fn direct_on_ext4_uses_o_direct_writes_aligned_chunks_and_refuses_100_bytes() {
    let fs = LoopFs::make("ext4", 256);
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let trace = out.path().join("strace.txt");
    let status = Command::new("strace")
        // -y shows the file each returned descriptor names: the timed descriptor is
        // opened through /proc/self/fd, so the path argument does not say it.
        .args(["-f", "-y", "-e", "trace=openat,fcntl", "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_writebench"))
        .args(["run", fs.path().to_str().unwrap(), "--methods", "write,pwrite,pwritev,io_uring"])
        .args(["--states", "empty,prealloc", "--chunks", "100B,512B,4KiB", "--iov", "4", "--threads", "1"])
        .args(["--size", "1MiB", "--durability", "direct,direct+end,direct+odsync"])
        .args(["--repeat", "1", "--warmup", "0", "--seed", "42", "--keep", "--export-json"])
        .arg(&json)
        .status()
        .expect("strace is needed for this test (CI installs it)");
    assert!(status.success(), "writebench under strace failed");
    let trace = std::fs::read_to_string(&trace).unwrap();
    // The opens of one file the timed run writes (not of the probe file the case opens
    // with the same flags beforehand), by exact name: as the path argument when it is
    // created, or, when reopened through /proc/self/fd, as the path `-y` prints for the
    // descriptor the open returns.
    let opens_of = |name: &str| -> Vec<&str> {
        let (quoted, returned) = (format!("\"{name}\""), format!("/{name}>"));
        trace
            .lines()
            .filter(|line| line.contains("openat(") && (line.contains(&quoted) || line.contains(&returned)))
            .collect()
    };

    let result = read_json(&json);
    let cases = result["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2 * 3 * 3 * (3 + 2), "2 states x 3 chunks x 3 modes x (3 methods + io_uring at qd 1, 32)");
    let scratch = entries(&fs.path()).into_iter().find(|n| n.starts_with(".writebench-")).expect("kept scratch");
    let scratch = fs.path().join(scratch);
    let source = Source::new(42);
    for (index, case) in cases.iter().enumerate() {
        if case["chunk_bytes"] == 100 {
            assert_eq!(case["status"], "unsupported", "{}", case["id"]);
            let error = case["error"].as_str().unwrap();
            assert!(error.contains("multiples of") && error.contains("a chunk of 100 B is not"), "{error}");
            assert!(case["stats"].is_null());
            continue;
        }
        assert_eq!(case["status"], "ok", "{}: {}", case["id"], case["error"]);
        // The timed run's file itself is opened with O_DIRECT (and O_DSYNC with odsync):
        // a new file when it is created, as a program makes it; a fully written one by a
        // second open after its prefill.
        let name = format!("case{index:04}-run0-f0.dat");
        let opens = opens_of(&name);
        let new_file = case["state"] != "overwrite";
        let direct = opens.iter().filter(|line| line.contains("O_DIRECT") && line.contains("O_CREAT") == new_file);
        let durability = case["durability"].as_str().unwrap();
        let flags_ok = |line: &&&str| line.contains("O_DSYNC") == durability.contains("odsync");
        assert_eq!(direct.filter(flags_ok).count(), 1, "{}: opens of {name}: {opens:?}", case["id"]);
        let data = assert_file_holds_its_stream(&source, &scratch, case, &format!("case{index:04}-run0-f0.dat"));
        assert_eq!(data.len(), 1 << 20, "{}", case["id"]);
    }
    assert!(result["target"]["dio_offset_align"].as_u64().is_some(), "ext4 reports its O_DIRECT alignment");
    std::fs::remove_dir_all(&scratch).unwrap();
}

#[test]
fn every_run_has_both_spans_none_has_no_sync_and_end_is_not_faster_durable() {
    let fs = Tmpfs::mount("64M");
    let json = fs.path().join("r.json");
    let output = common::writebench(&[
        "run",
        fs.path().to_str().unwrap(),
        "--methods",
        "pwrite,pwritev,mmap,io_uring",
        // Sized: a map cannot extend an empty file.
        "--states",
        "sparse",
        "--chunks",
        "64KiB",
        "--size",
        "4MiB",
        "--threads",
        "1",
        "--durability",
        "none,end,end-fdatasync,every:8,osync,direct+end",
        "--repeat",
        "2",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", common::stderr_of(&output));
    let result = read_json(&json);
    for case in result["cases"].as_array().unwrap() {
        let durability = case["durability"].as_str().unwrap();
        if case["status"] != "ok" {
            // mmap cannot honour open flags: it says why.
            assert_eq!(case["status"], "unsupported", "{}", case["id"]);
            assert!(!case["error"].as_str().unwrap().is_empty());
            continue;
        }
        for run in case["runs"].as_array().unwrap() {
            let (write, sync) = (run["write_seconds"].as_f64().unwrap(), run["sync_seconds"].as_f64().unwrap());
            assert!(write > 0.0 && sync >= 0.0, "{}", case["id"]);
            if !durability.contains("end") {
                assert_eq!(sync, 0.0, "{}: only end has a sync span", case["id"]);
            }
        }
        if durability == "none" {
            // Nothing was made durable: no durable figure (defect 1.3).
            assert!(case["durable_stats"].is_null(), "{}: {}", case["id"], case["durable_stats"]);
            continue;
        }
        let (buffered, durable) =
            (case["stats"]["mean"].as_f64().unwrap(), case["durable_stats"]["mean"].as_f64().unwrap());
        assert!(durable <= buffered, "{}: durable {durable} > buffered {buffered}", case["id"]);
    }
}

#[test]
fn an_end_sync_on_ext4_takes_time_in_every_run_and_durable_is_below_buffered() {
    // On ext4 over a loop device, fsync and fdatasync write the run's dirty pages and
    // wait for them: every run's sync span is real time, so a sync recorded as 0 (or
    // one never made) shows, and the durable figure is strictly below the buffered one.
    let fs = LoopFs::make("ext4", 256);
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let output = common::writebench(&[
        "run",
        fs.path().to_str().unwrap(),
        "--methods",
        "pwrite,fwrite,mmap,io_uring",
        "--states",
        "sparse,overwrite",
        "--chunks",
        "256KiB",
        "--size",
        "8MiB",
        "--threads",
        "1,2",
        "--layout",
        "file-per-thread",
        "--durability",
        "end,end-fdatasync",
        "--repeat",
        "2",
        "--warmup",
        "0",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", common::stderr_of(&output));
    let cases = read_json(&json)["cases"].as_array().unwrap().clone();
    // pwrite, fwrite, io_uring at 2 depths (1 and 2 threads, a file each) and mmap (1
    // thread: its variants have one file only), in 2 states and 2 modes.
    assert_eq!(cases.len(), (4 * 2 + 1) * 2 * 2);
    for case in &cases {
        assert_eq!(case["status"], "ok", "{}: {}", case["id"], case["error"]);
        let runs = case["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2, "{}", case["id"]);
        for run in runs {
            let sync = run["sync_seconds"].as_f64().unwrap();
            assert!(sync > 1e-5, "{}: a sync span of {sync} s", case["id"]);
        }
        let (buffered, durable) =
            (case["stats"]["mean"].as_f64().unwrap(), case["durable_stats"]["mean"].as_f64().unwrap());
        assert!(durable < buffered, "{}: durable {durable} is not below buffered {buffered}", case["id"]);
    }
}

#[test]
fn bad_durability_spellings_exit_2_with_one_line() {
    for bad in ["every:0", "every:x", "direct+", "sometimes", "every-fsync:2"] {
        let output = common::writebench(&["run", ".", "--durability", bad]);
        let stderr = common::stderr_of(&output);
        assert_eq!(output.status.code(), Some(2), "{bad}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(bad), "{stderr}");
    }
}
