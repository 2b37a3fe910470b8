//! `writebench calibrate` and the short calibration `run` makes first: the machine's
//! ceilings are printed and exported, every case of a run gets its "% of ceiling", a
//! device's direct write rate is measured where there is a device and only there, and
//! the filesystem's compression is recorded.

mod common;

use common::{LoopFs, Tmpfs, assert_usage_error, read_json, run_result, stderr_of, writebench};

fn rate(value: &serde_json::Value) -> f64 {
    value.as_f64().unwrap_or_else(|| panic!("a rate, not {value}"))
}

/// The sizes of a calibration's memory-copy classes, in their order.
fn class_sizes(calibration: &serde_json::Value) -> Vec<u64> {
    let classes = calibration["memcpy_classes"].as_array().unwrap_or_else(|| panic!("classes in {calibration}"));
    classes.iter().map(|class| class["bytes"].as_u64().unwrap()).collect()
}

#[test]
fn calibrate_prints_and_exports_the_ceilings_of_tmpfs() {
    let tmpfs = Tmpfs::mount("256m");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("cal.json");
    let output = writebench(&[
        "calibrate",
        tmpfs.path().to_str().unwrap(),
        "--size",
        "16MiB",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let stdout = String::from_utf8(output.stdout).unwrap();
    for line in [
        "memory copy, 1 thread",
        "memory copy, 2 threads",
        "system call (getppid)",
        "clock read (CLOCK_MONOTONIC)",
        "page-cache write ceiling",
        "device write rate (O_DIRECT)  none: no block device under the path",
    ] {
        assert!(stdout.contains(line), "{line:?} missing from:\n{stdout}");
    }
    let result = read_json(&json);
    assert_eq!(result["options"]["command"], "calibrate");
    let c = &result["calibration"];
    let (one, all) = (rate(&c["memcpy_bytes_per_s"]), rate(&c["memcpy_all_bytes_per_s"]));
    assert!(one > 0.5e9 && all > 0.5e9, "{c}");
    assert_eq!(c["memcpy_threads"], 2, "CI and this machine have 2 CPUs");
    assert!(rate(&c["syscall_ns"]) > 5.0 && rate(&c["clock_ns"]) > 1.0, "{c}");
    let page_cache = rate(&c["page_cache"]["bytes_per_s"]);
    // Buffered writes copy into memory: never faster than copying with every CPU.
    assert!(page_cache > 0.05e9 && page_cache < all.max(one) * 1.2, "{c}");
    assert!(c["device"]["bytes_per_s"].is_null(), "{c}");
    assert_eq!(c["device"]["why_not"], "no block device under the path");
    // The copy at each size class, powers of 4 from 1 MiB up to the large buffer, whose
    // figures are the large-buffer ones.
    const MIB: u64 = 1 << 20;
    assert_eq!(class_sizes(c), [MIB, 4 * MIB, 16 * MIB, 64 * MIB, 256 * MIB], "{c}");
    let classes = c["memcpy_classes"].as_array().unwrap();
    let largest = classes.last().unwrap();
    assert_eq!(largest["bytes"], c["memcpy_bytes"]);
    assert_eq!((rate(&largest["bytes_per_s"]), rate(&largest["all_bytes_per_s"])), (one, all));
    assert!(classes.iter().all(|class| rate(&class["bytes_per_s"]) > 0.5e9), "{c}");
    assert!(stdout.contains("memory copy by size") && stdout.contains("  256 MiB "), "{stdout}");
    assert!(std::fs::read_dir(tmpfs.path()).unwrap().next().is_none(), "the scratch directory is gone");
    // `report` shows a saved calibration again.
    let again = writebench(&["report", json.to_str().unwrap()]);
    assert!(again.status.success(), "{}", stderr_of(&again));
    assert!(String::from_utf8(again.stdout).unwrap().contains("memory copy, 1 thread"));
}

#[test]
fn on_a_device_the_direct_rate_is_measured_and_bounds_durable_figures() {
    let ext4 = LoopFs::make("ext4", 256);
    let args = [
        "--methods",
        "pwrite",
        "--states",
        "prealloc",
        "--chunks",
        "1MiB",
        "--threads",
        "1",
        "--durability",
        "end,direct",
        "--size",
        "16MiB",
        "--repeat",
        "2",
    ];
    let (result, stdout) = run_result(&ext4.path(), &args);
    let c = &result["calibration"];
    let device = rate(&c["device"]["bytes_per_s"]);
    assert!(device > 1e6, "{c}");
    // Into preallocated blocks and over written ones: ext4 converts an unwritten extent
    // as each write completes, which is the filesystem's work, not the device's.
    let how = c["device"]["how"].as_str().unwrap();
    for written in ["pwrite prealloc 4MiB t1 direct", "io_uring overwrite 4MiB qd16 t1 direct huge-pages"] {
        assert!(how.contains(written), "{how}");
    }
    // From huge pages, so that a 4 MiB call is one request and not eight (this machine
    // has transparent huge pages on request, as CI's).
    assert!(how.ends_with("from a buffer in huge pages)"), "{how}");
    for case in result["cases"].as_array().unwrap() {
        let share = &case["ceiling"];
        if case["durability"] == "direct" {
            assert_eq!(share["buffered_of"], "device", "{case}");
            assert!(share["durable_pct"].is_null(), "direct alone syncs nothing: {case}");
        } else {
            assert_eq!(share["buffered_of"], "memory copy", "{case}");
            assert_eq!(share["durable_of"], "device", "{case}");
            let durable = rate(&case["durable_stats"]["median"]);
            let pct = rate(&share["durable_pct"]);
            assert!((pct - 100.0 * durable / device).abs() < 1e-6, "{case}");
        }
    }
    assert!(stdout.lines().any(|line| line.contains(" % dev")), "{stdout}");
    assert_eq!(result["target"]["compression"], "no");
}

#[test]
fn the_quick_suite_table_fits_100_columns_shows_the_share_of_the_ceiling_and_no_calibrate_leaves_it_out() {
    let tmpfs = Tmpfs::mount("1g");
    let (result, stdout) = run_result(&tmpfs.path(), &["--size", "4MiB", "--repeat", "1"]);
    assert!(stdout.contains("ceilings: memory copy"), "{stdout}");
    let cases = result["cases"].as_array().unwrap();
    let streams: Vec<_> = cases.iter().filter(|c| c["status"] == "ok" && c["latency_ns"].is_null()).collect();
    assert!(streams.len() > 50, "the quick suite has many throughput cases");
    for case in &streams {
        if case["method"].as_str().unwrap().ends_with("fallocate") || case["method"] == "ftruncate" {
            // File creation writes no data: no share of a copy rate.
            assert!(case.get("ceiling").is_none(), "{case}");
            continue;
        }
        assert!(rate(&case["ceiling"]["buffered_pct"]) > 0.0, "{case}");
    }
    // The default table: one line per case within 100 columns, the share in its column.
    let wide: Vec<&str> = stdout.lines().filter(|line| line.chars().count() > 100).collect();
    assert!(wide.is_empty(), "lines over 100 columns: {wide:#?}");
    let shares = stdout.lines().filter(|line| line.contains(" % mem"));
    assert!(shares.count() > 50, "{stdout}");
    let args = ["--methods", "write", "--states", "empty", "--chunks", "1MiB", "--threads", "1", "--size", "4MiB"];
    let (bare, stdout) = run_result(&tmpfs.path(), &[&args[..], &["--repeat", "1", "--no-calibrate"]].concat());
    assert!(bare.get("calibration").is_none(), "{bare}");
    assert!(bare["cases"][0].get("ceiling").is_none());
    assert!(!stdout.contains("% mem"), "{stdout}");
}

#[test]
fn a_run_s_cases_are_held_against_the_copy_of_their_own_size() {
    let tmpfs = Tmpfs::mount("256m");
    let args = ["--methods", "write", "--states", "prealloc", "--chunks", "1MiB", "--threads", "1", "--size", "3MiB"];
    let (result, stdout) = run_result(&tmpfs.path(), &[&args[..], &["--repeat", "2", "--durability", "none"]].concat());
    let c = &result["calibration"];
    // The ladder up to `run`'s large buffer, and a class of the run's own size.
    const MIB: u64 = 1 << 20;
    assert_eq!(class_sizes(c), [MIB, 3 * MIB, 4 * MIB, 16 * MIB, 64 * MIB], "{c}");
    assert_eq!(c["memcpy_bytes"], 64 * MIB);
    // Its one writer against one thread's copy at 3 MiB, raised to any larger class's.
    let case = &result["cases"][0];
    let classes = c["memcpy_classes"].as_array().unwrap();
    let at_or_above = classes.iter().filter(|class| class["bytes"].as_u64().unwrap() >= 3 * MIB);
    let held_against = at_or_above.map(|class| rate(&class["bytes_per_s"])).fold(0.0, f64::max);
    let expected = 100.0 * rate(&case["stats"]["median"]) / held_against;
    assert!((rate(&case["ceiling"]["buffered_pct"]) - expected).abs() < 1e-6, "{case}\n{c}");
    let joined = stdout.replace("\n  ", " ");
    assert!(joined.contains("at smaller sizes (2 threads) 1MiB ") && joined.contains(", 3MiB "), "{stdout}");
}

#[test]
fn btrfs_mounted_with_compression_says_so() {
    let btrfs = LoopFs::make_in(&std::env::temp_dir(), "btrfs", 160, "loop,compress=zstd:3");
    let args = ["--methods", "write", "--states", "empty", "--chunks", "1MiB", "--threads", "1", "--size", "1MiB"];
    let (result, _) = run_result(&btrfs.path(), &[&args[..], &["--repeat", "1", "--durability", "none"]].concat());
    assert_eq!(result["target"]["compression"], "yes: btrfs mount option compress=zstd:3", "{}", result["target"]);
}

#[test]
fn calibrate_refuses_bad_input_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    for (args, says) in [
        (vec!["calibrate", "/nonexistent/dir"], "PATH /nonexistent/dir"),
        (vec!["calibrate", dir.path().to_str().unwrap(), "--size", "12XB"], "--size"),
        (vec!["calibrate", dir.path().to_str().unwrap(), "--size", "4KiB"], "--size: must be between 1MiB and 64GiB"),
    ] {
        assert_usage_error(&args, says);
    }
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none(), "nothing made in PATH");
}

/// `writebench run DIR ARGS --export-json …` with its own cache directory: the result
/// and the standard error.
fn run_with_cache(dir: &std::path::Path, cache: &std::path::Path, extra: &[&str]) -> (serde_json::Value, String) {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("result.json");
    let mut args = vec!["run", dir.to_str().unwrap(), "--methods", "pwrite", "--chunks", "1MiB"];
    args.extend_from_slice(&["--states", "empty", "--budget", "none", "--repeat", "1"]);
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--quiet", "--export-json", json.to_str().unwrap()]);
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_writebench"))
        .args(&args)
        .env("XDG_CACHE_HOME", cache)
        .output()
        .expect("the writebench binary runs");
    assert!(output.status.success(), "{}", stderr_of(&output));
    (read_json(&json), stderr_of(&output))
}

#[test]
fn run_reuses_its_calibration_within_the_hour_on_the_same_path_and_says_so() {
    let tmpfs = Tmpfs::mount("128m");
    let other = Tmpfs::mount("128m");
    let cache = tempfile::tempdir().unwrap();
    let size = ["--size", "8MiB"];
    let (first, said) = run_with_cache(&tmpfs.path(), cache.path(), &size);
    assert!(said.contains("writebench: calibrated in"), "{said}");
    assert!(first["calibration"].get("reused_age_seconds").is_none(), "{}", first["calibration"]);
    let kept: Vec<_> = std::fs::read_dir(cache.path().join("writebench/calibration")).unwrap().collect();
    assert_eq!(kept.len(), 1, "one file for the path");

    let (second, said) = run_with_cache(&tmpfs.path(), cache.path(), &size);
    assert!(said.contains("calibration kept from an earlier run (--recalibrate measures it again)"), "{said}");
    assert!(said.contains("ago on this path and reused"), "{said}");
    let age = rate(&second["calibration"]["reused_age_seconds"]);
    assert!((0.0..120.0).contains(&age), "{age}");
    assert_eq!(second["calibration"]["memcpy_bytes_per_s"], first["calibration"]["memcpy_bytes_per_s"]);
    assert_eq!(second["calibration"]["seconds"], first["calibration"]["seconds"], "the first run's own time");

    // Another mount point, or another size of case (another memory-copy class): measured.
    let (_, said) = run_with_cache(&other.path(), cache.path(), &size);
    assert!(said.contains("writebench: calibrated in"), "another path: {said}");
    let (_, said) = run_with_cache(&tmpfs.path(), cache.path(), &["--size", "12MiB"]);
    assert!(said.contains("writebench: calibrated in"), "another size: {said}");

    let (again, said) = run_with_cache(&tmpfs.path(), cache.path(), &["--size", "8MiB", "--recalibrate"]);
    assert!(said.contains("writebench: calibrated in"), "{said}");
    assert!(again["calibration"].get("reused_age_seconds").is_none());
    assert_ne!(again["calibration"]["memcpy_bytes_per_s"], first["calibration"]["memcpy_bytes_per_s"], "measured anew");
}

#[test]
fn recalibrate_and_no_calibrate_together_are_refused() {
    assert_usage_error(&["run", "/dev/shm", "--recalibrate", "--no-calibrate"], "--no-calibrate");
}
