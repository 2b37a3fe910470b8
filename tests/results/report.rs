//! `writebench report` renders a saved result from the file alone, and `run` writes the
//! same Markdown and HTML directly. The Markdown keeps the layout and the line format
//! of rapidgzip's benchmarkIOWrite write-ups (tests/data/benchmarkIOWrite-tmpfs.txt).

use crate::common;

use std::path::{Path, PathBuf};

use common::{Tmpfs, entries, stderr_of, writebench};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

/// A short run of the quick suite (every part of it: creation, mmap, threads,
/// io_uring, O_DIRECT, latency) on a tmpfs, saved as JSON; in benchmarkIOWrite's three
/// states, so that each part has each state (the quick suite's threads have two).
fn quick_result(tmpfs: &Tmpfs, out: &Path) -> PathBuf {
    let json = out.join("q.json");
    let path = tmpfs.path();
    let output = writebench(&[
        "run",
        "--table",
        path.to_str().unwrap(),
        "--size",
        "4MiB",
        "--states",
        "empty,sparse,prealloc",
        "--repeat",
        "2",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    json
}

/// The headings of benchmarkIOWrite's first section (its tmpfs run), without its title.
fn seed_headings() -> Vec<String> {
    let seed = std::fs::read_to_string(data("benchmarkIOWrite-tmpfs.txt")).unwrap();
    let first = seed.split("\n# ").next().unwrap();
    first.lines().filter(|line| line.starts_with("## ") || line.starts_with("### ")).map(String::from).collect()
}

/// A figure line reduced to its shape: numbers become N, size units U, runs of spaces
/// one, "+-" the "±" writebench prints (docs/design.md §2.9), and what writebench adds after the
/// seed's part (the durability mode in the label, the durable figure and notes after
/// "GB/s") is cut, so that the rest must read exactly like the seed's line.
fn shape(line: &str) -> String {
    let line = line.replace("+-", "±").replace(", sync end:", ":");
    let line = match line.find(" ) GB/s") {
        Some(at) => &line[..at + " ) GB/s".len()],
        None => &line,
    };
    let mut shaped = String::new();
    for word in line.split_whitespace() {
        let word: String = word
            .split_inclusive(|c: char| !(c.is_ascii_digit() || c == '.'))
            .map(|piece| {
                let digits = piece.trim_end_matches(|c: char| !(c.is_ascii_digit() || c == '.'));
                if digits.chars().any(|c| c.is_ascii_digit()) { piece.replacen(digits, "N", 1) } else { piece.into() }
            })
            .collect();
        let word = match word.as_str() {
            "B" | "KiB" | "MiB" | "GiB" => "U".to_string(),
            _ => word,
        };
        shaped.push_str(&word);
        shaped.push(' ');
    }
    shaped.trim_end().to_string()
}

#[test]
fn report_renders_a_saved_quick_run_in_the_layout_of_the_seed_document() {
    let tmpfs = Tmpfs::mount("256M");
    let out = tempfile::tempdir().unwrap();
    let json = quick_result(&tmpfs, out.path());
    let (markdown, html) = (out.path().join("q.md"), out.path().join("q.html"));
    let output = writebench(&[
        "report",
        json.to_str().unwrap(),
        "--export-markdown",
        markdown.to_str().unwrap(),
        "--export-html",
        html.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    assert!(output.stdout.is_empty(), "with export flags, report prints nothing");
    let markdown = std::fs::read_to_string(&markdown).unwrap();

    // The Answer and the observations first, then every heading of the seed's section,
    // in its order, then the context.
    let ours: Vec<&str> = markdown.lines().filter(|line| line.starts_with("## ") || line.starts_with("### ")).collect();
    assert_eq!(ours[..2], ["## Answer", "## Observations"], "{ours:?}");
    let mut expected = seed_headings();
    assert_eq!(expected.first().map(String::as_str), Some("## File Creation"), "{expected:?}");
    expected.retain(|heading| heading != "## Observations");
    expected.insert(0, "## Observations".to_string());
    expected.insert(0, "## Answer".to_string());
    expected.push("## Context".to_string());
    let mut remaining = ours.iter();
    for heading in &expected {
        assert!(remaining.any(|ours| ours == heading), "{heading} missing or out of order in {ours:?}");
    }

    assert!(markdown.contains("\nNote: tmpfs keeps files in memory: fsync does nothing there"), "{markdown}");
    // One line against the seed's line for the same strategy.
    let seed = std::fs::read_to_string(data("benchmarkIOWrite-tmpfs.txt")).unwrap();
    let seed_line =
        seed.lines().find(|l| l.trim_start().starts_with("writev 1 GiB into an emptied file in  4 KiB")).unwrap();
    let our_line = markdown
        .lines()
        .find(|l| l.starts_with("    writev 4 MiB into an emptied file in  4 KiB chunks (x128), sync end: ( min: "))
        .unwrap_or_else(|| panic!("the writev line in {markdown}"));
    assert_eq!(shape(our_line), shape(seed_line), "{our_line}\n{seed_line}");
    assert_eq!(shape(seed_line), "writev N U into an emptied file in N U chunks (xN): ( min: N, N ± N, max: N ) GB/s");

    let html = std::fs::read_to_string(&html).unwrap();
    for id in ["chart-chunks-empty", "chart-threads-prealloc", "chart-states", "chart-durability", "chart-latency"] {
        assert!(html.contains(&format!("<svg class=\"wb-chart\" id=\"{id}\"")), "{id}");
    }
    assert!(!html.contains("id=\"chart-runtimes\""), "every case is native: no empty runtimes chart");
}

#[test]
fn run_writes_the_same_reports_as_report_does_from_its_json() {
    let tmpfs = Tmpfs::mount("64M");
    let out = tempfile::tempdir().unwrap();
    let file = |name: &str| out.path().join(name).to_str().unwrap().to_string();
    let path = tmpfs.path();
    let output = writebench(&[
        "run",
        "--table",
        path.to_str().unwrap(),
        "--methods",
        "write,pwrite",
        "--chunks",
        "64KiB",
        "--size",
        "1MiB",
        "--durability",
        "none,end",
        "--repeat",
        "2",
        "--export-json",
        &file("r.json"),
        "--export-markdown",
        &file("r.md"),
        "--export-html",
        &file("r.html"),
    ]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    // Written atomically: no temporary file left beside them.
    assert_eq!(entries(out.path()), vec!["r.html", "r.json", "r.md"]);
    let output = writebench(&["report", &file("r.json"), "--export-markdown", &file("again.md")]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    // What run stored is what the cases give: nothing to say about it.
    assert!(!stderr_of(&output).contains("differ"), "{}", stderr_of(&output));
    let direct = std::fs::read_to_string(file("r.md")).unwrap();
    assert_eq!(direct, std::fs::read_to_string(file("again.md")).unwrap());
    assert!(direct.contains("\n## Write into an emptied file\n"), "{direct}");
    assert!(std::fs::read_to_string(file("r.html")).unwrap().contains("<svg class=\"wb-chart\""));
}

#[test]
fn an_old_v1_result_still_renders() {
    let v1 = data("v1-result.json");
    let output = writebench(&["report", "--table", v1.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.starts_with("# writebench on /dev/shm (tmpfs, tmpfs)\n"), "{stdout}");
    assert!(stdout.contains("## Write into an emptied file"), "{stdout}");
    // A v1 file stored no advice: report draws it from the file's cases, as run would.
    assert!(stdout.contains("\n## Answer\n"), "{stdout}");
    assert!(stdout.contains("\nOne big file, fastest:\n"), "{stdout}");
    assert!(stdout.contains("\nObservations"), "{stdout}");
    let out = tempfile::tempdir().unwrap();
    let (markdown, html) = (out.path().join("v1.md"), out.path().join("v1.html"));
    let output = writebench(&[
        "report",
        v1.to_str().unwrap(),
        "--export-markdown",
        markdown.to_str().unwrap(),
        "--export-html",
        html.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let markdown = std::fs::read_to_string(markdown).unwrap();
    assert!(markdown.contains("## Observations\n\n 1. "), "{markdown}");
    let cases = common::read_json(&v1)["cases"].as_array().unwrap().len();
    let lines = markdown.lines().filter(|line| line.starts_with("    ") && line.contains(" GB/s")).count();
    assert_eq!(lines, cases, "every case has its line");
    assert!(std::fs::read_to_string(html).unwrap().contains("id=\"chart-chunks-empty\""));
}

#[test]
fn stored_conclusions_that_differ_from_the_cases_are_drawn_again_and_said() {
    // The stored Answer and observations are a cache: a result whose stored ones do not
    // follow from its cases (an older writebench's rules, or an edited file) is shown
    // with what its cases give now, and a note says so.
    let mut result = common::read_json(&data("v1-result.json"));
    result["schema"] = "writebench.v2".into();
    result["observations"] = serde_json::json!([{"kind": "knee", "text": "write reaches 95 % of its best at 1 MiB",
        "figures": [], "comparison": null}]);
    let best = serde_json::json!({"case": "pwrite empty 1MiB t1 end", "metric": "durable", "median": 4.9e9,
        "mean": 4.9e9, "ci95_low": 4.5e9, "ci95_high": 5.3e9});
    result["answer"] = serde_json::json!([{"goal": "durable-at-end", "text": "pwrite in 1 MiB calls, then one fsync",
        "best": best, "runner_up": null, "naive": null, "tied": false}]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.json");
    std::fs::write(&path, result.to_string()).unwrap();
    let output = writebench(&["report", path.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let stderr = stderr_of(&output);
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(!stdout.contains("pwrite in 1 MiB calls, then one fsync\n"), "{stdout}");
    assert!(!stdout.contains("write reaches 95 % of its best at 1 MiB"), "{stdout}");
    assert!(stdout.contains("\nOne big file, fastest:\n"), "{stdout}");
    assert!(
        stderr.contains("the Answer and observations stored in this result differ from what its cases give"),
        "{stderr}"
    );
    // The JSON written again holds the conclusions drawn now.
    let again = dir.path().join("again.json");
    let output = writebench(&["report", path.to_str().unwrap(), "--export-json", again.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let again = common::read_json(&again);
    assert_ne!(again["answer"][0]["text"], "pwrite in 1 MiB calls, then one fsync");
}

#[test]
fn files_it_cannot_read_are_refused_in_one_line_with_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let v1 = std::fs::read_to_string(data("v1-result.json")).unwrap();
    let missing = dir.path().join("missing.json").to_str().unwrap().to_string();
    for (args, expected) in [
        (vec![missing.clone()], "cannot read"),
        (vec![write("text.json", "not json")], "is not a writebench result (not JSON"),
        (vec![write("foreign.json", "{\"name\": \"fio\"}")], "is not a writebench result (no schema field)"),
        (vec![write("future.json", &v1.replace("writebench.v1", "writebench.v9"))], "has schema writebench.v9"),
        (vec![write("cut.json", "{\"schema\": \"writebench.v2\"}")], "is not a complete writebench result"),
        (
            vec![
                data("v1-result.json").to_str().unwrap().into(),
                "--export-html".into(),
                dir.path().to_str().unwrap().into(),
            ],
            "is a directory",
        ),
        (vec![], "required"),
    ] {
        let mut argv = vec!["report".to_string()];
        argv.extend(args);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let output = writebench(&argv);
        let stderr = stderr_of(&output);
        assert_eq!(output.status.code(), Some(2), "{argv:?}: {stderr}");
        assert!(stderr.starts_with("writebench: ") && stderr.contains(expected), "{argv:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{argv:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{argv:?}");
    }
}

/// A crash check's table (`crash --export-json`) is rendered again by `report`, as
/// `crash` printed it, in the formats `crash` writes; CSV, which a crash table has not,
/// is refused in one line before anything is written, and `compare`, which reads run
/// results, says what the file is.
#[test]
fn report_renders_a_crash_table_and_refuses_what_it_has_not() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("crash.json");
    let gunzip = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/corpus/crash-sqlite.json.gz"))
        .output()
        .expect("gzip runs");
    std::fs::write(&saved, gunzip.stdout).unwrap();
    let saved = saved.to_str().unwrap();
    let output = writebench(&["report", saved]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.starts_with("filesystem  mount options  workload"), "{stdout}");
    assert!(stdout.contains("ext4 (defaults): the program's promises broken in 8 of 30 states"), "{stdout}");
    let markdown = dir.path().join("crash.md");
    let output = writebench(&["report", saved, "--export-markdown", markdown.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    assert!(std::fs::read_to_string(&markdown).unwrap().starts_with("## Crash checks"));

    let csv = dir.path().join("crash.csv");
    common::assert_usage_error(
        &["report", saved, "--export-csv", csv.to_str().unwrap()],
        "--export-csv: a crash check's table has no CSV form",
    );
    assert!(!csv.exists(), "nothing written for a refused export");
    common::assert_usage_error(&["compare", saved, saved], "is a crash check's table");
}
