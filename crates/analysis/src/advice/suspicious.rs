//! Figures to doubt: faster than memory can copy or the device can take, measured
//! without reaching their CI target, or after a first run that stood out. Each kind is
//! one line however many cases it concerns, naming the worst first, with every case
//! among its figures. (CPU-bound cases are a note of the table, not a doubt: being
//! limited by the CPU is a finding about the case, not about its figure.)

use super::figures::Figures;
use super::figures::{Finding, Measured, Metric, Side, case_figures};
use super::words::gbps;
use crate::ceilings::case_kind;
use context::calibration::{Calibration, DEVICE, MEMORY_COPY};
use plan::units::format_size;

/// Figures above what this machine can do at all (see `context::calibration`): a
/// buffered one above every CPU's memory-copy rate at the case's size class (a small
/// file's copy stays in the CPU caches: docs/measurement.md), a durable or direct one
/// above the device's direct write rate. A figure is flagged only when the low end of its 95 %
/// interval (its mean, with one run) is above the limit: the calibration's best run is
/// held against the case's whole interval, so the machine's drift does not flag it.
/// One line per limit, naming the worst first.
pub fn above_ceiling(measured: &Measured, calibration: Option<&Calibration>, has_device: bool) -> Vec<Finding> {
    let Some(calibration) = calibration else { return Vec::new() };
    let mut findings = Vec::new();
    for limit_kind in [MEMORY_COPY, DEVICE] {
        let mut flagged: Vec<(Side, f64)> = measured
            .cases
            .iter()
            .flat_map(|&c| [Side::new(c, Metric::Buffered), Side::new(c, Metric::Durable)])
            .filter_map(|side| {
                let (limit, of) = implausible(side, calibration, has_device)?;
                (of == limit_kind).then_some((side, limit))
            })
            .collect();
        if flagged.is_empty() {
            continue;
        }
        flagged.sort_by(|a, b| (b.0.mean() / b.1).total_cmp(&(a.0.mean() / a.1)));
        let (worst, limit) = flagged[0];
        let why = if limit_kind == MEMORY_COPY {
            let class = calibration.copy_class(worst.case.case.bytes);
            let class = class.map(|bytes| format!(" for {}", format_size(bytes))).unwrap_or_default();
            format!(
                "above the memory-copy rate of {}{class}: nothing written through the kernel is faster",
                gbps(limit)
            )
        } else {
            format!(
                "above the device's direct write rate of {}: the data cannot all have reached the device \
                 (a compressing filesystem, or a cache between?)",
                gbps(limit)
            )
        };
        let text = format!(
            "{} not plausible, {why}: {}{} at {}{}",
            count(flagged.len(), "figure"),
            worst.id(),
            if worst.metric == Metric::Durable { " (durable)" } else { "" },
            gbps(worst.mean()),
            more(flagged.len())
        );
        let figures = flagged.iter().filter_map(|(side, _)| side.figure()).collect();
        findings.push(Finding::new("suspicious-ceiling", text, figures, None, 0.0));
    }
    findings
}

/// The limit `side`'s figure is above and what it is (`MEMORY_COPY` or `DEVICE`), where
/// the low end of its 95 % interval (its mean, with one run) passes what this machine can
/// do at all for the case (`Calibration::impossible_above`); None where it does not.
pub(super) fn implausible(side: Side, calibration: &Calibration, has_device: bool) -> Option<(f64, &'static str)> {
    let summary = side.metric.summary(side.case)?;
    let kind = case_kind(&side.case.case, has_device);
    let (limit, of) = calibration.impossible_above(kind, side.metric == Metric::Durable)?;
    (summary.ci95_low.unwrap_or(summary.mean) > limit).then_some((limit, of))
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
    let figures = missed.iter().flat_map(|(c, _)| case_figures(c)).collect();
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
    let figures = cases.iter().flat_map(|c| case_figures(c)).collect();
    vec![Finding::new("first-run-outlier", text, figures, None, 0.0)]
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
    use crate::advice::testkit::{Build, around, case, sized};

    #[test]
    fn a_figure_above_the_memory_copy_ceiling_is_flagged() {
        // 1 GiB in 0.1 s is 10.7 GB/s; in 1 s, 1.07 GB/s.
        let build = || {
            Build::new()
                .add(case("pwrite empty 1MiB t1 none"), &around(0.1))
                .add(case("write empty 1MiB t1 none"), &around(1.0))
        };
        let result = build().calibrated(5e9).done();
        let measured = Measured::of(&result);
        let flagged = above_ceiling(&measured, result.calibration.as_ref(), false);
        assert_eq!(flagged.len(), 1);
        let observation = &flagged[0].observation;
        assert_eq!(observation.kind, "suspicious-ceiling");
        assert_eq!(
            observation.text,
            "1 figure not plausible, above the memory-copy rate of 5.00 GB/s: nothing written through the kernel \
             is faster: pwrite empty 1MiB t1 none at 10.7 GB/s"
        );
        assert_eq!(observation.figures.len(), 1);
        let fast = build().calibrated(20e9).done();
        assert!(above_ceiling(&Measured::of(&fast), fast.calibration.as_ref(), false).is_empty());
        assert!(above_ceiling(&measured, None, false).is_empty(), "no calibration, no ceiling, no line");
        // Within its interval of the ceiling: not flagged (the machine drifts).
        let near = Build::new().add(case("pwrite empty 1MiB t1 none"), &[0.1, 0.2, 0.05, 0.3, 0.1]).done();
        let calibration = Build::new().calibrated(10e9).done().calibration;
        assert!(above_ceiling(&Measured::of(&near), calibration.as_ref(), false).is_empty());
    }

    #[test]
    fn a_small_file_is_held_against_the_copy_of_its_own_size_class() {
        // 16 MiB files: in 1.12 ms, 15.0 GB/s; in 0.67 ms, 25.0 GB/s. The large buffer
        // copies at 14 GB/s, the 16 MiB class at 20 GB/s (it stays in the CPU caches).
        const MIB: u64 = 1 << 20;
        let small = |id: &str| sized(case(id), 16 * MIB);
        let time = |rate: f64| (16 * MIB) as f64 / rate;
        let classes = [(MIB, 30e9), (4 * MIB, 24e9), (16 * MIB, 20e9), (64 * MIB, 14e9)];
        let below_its_class = Build::new().add(small("pwrite empty 1MiB t1 none"), &around(time(15e9)));
        let result = below_its_class.calibrated(14e9).copy_classes(&classes).done();
        let measured = Measured::of(&result);
        assert!(above_ceiling(&measured, result.calibration.as_ref(), false).is_empty());
        assert!(!crate::advice::observations(&result).iter().any(|o| o.kind == "suspicious-ceiling"));
        // Against the one large-buffer figure (a result from before the classes) it was.
        let old = Build::new().add(small("pwrite empty 1MiB t1 none"), &around(time(15e9))).calibrated(14e9).done();
        assert_eq!(above_ceiling(&Measured::of(&old), old.calibration.as_ref(), false).len(), 1);
        // Above even its class's copy: still not plausible, with the class named.
        let above_its_class = Build::new()
            .add(small("pwrite empty 1MiB t1 none"), &around(time(15e9)))
            .add(small("write empty 1MiB t1 none"), &around(time(25e9)))
            .calibrated(14e9)
            .copy_classes(&classes)
            .done();
        let flagged = above_ceiling(&Measured::of(&above_its_class), above_its_class.calibration.as_ref(), false);
        assert_eq!(flagged.len(), 1);
        assert_eq!(
            flagged[0].observation.text,
            "1 figure not plausible, above the memory-copy rate of 20.0 GB/s for 16 MiB: nothing written through \
             the kernel is faster: write empty 1MiB t1 none 16MiB at 25.0 GB/s"
        );
        assert_eq!(flagged[0].observation.figures.len(), 1);
    }

    #[test]
    fn a_durable_figure_above_the_device_rate_is_flagged_and_a_buffered_one_is_not() {
        // 1 GiB written in 0.1 s and synced in 0.4 s: 10.7 GB/s buffered, 2.15 GB/s durable.
        let result = Build::new()
            .synced(case("pwrite empty 1MiB t1 end"), &around(0.1), &around(0.4))
            .calibrated_with(20e9, Some(1e9))
            .done();
        let measured = Measured::of(&result);
        let flagged = above_ceiling(&measured, result.calibration.as_ref(), true);
        assert_eq!(flagged.len(), 1, "{flagged:#?}");
        assert!(flagged[0].observation.text.contains("above the device's direct write rate of 1.00 GB/s"));
        assert!(flagged[0].observation.text.ends_with("pwrite empty 1MiB t1 end (durable) at 2.15 GB/s"));
        // Without a device (tmpfs) the durable data is in memory: 2.15 GB/s is plausible.
        assert!(above_ceiling(&measured, result.calibration.as_ref(), false).is_empty());
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
