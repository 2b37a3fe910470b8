//! The result files follow docs/design.md §4: JSON with every field, CSV with one row per run
//! that DuckDB loads, and the query in docs/results.md gives one row per case.

use crate::common;

use common::{read_json, writebench};

fn run_small(dir: &std::path::Path) -> (serde_json::Value, std::path::PathBuf, String) {
    let json = dir.join("r.json");
    let csv = dir.join("r.csv");
    let output = writebench(&[
        "run",
        "--table",
        dir.to_str().unwrap(),
        "--size",
        "256KiB",
        "--methods",
        "write,pwritev",
        "--states",
        "empty,prealloc",
        "--chunks",
        "4KiB,64KiB",
        "--iov",
        "1,8",
        "--durability",
        "none,end",
        "--threads",
        "1",
        "--repeat",
        "3",
        "--warmup",
        "1",
        "--export-json",
        json.to_str().unwrap(),
        "--export-csv",
        csv.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    (read_json(&json), csv, String::from_utf8_lossy(&output.stdout).into_owned())
}

#[test]
fn json_has_the_design_fields_and_consistent_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let (result, _, table) = run_small(dir.path());
    assert_eq!(result["schema"], "writebench.v3");
    assert_eq!(result["tool"]["name"], "writebench");
    assert_eq!(result["complete"], true);
    for key in ["kernel", "cpu_model", "cpus", "memory_bytes"] {
        assert!(!result["host"][key].is_null(), "host.{key}");
    }
    // What an ordinary buffer's pages are: this machine's (and CI's) setting.
    let enabled = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap();
    assert!(enabled.contains(&format!("[{}]", result["host"]["transparent_hugepages"].as_str().unwrap())), "{enabled}");
    for key in ["path", "fs_type", "device", "mount_options", "dio_mem_align", "dio_offset_align"] {
        assert!(result["target"].get(key).is_some(), "target.{key}");
    }
    assert_eq!(result["options"]["repeat"], 3);
    assert_eq!(result["options"]["warmup"], 1);
    assert!(result["observations"].is_array());

    let cases = result["cases"].as_array().unwrap();
    // write: 2 chunks; pwritev: 2 chunks x 2 iov; x 2 states x 2 durability modes.
    assert_eq!(cases.len(), (2 + 4) * 2 * 2);
    for case in cases {
        let id = case["id"].as_str().unwrap();
        assert_eq!(case["status"], "ok", "{id}");
        assert!(case["error"].is_null());
        let runs = case["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 3, "{id}: warm-up not counted");
        for run in runs {
            for key in ["write_seconds", "sync_seconds", "user_seconds", "sys_seconds", "cpu_share"] {
                assert!(run[key].as_f64().is_some(), "{id}: runs[].{key}");
            }
            if case["durability"] == "none" {
                assert_eq!(run["sync_seconds"], 0.0, "{id}");
            }
        }
        let syncs = case["durability"] != "none";
        for stats in ["stats", "durable_stats"] {
            if stats == "durable_stats" && !syncs {
                // Nothing was made durable: no durable figure at all.
                assert!(case[stats].is_null(), "{id}: {}", case[stats]);
                continue;
            }
            for key in ["n", "min", "max", "mean", "stddev", "median", "ci95_low"] {
                assert!(!case[stats][key].is_null(), "{id}: {stats}.{key}");
            }
            // The upper bound is null only when the interval of the time reaches 0.
            let mean = case[stats]["mean"].as_f64().unwrap();
            assert!(case[stats]["ci95_high"].as_f64().is_none_or(|high| high >= mean), "{id}");
            assert!(case[stats]["ci95_low"].as_f64().unwrap() <= mean, "{id}");
            assert_eq!(case[stats]["n"], 3);
        }
        // Statistics on run times, converted (docs/design.md §2.9): mean = bytes / mean time.
        let bytes = case["bytes"].as_f64().unwrap();
        let mean_time = |key: &dyn Fn(&serde_json::Value) -> f64| runs.iter().map(key).sum::<f64>() / runs.len() as f64;
        let write = |r: &serde_json::Value| r["write_seconds"].as_f64().unwrap();
        let buffered = case["stats"]["mean"].as_f64().unwrap();
        assert!((buffered * mean_time(&write) - bytes).abs() <= 1e-9 * bytes, "{id}");
        if syncs {
            let total = |r: &serde_json::Value| write(r) + r["sync_seconds"].as_f64().unwrap();
            let durable = case["durable_stats"]["mean"].as_f64().unwrap();
            assert!((durable * mean_time(&total) - bytes).abs() <= 1e-9 * bytes, "{id}");
            assert!(durable <= buffered, "{id}: durable {durable} > buffered {buffered}");
        }
        assert!(case["latency_ns"].is_null());
    }
    // The table names each section, a line per case with its figure and range, and
    // keeps within 100 columns.
    assert!(table.contains("## Write into an emptied file") && table.contains("## Write into a preallocated file"));
    assert!(table.contains("### Vectorized writing") && table.contains("### Simple writing"));
    assert!(table.lines().any(|l| l.starts_with("    pwritev 4KiB x8 t1 end ") && l.contains(" (")), "{table}");
    assert!(table.lines().all(|l| l.chars().count() <= 100), "{table}");
    // A mode that never syncs has no durable figure in the table either.
    let case_lines: Vec<&str> = table
        .lines()
        .take_while(|l| !l.contains("## Answer"))
        .filter(|l| {
            // Not the header, nor a note said once above a table for every case of it.
            l.starts_with("    ")
                && !l.starts_with("     ")
                && !l.starts_with("    case ")
                && !l.starts_with("    every case ")
        })
        .collect();
    assert_eq!(case_lines.len(), cases.len(), "{table}");
    for line in case_lines {
        assert_eq!(line.contains(" — "), line.contains(" t1 none "), "{line}");
    }
    // --style classic: the ( min: a, mean ± sd, max: b ) lines of the original write-ups.
    let json = dir.path().join("r.json");
    let classic = writebench(&["report", json.to_str().unwrap(), "--table", "--style", "classic"]);
    let classic = String::from_utf8_lossy(&classic.stdout);
    assert!(classic.contains("pwritev in   4 KiB chunks (x8), sync end:") && classic.contains("( min: "), "{classic}");
    for line in classic.lines().filter(|line| line.contains(", sync ")) {
        assert_eq!(line.contains("durable —"), line.contains(", sync none:"), "{line}");
    }
}

/// The first ```sql block of docs/results.md, with its input file replaced.
fn readme_query(csv: &std::path::Path) -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/results.md")).unwrap();
    let start = readme.find("```sql\n").expect("docs/results.md has a ```sql block") + "```sql\n".len();
    let end = start + readme[start..].find("```").unwrap();
    readme[start..end].replace("q.csv", csv.to_str().unwrap())
}

#[test]
fn csv_loads_in_duckdb_and_the_readme_query_gives_one_row_per_case() {
    let dir = tempfile::tempdir().unwrap();
    let (result, csv, _) = run_small(dir.path());
    let cases = result["cases"].as_array().unwrap().len();
    let text = std::fs::read_to_string(&csv).unwrap();
    assert!(text.starts_with("id,runtime,method,state,chunk_bytes,iov,queue_depth,threads,files,durability,pages,status,run,round,sequence,bytes,write_seconds,sync_seconds,throughput_bytes_per_s,durable_bytes_per_s,call_us,durable_call_us,user_seconds,sys_seconds,cpu_share,new_file_seconds,new_file_durable_seconds,prepare_seconds,prepare_sync_seconds,settle_seconds,after,latency_p50_ns,latency_p90_ns,latency_p99_ns,latency_p999_ns,latency_max_ns,latency_mean_ns,ring_linked_fsyncs,ring_fsyncs,sqpoll_cpu_seconds,io_wq_cpu_seconds,error\n"));
    // durable_bytes_per_s is empty where nothing was made durable, and only there.
    let mut reader = csv::Reader::from_path(&csv).unwrap();
    let headers = reader.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    for row in reader.records() {
        let row = row.unwrap();
        let durable = &row[column("durable_bytes_per_s")];
        assert_eq!(durable.is_empty(), &row[column("durability")] == "none", "{row:?}");
    }
    assert_eq!(text.lines().count(), 1 + cases * 3, "a header and one row per run");

    let script = format!(
        "import duckdb\nrows = duckdb.sql({query:?}).fetchall()\nprint(len(rows))\n\
         types = dict(duckdb.sql(\"select column_name, column_type from (describe select * from read_csv_auto('{csv}'))\").fetchall())\n\
         print(types['write_seconds'], types['chunk_bytes'], types['id'])\n",
        query = readme_query(&csv),
        csv = csv.display()
    );
    let output = std::process::Command::new("python3").arg("-c").arg(&script).output().expect("python3 runs");
    assert!(
        output.status.success(),
        "DuckDB's Python package is needed (.ci/run installs it): {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut lines = stdout.lines();
    assert_eq!(lines.next(), Some(cases.to_string().as_str()), "one row per case");
    assert_eq!(lines.next(), Some("DOUBLE BIGINT VARCHAR"), "read_csv_auto infers numeric columns");
}
