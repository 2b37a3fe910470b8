//! `writebench latency`: percentiles for every default mode, on ext4 (where a sync
//! costs a device flush) and on tmpfs (where it costs nothing).

use crate::common;

use common::{LoopFs, Tmpfs, assert_usage_error, read_json, stderr_of, writebench};

/// The percentiles every latency case has; its p99.9 only from 10,000 operations.
const KEYS: [&str; 6] = ["count", "mean", "p50", "p90", "p99", "max"];

/// Runs the default modes with 1000 operations; returns (stdout, cases by id).
fn latency(path: &std::path::Path) -> (String, Vec<serde_json::Value>) {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("l.json");
    let csv = out.path().join("l.csv");
    let output = writebench(&[
        "latency",
        path.to_str().unwrap(),
        "--count",
        "1000",
        "--export-json",
        json.to_str().unwrap(),
        "--export-csv",
        csv.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    assert!(std::fs::read_to_string(&csv).unwrap().lines().count() > 8, "a CSV row per case");
    let stdout = String::from_utf8(output.stdout).unwrap();
    let cases = read_json(&json)["cases"].as_array().unwrap().clone();
    // The default modes, each with both patterns, each with every percentile.
    for mode in ["none", "odsync", "osync", "every-fdatasync:1"] {
        for pattern in ["overwrite0", "append"] {
            let id = format!("latency {pattern} 8B {mode}");
            let case = cases.iter().find(|c| c["id"] == id.as_str()).unwrap_or_else(|| panic!("{id} missing"));
            assert_eq!(case["status"], "ok", "{id}: {}", case["error"]);
            for key in KEYS {
                assert!(case["latency_ns"][key].is_number(), "{id}: latency_ns.{key}");
            }
            assert_eq!(case["latency_ns"]["count"], 1000);
            assert!(case["latency_ns"]["p999"].is_null(), "{id}: of 1,000 operations the p99.9 is one or two");
            let has_sync = mode.starts_with("every");
            assert_eq!(case["sync_latency_ns"].is_object(), has_sync, "{id}: the sync call alone");
            assert!(case["ops_per_second"].as_f64().unwrap() > 0.0);
            assert!(stdout.contains(&format!("{pattern} 8B {mode}")), "{stdout}");
        }
    }
    for header in ["p50", "p90", "p99", "p99.9", "max", "ops/s", "µs"] {
        assert!(stdout.contains(header), "{header} in:\n{stdout}");
    }
    (stdout, cases)
}

fn p50(cases: &[serde_json::Value], id: &str) -> f64 {
    cases.iter().find(|c| c["id"] == id).unwrap()["latency_ns"]["p50"].as_f64().unwrap()
}

#[test]
fn latency_on_ext4_shows_what_a_sync_costs() {
    let fs = LoopFs::make("ext4", 256);
    let (_, cases) = latency(&fs.path());
    for pattern in ["overwrite0", "append"] {
        let none = p50(&cases, &format!("latency {pattern} 8B none"));
        for mode in ["odsync", "osync", "every-fdatasync:1"] {
            let synced = p50(&cases, &format!("latency {pattern} 8B {mode}"));
            assert!(synced > none, "{pattern} {mode}: p50 {synced} ns is not above {none} ns without sync");
        }
    }
}

#[test]
fn latency_on_tmpfs_reports_every_mode() {
    let fs = Tmpfs::mount("16M");
    let (stdout, _) = latency(&fs.path());
    assert!(stdout.contains("nothing is durable"), "{stdout}");
}

#[test]
fn bad_latency_options_exit_2() {
    for (args, expected) in [
        (&["--durability", "every:0"][..], "--durability"),
        (&["--patterns", "random"][..], "unknown pattern"),
        (&["--count", "0"][..], "--count"),
        (&["--bytes", "0"][..], "--bytes"),
        (&["--repeat", "0"][..], "--repeat"),
    ] {
        let mut argv = vec!["latency", "."];
        argv.extend_from_slice(args);
        assert_usage_error(&argv, expected);
    }
}

#[test]
fn the_quick_suite_ends_with_a_short_latency_section_unless_methods_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("q.json");
    let path = dir.path().to_str().unwrap();
    let quick = ["run", path, "--table", "--size", "1MiB", "--repeat", "1", "--warmup", "0", "--export-json"];
    let output = writebench(&[&quick[..], &[json.to_str().unwrap()]].concat());
    assert!(output.status.success(), "{}", stderr_of(&output));
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(table.contains("## Small writes, one at a time (latency)"), "{table}");
    let result = read_json(&json);
    let latency: Vec<_> = result["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["id"].as_str().unwrap().starts_with("latency "))
        .collect();
    // overwrite0 and append under none, odsync and every-fdatasync:1, at 8 B, 512 B
    // (a log's record) and 4 KiB (a page).
    assert_eq!(latency.len(), 2 * 3 * 3);
    for size in ["8B", "512B", "4096B"] {
        assert!(latency.iter().any(|c| c["id"].as_str().unwrap().contains(&format!(" {size} "))), "{size}");
    }
    for case in &latency {
        assert_eq!(case["status"], "ok", "{}: {}", case["id"], case["error"]);
        assert_eq!(case["latency_ns"]["count"], 1000, "{}", case["id"]);
    }
    // Their loops are in the rounds of the throughput cases, not after them all.
    let is_latency = |id: &serde_json::Value| id.as_str().is_some_and(|id| id.starts_with("latency "));
    let mut afters = latency.iter().flat_map(|case| case["runs"].as_array().unwrap().iter().map(|run| &run["after"]));
    assert!(afters.any(|after| after.is_string() && !is_latency(after)), "after a throughput case");

    let narrowed = writebench(&[&quick[..], &[json.to_str().unwrap(), "--methods", "pwrite"]].concat());
    assert!(narrowed.status.success(), "{}", stderr_of(&narrowed));
    let cases = read_json(&json)["cases"].as_array().unwrap().clone();
    assert!(cases.iter().all(|c| c["method"] == "pwrite" && !c["id"].as_str().unwrap().starts_with("latency ")));
}

#[test]
fn latency_csv_has_the_percentiles_and_loads_in_duckdb() {
    // 50,000 operations in five loops: each loop's p99.9 has ten operations beyond it.
    let fs = Tmpfs::mount("64M");
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = (dir.path().join("l.json"), dir.path().join("l.csv"));
    let output = writebench(&[
        "latency",
        fs.path().to_str().unwrap(),
        "--count",
        "50000",
        "--durability",
        "none,every-fdatasync:1",
        "--export-json",
        json.to_str().unwrap(),
        "--export-csv",
        csv.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let cases = read_json(&json)["cases"].as_array().unwrap().clone();
    let script = format!(
        "import duckdb\n\
         rel = duckdb.sql(\"select * from read_csv_auto('{csv}')\")\n\
         print(dict(zip(rel.columns, map(str, rel.types))))\n\
         for row in duckdb.sql(\"select id, latency_p50_ns, latency_p90_ns, latency_p99_ns, latency_p999_ns, latency_max_ns, latency_mean_ns from read_csv_auto('{csv}')\").fetchall():\n    print('|'.join(map(str, row)))\n",
        csv = csv.display()
    );
    let output = std::process::Command::new("python3").arg("-c").arg(&script).output().expect("python3 runs");
    // It fails when DuckDB cannot read the file, or lacks a column, or is not installed.
    assert!(output.status.success(), "DuckDB (Python package): {}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut lines = stdout.lines();
    let types = lines.next().unwrap();
    for column in ["latency_p50_ns", "latency_p90_ns", "latency_p99_ns", "latency_p999_ns", "latency_max_ns"] {
        assert!(types.contains(&format!("'{column}': 'BIGINT'")), "{column} numeric in {types}");
    }
    assert!(types.contains("'latency_mean_ns': 'DOUBLE'"), "{types}");
    let rows: Vec<Vec<&str>> = lines.map(|line| line.split('|').collect()).collect();
    assert_eq!(rows.len(), cases.len() * 5, "one row per loop: five loops per latency case");
    for case in &cases {
        let rows: Vec<&Vec<&str>> = rows.iter().filter(|row| case["id"] == row[0]).collect();
        let runs = case["runs"].as_array().unwrap();
        assert_eq!(rows.len(), runs.len());
        // Each row has its own loop's percentiles, in the order of the runs.
        for (row, run) in rows.iter().zip(runs) {
            for (cell, key) in row[1..].iter().zip(["p50", "p90", "p99", "p999", "max", "mean"]) {
                let expected = run["latency_ns"][key].as_f64().unwrap();
                let got: f64 = cell.parse().unwrap_or_else(|_| panic!("{key}: '{cell}'"));
                assert!((got - expected).abs() <= 1e-6 * expected.max(1.0), "{}: {key} {got} != {expected}", row[0]);
            }
        }
    }
}

/// A latency case is several loops, each a run of its own, in rounds with the other
/// cases' loops (docs/measurement.md): the case's figures are a summary over them.
#[test]
fn latency_cases_run_as_loops_interleaved_in_rounds() {
    let fs = Tmpfs::mount("16M");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("l.json");
    let output = writebench(&[
        "latency",
        fs.path().to_str().unwrap(),
        "--count",
        "400",
        "--durability",
        "none,odsync,every-fdatasync:1",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let result = read_json(&json);
    let cases = result["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2 * 3);
    assert_eq!(result["options"]["loops"], 5);
    for case in cases {
        let id = case["id"].as_str().unwrap();
        let runs = case["runs"].as_array().unwrap();
        assert!(runs.len() >= 2, "{id}: {} runs", runs.len());
        // Interleaved: some loop of this case came right after another case's.
        assert!(
            runs.iter().any(|run| run["after"].is_string() && run["after"] != id),
            "{id}: never after another case"
        );
        let rounds: Vec<u64> = runs.iter().map(|run| run["round"].as_u64().unwrap()).collect();
        assert_eq!(rounds, (0..runs.len() as u64).collect::<Vec<_>>(), "{id}: a loop per round");
        for run in runs {
            assert_eq!(run["latency_ns"]["count"], 80, "{id}: --count split over the loops");
            assert!(run["ops_per_second"].as_f64().unwrap() > 0.0, "{id}");
        }
        assert_eq!(case["latency_ns"]["count"], 400, "{id}: the case's percentiles cover every loop");
        assert_eq!(case["ops_stats"]["n"], runs.len(), "{id}");
        assert!(case["ops_stats"]["ci95_low"].is_number(), "{id}: an interval over the loops");
    }
    // The Answer's margin between the two best commit strategies is tested on the loops.
    let answer = result["answer"].as_array().unwrap();
    let commits = answer.iter().find(|r| r["goal"] == "small-durable-commits").expect("a commits answer");
    let text = commits["text"].as_str().unwrap();
    assert!(!text.contains("untested"), "{text}");
    let against = &commits["runner_up"];
    let (low, factor, high) =
        (against["low"].as_f64().unwrap(), against["factor"].as_f64().unwrap(), against["high"].as_f64().unwrap());
    assert!(low <= factor && factor <= high && factor >= 1.0, "{against}");
    assert!(against["p_value"].is_number(), "{against}");
    // One verdict: the certainty line's, by the one rule against every candidate.
    let verdict = commits["verdict"].as_str().unwrap();
    assert!(["clear", "leads", "as-fast", "not-settled"].contains(&verdict), "{commits}");
    assert_eq!(commits["glance"]["certainty"]["verdict"], verdict, "{commits}");
    assert!(commits["best"]["ci95_low"].is_number(), "{commits}");
}
