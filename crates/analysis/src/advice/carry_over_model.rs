//! Whether runs pay for the run before them, tested over all cases together
//! (docs/measurement.md, "Between runs"). The per-case check (`carry_over`) needs six
//! runs of a case, which a raced run seldom gives; this one needs two. Each run's time is
//! taken against its case's own (its log less the mean log of the case's runs), so that
//! cases of every size and speed pool, and that deviation is ranked against two measures
//! of the work the run before it (by `sequence`, of whatever case) left:
//! - the kernel's: that run's system CPU time, its calls, allocations and page work;
//! - the device's and the writeback's, which no process's CPU time holds: the dirty and
//!   writeback memory the machine still had when this run started (the settle step waits
//!   for it, up to its limit) plus the bytes the device was asked to write during the
//!   run before (journal and flusher threads included).
//!
//! Spearman's rank correlation over all such runs for each, Holm over the two. A rise
//! (ρ > 0, adjusted p < 0.05) is said as a finding with both figures, as an association:
//! the machine's drift can make the run before heavier and this one slower together, and
//! a race's later rounds pair few cases; otherwise one line says it was tested, over how
//! many runs, and found nothing.

use super::figures::Figures;
use std::collections::HashMap;

use super::figures::{Finding, Measured, Metric};
use super::words::p_value;
use crate::summarize::counted_runs;
use result::{CaseResult, Run};
use stats::rank::{Spearman, spearman};
use stats::significance::{ALPHA, holm};

/// Fewer pairs than this give no test worth saying.
pub const MIN_PAIRS: usize = 8;

/// The test over all cases, or None where fewer than [`MIN_PAIRS`] runs follow a run
/// the result kept (a result saved before runs were numbered, or a handful of runs).
pub fn carried_over(measured: &Measured) -> Option<Finding> {
    let by_sequence: HashMap<u64, &Run> =
        measured.cases.iter().flat_map(|c| c.runs.iter()).map(|run| (run.sequence, run)).collect();
    // (deviation from the case's mean log time, kernel work before, device work before)
    let mut pairs: Vec<(f64, f64, f64)> = Vec::new();
    let mut cases = 0;
    for &case in &measured.cases {
        let deviations = deviations(case);
        if deviations.is_empty() {
            continue;
        }
        cases += 1;
        for (run, deviation) in deviations {
            let Some(before) = run.sequence.checked_sub(1).and_then(|s| by_sequence.get(&s)) else { continue };
            let waiting = run.dirty_before_bytes.unwrap_or(0) + run.writeback_before_bytes.unwrap_or(0);
            let device = before.device.as_ref().map_or(0, |d| d.bytes_written);
            let Some(kernel) = before.sys_seconds else { continue };
            pairs.push((deviation, kernel, (waiting + device) as f64));
        }
    }
    if pairs.len() < MIN_PAIRS {
        return None;
    }
    let deviation: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let kernel = spearman(&deviation, &pairs.iter().map(|p| p.1).collect::<Vec<_>>());
    let device = spearman(&deviation, &pairs.iter().map(|p| p.2).collect::<Vec<_>>());
    let adjusted = holm(&[kernel.map_or(1.0, |s| s.p), device.map_or(1.0, |s| s.p)]);
    let measures = [
        ("the system time of the run before", kernel, adjusted[0]),
        ("the writeback waiting at its start and the device's writes during the run before", device, adjusted[1]),
    ];
    let said = |(what, s, p): &(&str, Option<Spearman>, f64)| match s {
        Some(s) => format!("{what}: ρ = {:.2}, {}", s.rho, p_value(*p)),
        None => format!("{what}: no spread to rank"),
    };
    let rose = |(_, s, p): &&(&str, Option<Spearman>, f64)| s.is_some_and(|s| s.rho > 0.0) && *p < ALPHA;
    let (rising, others): (Vec<_>, Vec<_>) = measures.iter().partition(|m| rose(m));
    let rises = !rising.is_empty();
    let list = |items: &[&(&str, Option<Spearman>, f64)]| items.iter().map(|m| said(m)).collect::<Vec<_>>().join("; ");
    let text = if rises {
        let rest = if others.is_empty() { String::new() } else { format!(" (with {})", list(&others)) };
        format!(
            "runs may pay for the run before them: over {} runs of {cases} cases, a run's time against its case's \
             own rose with {}{rest}: some figures may carry their neighbours' cost, or the machine's speed drifted \
             with the order of the runs (--order grouped runs each case's runs together)",
            pairs.len(),
            list(&rising)
        )
    } else {
        format!(
            "whether a run pays for the run before it, tested over all cases together: no rise over {} runs of \
             {cases} cases (with {})",
            pairs.len(),
            list(&measures.iter().collect::<Vec<_>>())
        )
    };
    let mut finding = Finding::new(if rises { "carry-over" } else { "carry-over-tested" }, text, Vec::new(), None, 0.0);
    let numbers = [
        ("runs", pairs.len() as f64),
        ("cases", cases as f64),
        ("rho_kernel", kernel.map_or(f64::NAN, |s| s.rho)),
        ("p_kernel", adjusted[0]),
        ("rho_device", device.map_or(f64::NAN, |s| s.rho)),
        ("p_device", adjusted[1]),
    ];
    finding.observation.numbers =
        numbers.into_iter().filter(|(_, v)| v.is_finite()).map(|(k, v)| (k.to_string(), v)).collect();
    Some(finding)
}

/// Each counted run of `case` with its time's deviation from the case's own: its log
/// time less the mean log time of the case's runs, under its durable figure where it has
/// one; none for a case with fewer than two runs.
fn deviations(case: &CaseResult) -> Vec<(&Run, f64)> {
    let metric = if case.durable_stats.is_some() { Metric::Durable } else { Metric::Buffered };
    let Some(times) = metric.times(case) else { return Vec::new() };
    let runs = counted_runs(&case.runs);
    if times.len() < 2 || times.len() != runs.len() || times.iter().any(|&t| !(t > 0.0 && t.is_finite())) {
        return Vec::new();
    }
    let logs: Vec<f64> = times.iter().map(|t| t.ln()).collect();
    let mean = logs.iter().sum::<f64>() / logs.len() as f64;
    runs.into_iter().zip(logs).map(|(run, log)| (run, log - mean)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advice::testkit::{Build, case};

    /// Sixteen cases of two runs each, in order: case i runs at sequence 2i, doing heavy
    /// kernel work itself (0.5 s of system time) after a light run, and at 2i + 1, light,
    /// after its own heavy one, taking `slow` times as long there. A little noise that
    /// owes nothing to the order rides on every run.
    fn result(slow: f64) -> result::ResultFile {
        let mut build = Build::new();
        for index in 0..16u32 {
            let (method, shift) = if index < 8 { ("pwrite", index) } else { ("write", index - 8) };
            build = build.add(case(&format!("{method} empty {}KiB t1 none", 4 << shift)), &[1.0, 1.0]);
        }
        let mut result = build.done();
        for (index, case) in result.cases.iter_mut().enumerate() {
            for (number, run) in case.runs.iter_mut().enumerate() {
                run.sequence = (2 * index + number) as u64;
                let noise = 1.0 + 0.02 * ((run.sequence * 7919 % 11) as f64 / 11.0);
                run.write_seconds = noise * if number == 1 { slow } else { 1.0 };
                run.sys_seconds = Some(if number == 0 { 0.5 } else { 0.01 });
            }
        }
        result
    }

    #[test]
    fn a_rise_with_the_work_before_shows_over_all_cases_with_two_runs_each() {
        let paying = result(1.2);
        let finding = carried_over(&Measured::of(&paying)).expect("enough runs to test");
        assert_eq!(finding.observation.kind, "carry-over", "{}", finding.observation.text);
        assert!(
            finding.observation.text.starts_with("runs may pay for the run before them: over 31 runs of 16 cases"),
            "{}",
            finding.observation.text
        );
        let numbers = &finding.observation.numbers;
        assert!(numbers["rho_kernel"] > 0.5 && numbers["p_kernel"] < 0.01, "{numbers:?}");
        let calm = result(1.0);
        let finding = carried_over(&Measured::of(&calm)).expect("enough runs to test");
        assert_eq!(finding.observation.kind, "carry-over-tested", "{}", finding.observation.text);
        assert!(finding.observation.text.contains("no rise over 31 runs of 16 cases"), "{}", finding.observation.text);
    }

    #[test]
    fn too_few_runs_after_a_kept_run_are_no_test() {
        let result = Build::new().add(case("write empty 4KiB t1 none"), &[1.0, 1.1]).done();
        assert!(carried_over(&Measured::of(&result)).is_none());
    }
}
