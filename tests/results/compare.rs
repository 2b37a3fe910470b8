//! `writebench compare` end to end: real results from real filesystems, compared through
//! the binary, checked through its JSON and its text.

use crate::common;

use std::path::Path;

use common::{LoopFs, Tmpfs, read_json, stderr_of, writebench};

/// A small result of pwrite in 1 MiB calls by one thread into a preallocated file,
/// without and with a sync at the end, written to `json`: two cases.
fn small_result(dir: &Path, json: &Path, size: &str, repeat: &str) {
    let output = writebench(&[
        "run",
        dir.to_str().unwrap(),
        "--methods",
        "pwrite",
        "--states",
        "prealloc",
        "--chunks",
        "1MiB",
        "--threads",
        "1",
        "--size",
        size,
        "--durability",
        "none,end",
        "--repeat",
        repeat,
        "--no-verify",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "run on {}: {}", dir.display(), stderr_of(&output));
}

fn case<'a>(compared: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    let cases = compared["cases"].as_array().expect("cases");
    cases.iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("{id} not compared: {compared}"))
}

#[test]
fn the_durable_cost_of_ext4_on_a_loop_device_over_tmpfs_is_marked_significant() {
    // fsync on tmpfs does nothing; on ext4 it writes 16 MiB through a loop device to
    // its image and commits the journal: the durable time is certain to be longer.
    let tmpfs = Tmpfs::mount("64M");
    let ext4 = LoopFs::make("ext4", 128);
    let out = tempfile::tempdir().unwrap();
    let (a, b) = (out.path().join("tmpfs.json"), out.path().join("ext4.json"));
    small_result(&tmpfs.path(), &a, "16MiB", "6");
    small_result(&ext4.path(), &b, "16MiB", "6");
    let (json, markdown) = (out.path().join("ab.json"), out.path().join("ab.md"));
    let output = writebench(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--export-json",
        json.to_str().unwrap(),
        "--export-markdown",
        markdown.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let compared = read_json(&json);
    assert_eq!(compared["schema"], "writebench.compare.v1");

    let end = &case(&compared, "pwrite prealloc 1MiB t1 end")["versus"][0];
    let durable = &end["durable"]["tested"];
    assert_eq!(durable["significant"], true, "{end}");
    assert!(durable["p_holm"].as_f64().unwrap() < 0.05, "{end}");
    // ext4 (B) is slower: its rate over tmpfs's is below 1, and so is the whole interval.
    assert!(durable["high"].as_f64().unwrap() < 1.0, "{end}");
    let none = &case(&compared, "pwrite prealloc 1MiB t1 none")["versus"][0];
    assert!(none["durable"].is_null(), "a mode that never syncs has no durable test: {none}");
    assert!(none["write"]["tested"]["p"].is_number(), "{none}");

    let differences = compared["differences"].as_array().unwrap();
    let fs_type = differences.iter().find(|d| d["field"] == "target.fs_type").expect("the filesystem differs");
    assert_eq!(fs_type["values"], serde_json::json!(["tmpfs", "ext4"]));
    assert!(!differences.iter().any(|d| d["field"] == "options.argv"), "the command line is not a difference");
    assert_eq!(compared["summary"][0]["tests"], 3, "write twice, durable once: {}", compared["summary"]);

    let text = String::from_utf8(output.stdout).unwrap();
    let (context, cases) = (text.find("## Context differences").unwrap(), text.find("## Cases").unwrap());
    assert!(context < cases, "{text}");
    let lines: Vec<&str> = text.lines().collect();
    let end_line = lines.iter().position(|l| l.trim_start().starts_with("pwrite prealloc 1MiB t1 end")).unwrap();
    let durable_line = lines[end_line + 1];
    assert!(durable_line.trim_start().starts_with("durable") && durable_line.ends_with(" *"), "{text}");
    // Two filesystems: the columns are named by them, and the effects inside each are
    // set side by side, as the lab's comparison does.
    assert_eq!(compared["files"][1]["label"], "ext4", "{}", compared["files"]);
    assert_eq!(compared["files"][1]["name"], b.to_str().unwrap());
    // The best of all files is the pick with the highest figure: on tmpfs fallocate
    // allocates the pages, on ext4 it only reserves extents, so which file wins for a
    // new file is the measurement's to say, not the test's.
    let fastest = compared["fastest"].as_array().unwrap().iter().find(|f| f["goal"] == "fastest").expect("fastest");
    assert_eq!(fastest["metric"], "new-file", "a new file's cost: {fastest}");
    let goal = compared["answers"].as_array().unwrap().iter().find(|g| g["goal"] == "fastest").unwrap();
    let picks: Vec<f64> = goal["picks"].as_array().unwrap().iter().map(|p| p["median"].as_f64().unwrap()).collect();
    let best = fastest["file"].as_u64().unwrap() as usize;
    assert!(picks.iter().all(|&m| m <= picks[best]), "{picks:?}: {fastest}");
    let label = compared["files"][best]["label"].as_str().unwrap();
    assert!(text.contains("## Across the files"), "{text}");
    assert!(text.contains(&format!("best of all files for fastest: {label} with ")), "{text}");
    assert!(text.contains("GB/s, for a new file"), "a new file's figure in its unit: {text}");
    assert!(!differences.iter().any(|d| d["field"] == "target.path"), "the paths differ by construction");
    let markdown = std::fs::read_to_string(&markdown).unwrap();
    assert!(markdown.contains("| case | tmpfs | ext4 | ext4/tmpfs |") && markdown.contains("\\*"), "{markdown}");
}

#[test]
fn a_result_compared_with_itself_marks_nothing_and_an_old_file_has_no_answer() {
    let tmpfs = Tmpfs::mount("32M");
    let out = tempfile::tempdir().unwrap();
    let a = out.path().join("a.json");
    small_result(&tmpfs.path(), &a, "4MiB", "3");
    // The same result as a file written before schema v2: no answer stored.
    let mut old = read_json(&a);
    old["schema"] = "writebench.v1".into();
    old.as_object_mut().unwrap().remove("answer");
    let v1 = out.path().join("v1.json");
    std::fs::write(&v1, old.to_string()).unwrap();
    let json = out.path().join("c.json");
    let output =
        writebench(&["compare", a.to_str().unwrap(), v1.to_str().unwrap(), "--export-json", json.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let compared = read_json(&json);
    let summary = &compared["summary"][0];
    assert_eq!((summary["tests"].as_u64(), summary["tests_significant"].as_u64()), (Some(3), Some(0)), "{summary}");
    for case in compared["cases"].as_array().unwrap() {
        for test in [&case["versus"][0]["write"], &case["versus"][0]["durable"]] {
            if let Some(p) = test["tested"]["p"].as_f64() {
                assert_eq!(p, 1.0, "identical runs: {case}");
            }
        }
    }
    let differences: Vec<&str> =
        compared["differences"].as_array().unwrap().iter().map(|d| d["field"].as_str().unwrap()).collect();
    assert_eq!(differences, ["schema"]);
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("B: no answer stored"), "{text}");
    assert!(text.contains("Summary: B vs A: 0 of 2 cases differ significantly (0 of 3 tests"), "{text}");
}

#[test]
fn bad_input_is_one_line_and_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let not_json = file("notes.txt", "hello");
    let no_schema = file("other.json", "{\"cases\": []}");
    let foreign = file("future.json", "{\"schema\": \"writebench.v9\"}");
    let missing = dir.path().join("missing.json").to_str().unwrap().to_string();
    for (args, expected) in [
        (vec![], "at least two result files"),
        (vec![foreign.as_str()], "only"),
        (vec![missing.as_str(), foreign.as_str()], "cannot read"),
        (vec![not_json.as_str(), foreign.as_str()], "is not a writebench result (not JSON"),
        (vec![no_schema.as_str(), foreign.as_str()], "no schema field"),
        (vec![foreign.as_str(), foreign.as_str()], "has schema writebench.v9; this writebench reads writebench.v1 and"),
        (vec![foreign.as_str(), foreign.as_str(), "--export-json", foreign.as_str()], "is one of the files compared"),
    ] {
        let mut argv = vec!["compare"];
        argv.extend(&args);
        let output = writebench(&argv);
        let stderr = stderr_of(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with("writebench: ") && stderr.contains(expected), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
}
