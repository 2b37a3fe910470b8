//! Small writes, one at a time (`writebench latency`, and the quick suite's latency
//! section): what each durability mode does to the rate and the tail. These lines state
//! each mode's figures side by side and claim no difference; the Answer's latency goals
//! test their margins over the loops (`recommend`). A p99 is of one histogram that
//! merges every loop, so it has no interval.

use std::collections::BTreeMap;

use super::figures::{Finding, Metric, Side};
use super::words::{micros, per_second};
use plan::catalog::NATIVE;
use plan::latency::{Pattern, is_latency_case, is_not_durable_save, pattern_of};
use plan::units::format_size;
use result::{CaseResult, Figure, ResultFile, Status};

/// The latency cases of a result that have their figures.
pub fn cases(result: &ResultFile) -> Vec<&CaseResult> {
    result
        .cases
        .iter()
        .filter(|c| is_latency_case(&c.case) && c.status == Status::Ok)
        .filter(|c| c.ops_per_second.is_some() && p99_ns(c).is_some())
        .collect()
}

/// The case's 99th percentile per operation, in nanoseconds.
pub fn p99_ns(case: &CaseResult) -> Option<f64> {
    case.latency_ns.as_ref()?.get("p99")?.as_f64()
}

/// "pwrite of 8 B at offset 0", "write of 8 B appended" or "save of 4 KiB (whole file)",
/// from the case's pattern.
pub fn pattern(case: &CaseResult) -> String {
    let size = format_size(case.case.chunk_bytes);
    match pattern_of(&case.case) {
        Some(Pattern::Overwrite0) => format!("pwrite of {size} at offset 0"),
        Some(Pattern::Append) => format!("write of {size} appended"),
        Some(p) if p.is_save() => format!("save of {size} (whole file)"),
        _ => format!("{} of {size}", case.case.method),
    }
}

/// What tells the cases of one line apart: a write's durability mode, a save's
/// pattern, said not durable when it is not; with the runtime and its call where the
/// line has other runtimes' cases (`--runtimes`): "native osync", "java channel osync".
fn variant(case: &CaseResult, runtimes: bool) -> String {
    let who = match (runtimes, case.case.runtime.as_str()) {
        (false, _) => String::new(),
        (true, NATIVE) => "native ".to_string(),
        (true, runtime) => format!("{runtime} {} ", case.case.method),
    };
    match pattern_of(&case.case).filter(|p| p.is_save()) {
        Some(save) if is_not_durable_save(&case.case) => format!("{who}{} (not durable)", save.name()),
        Some(save) => format!("{who}{}", save.name()),
        None => format!("{who}{}", case.case.durability),
    }
}

/// A figure with one value, which stands for the median and the mean: a p99.
pub fn figure(case: &CaseResult, metric: &str, value: f64) -> Figure {
    Figure {
        case: case.case.id.clone(),
        metric: metric.to_string(),
        median: value,
        mean: value,
        ci95_low: None,
        ci95_high: None,
    }
}

/// One line per pattern (and size): every mode's operations per second (with its
/// interval over the loops in the figures) and p99. Ordered among the observations by
/// the ratio of the fastest to the slowest mode, which is no claim of significance.
pub fn per_pattern(result: &ResultFile) -> Vec<Finding> {
    let mut groups: BTreeMap<String, Vec<&CaseResult>> = BTreeMap::new();
    for case in cases(result) {
        groups.entry(pattern(case)).or_default().push(case);
    }
    let mut findings = Vec::new();
    for (pattern, group) in groups {
        let mut parts = Vec::new();
        let mut figures = Vec::new();
        let runtimes = group.iter().any(|case| case.case.runtime != NATIVE);
        for case in &group {
            let (ops, p99) = (case.ops_per_second.unwrap_or(0.0), p99_ns(case).unwrap_or(0.0));
            parts.push(format!("{} {} ({})", variant(case, runtimes), per_second(ops), micros(p99)));
            figures.extend(Side::new(case, Metric::Operations).figure());
            figures.push(figure(case, "p99_ns", p99));
        }
        let rates: Vec<f64> = group.iter().filter_map(|c| c.ops_per_second).collect();
        let (fastest, slowest) = rates.iter().fold((0.0_f64, f64::INFINITY), |(hi, lo), &r| (hi.max(r), lo.min(r)));
        let unit = if pattern.starts_with("save") { "saves/s" } else { "writes/s" };
        let text = format!("{pattern}, {unit} (p99): {}", parts.join(", "));
        let score = if slowest > 0.0 { (fastest / slowest).ln() } else { 0.0 };
        findings.push(Finding::new("latency", text, figures, None, score));
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advice::testkit::{Build, latency_case};

    #[test]
    fn each_pattern_lists_every_mode_with_its_rate_and_tail() {
        let result = Build::new()
            .latency(latency_case("overwrite0", "none"), 1_200_000.0, 1_100)
            .latency(latency_case("overwrite0", "odsync"), 4_100.0, 410_000)
            .latency(latency_case("append", "every-fdatasync:1"), 3_900.0, 520_000)
            .done();
        let findings = per_pattern(&result);
        let texts: Vec<&str> = findings.iter().map(|f| f.observation.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "pwrite of 8 B at offset 0, writes/s (p99): none 1.20 M (1.10 µs), odsync 4100 (410 µs)",
                "write of 8 B appended, writes/s (p99): every-fdatasync:1 3900 (520 µs)",
            ]
        );
        assert_eq!(findings[0].observation.figures.len(), 4);
        assert!(findings[0].observation.comparison.is_none(), "side by side: nothing is claimed");
    }

    #[test]
    fn with_other_runtimes_each_mode_names_its_runtime_and_call() {
        let mut java = latency_case("append", "osync");
        java.runtime = "java".into();
        java.method = "channel".into();
        java.id = "latency java channel append 8B osync".into();
        let result = Build::new()
            .latency(latency_case("append", "osync"), 1_600_000.0, 3_800)
            .latency(java, 57_000.0, 55_000)
            .done();
        let findings = per_pattern(&result);
        assert_eq!(
            findings[0].observation.text,
            "write of 8 B appended, writes/s (p99): native osync 1.60 M (3.80 µs), java channel osync 57.0 k (55.0 µs)"
        );
    }

    #[test]
    fn saves_are_one_line_per_size_and_the_unsafe_one_says_it_is_not_durable() {
        let result = Build::new()
            .latency(latency_case("replace", "fsync-file+dir"), 90.0, 20_000_000)
            .latency(latency_case("replace-unsafe", "none"), 800.0, 1_600_000)
            .done();
        let findings = per_pattern(&result);
        assert_eq!(findings.len(), 1);
        assert_eq!(
            findings[0].observation.text,
            "save of 8 B (whole file), saves/s (p99): replace 90 (20.0 ms), replace-unsafe (not durable) 800 (1600 µs)"
        );
        assert!(findings[0].observation.comparison.is_none(), "side by side: nothing is claimed");
    }

    #[test]
    fn a_rate_over_loops_carries_its_interval() {
        let result = Build::new()
            .loops(latency_case("overwrite0", "odsync"), &[4000.0, 4100.0, 4200.0, 4050.0, 4150.0], 410_000)
            .done();
        let findings = per_pattern(&result);
        let ops = &findings[0].observation.figures[0];
        assert_eq!(ops.metric, "ops_per_second");
        assert!(ops.ci95_low.unwrap() < ops.mean && ops.mean < ops.ci95_high.unwrap(), "{ops:?}");
        assert!((ops.mean - result.cases[0].ops_per_second.unwrap()).abs() < 1e-6);
        let p99 = &findings[0].observation.figures[1];
        assert_eq!((p99.metric.as_str(), p99.ci95_low), ("p99_ns", None), "one merged histogram: no interval");
    }
}
