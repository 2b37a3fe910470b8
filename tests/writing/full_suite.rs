//! `--suite full` reproduces the matrices of the public write-ups it starts from: every row
//! of the tmpfs section of rapidgzip's benchmarkIOWrite results (except file creation) and
//! of the IO Playground's Go table has its case. The rows are read from the write-ups' own
//! text, kept in tests/data so that a clone anywhere can run this.

use crate::common;

use std::collections::BTreeSet;

use common::{read_json, stderr_of, writebench};

fn write_up(name: &str) -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/").to_string() + name;
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// "  4 KiB" -> "4KiB", "1 GiB" -> "1GiB" (the compact size of the ids).
fn compact(size: &str) -> String {
    size.split_whitespace().collect()
}

/// The number after "using" in "... using  8 threads ...".
fn threads_of(line: &str) -> u32 {
    let after = line.split("using").nth(1).expect("a thread count");
    after.split_whitespace().next().unwrap().parse().unwrap()
}

/// Case ids for the rows of benchmarkIOWrite's first (tmpfs) section.
fn benchmarkiowrite_ids() -> BTreeSet<String> {
    let text = write_up("benchmarkIOWrite-tmpfs.txt");
    let tmpfs_section = text.split("\n# ").next().unwrap();
    let mut ids = BTreeSet::new();
    let mut state = None;
    let mut observations = false;
    let mut rows = 0;
    for line in tmpfs_section.lines().map(str::trim) {
        if line.starts_with("## Write into an emptied file") {
            state = Some("empty");
        } else if line.starts_with("## Write into a sparsely") {
            state = Some("sparse");
        } else if line.starts_with("## Write into a preallocated") {
            state = Some("prealloc");
        } else if line.starts_with("## Observations") {
            observations = true;
        }
        if observations || !line.contains("GB/s") || line.contains("file sized") {
            continue; // not a result row, or file creation (another issue)
        }
        rows += 1;
        let label = line.split(':').next().unwrap();
        if label.starts_with("ftruncate + mmap write") {
            let (method, threads) = if !label.contains("using") {
                ("mmap", 1)
            } else if label.ends_with("maps and fds") {
                ("mmap-fds", threads_of(label))
            } else if label.ends_with("maps") {
                ("mmap-maps", threads_of(label))
            } else {
                ("mmap", threads_of(label))
            };
            // ftruncate first: the sparse state, and prealloc beside it (a map cannot
            // extend an empty file, so mmap has no empty case).
            for state in ["sparse", "prealloc"] {
                ids.insert(format!("{method} {state} 1MiB t{threads} end"));
            }
            continue;
        }
        let state = state.unwrap_or_else(|| panic!("a row outside the state sections: {line}"));
        let chunk = || compact(label.split(" in ").nth(1).unwrap().split("chunks").next().unwrap());
        let id = if let Some(rest) = label.strip_prefix("writev ").or(label.strip_prefix("pwritev ")) {
            let method = if label.starts_with("writev") { "writev" } else { "pwritev" };
            assert!(rest.ends_with("(x128)"), "{label}");
            format!("{method} {state} {} x128 t1 end", chunk())
        } else if label.starts_with("Use pwrite") {
            format!("pwrite {state} 1MiB t{} end", threads_of(label))
        } else if label.starts_with("Write 1 GiB into one file per thread") {
            match threads_of(label) {
                1 => format!("pwrite {state} 1MiB t1 end"),
                n => format!("pwrite {state} 1MiB t{n} f{n} end"),
            }
        } else if label.starts_with("fwrite ") || label.starts_with("write ") {
            format!("{} {state} {} t1 end", label.split(' ').next().unwrap(), chunk())
        } else {
            panic!("a benchmarkIOWrite row this test does not know: {line}");
        };
        ids.insert(id);
    }
    // 16 mmap rows, then 42 per state (6 + 6 vectored, 5 + 5 parallel, 10 + 10 simple).
    assert_eq!(rows, 16 + 3 * 42, "rows read from benchmarkIOWrite's tmpfs section");
    ids
}

/// Case ids for the rows of the IO Playground's Go table, at the scaled size's tag.
fn io_playground_ids(tag: &str) -> BTreeSet<String> {
    let text = write_up("io-playground-go.txt");
    let go_table = text.split("### Zig").next().unwrap();
    let mut ids = BTreeSet::new();
    for line in go_table.lines().filter(|l| l.starts_with('│') && l.contains("B/s")) {
        let method = line.trim_start_matches('│').split('│').next().unwrap().trim();
        let id = if method == "blocking" {
            format!("write empty 4KiB t1 end {tag}")
        } else {
            let parts: Vec<&str> = method.split('_').collect();
            let threads = parts[0];
            if method.ends_with("_pwrite") {
                format!("pwrite empty 4KiB t{threads} end {tag}")
            } else {
                let entries = parts[parts.len() - 2];
                format!("io_uring empty 4KiB qd{entries} t{threads} end {tag}")
            }
        };
        ids.insert(id);
    }
    assert_eq!(ids.len(), 9, "rows of the IO Playground's Go table");
    ids
}

#[test]
fn the_full_suite_has_a_case_for_every_row_of_benchmarkiowrite_and_the_io_playground() {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("s.json");
    let output = writebench(&[
        "run",
        "--table",
        "/dev/shm",
        "--suite",
        // The full suite's old name, still accepted.
        "seed",
        "--size",
        "64MiB",
        "--repeat",
        "2",
        "--warmup",
        "0",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    assert!(stderr_of(&output).contains(" cases x 2 runs on /dev/shm (tmpfs), about "), "announces the duration");
    let result = read_json(&json);
    let cases = result["cases"].as_array().unwrap();
    let ok: BTreeSet<String> =
        cases.iter().filter(|c| c["status"] == "ok").map(|c| c["id"].as_str().unwrap().to_string()).collect();
    let failed: Vec<_> = cases.iter().filter(|c| c["status"] != "ok").map(|c| (&c["id"], &c["error"])).collect();
    assert!(failed.is_empty(), "{failed:?}");

    // 409,600,000 bytes scaled by 64 MiB / 1 GiB = 25,600,000 bytes = 24.41 MiB.
    let expected: BTreeSet<String> = benchmarkiowrite_ids().into_iter().chain(io_playground_ids("24.41MiB")).collect();
    let missing: Vec<_> = expected.difference(&ok).collect();
    assert!(missing.is_empty(), "rows of the write-ups without a case: {missing:?}");
    let go_row = cases.iter().find(|c| c["id"] == "write empty 4KiB t1 end 24.41MiB").unwrap();
    assert_eq!(go_row["bytes"], 25_600_000);
    let scaled = cases.iter().find(|c| c["id"] == "write empty 1GiB t1 end").unwrap();
    assert_eq!(scaled["bytes"], 64 << 20, "a chunk above the scaled size writes it all in one call");
}
