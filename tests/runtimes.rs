//! The runners of C, Python, Go, Zig, Java and Node.js (docs/runtimes.md), driven by the real binary:
//! one set of protocol tests run against every runner. Each writes every method at one
//! and at three threads, and writebench reads back every byte; a runner's error is the
//! case's error with the OS text; a missing toolchain makes its cases unsupported
//! without failing the run; latency gives percentiles for every runtime.
//!
//! These need cc, python3, go, zig (or the ziglang package), javac and java, and node: CI installs them
//! (.ci/run), and a missing one fails here with the reason rather than skipping.

mod common;
#[path = "runtimes/protocol.rs"]
mod protocol;

use std::process::Command;

use common::{LoopFs, Tmpfs, read_json, stderr_of, writebench};

/// Every runner and its methods (docs/runtimes.md).
const RUNNERS: [(&str, &str); 6] = [
    ("c", "write,pwrite,writev,pwritev,fwrite,mmap"),
    ("python", "write,pwrite,writev,pwritev,fileio,buffered,mmap"),
    ("go", "write,pwrite,bufio,io_uring"),
    ("zig", "write,pwrite,io_uring"),
    ("java", "stream,buffered,channel,channel-direct,pwrite,mmap,async"),
    ("node", "writeSync,promises,stream,write-callback"),
];

/// The runners that place their writers (`cpus`): Java and Node.js have no
/// sched_setaffinity.
const PLACING: [&str; 4] = ["c", "python", "go", "zig"];

/// Each runtime's plainest method, at the file position (its catalogue entry's first
/// call of an append).
fn plainest(runtime: &str) -> &'static str {
    writebench::plan::catalog::runtime(runtime).expect("a runtime of the catalogue").append[0]
}

/// The methods whose runner has requests in flight or a stream that ends in its own
/// time, and so no every:N (the catalogue's `every: false`).
fn without_every(runtime: &str, method: &str) -> bool {
    matches!((runtime, method), (_, "io_uring") | ("java", "async") | ("node", "write-callback" | "stream"))
}

/// Runs `writebench run DIR ARGS --export-json` and returns its cases.
fn run(dir: &std::path::Path, args: &[&str]) -> (std::process::Output, Vec<serde_json::Value>) {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let mut argv = vec!["run", dir.to_str().unwrap()];
    argv.extend_from_slice(args);
    argv.extend_from_slice(&["--export-json", json.to_str().unwrap(), "--quiet"]);
    let output = writebench(&argv);
    assert!(json.exists(), "no result file: {}", stderr_of(&output));
    let cases = read_json(&json)["cases"].as_array().unwrap().clone();
    (output, cases)
}

#[test]
fn every_runner_writes_every_byte_of_every_method_at_one_and_three_threads() {
    let tmp = Tmpfs::mount("512M");
    for (runtime, methods) in RUNNERS {
        // A size that is no multiple of the chunk: every part but one ends short.
        let (output, cases) = run(
            &tmp.path(),
            &[
                "--runtimes",
                runtime,
                "--methods",
                methods,
                "--threads",
                "1,3",
                "--states",
                "sparse,overwrite",
                "--chunks",
                "4KiB",
                "--iov",
                "3",
                "--qd",
                "4",
                "--size",
                "1000000",
                "--durability",
                "end,every:7,odsync",
                "--repeat",
                "2",
                "--warmup",
                "0",
                "--verify",
            ],
        );
        assert!(output.status.success(), "{runtime}: {}", stderr_of(&output));
        // Every method has a layout for three threads: one shared file for those with
        // offsets (and mmap's one map), a file each for those at the file position.
        for method in methods.split(',') {
            for threads in [1, 3] {
                let ours: Vec<_> = cases
                    .iter()
                    .filter(|c| c["runtime"] == runtime && c["method"] == method && c["threads"] == threads)
                    .collect();
                assert!(!ours.is_empty(), "{runtime} {method} t{threads}: no case");
                for case in ours {
                    // Stores into a map are no write(2): open flags do not apply; the
                    // runners' io_uring refuses every:N (native links fsyncs, they do not).
                    let refused = (method == "mmap" && case["durability"] == "odsync")
                        || (without_every(runtime, method) && case["durability"] == "every:7");
                    if refused {
                        assert_eq!(case["status"], "unsupported", "{}", case["id"]);
                        if method != "mmap" {
                            let error = case["error"].as_str().unwrap_or_default();
                            assert!(error.contains("not implemented in this runtime's runner"), "{error}");
                        }
                        continue;
                    }
                    // --verify read every byte of every file of every run back.
                    assert_eq!(case["status"], "ok", "{}: {}", case["id"], case["error"]);
                    assert_eq!(case["runs"].as_array().unwrap().len(), 2, "{}", case["id"]);
                    let run = &case["runs"][0];
                    assert!(run["write_seconds"].as_f64().unwrap() > 0.0, "{}", case["id"]);
                    // Node.js has no per-thread CPU clock: its runs have no CPU time, not a 0.
                    if runtime == "node" {
                        for key in ["user_seconds", "sys_seconds", "cpu_share"] {
                            assert!(run.get(key).is_none(), "{}: {key} {}", case["id"], run);
                        }
                    } else {
                        assert!(run["sys_seconds"].as_f64().unwrap() >= 0.0, "{}", case["id"]);
                    }
                }
            }
        }
        // Native twins run beside them only when asked: here they were not.
        assert!(cases.iter().all(|c| c["runtime"] == runtime), "{runtime}: only its own cases");
    }
}

/// Each runner's writers start where native writers would (the run's `cpus` line,
/// docs/runtimes.md): two writers on a CPU each, one writer on the CPU writebench was
/// on, and each free to run anywhere again after the start line. Unplaced, a runner's
/// one writer ran on the other CPU from the one that had just made its source and its
/// file, and C's loop measured 2-13 % slower than the same loop in-process.
#[test]
fn every_runners_writers_start_where_native_writers_would() {
    let cpus = std::thread::available_parallelism().unwrap().get();
    assert!(cpus >= 2, "this test needs two CPUs to place two writers (CI has them); here {cpus}");
    let tmp = Tmpfs::mount("64M");
    let dir = tmp.path();
    for runtime in PLACING {
        let (calls, output) = common::strace(
            "sched_setaffinity",
            &[
                "run",
                dir.to_str().unwrap(),
                "--runtimes",
                runtime,
                "--methods",
                "write",
                "--threads",
                "1,2",
                "--chunks",
                "1MiB",
                "--size",
                "4MiB",
                "--states",
                "empty",
                "--durability",
                "none",
                "--repeat",
                "1",
                "--warmup",
                "0",
                "--no-calibrate",
                "--quiet",
            ],
        );
        assert!(output.status.success(), "{runtime}: {}", stderr_of(&output));
        // The CPU lists strace shows: "sched_setaffinity(0, 128, [1]) = 0".
        let sets: Vec<(u32, Vec<usize>)> = calls
            .iter()
            .filter_map(|call| {
                let list = call.line.strip_prefix("sched_setaffinity(")?.split_once('[')?.1.split_once(']')?.0;
                Some((call.tid, list.split_whitespace().map(|cpu| cpu.parse().unwrap()).collect()))
            })
            .collect();
        let placed: Vec<_> = sets.iter().filter(|(_, set)| set.len() == 1).collect();
        // Given back: the CPUs the writer had, all of those this process may use.
        let freed = sets.iter().filter(|(_, set)| set.len() > 1).count();
        // One run of one writer and one run of two: three placements, each undone.
        assert_eq!(placed.len(), 3, "{runtime}: {sets:?}");
        assert_eq!(freed, 3, "{runtime}: every writer is let free after the start line: {sets:?}");
        let two_writers: std::collections::BTreeSet<_> = placed.iter().map(|(_, set)| set[0]).collect();
        assert!(two_writers.len() >= 2, "{runtime}: two writers on CPUs of their own: {sets:?}");
        let tids: std::collections::BTreeSet<_> = placed.iter().map(|(tid, _)| tid).collect();
        assert_eq!(tids.len(), 3, "{runtime}: each writer moves itself: {sets:?}");
    }
}

#[test]
fn runners_write_with_o_direct_on_ext4() {
    let fs = LoopFs::make("ext4", 256);
    for (runtime, methods) in RUNNERS {
        let (output, cases) = run(
            &fs.path(),
            &[
                "--runtimes",
                runtime,
                "--methods",
                methods,
                "--states",
                "prealloc",
                "--chunks",
                "64KiB",
                "--size",
                "4MiB",
                "--durability",
                "direct+end",
                "--repeat",
                "1",
                "--warmup",
                "0",
                "--verify",
            ],
        );
        // Every Node.js case is refused: nothing measured is exit status 1.
        let expected = if runtime == "node" { 1 } else { 0 };
        assert_eq!(output.status.code(), Some(expected), "{runtime}: {}", stderr_of(&output));
        for case in &cases {
            let method = case["method"].as_str().unwrap();
            // Java's streams have no O_DIRECT, nor does its asynchronous channel (it
            // copies into unaligned buffers); Node.js cannot align a Buffer.
            let no_direct = runtime == "node" || (runtime == "java" && ["stream", "async"].contains(&method));
            if no_direct || ["fwrite", "buffered", "bufio", "mmap"].contains(&method) {
                // mmap: stores into a map are no write(2), so O_DIRECT does not apply.
                // The language's own buffer cannot be aligned for O_DIRECT: refused up front.
                assert_eq!(case["status"], "unsupported", "{}", case["id"]);
                assert!(case["error"].as_str().unwrap().contains("O_DIRECT"), "{}", case["error"]);
                continue;
            }
            assert_eq!(case["status"], "ok", "{}: {}", case["id"], case["error"]);
        }
    }
}

#[test]
fn a_runners_error_is_the_cases_error_with_the_os_text() {
    // 1 MiB of room for 4 MiB: the runner's write fails with ENOSPC.
    let small = Tmpfs::mount("1M");
    for (runtime, _) in RUNNERS {
        let (output, cases) = run(
            &small.path(),
            &[
                "--runtimes",
                runtime,
                "--methods",
                plainest(runtime),
                "--threads",
                "1",
                "--states",
                "empty",
                "--chunks",
                "64KiB",
                "--size",
                "4MiB",
                "--durability",
                "end",
                "--repeat",
                "2",
                "--warmup",
                "0",
                "--no-space-check",
            ],
        );
        assert_eq!(output.status.code(), Some(1), "{runtime}: nothing measured: {}", stderr_of(&output));
        assert_eq!(cases.len(), 1);
        let case = &cases[0];
        assert_eq!(case["status"], "failed", "{runtime}: {case}");
        let error = case["error"].as_str().unwrap();
        assert!(error.starts_with(&format!("{runtime} ")), "{runtime}: {error}");
        assert!(error.contains("No space left on device"), "{runtime}: {error}");
        assert!(small.path().read_dir().unwrap().next().is_none(), "{runtime}: scratch removed");
    }
}

#[test]
fn without_a_toolchain_its_cases_are_unsupported_and_the_run_goes_on() {
    let tmp = Tmpfs::mount("64M");
    let empty_path = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let json = cache.path().join("r.json");
    let output = Command::new(env!("CARGO_BIN_EXE_writebench"))
        .args(["run", tmp.path().to_str().unwrap(), "--runtimes", "native,c,python,go,zig,java,node"])
        .args(["--methods", "write,stream,writeSync"])
        .args(["--chunks", "64KiB", "--size", "1MiB", "--states", "empty", "--durability", "none", "--threads", "1"])
        .args(["--repeat", "2", "--warmup", "0", "--quiet", "--export-json", json.to_str().unwrap()])
        // No toolchain on PATH, and a cache with no runner built.
        .env("PATH", empty_path.path())
        .env("XDG_CACHE_HOME", cache.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let result = read_json(&json);
    let cases = result["cases"].as_array().unwrap();
    // write for native, C, Python, Go and Zig; stream for Java (and for Node.js, which
    // has writeSync too).
    assert_eq!(cases.len(), 8, "{:?}", cases.iter().map(|c| &c["id"]).collect::<Vec<_>>());
    let by = |runtime: &str| cases.iter().find(|c| c["runtime"] == runtime).unwrap();
    assert_eq!(by("native")["status"], "ok");
    assert_eq!(by("go")["status"], "unsupported");
    assert_eq!(by("go")["error"], "go: not found");
    assert_eq!(by("c")["error"], "cc: not found");
    assert_eq!(by("python")["error"], "python3: not found");
    assert!(by("zig")["error"].as_str().unwrap().starts_with("zig: not found"), "{}", by("zig")["error"]);
    assert_eq!(by("java")["error"], "javac: not found");
    assert_eq!(by("node")["error"], "node: not found");
    assert_eq!(result["options"]["runtime_toolchains"]["go"]["unsupported"], "go: not found");
}

#[test]
fn latency_gives_percentiles_for_every_runtime_and_each_file_object() {
    let tmp = Tmpfs::mount("64M");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("l.json");
    let output = writebench(&[
        "latency",
        tmp.path().to_str().unwrap(),
        "--runtimes",
        "native,c,python,go,zig,java,node",
        "--durability",
        "osync,every:3",
        "--count",
        "300",
        "--warmup",
        "10",
        "--bytes",
        "100",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let result = read_json(&json);
    let cases = result["cases"].as_array().unwrap();
    // Per mode: overwrite0 by each of 7 runtimes; append by native, c, zig (write),
    // python (write, fileio, buffered), go (write, bufio), java (stream, buffered,
    // channel) and node (writeSync, promises).
    assert_eq!(cases.len(), 2 * (7 + 3 + 3 + 2 + 3 + 2), "{:?}", cases.iter().map(|c| &c["id"]).collect::<Vec<_>>());
    for case in cases {
        assert_eq!(case["status"], "ok", "{}: {}", case["id"], case["error"]);
        let latency = &case["latency_ns"];
        assert_eq!(latency["count"], 300, "{}", case["id"]);
        let p50 = latency["p50"].as_f64().unwrap();
        assert!(p50 > 0.0 && p50 <= latency["p99"].as_f64().unwrap(), "{}: {latency}", case["id"]);
        if case["durability"] == "every:3" {
            // A sync after every third operation: 100 syncs, each timed alone.
            assert_eq!(case["sync_latency_ns"]["count"], 100, "{}", case["id"]);
        }
    }
    let ids: Vec<&str> = cases.iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert!(ids.contains(&"latency python buffered append 100B osync"), "{ids:?}");
    assert!(ids.contains(&"latency java channel append 100B osync"), "{ids:?}");
    assert!(ids.contains(&"latency node promises append 100B osync"), "{ids:?}");
    assert!(ids.contains(&"latency node writeSync overwrite0 100B osync"), "{ids:?}");
    assert!(ids.contains(&"latency append 100B osync"), "native keeps its ids: {ids:?}");
}

/// Every runner syncs where its mode says, with the call the mode names, seen by strace
/// on the timed file itself: one fsync or one fdatasync at the end, a fsync after every
/// fourth of 16 calls, none with O_DSYNC or O_SYNC, whose opens carry the flag.
#[test]
fn every_runner_syncs_where_its_mode_says() {
    let tmp = Tmpfs::mount("64M");
    let modes = ["end", "end-fdatasync", "every:4", "odsync", "osync"];
    for (runtime, methods) in RUNNERS {
        let out = tempfile::tempdir().unwrap();
        let json = out.path().join("r.json");
        let (calls, output) = common::strace(
            "openat,fsync,fdatasync",
            &[
                "run",
                tmp.path().to_str().unwrap(),
                "--runtimes",
                runtime,
                "--methods",
                methods,
                "--threads",
                "1",
                "--states",
                "sparse",
                "--chunks",
                "4KiB",
                "--qd",
                "2",
                "--iov",
                "1",
                "--size",
                "64KiB",
                "--durability",
                &modes.join(","),
                "--repeat",
                "1",
                "--warmup",
                "0",
                "--no-calibrate",
                "--quiet",
                "--export-json",
                json.to_str().unwrap(),
            ],
        );
        assert!(output.status.success(), "{runtime}: {}", stderr_of(&output));
        let cases = read_json(&json)["cases"].as_array().unwrap().clone();
        assert!(cases.len() >= methods.split(',').count() * 3, "{runtime}: {}", cases.len());
        for (index, case) in cases.iter().enumerate() {
            let (method, mode) = (case["method"].as_str().unwrap(), case["durability"].as_str().unwrap());
            if (method == "mmap" && mode.starts_with('o')) || (without_every(runtime, method) && mode == "every:4") {
                assert_eq!(case["status"], "unsupported", "{}", case["id"]);
                continue;
            }
            assert_eq!(case["status"], "ok", "{}: {}", case["id"], case["error"]);
            // The timed run's file, as strace -y prints a descriptor or an open's path,
            // in the runner's calls: writebench's main thread (the first traced) syncs
            // every file itself after the run, untimed, so that the next run starts clean.
            let name = format!("case{index:04}-run0-f0.dat");
            let writebench = calls[0].tid;
            let of_file = |call: &str| {
                calls
                    .iter()
                    .filter(|c| c.tid != writebench)
                    .filter(|c| {
                        c.line.starts_with(call)
                            && (c.line.contains(&format!("/{name}>")) || c.line.contains(&format!("/{name}\"")))
                    })
                    .count()
            };
            let (fsyncs, fdatasyncs) = (of_file("fsync("), of_file("fdatasync("));
            let expected = match mode {
                "end" => (1, 0),
                // A map's data sync is msync, which names no descriptor.
                "end-fdatasync" if method == "mmap" => (0, 0),
                "end-fdatasync" => (0, 1),
                "every:4" => (4, 0),
                _ => (0, 0),
            };
            assert_eq!((fsyncs, fdatasyncs), expected, "{}: (fsync, fdatasync) on {name}", case["id"]);
            if let Some(flag) =
                [("odsync", "O_DSYNC"), ("osync", "O_SYNC")].iter().find(|(m, _)| *m == mode).map(|(_, f)| *f)
            {
                let opens: Vec<&str> = calls
                    .iter()
                    .filter(|c| c.line.starts_with("openat(") && c.line.contains(&name))
                    .map(|c| c.line.as_str())
                    .collect();
                assert!(opens.iter().any(|line| line.contains(flag)), "{}: opens of {name}: {opens:?}", case["id"]);
            }
        }
    }
}

/// A runner's map of a run's file is gone when the run is: twelve runs of 1 MiB
/// through `mmap` fit a 6 MiB file system only if each run's map of its (deleted) file
/// is unmapped at close. Java has no munmap of its own: its runner unmaps as Lucene
/// does (a first version left it to the collector and filled a 256 MB ext4).
#[test]
fn every_runners_map_is_unmapped_after_its_run() {
    let tmp = Tmpfs::mount("6M");
    for runtime in ["c", "python", "java"] {
        let (output, cases) = run(
            &tmp.path(),
            &[
                "--runtimes",
                runtime,
                "--methods",
                "mmap",
                "--threads",
                "1",
                "--states",
                "sparse",
                "--chunks",
                "64KiB",
                "--size",
                "1MiB",
                "--durability",
                "none",
                "--repeat",
                "12",
                "--warmup",
                "0",
                "--no-space-check",
            ],
        );
        assert!(output.status.success(), "{runtime}: {}", stderr_of(&output));
        assert_eq!(cases[0]["status"], "ok", "{runtime}: {}", cases[0]["error"]);
        assert_eq!(cases[0]["runs"].as_array().unwrap().len(), 12, "{runtime}");
    }
}
