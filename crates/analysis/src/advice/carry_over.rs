//! Runs that pay for their neighbour (docs/measurement.md, "Between runs"): a case whose
//! run times follow how much work the case run just before left behind. Each run
//! records that case (`after`); the work it left is taken as its median system CPU time
//! per run, what the kernel spent on its calls, allocations and writeback. Where a
//! case's times rise with it (Spearman's rank correlation, tested exactly by permutation
//! up to 8 runs; Holm over every case tested), the case gets a note naming its slowest
//! and fastest runs and the cases before them. The test over all cases together, which
//! needs two runs a case and counts the device's and the writeback's work, is
//! `carry_over_model`'s. Runs whose settle step gave up with writeback still under way
//! are said too.

use super::figures::Figures;
use std::collections::HashMap;

use super::figures::{Finding, Measured, Metric, case_figures};
use super::words::{gbps, p_value};
use result::{CaseResult, ResultFile};
use stats::median;
use stats::rank::{Spearman, spearman};
use stats::significance::{ALPHA, holm};

/// Fewer runs than this cannot show a rank correlation at 5 % among several cases.
pub const MIN_RUNS: usize = 6;

/// A case tested, its correlation, and each run's time with the case before it.
type Tested<'a> = (&'a CaseResult, Spearman, Vec<(f64, &'a str)>);

pub fn carry_over(measured: &Measured, result: &ResultFile) -> Vec<Finding> {
    let weight: HashMap<&str, f64> = result
        .cases
        .iter()
        .filter_map(|c| {
            // A case whose runs' system time was not read weighs nothing here.
            let sys: Option<Vec<f64>> = c.runs.iter().map(|r| r.sys_seconds).collect();
            sys.filter(|sys| !sys.is_empty()).map(|sys| (c.case.id.as_str(), median(&sys)))
        })
        .collect();
    let mut tested: Vec<Tested> = Vec::new();
    for &case in &measured.cases {
        let metric = if case.durable_stats.is_some() { Metric::Durable } else { Metric::Buffered };
        let Some(times) = metric.times(case) else { continue };
        let pairs: Vec<(f64, f64, &str)> = case
            .runs
            .iter()
            .zip(times)
            .filter_map(|(run, time)| {
                let before = run.after.as_deref()?;
                Some((time, *weight.get(before)?, before))
            })
            .collect();
        if pairs.len() < MIN_RUNS {
            continue;
        }
        let (times, weights): (Vec<f64>, Vec<f64>) = pairs.iter().map(|&(t, w, _)| (t, w)).unzip();
        let Some(spearman) = spearman(&times, &weights) else { continue };
        tested.push((case, spearman, pairs.iter().map(|&(t, _, before)| (t, before)).collect()));
    }
    let adjusted = holm(&tested.iter().map(|(_, s, _)| s.p).collect::<Vec<_>>());
    let mut findings = Vec::new();
    // Not run is said, not kept silent: a raced run gives most cases two runs, and the
    // test needs six (docs/measurement.md, "Between runs"). A result that recorded no
    // order of runs (saved before it was) says nothing of it.
    let ordered = measured.cases.iter().any(|c| c.runs.iter().any(|r| r.after.is_some()));
    // Over all cases together, from two runs a case (`carry_over_model`): where it ran,
    // the check did run.
    let model = super::carry_over_model::carried_over(measured);
    let modelled = model.is_some();
    findings.extend(model);
    if tested.is_empty() && ordered && !modelled {
        let most = measured.cases.iter().map(|c| c.runs.len()).max().unwrap_or(0);
        let text = format!(
            "whether a run pays for the case run before it was not tested: that needs {MIN_RUNS} runs of a case, \
             and the most any case had here was {most} (--budget none --repeat {MIN_RUNS} tests it)"
        );
        let mut finding = Finding::new("carry-over-untested", text, Vec::new(), None, 0.0);
        finding.observation.numbers =
            [("runs_needed", MIN_RUNS as f64), ("most_runs", most as f64)].map(|(k, v)| (k.to_string(), v)).into();
        findings.push(finding);
    }
    for ((case, spearman, runs), p) in tested.iter().zip(adjusted) {
        // Only a rise with the work left behind is a neighbour's cost.
        if p >= ALPHA || spearman.rho <= 0.0 {
            continue;
        }
        let slowest = runs.iter().copied().max_by(|a, b| a.0.total_cmp(&b.0)).expect("runs");
        let fastest = runs.iter().copied().min_by(|a, b| a.0.total_cmp(&b.0)).expect("runs");
        let bytes = case.case.bytes as f64;
        let text = format!(
            "{}: sensitive to the case before it: {} after {}, {} after {} (its times rise with the system time \
             of the case before: Spearman ρ = {:.2}, {} among {} cases)",
            case.case.id,
            gbps(bytes / slowest.0),
            slowest.1,
            gbps(bytes / fastest.0),
            fastest.1,
            spearman.rho,
            p_value(p),
            tested.len()
        );
        findings.push(Finding::new("carry-over", text, case_figures(case), None, 0.0));
    }
    let timed_out: Vec<&CaseResult> =
        measured.cases.iter().copied().filter(|c| c.runs.iter().any(|r| r.settle_timed_out)).collect();
    if let Some(first) = timed_out.first() {
        let runs: usize = timed_out.iter().map(|c| c.runs.iter().filter(|r| r.settle_timed_out).count()).sum();
        let text = format!(
            "{runs} run{} started with writeback still under way (the settle step gave up after {} s), left out \
             of the figures and comparisons where two runs or more of the case are left: {}{}",
            if runs == 1 { "" } else { "s" },
            plan::SETTLE_LIMIT.as_secs(),
            first.case.id,
            if timed_out.len() > 1 { format!(" and {} more cases", timed_out.len() - 1) } else { String::new() }
        );
        findings.push(Finding::new("settle-timeout", text, case_figures(first), None, 0.0));
    }
    // The case that waited longest for memory to be warmed carries the figures: the
    // note is about what its runs would have paid without it.
    let warm = |c: &CaseResult| {
        let w: Vec<f64> = c.runs.iter().filter_map(|r| r.warm_seconds).collect();
        (!w.is_empty()).then(|| median(&w))
    };
    let warmed = measured.cases.iter().filter_map(|&c| Some((c, warm(c)?))).max_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((case, seconds)) = warmed {
        let text = format!(
            "this machine gives freed memory back to its host (free page reporting), and writes into memory the \
             host must supply again run several times slower: before each run writebench touched as much memory \
             as the run writes, untimed (up to {} a run, for {}), so that every run found memory ready; a program \
             writing after a pause of a few seconds pays that inside its writes",
            super::words::seconds(seconds),
            case.case.id
        );
        findings.push(Finding::new("page-reporting", text, case_figures(case), None, 0.0));
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advice::testkit::{Build, around, case};

    /// The ext4 example, doctored: `write` in 1 MiB calls is slow right after
    /// the 4 KiB case (much system time) and fast after another 1 MiB case.
    #[test]
    fn a_case_slow_after_a_heavy_neighbour_is_noted_and_a_steady_one_is_not() {
        let mut result = Build::new()
            .add(case("write empty 1MiB t1 none"), &[1.23, 0.21, 1.10, 0.20, 1.30, 0.22, 1.15, 0.19, 1.2, 0.2])
            .add(case("write empty 4KiB t1 none"), &around(1.5))
            .add(case("pwrite empty 1MiB t1 none"), &[0.20, 0.21, 0.19, 0.20, 0.22, 0.20, 0.21, 0.19, 0.2, 0.21])
            .done();
        for run in &mut result.cases[1].runs {
            run.sys_seconds = Some(1.19);
        }
        let (heavy, light) = ("write empty 4KiB t1 none", "pwrite empty 1MiB t1 none");
        for (index, run) in result.cases[0].runs.iter_mut().enumerate() {
            run.after = Some(if index % 2 == 0 { heavy } else { light }.to_string());
        }
        for (index, run) in result.cases[2].runs.iter_mut().enumerate() {
            run.after = Some(if index % 2 == 0 { heavy } else { "write empty 1MiB t1 none" }.to_string());
        }
        let findings = carry_over(&Measured::of(&result), &result);
        assert_eq!(findings.len(), 1, "{findings:?}");
        let text = &findings[0].observation.text;
        assert!(
            text.starts_with(
                "write empty 1MiB t1 none: sensitive to the case before it: 0.826 GB/s after write empty 4KiB t1 none, \
                 5.65 GB/s after pwrite empty 1MiB t1 none"
            ),
            "{text}"
        );
        // Without the record of the case before, nothing is tested.
        for run in &mut result.cases[0].runs {
            run.after = None;
        }
        assert!(carry_over(&Measured::of(&result), &result).is_empty());
    }

    /// Two runs a case, as a raced run gives most: the test cannot run, and says so.
    #[test]
    fn too_few_runs_say_the_check_did_not_run() {
        let mut result = Build::new()
            .add(case("write empty 1MiB t1 none"), &[1.0, 1.1])
            .add(case("write empty 4KiB t1 none"), &[1.5, 1.6])
            .done();
        for case in &mut result.cases {
            for run in &mut case.runs {
                run.after = Some("write empty 4KiB t1 none".to_string());
            }
        }
        let findings = carry_over(&Measured::of(&result), &result);
        assert_eq!(findings.len(), 1, "{findings:?}");
        let observation = &findings[0].observation;
        assert_eq!(observation.kind, "carry-over-untested");
        assert!(observation.text.contains("needs 6 runs of a case, and the most any case had here was 2"));
        assert_eq!(observation.numbers["most_runs"], 2.0);
    }
}
