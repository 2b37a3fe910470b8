//! Every method in every state writes exactly the generated data: the files that
//! `--keep` leaves behind are read back, their length and every byte checked.

use crate::common;

use common::{assert_file_holds_its_stream, entries, read_json, writebench};
use writebench::measure::source::{PERIOD, Source};

/// The methods that write through a descriptor, one call per chunk (or per iovecs).
const SIMPLE: &str = "write,pwrite,writev,pwritev,fwrite";

/// Runs `writebench run` with `args` (plus a seed, one warm-up, one run and --keep) and
/// checks every kept file against its stream: a case with one file holds the whole
/// size; a case with a file per thread holds its share, from offset 0, and the shares
/// add up to the size. Returns the cases.
fn check_round_trip(size: u64, args: &[&str]) -> Vec<serde_json::Value> {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let size_arg = size.to_string();
    let mut argv = vec!["run", dir.path().to_str().unwrap(), "--size", &size_arg];
    argv.extend_from_slice(args);
    if !args.contains(&"--threads") {
        // Single-threaded unless the test asks (the quick suite also has 2-thread parts).
        argv.extend_from_slice(&["--threads", "1"]);
    }
    if !args.contains(&"--durability") {
        // Only the modes the test names (the quick suite's durability part adds O_DIRECT).
        argv.extend_from_slice(&["--durability", "end"]);
    }
    argv.extend_from_slice(&["--repeat", "1", "--warmup", "1", "--seed", "42", "--keep"]);
    argv.extend_from_slice(&["--export-json", json.to_str().unwrap()]);
    let output = writebench(&argv);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));

    let result = read_json(&json);
    let cases = result["cases"].as_array().unwrap().clone();
    for case in &cases {
        assert_eq!(case["status"], "ok", "{}: {}", case["id"], case["error"]);
        assert_eq!(case["bytes"], size);
    }

    let scratch: Vec<_> = entries(dir.path()).into_iter().filter(|n| n.starts_with(".writebench-")).collect();
    assert_eq!(scratch.len(), 1, "one scratch directory, kept");
    let scratch = dir.path().join(&scratch[0]);
    // --keep keeps every run: the warm-up's files and the measured run's.
    let expected_files: u64 = cases.iter().map(|c| 2 * c["files"].as_u64().unwrap()).sum();
    assert_eq!(entries(&scratch).iter().filter(|n| n.ends_with(".dat")).count() as u64, expected_files);

    let source = Source::new(42);
    for (index, case) in cases.iter().enumerate() {
        for run in 0..2 {
            let mut total = 0u64;
            for file in 0..case["files"].as_u64().unwrap() {
                let name = format!("case{index:04}-run{run}-f{file}.dat");
                total += assert_file_holds_its_stream(&source, &scratch, case, &name).len() as u64;
            }
            assert_eq!(total, size, "{} run {run}", case["id"]);
        }
    }
    std::fs::remove_dir_all(&scratch).unwrap();
    cases
}

#[test]
fn every_method_and_state_writes_every_byte() {
    // Not a multiple of any chunk, so every case ends in a short call; 3 iovecs so
    // the last vectored call is partial too. Includes 1-byte calls.
    let cases = check_round_trip(200_007, &["--methods", SIMPLE, "--chunks", "1B,4KiB,100KiB", "--iov", "1,3"]);
    // 3 plain methods x 3 chunks + 2 vectored x 3 chunks x 2 iov, in 4 states.
    assert_eq!(cases.len(), 4 * (3 * 3 + 2 * 3 * 2));
}

#[test]
fn data_stays_right_across_the_source_period() {
    // Larger than the 8 MiB source period with a chunk that does not divide it, so
    // calls straddle the point where the pattern repeats.
    let args = ["--methods", SIMPLE, "--chunks", "100KiB,3MiB", "--iov", "1,5", "--states", "empty,overwrite"];
    let cases = check_round_trip(PERIOD as u64 + 12_345, &args);
    assert_eq!(cases.len(), 2 * (3 * 2 + 2 * 2 * 2));
}

#[test]
fn threads_into_one_file_and_a_file_per_thread_write_every_byte() {
    // 1, 2 and 3 threads (3 so the ranges do not divide evenly), a size that is not a
    // multiple of the chunk, both layouts, every state.
    let args = [
        "--methods",
        SIMPLE,
        "--chunks",
        "4KiB,10000B",
        "--iov",
        "3",
        "--threads",
        "1,2,3",
        "--layout",
        "one-file,file-per-thread",
    ];
    let cases = check_round_trip(300_001, &args);
    let count = |threads: u64, files: u64| {
        cases.iter().filter(|c| c["threads"].as_u64() == Some(threads) && c["files"].as_u64() == Some(files)).count()
    };
    // Per thread count, 2 chunks x 4 states: one file for pwrite and pwritev, a file
    // each for all five methods.
    for threads in [2, 3] {
        assert_eq!(count(threads, 1), 2 * 2 * 4, "{threads} threads, one file");
        assert_eq!(count(threads, threads), 5 * 2 * 4, "{threads} threads, a file each");
    }
    for case in &cases {
        for run in case["runs"].as_array().unwrap() {
            assert_eq!(run["thread_seconds"].as_array().unwrap().len() as u64, case["threads"].as_u64().unwrap());
        }
    }
}

/// The mapped methods: one map shared, a map per thread, a map and a descriptor per
/// thread, one map prefaulted by each thread.
const MAPPED: &str = "mmap,mmap-maps,mmap-fds,mmap-populate";

#[test]
fn mapped_writes_reach_the_file_from_every_thread_in_every_state() {
    // check_round_trip reads the kept files with read(2): with MAP_PRIVATE the copies
    // would never get there. Chunks of 10000 B put every part after the first at an
    // offset that is not a page multiple, so maps start at the page below it.
    // (Not empty: a map cannot extend a file, so mmap refuses that state.)
    let states = "sparse,prealloc,overwrite";
    let args = ["--methods", MAPPED, "--chunks", "4KiB,10000B", "--threads", "1,2,3", "--states", states];
    let cases = check_round_trip(300_001, &args);
    // 4 methods x 2 chunks x 3 thread counts x 3 states, all into one file: the mmap
    // variants have no file-per-thread layout.
    assert_eq!(cases.len(), 4 * 2 * 3 * 3);
    assert!(cases.iter().all(|c| c["files"] == 1));
    for method in MAPPED.split(',') {
        for threads in 1..=3 {
            let count = cases.iter().filter(|c| c["method"] == method && c["threads"] == threads).count();
            assert_eq!(count, 2 * 3, "{method} with {threads} threads");
        }
    }
}

#[test]
fn mapped_data_is_in_the_file_without_msync() {
    // Durability none: sync (msync) is never called, yet the data is in the file
    // when read back with read(2), because MAP_SHARED writes the page cache itself.
    // Larger than the source period, so copies straddle the point where it repeats.
    let args = [
        "--methods",
        MAPPED,
        "--chunks",
        "100KiB",
        "--threads",
        "1,3",
        "--states",
        "sparse,overwrite",
        "--durability",
        "none",
    ];
    let cases = check_round_trip(PERIOD as u64 + 12_345, &args);
    assert_eq!(cases.len(), 4 * 2 * 2);
    for case in &cases {
        for run in case["runs"].as_array().unwrap() {
            assert_eq!(run["sync_seconds"], 0.0, "{}: no sync span without durability", case["id"]);
        }
    }
}

#[test]
fn io_uring_writes_every_byte_at_every_queue_depth_thread_count_and_layout() {
    // A part holds 74 or 31 requests, or its share of them over 2 or 3 threads: counts
    // that 32 never divides and 2 often does not, so the last batch is partial (seed
    // 004's program resubmitted stale requests there). The file's last request is short.
    let args = [
        "--methods",
        "io_uring,io_uring-fixed",
        "--chunks",
        "4KiB,10000B",
        "--qd",
        "1,2,32",
        "--threads",
        "1,2,3",
        "--layout",
        "one-file,file-per-thread",
        "--states",
        "empty,sparse,prealloc,overwrite",
    ];
    let cases = check_round_trip(300_001, &args);
    // Per method, state, chunk and depth: 1 thread, then 2 and 3 threads in both layouts.
    assert_eq!(cases.len(), 2 * 4 * 2 * 3 * (1 + 2 + 2));
    for method in ["io_uring", "io_uring-fixed"] {
        for depth in [1, 2, 32] {
            let count = cases.iter().filter(|c| c["method"] == method && c["queue_depth"] == depth).count();
            assert_eq!(count, 4 * 2 * 5, "{method} qd{depth}");
        }
    }
}

#[test]
fn without_keep_nothing_is_left_behind() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("users-file"), b"precious").unwrap();
    let output = writebench(&[
        "run",
        dir.path().to_str().unwrap(),
        "--size",
        "64KiB",
        "--chunks",
        "4KiB",
        "--repeat",
        "2",
        "--warmup",
        "1",
    ]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(entries(dir.path()), vec!["users-file"]);
    assert_eq!(std::fs::read(dir.path().join("users-file")).unwrap(), b"precious");
}

#[test]
fn durability_modes_write_every_byte() {
    // every:N with N that does not divide the calls, so the last sync is the pacer's
    // leftover one; both sync calls; the end sync in its fdatasync spelling.
    let modes = "none,end-fdatasync,every:3,every-fdatasync:2";
    let args = ["--methods", "write,pwrite,pwritev,fwrite,mmap", "--chunks", "4KiB,100KiB", "--iov", "3"];
    let mut argv = args.to_vec();
    // sparse, not empty: a map cannot extend a file (mmap refuses empty).
    argv.extend_from_slice(&["--states", "sparse,overwrite", "--durability", modes]);
    let cases = check_round_trip(300_007, &argv);
    assert_eq!(cases.len(), 2 * 2 * 5 * 4);
    // The open flags, on the methods that go through write(2) (mmap refuses them).
    let mut argv = args.to_vec();
    argv[1] = "write,pwrite,pwritev,fwrite";
    argv.extend_from_slice(&["--states", "empty,prealloc", "--durability", "osync,odsync"]);
    let cases = check_round_trip(300_007, &argv);
    assert_eq!(cases.len(), 2 * 2 * 4 * 2);
    for case in &cases {
        for run in case["runs"].as_array().unwrap() {
            assert_eq!(run["sync_seconds"], 0.0, "{}: osync/odsync commit inside the write span", case["id"]);
        }
    }
}
