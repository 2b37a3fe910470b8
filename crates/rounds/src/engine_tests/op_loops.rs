//! The latency loops (executors::op_loops) run as `latency` runs them, through the rounds'
//! `run_alone`, on real files: percentiles, rates, CPU time, the save patterns, and what
//! is refused. They live above `measure`, which knows nothing of the rounds.

use executors::op_loops::prepare;
use measure::target::Scratch;
use plan::catalog::NATIVE;
use plan::durability::Durability;
use plan::latency::{LatencyPlan, Pattern, Unit, case_of};
use result::{CaseResult, Status};

/// Runs one latency case's loops back to back, `plan.loops` of them (the commands
/// interleave them with the other cases).
fn run_case(index: usize, plan: &LatencyPlan, unit: &Unit, durability: Durability, scratch: &Scratch) -> CaseResult {
    let case = case_of(plan, unit, durability);
    let prepared = prepare(index, plan, unit, durability, scratch);
    crate::run_alone(case, prepared, plan.loops, 0, plan.seed, &mut || {})
}

fn native(pattern: Pattern) -> Unit {
    Unit { pattern, runtime: NATIVE.into(), method: plan::latency::methods_of(NATIVE, pattern)[0], bytes: 8 }
}

fn plan() -> LatencyPlan {
    LatencyPlan {
        count: 200,
        loops: 2,
        sizes: vec![8],
        warmup: 10,
        patterns: vec![Pattern::Overwrite0, Pattern::Append],
        durability: vec![],
        seed: 1,
        runtimes: vec![],
    }
}

#[test]
fn every_pattern_and_mode_gives_percentiles_and_a_sync_histogram_when_it_syncs() {
    let parent = tempfile::tempdir().unwrap();
    let scratch = Scratch::create(parent.path()).unwrap();
    let plan = plan();
    for (index, mode) in ["none", "every-fdatasync:1", "every:4", "odsync", "end"].iter().enumerate() {
        for pattern in [Pattern::Overwrite0, Pattern::Append] {
            let result = run_case(index, &plan, &native(pattern), mode.parse().unwrap(), &scratch);
            assert_eq!(result.status, Status::Ok, "{mode} {:?}", result.error);
            let latency = result.latency_ns.as_ref().unwrap();
            assert_eq!(latency["count"], 200);
            assert!(latency["p50"].as_u64().unwrap() <= latency["p99"].as_u64().unwrap());
            assert!(latency["p99"].as_u64().unwrap() <= latency["max"].as_u64().unwrap());
            let syncs = result.sync_latency_ns.as_ref().map(|s| s["count"].as_u64().unwrap());
            let expected = match *mode {
                "every-fdatasync:1" => Some(200),
                "every:4" => Some(50),
                _ => None,
            };
            assert_eq!(syncs, expected, "{mode}");
            assert!(result.ops_per_second.unwrap() > 0.0);
            assert_eq!(result.runs.len(), 2, "{mode}: a run per loop");
        }
    }
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0, "files are removed");
}

#[test]
fn each_loop_is_a_run_with_its_own_rate_and_percentiles_and_the_case_merges_them() {
    let parent = tempfile::tempdir().unwrap();
    let scratch = Scratch::create(parent.path()).unwrap();
    let plan = LatencyPlan { count: 400, loops: 4, ..plan() };
    let result = run_case(0, &plan, &native(Pattern::Append), "every:2".parse().unwrap(), &scratch);
    assert_eq!(result.status, Status::Ok, "{:?}", result.error);
    assert_eq!(result.runs.len(), 4);
    assert_eq!(result.case.bytes, 8 * 100, "a run writes one loop's bytes");
    for run in &result.runs {
        let own = run.latency_ns.as_ref().expect("the loop's own percentiles");
        assert_eq!(own["count"], 100);
        let ops = run.ops_per_second.unwrap();
        assert!((ops * run.write_seconds - 100.0).abs() < 1e-6, "{run:?}");
        assert!(run.settle_seconds.is_some(), "settled before each loop, as a write run is");
    }
    let merged = result.latency_ns.as_ref().unwrap();
    assert_eq!(merged["count"], 400, "every operation of every loop");
    let slowest = result.runs.iter().map(|run| run.latency_ns.as_ref().unwrap()["max"].as_u64().unwrap()).max();
    assert_eq!(merged["max"].as_u64(), slowest);
    assert_eq!(result.sync_latency_ns.as_ref().unwrap()["count"], 200, "every second write's sync, every loop");
    let ops = result.ops_stats.expect("a summary over the loops");
    assert_eq!(ops.n, 4);
    assert!(ops.ci95_low.is_some(), "an interval from four loops");
    let mean_time = result.runs.iter().map(|run| run.write_seconds).sum::<f64>() / 4.0;
    assert!((ops.mean * mean_time - 100.0).abs() < 1e-6, "a loop's operations over the mean loop time");
    assert_eq!(result.ops_per_second, Some(ops.mean));
}

#[test]
fn the_run_is_the_timed_loop_and_its_cpu_time_is_measured() {
    let parent = tempfile::tempdir().unwrap();
    let scratch = Scratch::create(parent.path()).unwrap();
    // Fewer durable operations: each one is a commit on this disk.
    for (index, (mode, count)) in [("none", 20_000), ("every-fdatasync:1", 500)].into_iter().enumerate() {
        let plan = LatencyPlan { count, loops: 1, ..plan() };
        let result = run_case(index, &plan, &native(Pattern::Overwrite0), mode.parse().unwrap(), &scratch);
        let run = &result.runs[0];
        // write_seconds is the loop's wall time, of which ops_per_second is made.
        let ops = result.ops_per_second.unwrap();
        assert!((ops * run.write_seconds - count as f64).abs() < 1e-6, "{mode}: {run:?}");
        // It holds every operation, and what the loop does between them.
        let operations = result.latency_ns.as_ref().unwrap()["mean"].as_f64().unwrap() * count as f64 * 1e-9;
        assert!(run.write_seconds >= operations * 0.99, "{mode}: {run:?} vs {operations}");
        // Hundreds of system calls take CPU time, and one thread cannot use more than
        // the wall time (plus the clock's and getrusage's granularity).
        let cpu = run.cpu_seconds().unwrap();
        assert!(cpu > 0.0, "{mode}: CPU time read, not a 0 standing in for it: {run:?}");
        assert!(cpu <= run.write_seconds + run.sync_seconds + 0.01, "{mode}: {run:?}");
    }
}

#[test]
fn each_save_pattern_runs_once_per_size_with_percentiles_and_leaves_nothing() {
    let parent = tempfile::tempdir().unwrap();
    let scratch = Scratch::create(parent.path()).unwrap();
    let plan = LatencyPlan {
        count: 20,
        sizes: vec![4096, 100_000],
        patterns: vec![Pattern::Replace, Pattern::ReplaceTmpfile, Pattern::ReplaceUnsafe],
        durability: vec![Durability::None, Durability::End],
        ..plan()
    };
    let cases = plan.cases();
    assert_eq!(cases.len(), 6, "once per pattern and size, whatever the modes");
    for (index, (unit, mode)) in cases.iter().enumerate() {
        let result = run_case(index, &plan, unit, *mode, &scratch);
        assert_eq!(result.status, Status::Ok, "{}: {:?}", result.case.id, result.error);
        assert_eq!(result.latency_ns.as_ref().unwrap()["count"], 20);
        assert!(result.sync_latency_ns.is_none());
        assert!(result.ops_per_second.unwrap() > 0.0);
    }
    assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0, "target and temp files are removed");
}

#[test]
fn direct_with_8_bytes_is_unsupported_with_the_reason() {
    let parent = tempfile::tempdir().unwrap();
    let scratch = Scratch::create(parent.path()).unwrap();
    let result = run_case(0, &plan(), &native(Pattern::Overwrite0), "direct".parse().unwrap(), &scratch);
    assert_eq!(result.status, Status::Unsupported, "{:?}", result.error);
    assert!(result.latency_ns.is_none());
}
