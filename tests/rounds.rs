//! Rounds, certainty on demand and the options as applied, seen in the result files of
//! real runs: interleaved rounds recorded per run, `--order grouped`, `--target-ci`
//! reported per case, and `options` holding what was applied rather than what was typed.

mod common;

use common::{Tmpfs, read_json, stderr_of, writebench};

/// Runs `writebench run DIR ARGS --export-json` and returns (result, stdout).
fn run_json(dir: &std::path::Path, args: &[&str]) -> (serde_json::Value, String) {
    let json = dir.join("r.json");
    let mut argv = vec!["run", "--table", dir.to_str().unwrap()];
    argv.extend_from_slice(args);
    argv.extend_from_slice(&["--export-json", json.to_str().unwrap()]);
    let output = writebench(&argv);
    assert!(output.status.success(), "{argv:?}: {}", stderr_of(&output));
    (read_json(&json), String::from_utf8_lossy(&output.stdout).into_owned())
}

const SMALL: [&str; 10] =
    ["--methods", "pwrite,write", "--states", "empty", "--chunks", "64KiB", "--size", "1MiB", "--threads", "1"];

#[test]
fn target_ci_reports_for_every_case_whether_it_was_met_and_in_how_many_runs() {
    let fs = Tmpfs::mount("64M");
    let args: Vec<&str> =
        SMALL.iter().copied().chain(["--durability", "none,end", "--target-ci", "2", "--max-runs", "30"]).collect();
    let (result, table) = run_json(&fs.path(), &args);
    let options = &result["options"];
    assert_eq!(
        (options["target_ci"].as_f64(), options["min_runs"].as_u64(), options["max_runs"].as_u64()),
        (Some(2.0), Some(5), Some(30))
    );
    let cases = result["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 4);
    for case in cases {
        let id = case["id"].as_str().unwrap();
        assert_eq!(case["status"], "ok", "{id}: {}", case["error"]);
        let target = &case["target_ci"];
        let runs = target["runs"].as_u64().unwrap_or_else(|| panic!("{id}: {target}"));
        assert_eq!(target["pct"], 2.0, "{id}");
        assert_eq!(runs, case["runs"].as_array().unwrap().len() as u64, "{id}");
        assert!((5..=30).contains(&runs), "{id}: {runs}");
        let reached = target["reached_pct"].as_f64().unwrap();
        // Judged at the run's typical noise where that is wider than the case's own.
        let judged = target["judged_pct"].as_f64();
        assert!(judged.is_none_or(|judged| judged > reached), "{id}: {target}");
        let judged = judged.unwrap_or(reached);
        if target["met"].as_bool().unwrap() {
            assert!(judged <= 2.0, "{id}: met at ±{judged} %");
        } else {
            assert_eq!(runs, 30, "{id}: a missed target runs to --max-runs");
            assert!(judged > 2.0, "{id}");
        }
        // "noisy" in the table exactly where the target was missed.
        let short_id = id.replacen(" empty", "", 1);
        let line = table.lines().find(|l| l.starts_with(&format!("    {short_id} "))).unwrap();
        assert_eq!(line.contains("noisy"), !target["met"].as_bool().unwrap(), "{line}");
    }
}

#[test]
fn interleaved_rounds_are_recorded_per_run_and_grouped_runs_are_back_to_back() {
    let dir = tempfile::tempdir().unwrap();
    let args: Vec<&str> =
        SMALL.iter().copied().chain(["--durability", "none", "--repeat", "3", "--warmup", "1"]).collect();
    let (result, _) = run_json(dir.path(), &args);
    assert_eq!(result["options"]["order"], "interleaved");
    let cases = result["cases"].as_array().unwrap();
    let count = cases.len() as u64;
    assert_eq!(count, 2);
    for case in cases {
        let runs = case["runs"].as_array().unwrap();
        let rounds: Vec<u64> = runs.iter().map(|r| r["round"].as_u64().unwrap()).collect();
        assert_eq!(rounds, vec![1, 2, 3], "round 0 is the warm-up");
        for run in runs {
            // Round r holds the runs r*count .. (r+1)*count - 1, in some order.
            let (round, sequence) = (run["round"].as_u64().unwrap(), run["sequence"].as_u64().unwrap());
            assert!((round * count..(round + 1) * count).contains(&sequence), "{run}");
        }
    }

    let grouped: Vec<&str> = args.iter().copied().chain(["--order", "grouped"]).collect();
    let (result, _) = run_json(dir.path(), &grouped);
    assert_eq!(result["options"]["order"], "grouped");
    for (index, case) in result["cases"].as_array().unwrap().iter().enumerate() {
        let sequences: Vec<u64> =
            case["runs"].as_array().unwrap().iter().map(|r| r["sequence"].as_u64().unwrap()).collect();
        let first = index as u64 * 4;
        assert_eq!(sequences, vec![first + 1, first + 2, first + 3], "case {index}: its runs back to back");
    }
}

#[test]
fn options_record_the_values_applied() {
    let dir = tempfile::tempdir().unwrap();
    let (result, _) = run_json(
        dir.path(),
        &[
            "--methods",
            "pwritev,pwrite",
            "--states",
            "prealloc,empty",
            "--chunks",
            "64KiB,4KiB",
            "--iov",
            "2",
            "--size",
            "1MiB",
            "--threads",
            "1,2",
            "--layout",
            "file-per-thread",
            "--durability",
            "none,every:4",
            "--repeat",
            "1",
            "--warmup",
            "0",
            "--seed",
            "7",
            "--no-verify",
        ],
    );
    let options = &result["options"];
    assert_eq!(options["command"], "run");
    assert_eq!(options["size"], 1 << 20);
    assert_eq!(options["methods"], serde_json::json!(["pwritev", "pwrite"]));
    assert_eq!(options["states"], serde_json::json!(["prealloc", "empty"]));
    assert_eq!(options["chunks"], serde_json::json!([65536, 4096]));
    assert_eq!(options["iov"], serde_json::json!([2]));
    assert_eq!(options["threads"], serde_json::json!([1, 2]));
    assert_eq!(options["layouts"], serde_json::json!(["file-per-thread"]));
    assert_eq!(options["durability"], serde_json::json!(["none", "every:4"]));
    assert_eq!(options["queue_depths"], serde_json::json!([]), "no queued method");
    assert_eq!((options["repeat"].as_u64(), options["warmup"].as_u64()), (Some(1), Some(0)));
    assert_eq!((options["seed"].as_u64(), options["verify"].as_bool()), (Some(7), Some(false)));
    assert_eq!(options["order"], "interleaved");
    assert!(options["target_ci"].is_null(), "--repeat fixes the runs: no target");
    assert!(options["latency"].is_null(), "naming methods leaves the latency section out");
    // Raw strings are gone: every list is a list.
    for key in ["methods", "states", "chunks", "iov", "threads", "layouts", "queue_depths", "durability", "sizes"] {
        assert!(options[key].is_array(), "{key}: {}", options[key]);
    }

    // The latency command records its lists parsed, too.
    let json = dir.path().join("l.json");
    let output = writebench(&[
        "latency",
        dir.path().to_str().unwrap(),
        "--count",
        "10",
        "--durability",
        "none",
        "--patterns",
        "append",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let options = &read_json(&json)["options"];
    assert_eq!(options["command"], "latency");
    assert_eq!(
        (options["patterns"].clone(), options["durability"].clone()),
        (serde_json::json!(["append"]), serde_json::json!(["none"]))
    );
}

#[test]
fn bad_schedules_exit_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    for (args, expected) in [
        (&["--target-ci", "0"][..], "--target-ci"),
        (&["--target-ci", "NaN"][..], "--target-ci"),
        (&["--target-ci", "101"][..], "--target-ci"),
        (&["--target-ci", "abc"][..], "invalid value 'abc'"),
        (&["--target-ci", "5", "--min-runs", "9", "--max-runs", "4"][..], "--min-runs 9 is more than --max-runs 4"),
        (&["--target-ci", "5", "--max-runs", "1"][..], "--max-runs"),
        (&["--repeat", "3", "--max-runs", "10"][..], "need --target-ci"),
        (&["--suite", "seed", "--min-runs", "3"][..], "need --target-ci"),
        (&["--order", "random"][..], "invalid value 'random'"),
        (&["--budget", "0"][..], "--budget: invalid duration '0': must be above zero"),
        (&["--budget", "soon"][..], "--budget: invalid duration 'soon'"),
        (&["--budget", "30s", "--repeat", "3"][..], "--budget races the cases, but --repeat fixes the runs"),
        (&["--budget", "30s", "--target-ci", "3"][..], "--target-ci repeats every case"),
        (&["--budget", "30s", "--order", "grouped"][..], "--order grouped runs each case's runs back to back"),
        (&["--budget", "30s", "--min-runs", "1"][..], "a race needs 2 runs of each case at least"),
        (&["--min-runs", "6", "--max-runs", "4"][..], "--min-runs 6 is more than --max-runs 4"),
    ] {
        let mut argv = vec!["run", "--table", path];
        argv.extend_from_slice(args);
        let output = writebench(&argv);
        let stderr = stderr_of(&output);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    assert!(common::entries(dir.path()).is_empty(), "nothing created while refusing");
}

/// The quick suite races by default: every case gets a warm-up and two runs, then only
/// the cases still in contention for an open goal go on; the result says why each case
/// stopped and where each goal stood. `--budget none --repeat 5` gives every case 5 runs.
#[test]
fn the_quick_suite_races_its_cases_and_budget_none_keeps_the_fixed_runs() {
    let fs = Tmpfs::mount("256M");
    let args = [
        "--methods",
        "pwrite,write",
        "--states",
        "empty",
        "--chunks",
        "4KiB,1MiB",
        "--size",
        "8MiB",
        "--durability",
        "none,end",
        "--threads",
        "1",
        "--budget",
        "20s",
        "--no-verify",
    ];
    let (result, table) = run_json(&fs.path(), &args);
    let options = &result["options"];
    assert_eq!((options["race"].as_bool(), options["budget_seconds"].as_f64()), (Some(true), Some(20.0)));
    assert_eq!((options["min_runs"].as_u64(), options["max_runs"].as_u64()), (Some(2), Some(20)));
    let race = &result["race"];
    assert_eq!(race["budget_seconds"], 20.0);
    let goals: Vec<&str> = race["goals"].as_array().unwrap().iter().map(|g| g["goal"].as_str().unwrap()).collect();
    assert_eq!(goals, ["fastest", "durable-at-end"]);
    for goal in race["goals"].as_array().unwrap() {
        let decision = goal["decision"].as_str().unwrap();
        assert!(["won", "tied", "settled", "undecided"].contains(&decision), "{goal}");
        assert_eq!(goal["round"].is_null(), decision == "undecided", "{goal}");
        assert!(!goal["left"].as_array().unwrap().is_empty());
    }
    for case in result["cases"].as_array().unwrap() {
        let runs = case["runs"].as_array().unwrap().len() as u64;
        assert!((2..=20).contains(&runs), "{}: {runs} runs", case["id"]);
        let exit = case["race"]["exit"].as_str().unwrap_or_else(|| panic!("{}: no race record", case["id"]));
        assert!(["slower", "decided", "no-goal", "budget", "max-runs"].contains(&exit), "{exit}");
        // Its runs for the goals, and any after them for the observations.
        let (for_goals, observed) = (case["race"]["runs"].as_u64().unwrap(), case["race"]["observed"].as_u64());
        assert_ne!(observed, Some(0), "absent when none");
        assert_eq!(for_goals + observed.unwrap_or(0), runs, "{}", case["race"]);
        if exit == "slower" {
            let behind = &case["race"]["behind"];
            assert!(behind["factor"].as_f64().unwrap() > 1.0 && behind["low"].as_f64().unwrap() > 1.0, "{behind}");
            assert!(table.contains(&format!("dropped after {for_goals} runs")), "{table}");
        }
    }
    assert!(table.contains("raced for the Answer's goals within 20 s"), "{table}");

    let fixed: Vec<&str> =
        args[..args.len() - 3].iter().copied().chain(["--budget", "none", "--repeat", "5"]).collect();
    let (result, _) = run_json(&fs.path(), &fixed);
    assert!(result["race"].is_null() && result["options"]["race"] == false);
    for case in result["cases"].as_array().unwrap() {
        assert_eq!(case["runs"].as_array().unwrap().len(), 5, "{}", case["id"]);
        assert!(case["race"].is_null());
    }
}
