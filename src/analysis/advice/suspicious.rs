//! Figures to doubt: faster than memory can copy, measured without reaching their CI
//! target, or after a first run that stood out. Each kind is one line however many
//! cases it concerns, naming the worst first, with every case among its figures.
//!
//! Not here yet, for want of the numbers (no line is made up for them):
//! - a case that was CPU-bound: needs the CPU share of each case (CPU time over wall
//!   time and threads), which the statistics do not derive yet;
//! - runtimes against native: needs cases of another runtime than `native`, which no
//!   runtime runs yet. Both belong beside these functions when their numbers exist.

use super::figures::{Finding, Measured, Metric, Side};
use super::words::gbps;
use crate::result::Figure;

/// Cases whose mean (buffered or durable) is above `ceiling` bytes/s, the calibrated
/// memory-copy rate: nothing written through the kernel is faster than copying memory.
pub fn above_ceiling(measured: &Measured, ceiling: Option<f64>) -> Vec<Finding> {
    let Some(ceiling) = ceiling else { return Vec::new() };
    let mut flagged: Vec<Side> = measured
        .cases
        .iter()
        .flat_map(|&c| [Side::new(c, Metric::Buffered), Side::new(c, Metric::Durable)])
        .filter(|side| side.metric.summary(side.case).is_some_and(|s| s.mean > ceiling))
        .collect();
    if flagged.is_empty() {
        return Vec::new();
    }
    flagged.sort_by(|a, b| b.mean().total_cmp(&a.mean()));
    let worst = flagged[0];
    let text = format!(
        "{} above the memory-copy rate of {}, not plausible: {}{} at {}{}",
        count(flagged.len(), "figure"),
        gbps(ceiling),
        worst.id(),
        if worst.metric == Metric::Durable { " (durable)" } else { "" },
        gbps(worst.mean()),
        more(flagged.len())
    );
    let figures = flagged.iter().filter_map(Side::figure).collect();
    vec![Finding::new("suspicious-ceiling", text, figures, None, 0.0)]
}

/// Cases that ran to `--max-runs` without their CI target: the half-width they reached.
pub fn ci_missed(measured: &Measured) -> Vec<Finding> {
    let mut missed: Vec<_> =
        measured.cases.iter().filter_map(|&c| c.target_ci.filter(|t| !t.met).map(|t| (c, t))).collect();
    if missed.is_empty() {
        return Vec::new();
    }
    missed
        .sort_by(|a, b| b.1.reached_pct.unwrap_or(f64::INFINITY).total_cmp(&a.1.reached_pct.unwrap_or(f64::INFINITY)));
    let (worst, target) = missed[0];
    let reached = target.reached_pct.map_or("no CI".to_string(), |r| format!("±{r:.1} %"));
    let text = format!(
        "{} missed the ±{} % CI target (noisy): {} at {reached} after {} runs{}",
        count(missed.len(), "case"),
        target.pct,
        worst.case.id,
        target.runs,
        more(missed.len())
    );
    let figures = missed.iter().flat_map(|(c, _)| figures(c)).collect();
    vec![Finding::new("ci-missed", text, figures, None, 0.0)]
}

/// Cases whose first measured run was an outlier (kept in the figures): the warm-up
/// was likely too short for them.
pub fn first_run_outliers(measured: &Measured) -> Vec<Finding> {
    let cases: Vec<_> = measured.cases.iter().filter(|c| c.first_run_outlier).collect();
    let Some(first) = cases.first() else { return Vec::new() };
    let text = format!(
        "{} had an outlying first run, kept in the figures (warm-up too short?): {}{}",
        count(cases.len(), "case"),
        first.case.id,
        more(cases.len())
    );
    let figures = cases.iter().flat_map(|c| figures(c)).collect();
    vec![Finding::new("first-run-outlier", text, figures, None, 0.0)]
}

fn figures(case: &crate::result::CaseResult) -> Vec<Figure> {
    [Metric::Buffered, Metric::Durable].into_iter().filter_map(|m| Side::new(case, m).figure()).collect()
}

fn count(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

fn more(n: usize) -> String {
    if n > 1 { format!(" and {} more", n - 1) } else { String::new() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::advice::testkit::{Build, around, case};

    #[test]
    fn a_figure_above_the_memory_copy_ceiling_is_flagged() {
        // 1 GiB in 0.1 s is 10.7 GB/s; in 1 s, 1.07 GB/s.
        let result = Build::new()
            .add(case("pwrite empty 1MiB t1 none"), &around(0.1))
            .add(case("write empty 1MiB t1 none"), &around(1.0))
            .done();
        let measured = Measured::of(&result);
        let flagged = above_ceiling(&measured, Some(5e9));
        assert_eq!(flagged.len(), 1);
        let observation = &flagged[0].observation;
        assert_eq!(observation.kind, "suspicious-ceiling");
        assert_eq!(
            observation.text,
            "1 figure above the memory-copy rate of 5.00 GB/s, not plausible: pwrite empty 1MiB t1 none at 10.7 GB/s"
        );
        assert_eq!(observation.figures.len(), 1);
        assert!(above_ceiling(&measured, Some(20e9)).is_empty());
        assert!(above_ceiling(&measured, None).is_empty(), "no calibration, no ceiling, no line");
    }

    #[test]
    fn a_missed_ci_target_and_an_outlying_first_run_are_one_line_each() {
        let result = Build::new()
            .add(case("pwrite empty 1MiB t1 none"), &around(1.0))
            .missed_ci(5.0, 7.25)
            .add(case("write empty 1MiB t1 none"), &[3.0, 1.0, 1.01, 0.99, 1.0, 1.02])
            .missed_ci(5.0, 9.5)
            .add(case("write empty 4KiB t1 none"), &around(1.0))
            .done();
        let measured = Measured::of(&result);
        let missed = ci_missed(&measured);
        assert_eq!(
            missed[0].observation.text,
            "2 cases missed the ±5 % CI target (noisy): write empty 1MiB t1 none at ±9.5 % after 6 runs and 1 more"
        );
        assert_eq!(missed[0].observation.figures.len(), 2);
        let first = first_run_outliers(&measured);
        assert_eq!(
            first[0].observation.text,
            "1 case had an outlying first run, kept in the figures (warm-up too short?): write empty 1MiB t1 none"
        );
    }
}
