//! Unit tests of `compare` on hand-made results.

use super::*;
use context::{Host, TargetInfo};
use plan::catalog;
use plan::{Case, FileState};
use result::options::RunOptions;
use result::{Comparison, Figure, Recommendation, Tool};

const MIB: u64 = 1 << 20;

fn case(method: &str, durability: &str, times: &[(f64, f64)]) -> CaseResult {
    let case = Case::new(
        catalog::by_name(method).unwrap(),
        FileState::Prealloc,
        MIB,
        1,
        durability.parse().unwrap(),
        64 * MIB,
    );
    let runs = times.iter().map(|&(write, sync)| Run { write_seconds: write, sync_seconds: sync, ..Run::default() });
    crate::summarize::measured(case, runs.collect(), 1)
}

/// Five runs around `mean` seconds, ±1 %: the same spread in every case.
fn around(mean: f64) -> Vec<f64> {
    [1.0, 1.01, 0.99, 1.005, 0.995].iter().map(|f| f * mean).collect()
}

fn result(fs_type: &str, cases: Vec<CaseResult>) -> ResultFile {
    ResultFile {
        schema: result::SCHEMA.to_string(),
        tool: Tool::this(),
        host: Host {
            kernel: "Linux 6.1".into(),
            cpu_model: "cpu".into(),
            cpus: 2,
            memory_bytes: 1 << 33,
            ..Host::default()
        },
        target: TargetInfo {
            path: "/dev/shm".into(),
            fs_type: fs_type.into(),
            device: "tmpfs".into(),
            mount_point: "/dev/shm".into(),
            mount_options: "rw".into(),
            dio_mem_align: Some(512),
            dio_offset_align: Some(512),
            dio_align_source: None,
            ..TargetInfo::default()
        },
        options: RunOptions::from_json(
            serde_json::json!({"size": 64 * MIB, "argv": ["writebench", "run"], "peak_rss_bytes": 1,
                                    "mmap_advice": {"map_populate": false}}),
        ),
        cases,
        observations: Vec::new(),
        observation_tests: None,
        answer: Vec::new(),
        calibration: None,
        crash: Vec::new(),
        race: None,
        complete: true,
    }
}

fn pair(a: ResultFile, b: ResultFile) -> CompareResult {
    compare(&[("a.json".into(), a), ("b.json".into(), b)])
}

fn write_only(id_method: &str, times: Vec<f64>) -> CaseResult {
    case(id_method, "none", &times.into_iter().map(|t| (t, 0.0)).collect::<Vec<_>>())
}

fn found<'a>(compared: &'a CompareResult, method: &str) -> &'a Versus {
    let case = compared.cases.iter().find(|c| c.id.starts_with(&format!("{method} "))).unwrap();
    case.versus[0].as_ref().unwrap()
}

#[test]
fn a_large_difference_is_marked_and_noise_is_not() {
    let a = result("tmpfs", vec![write_only("write", around(1.0)), write_only("pwrite", around(1.0))]);
    let b = result("tmpfs", vec![write_only("write", around(0.5)), write_only("pwrite", around(1.002))]);
    let compared = pair(a, b);
    let faster = found(&compared, "write").write.as_ref().unwrap();
    let tested = faster.tested.unwrap();
    assert!((tested.factor - 2.0).abs() < 1e-9 && tested.low < 2.0 && tested.high > 2.0, "{tested:?}");
    assert!(tested.significant && tested.p_holm < ALPHA, "{tested:?}");
    assert!((faster.other_median / faster.baseline_median - 2.0).abs() < 1e-9);
    let noise = found(&compared, "pwrite").write.as_ref().unwrap().tested.unwrap();
    assert!(!noise.significant && noise.p > 0.5 && noise.low < 1.0 && noise.high > 1.0, "{noise:?}");
    assert_eq!(found(&compared, "write").durable, None, "none never syncs: no durable test");
    let summary = &compared.summary[0];
    assert_eq!(
        (summary.cases_tested, summary.cases_significant, summary.tests, summary.tests_significant),
        (2, 1, 2, 1)
    );
}

#[test]
fn holm_corrects_across_every_test_of_the_pair() {
    // Three cases with the same modest difference: each raw p is below α, but not
    // below α/3, so after Holm's correction none is significant.
    let slow = vec![1.0, 1.1, 0.9, 1.05, 0.95];
    let fast: Vec<f64> = slow.iter().map(|t| t * 0.88).collect();
    let methods = ["write", "pwrite", "writev"];
    let a = result("tmpfs", methods.iter().map(|m| write_only(m, slow.clone())).collect());
    let b = result("tmpfs", methods.iter().map(|m| write_only(m, fast.clone())).collect());
    let compared = pair(a, b);
    for method in methods {
        let tested = found(&compared, method).write.as_ref().unwrap().tested.unwrap();
        assert!(tested.p < ALPHA && tested.p > ALPHA / 3.0, "{tested:?}");
        assert!((tested.p_holm - 3.0 * tested.p).abs() < 1e-12, "{tested:?}");
        assert!(!tested.significant, "{tested:?}");
    }
    assert_eq!(compared.summary[0].tests_significant, 0);
}

#[test]
fn durable_tests_join_the_same_family_and_only_where_the_mode_syncs() {
    let a =
        result("tmpfs", vec![case("pwrite", "end", &around(1.0).into_iter().map(|t| (t, 0.001)).collect::<Vec<_>>())]);
    let b = result("ext4", vec![case("pwrite", "end", &around(1.0).into_iter().map(|t| (t, 1.0)).collect::<Vec<_>>())]);
    let compared = pair(a, b);
    let versus = found(&compared, "pwrite");
    assert!(!versus.write.as_ref().unwrap().significant());
    let durable = versus.durable.as_ref().unwrap().tested.unwrap();
    assert!(durable.significant && durable.factor < 0.51, "{durable:?}");
    assert_eq!(compared.summary[0].tests, 2, "write and durable, one family");
    assert_eq!(compared.summary[0].cases_significant, 1);
    // A v1 file stored a durable figure for `none`; there is nothing durable to test.
    let mut old = result("tmpfs", vec![write_only("write", around(1.0))]);
    old.cases[0].durable_stats = old.cases[0].stats;
    let compared = pair(old.clone(), old);
    assert_eq!(found(&compared, "write").durable, None);
    assert_eq!(compared.cases[0].files[0].as_ref().unwrap().durable_median, None);
}

#[test]
fn unmatched_cases_are_listed_with_the_files_that_have_them() {
    let mut bigger = write_only("pwrite", around(1.0));
    bigger.case.bytes *= 2;
    let a = result("tmpfs", vec![write_only("write", around(1.0))]);
    let b = result("tmpfs", vec![write_only("write", around(1.0)), bigger]);
    let c = result("tmpfs", vec![write_only("writev", around(1.0))]);
    let compared = compare(&[("a".into(), a), ("b".into(), b), ("c".into(), c)]);
    assert_eq!(compared.cases.len(), 1, "{:?}", compared.cases);
    let write = &compared.cases[0];
    assert!(write.id.starts_with("write ") && write.versus[0].is_some() && write.versus[1].is_none());
    assert!(write.files[2].is_none());
    let unmatched: Vec<(&str, u64, Vec<usize>)> =
        compared.unmatched.iter().map(|u| (u.id.split(' ').next().unwrap(), u.bytes, u.in_files.clone())).collect();
    assert_eq!(unmatched, vec![("pwrite", 128 * MIB, vec![1]), ("writev", 64 * MIB, vec![2])]);
    assert_eq!(compared.summary.len(), 2);
    assert_eq!(compared.summary[1].cases_tested, 0);
}

/// `write_only(method, times)` writing `bytes` a run.
fn sized(method: &str, bytes: u64, times: Vec<f64>) -> CaseResult {
    let mut case = write_only(method, times);
    case.case.bytes = bytes;
    case
}

#[test]
fn cases_of_different_sizes_are_shown_side_by_side_without_a_factor() {
    // The same times for 4 times the bytes: the rate is 4 times as high, yet a ratio of
    // the mean times would say ×1.00.
    let compared = pair(
        result("tmpfs", vec![sized("pwrite", 64 * MIB, around(1.0))]),
        result("tmpfs", vec![sized("pwrite", 256 * MIB, around(1.0))]),
    );
    assert_eq!(compared.cases.len(), 1, "matched by its id: {:?}", compared.unmatched);
    assert!(compared.unmatched.is_empty(), "{:?}", compared.unmatched);
    let case = &compared.cases[0];
    assert_eq!(case.bytes, 64 * MIB, "the baseline's size");
    let sides: Vec<u64> = case.files.iter().map(|side| side.as_ref().unwrap().bytes).collect();
    assert_eq!(sides, [64 * MIB, 256 * MIB]);
    let versus = found(&compared, "pwrite");
    let write = versus.write.as_ref().expect("both figures");
    assert!((write.other_median / write.baseline_median - 4.0).abs() < 1e-9, "{write:?}");
    assert_eq!(write.tested, None, "no factor between different sizes");
    assert_eq!(versus.different_sizes.unwrap().reason(), "different sizes: 64 MiB vs 256 MiB");
    let summary = &compared.summary[0];
    assert_eq!((summary.tests, summary.cases_tested, summary.cases_untested), (0, 0, 1));

    // The baseline has the id at both sizes, the other file at one: the same size is
    // matched (and tested), the other size is the baseline's alone.
    let compared = pair(
        result("tmpfs", vec![sized("pwrite", 64 * MIB, around(1.0)), sized("pwrite", 256 * MIB, around(4.0))]),
        result("tmpfs", vec![sized("pwrite", 256 * MIB, around(2.0))]),
    );
    assert_eq!(compared.cases.len(), 1, "{:?}", compared.cases);
    let versus = compared.cases[0].versus[0].as_ref().unwrap();
    assert_eq!((compared.cases[0].bytes, versus.different_sizes), (256 * MIB, None));
    assert!((versus.write.as_ref().unwrap().tested.unwrap().factor - 2.0).abs() < 1e-9);
    let unmatched: Vec<(u64, Vec<usize>)> = compared.unmatched.iter().map(|u| (u.bytes, u.in_files.clone())).collect();
    assert_eq!(unmatched, [(64 * MIB, vec![0])]);
}

#[test]
fn the_labs_fastest_of_all_gives_no_factor_between_different_sizes() {
    let file = |fs: &str, bytes: u64, seconds: f64| {
        let mut file = result(fs, vec![sized("pwrite", bytes, around(seconds))]);
        let id = file.cases[0].case.id.clone();
        let rate = bytes as f64 / seconds;
        file.answer = vec![recommend("fastest", &id, rate)];
        (fs.to_string(), file)
    };
    // xfs wrote 4 times the bytes in twice the time: twice the rate, where the ratio
    // of the mean times would say ×0.5.
    let compared = across::compare_filesystems(&[file("ext4", 64 * MIB, 1.0), file("xfs", 256 * MIB, 2.0)]);
    let fastest = compared.fastest.iter().find(|f| f.goal == "fastest").expect("a fastest goal");
    assert_eq!((fastest.file, fastest.factor, fastest.p), (1, None, None), "{fastest:?}");
    assert!(fastest.text.ends_with("no factor: different sizes: 256 MiB vs 64 MiB"), "{}", fastest.text);
    // The same sizes are tested as before.
    let compared = across::compare_filesystems(&[file("ext4", 64 * MIB, 1.0), file("xfs", 64 * MIB, 0.5)]);
    let fastest = compared.fastest.iter().find(|f| f.goal == "fastest").unwrap();
    assert!((fastest.factor.unwrap() - 2.0).abs() < 1e-9, "{fastest:?}");
    assert!(fastest.text.contains("; 2.0x faster than ext4's best, "), "{}", fastest.text);
    assert!(!fastest.text.contains("xx") && !fastest.text.contains("x–"), "one x per factor: {}", fastest.text);
    // The same times: tied only because the interval lies within ±5 %.
    let compared = across::compare_filesystems(&[file("ext4", 64 * MIB, 1.0), file("xfs", 64 * MIB, 1.0)]);
    let fastest = compared.fastest.iter().find(|f| f.goal == "fastest").unwrap();
    assert!(fastest.text.contains("; tied with "), "{}", fastest.text);
}

#[test]
fn a_case_without_runs_on_one_side_is_matched_but_not_tested() {
    let failed = CaseResult::without_result(write_only("write", around(1.0)).case, Status::Failed, "EIO".into());
    let compared = pair(result("tmpfs", vec![write_only("write", around(1.0))]), result("tmpfs", vec![failed]));
    let versus = found(&compared, "write");
    assert_eq!((versus.write.as_ref(), versus.durable.as_ref()), (None, None));
    assert_eq!(compared.cases[0].files[1].as_ref().unwrap().status, Status::Failed);
    assert_eq!((compared.summary[0].cases_untested, compared.summary[0].tests), (1, 0));
    // One run each: medians, but no test.
    let one = |t| write_only("write", vec![t]);
    let compared = pair(result("tmpfs", vec![one(1.0)]), result("tmpfs", vec![one(0.5)]));
    let test = found(&compared, "write").write.clone().unwrap();
    assert_eq!(test.tested, None);
    assert!((test.other_median / test.baseline_median - 2.0).abs() < 1e-9);
}

#[test]
fn context_and_option_differences_are_found_and_run_details_are_not() {
    let a = result("tmpfs", vec![]);
    let mut b = result("ext4", vec![]);
    b.host.kernel = "Linux 6.12".into();
    b.tool.version = "0.2.0".into();
    b.options = RunOptions::from_json(
        serde_json::json!({"size": 32 * MIB, "argv": ["other"], "peak_rss_bytes": 2, "mmap_advice": {"map_populate": true}, "verify": true}),
    );
    let compared = pair(a, b);
    let fields: Vec<(&str, Vec<Option<&str>>)> = compared
        .differences
        .iter()
        .map(|d| (d.field.as_str(), d.values.iter().map(|v| v.as_deref()).collect()))
        .collect();
    assert_eq!(
        fields,
        vec![
            ("tool.version", vec![Some(env!("CARGO_PKG_VERSION")), Some("0.2.0")]),
            ("host.kernel", vec![Some("Linux 6.1"), Some("Linux 6.12")]),
            ("target.fs_type", vec![Some("tmpfs"), Some("ext4")]),
            // serde_json keeps an object's keys sorted.
            ("options.mmap_advice.map_populate", vec![Some("false"), Some("true")]),
            ("options.size", vec![Some("67108864"), Some("33554432")]),
            ("options.verify", vec![None, Some("true")]),
        ]
    );
    let same = pair(result("tmpfs", vec![]), result("tmpfs", vec![]));
    assert!(same.differences.is_empty(), "{:?}", same.differences);
}

fn recommend(goal: &str, case: &str, median: f64) -> Recommendation {
    let figure = Figure {
        case: case.into(),
        metric: "throughput".into(),
        median,
        mean: median,
        ci95_low: None,
        ci95_high: None,
    };
    let naive = Comparison {
        better: case.into(),
        baseline: "write empty 4KiB t1 none".into(),
        factor: 2.0,
        low: 1.5,
        high: 2.5,
        p_value: 0.001,
        significant: true,
    };
    Recommendation {
        goal: goal.into(),
        text: format!("{case}: {median}"),
        best: figure,
        runner_up: None,
        naive: Some(naive),
        tied: false,
        verdict: None,
        fastest: None,
        crash_checked: None,
        glance: None,
    }
}

#[test]
fn recommendations_are_compared_goal_by_goal_and_an_old_file_has_none() {
    let mut a = result("tmpfs", vec![]);
    a.answer = vec![recommend("fastest", "pwrite x", 2e9), recommend("durable-at-end", "pwrite y", 1e9)];
    let mut b = result("tmpfs", vec![]);
    b.answer = vec![recommend("fastest", "pwrite x", 2.2e9), recommend("durable-at-end", "pwritev z", 1.1e9)];
    let old = result("tmpfs", vec![]);
    let compared = compare(&[("a".into(), a), ("b".into(), b), ("old".into(), old)]);
    assert_eq!(compared.files.iter().map(|f| f.answer_stored).collect::<Vec<_>>(), vec![true, true, false]);
    let goals: Vec<(&str, Option<bool>)> =
        compared.answers.iter().map(|g| (g.goal.as_str(), g.same_strategy)).collect();
    assert_eq!(goals, vec![("fastest", Some(true)), ("durable-at-end", Some(false))]);
    let fastest = &compared.answers[0];
    assert_eq!(fastest.picks[1].as_ref().unwrap().median, 2.2e9);
    assert_eq!(fastest.picks[2], None);
}

/// Small durable commits answered at 8 B and at 512 B are two goals to compare: each
/// file's 512 B pick is set beside the other's 512 B pick, not its 8 B one.
#[test]
fn a_goal_answered_per_record_size_is_compared_size_by_size() {
    use crate::advice::testkit::latency_sized;
    let file = |small: &str, log: &str| {
        let latency = |pattern, mode, bytes| {
            let case = latency_sized(pattern, mode, bytes);
            crate::summarize::measured(case, vec![Run { write_seconds: 0.2, ..Run::default() }], 1)
        };
        let cases = vec![latency("overwrite0", small, 8), latency("overwrite0", log, 512)];
        let mut file = result("ext4", cases);
        let (small_id, log_id) = (file.cases[0].case.id.clone(), file.cases[1].case.id.clone());
        file.answer = vec![
            recommend("small-durable-commits", &small_id, 5000.0),
            recommend("small-durable-commits", &log_id, 4000.0),
        ];
        file
    };
    let compared =
        compare(&[("a".into(), file("odsync", "odsync")), ("b".into(), file("odsync", "every-fdatasync:1"))]);
    let goals: Vec<(Option<u64>, Option<bool>)> =
        compared.answers.iter().map(|g| (g.record_bytes, g.same_strategy)).collect();
    assert_eq!(goals, vec![(Some(8), Some(true)), (Some(512), Some(false))]);
}

#[test]
fn labels_are_letters_then_numbered() {
    assert_eq!((label(0).as_str(), label(25).as_str(), label(26).as_str()), ("A", "Z", "F27"));
}

#[test]
fn the_result_round_trips_through_json() {
    let compared = pair(
        result("tmpfs", vec![write_only("write", around(1.0))]),
        result("xfs", vec![write_only("write", around(0.9))]),
    );
    let text = serde_json::to_string(&compared).unwrap();
    assert_eq!(serde_json::from_str::<CompareResult>(&text).unwrap(), compared);
    assert!(text.contains("\"schema\":\"writebench.compare.v1\""));
}
