//! `--stonewall`: every writer stops issuing calls at the wall, its bytes are recorded,
//! and the figure is what all of them wrote over the span.

use crate::common::{assert_usage_error, run_result};

fn rate(value: &serde_json::Value) -> f64 {
    value.as_f64().unwrap_or_else(|| panic!("a number, not {value}"))
}

#[test]
fn threads_stop_at_the_wall_and_the_figure_is_their_bytes_over_the_span() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let out = tempfile::tempdir().unwrap();
    let csv = out.path().join("runs.csv");
    // 1 GiB is far more than two threads write into tmpfs in 50 ms.
    let (result, stdout) = run_result(
        dir.path(),
        &[
            "--methods",
            "pwrite,mmap,mmap-populate",
            "--states",
            "sparse",
            "--chunks",
            "1MiB",
            "--threads",
            "2",
            "--layout",
            "one-file",
            "--durability",
            "end",
            "--size",
            "1GiB",
            "--stonewall",
            "50ms",
            "--budget",
            "none",
            "--repeat",
            "3",
            "--export-csv",
            csv.to_str().unwrap(),
        ],
    );
    assert_eq!(result["options"]["stonewall_seconds"], 0.05);
    assert_eq!(result["options"]["verify"], false, "the quick check cannot read back an unknown share");
    let cases = result["cases"].as_array().unwrap();
    let populate = cases.iter().find(|c| c["method"] == "mmap-populate").unwrap();
    assert_eq!(populate["status"], "unsupported");
    let why = populate["error"].as_str().unwrap();
    assert!(why.contains("--stonewall: mmap-populate cannot stop at the wall"), "{why}");
    let mmap = cases.iter().find(|c| c["method"] == "mmap").unwrap();
    assert_eq!(mmap["status"], "ok", "the copy loop stops at the wall: {}", mmap["error"]);
    assert!(mmap["runs"].as_array().unwrap().iter().all(|run| run["stonewall"]["stopped"] == 2), "{mmap}");
    let case = cases.iter().find(|c| c["method"] == "pwrite").unwrap();
    assert_eq!(case["status"], "ok", "{}", case["error"]);
    let mut rates = Vec::new();
    for run in case["runs"].as_array().unwrap() {
        let wall = &run["stonewall"];
        let (bytes, of) = (wall["bytes"].as_u64().unwrap(), wall["of_bytes"].as_u64().unwrap());
        assert_eq!(of, 1 << 30);
        assert!(bytes > 0 && bytes < of, "{wall}");
        let writers: Vec<u64> = wall["writer_bytes"].as_array().unwrap().iter().map(|b| b.as_u64().unwrap()).collect();
        assert_eq!(writers.len(), 2);
        assert_eq!(writers.iter().sum::<u64>(), bytes);
        assert!(writers.iter().all(|&w| w > 0 && w % (1 << 20) == 0), "whole calls: {writers:?}");
        assert_eq!(wall["stopped"], 2, "both stopped at the wall");
        let seconds = rate(&run["write_seconds"]);
        // The wall, plus at most the call in flight and the wake-up.
        assert!((0.05..0.5).contains(&seconds), "{seconds}");
        rates.push(bytes as f64 / seconds);
    }
    // The figure is the run's own bytes over its span: the median rate of the three.
    rates.sort_by(f64::total_cmp);
    let median = rate(&case["stats"]["median"]);
    assert!((median / rates[1] - 1.0).abs() < 1e-9, "{median} against {rates:?}");
    let words = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("stonewalled: ") && words.contains("% of 1 GiB written (median run)"), "{stdout}");
    assert!(words.contains("the threads' bytes ") && words.contains("x apart, thread "), "{stdout}");
    // The CSV's bytes column is each run's own.
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut rows = csv::Reader::from_reader(text.as_bytes());
    let header = rows.headers().unwrap().clone();
    let column = header.iter().position(|name| name == "bytes").unwrap();
    let run_bytes: Vec<u64> = rows
        .records()
        .map(|row| row.unwrap())
        .filter(|row| row.get(header.iter().position(|n| n == "method").unwrap()) == Some("pwrite"))
        .map(|row| row[column].parse().unwrap())
        .collect();
    let recorded: Vec<u64> =
        case["runs"].as_array().unwrap().iter().map(|run| run["stonewall"]["bytes"].as_u64().unwrap()).collect();
    assert_eq!(run_bytes, recorded);
}

#[test]
fn a_writer_that_finishes_before_the_wall_wrote_its_whole_part_and_the_note_says_so() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let (result, stdout) = run_result(
        dir.path(),
        &[
            "--methods",
            "write",
            "--states",
            "empty",
            "--chunks",
            "64KiB",
            "--size",
            "8MiB",
            "--threads",
            "1",
            "--durability",
            "end",
            "--stonewall",
            "10s",
            "--budget",
            "none",
            "--repeat",
            "2",
        ],
    );
    let case = &result["cases"][0];
    assert_eq!(case["status"], "ok", "{}", case["error"]);
    for run in case["runs"].as_array().unwrap() {
        assert_eq!(run["stonewall"]["bytes"], 8 << 20);
        assert_eq!(run["stonewall"]["stopped"], 0);
        assert!(rate(&run["write_seconds"]) < 5.0);
    }
    let words = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("1 of 1 writers finished their part before the wall"), "{stdout}");
}

#[test]
fn stonewall_with_verify_or_without_a_time_is_refused() {
    assert_usage_error(&["run", "/dev/shm", "--stonewall", "1s", "--verify"], "--verify");
    assert_usage_error(&["run", "/dev/shm", "--stonewall", "0s"], "above zero");
    assert_usage_error(&["run", "/dev/shm", "--stonewall", "soon"], "invalid duration");
}
