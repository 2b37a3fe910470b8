//! File creation cases: a size that does not fit is `skipped` by the free-space check,
//! and without the check posix_fallocate's own ENOSPC (its return value, not errno)
//! makes the case `failed`: never a throughput.

use crate::common;

use common::{Tmpfs, read_json, stderr_of, writebench};

fn create(fs: &Tmpfs, extra: &[&str]) -> Vec<serde_json::Value> {
    let (path, json) = (fs.path(), fs.path().join("r.json"));
    let mut argv = vec!["run", "--table", path.to_str().unwrap(), "--methods", "posix_fallocate,fallocate,ftruncate"];
    argv.extend_from_slice(&["--size", "64MiB", "--repeat", "2", "--durability", "none,end"]);
    argv.extend_from_slice(&["--export-json", json.to_str().unwrap()]);
    argv.extend_from_slice(extra);
    let output = writebench(&argv);
    // ftruncate succeeds (it allocates nothing), so the run as a whole is a success.
    assert!(output.status.success(), "{}", stderr_of(&output));
    read_json(&json)["cases"].as_array().unwrap().clone()
}

#[test]
fn a_64_mib_posix_fallocate_on_an_8_mib_tmpfs_is_failed_with_enospc() {
    let fs = Tmpfs::mount("8M");
    let cases = create(&fs, &["--no-space-check"]);
    assert_eq!(cases.len(), 3 * 2);
    for case in &cases {
        let id = case["id"].as_str().unwrap();
        if case["method"] == "ftruncate" {
            assert_eq!(case["status"], "ok", "{id}: ftruncate allocates nothing");
            continue;
        }
        assert_eq!(case["status"], "failed", "{id}");
        let error = case["error"].as_str().unwrap();
        assert!(error.contains("No space left on device"), "{id}: {error}");
        assert!(case["stats"].is_null() && case["durable_stats"].is_null(), "{id}: no throughput");
        assert!(case["runs"].as_array().unwrap().is_empty());
    }
    assert_eq!(common::entries(&fs.path()), vec!["r.json"], "nothing left behind");
}

#[test]
fn with_the_space_check_a_size_that_cannot_fit_is_skipped_with_the_reason() {
    // The full suite's creation sizes (128 MiB to 4 GiB) scaled by 4 MiB / 1 GiB are
    // 0.5 to 16 MiB: --size itself fits the 8 MiB tmpfs, the largest sizes do not.
    let fs = Tmpfs::mount("8M");
    let (path, json) = (fs.path(), fs.path().join("r.json"));
    let output = writebench(&[
        "run",
        "--table",
        path.to_str().unwrap(),
        "--suite",
        "seed",
        "--methods",
        "posix_fallocate,fallocate,ftruncate",
        "--size",
        "4MiB",
        "--repeat",
        "1",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let cases = read_json(&json)["cases"].as_array().unwrap().clone();
    let skipped: Vec<_> = cases.iter().filter(|c| c["status"] == "skipped").collect();
    assert!(!skipped.is_empty(), "the 16 MiB cases cannot fit");
    for case in &skipped {
        assert!(case["bytes"].as_u64().unwrap() >= 8 << 20, "{}", case["id"]);
        assert_ne!(case["method"], "ftruncate", "ftruncate allocates nothing");
        assert!(case["error"].as_str().unwrap().contains("free here (statvfs)"), "{}", case["error"]);
        assert!(case["stats"].is_null());
    }
    for case in cases.iter().filter(|c| c["bytes"].as_u64().unwrap() <= 1 << 20) {
        assert_eq!(case["status"], "ok", "{}: {}", case["id"], case["error"]);
    }
}

#[test]
fn creation_cases_that_fit_have_both_spans() {
    let fs = Tmpfs::mount("128M");
    let cases = create(&fs, &[]);
    for case in &cases {
        assert_eq!(case["status"], "ok", "{}: {}", case["id"], case["error"]);
        assert_eq!(case["chunk_bytes"], 64 << 20, "one call makes the whole file");
        for run in case["runs"].as_array().unwrap() {
            assert!(run["write_seconds"].as_f64().unwrap() > 0.0);
            if case["durability"] == "none" {
                assert_eq!(run["sync_seconds"], 0.0);
            }
        }
    }
}

#[test]
fn the_table_shows_a_creation_in_microseconds_per_call_never_as_gb_per_s() {
    // A 64 MiB ftruncate takes microseconds: as size over time it would read tens of
    // thousands of GB/s, which no data moved at.
    let fs = Tmpfs::mount("128M");
    let path = fs.path();
    let out = tempfile::tempdir().unwrap();
    let (json, csv) = (out.path().join("r.json"), out.path().join("r.csv"));
    let output = writebench(&[
        "run",
        "--table",
        "--export-json",
        json.to_str().unwrap(),
        "--export-csv",
        csv.to_str().unwrap(),
        path.to_str().unwrap(),
        "--methods",
        "ftruncate",
        "--size",
        "64MiB",
        "--repeat",
        "2",
        "--durability",
        "end",
    ]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let table = String::from_utf8(output.stdout).unwrap();
    let section = &table[table.find("### File creation").expect("the creation section")..];
    let header = section.lines().find(|l| l.trim_start().starts_with("case")).unwrap();
    assert!(header.contains("µs/call") && !header.contains("GB/s"), "{section}");
    let line = section.lines().find(|l| l.trim_start().starts_with("ftruncate")).unwrap();
    let figure: f64 = line.split_whitespace().nth(4).unwrap().parse().unwrap();
    assert!(figure > 0.1 && figure < 1000.0, "µs per call, not GB/s: {line}");

    // The JSON and the CSV carry the same: µs per call, and no rate.
    let result: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let case = &result["cases"][0];
    assert!(case["stats"].is_null() && case["durable_stats"].is_null(), "{case}");
    let (call, durable) =
        (case["call_us"]["mean"].as_f64().unwrap(), case["durable_call_us"]["mean"].as_f64().unwrap());
    assert!(call > 0.1 && call < 1000.0 && durable >= call, "{case}");
    let mut rows = csv::Reader::from_path(&csv).unwrap();
    let header = rows.headers().unwrap().clone();
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    for row in rows.records() {
        let row = row.unwrap();
        assert!(row[column("throughput_bytes_per_s")].is_empty() && row[column("durable_bytes_per_s")].is_empty());
        let call: f64 = row[column("call_us")].parse().unwrap();
        let durable: f64 = row[column("durable_call_us")].parse().unwrap();
        assert!(call > 0.1 && call < 1000.0 && durable >= call, "{row:?}");
    }
}
