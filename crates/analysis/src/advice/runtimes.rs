//! What each runtime costs against native (`--runtimes`): for every case a runner wrote
//! and native wrote too (same method, state, chunk, threads and mode), the overhead.
//! At small calls (a call of at most [`SMALL_CALL`] bytes) the time per call is what a
//! program pays, so the line says how many nanoseconds each call costs above native's;
//! at larger calls it gives the throughput ratio. Both rest on Welch's test of the run
//! times, Holm-corrected over each runtime's cases (one family per runtime, the
//! interval widened with the p). A difference that is not significant is a tie only
//! when the interval lies within the equivalence margin ("within 5 % of native" is
//! itself the answer a Python or Go programmer asks for); otherwise it is undecided.

use std::collections::BTreeMap;

use super::figures::{Finding, Measured, Metric, Side, Test, holm_adjusted, test};
use super::words::{factor, p_value};
use plan::catalog::{self, NATIVE};
use plan::units::format_size;
use stats::significance::Verdict;

/// Calls of at most this many bytes are compared per call.
pub const SMALL_CALL: u64 = 4096;

/// One line per runner case with a native twin.
pub fn overheads(measured: &Measured) -> Vec<Finding> {
    let mut families: BTreeMap<String, Vec<Test>> = BTreeMap::new();
    for &case in measured.cases.iter().filter(|c| c.case.runtime != NATIVE) {
        // Against native's method of the same system calls: the twin of the same name,
        // or `write` for Java's `channel`, `pwrite` for Node's `write-callback`; none
        // for a method the catalogue does not know (a result of another version).
        if catalog::find(&case.case.runtime, &case.case.method).is_none() {
            continue;
        }
        let as_native = case.case.as_native();
        let native = measured.twin(case, |d| {
            d.runtime = as_native.runtime;
            d.method = as_native.method;
            d.queue_depth = as_native.queue_depth;
        });
        let Some(native) = native else { continue };
        let tested = test(Side::new(native, Metric::Buffered), Side::new(case, Metric::Buffered));
        families.entry(case.case.runtime.clone()).or_default().extend(tested);
    }
    let mut findings = Vec::new();
    for tests in families.values() {
        for test in holm_adjusted(tests) {
            let significant = test.significant();
            findings.push(Finding::new(
                "runtime",
                sentence(&test, tests.len(), measured.margin),
                test.figures(),
                Some(test.comparison()),
                if significant { test.score() } else { 0.0 },
            ));
        }
    }
    findings
}

/// "python write, 1 B calls (empty, t1, end): +812 ns per call over native (1.2 µs
/// against 0.39 µs; 3.1x the time, 2.9–3.3, p < 0.001)", or at large calls "go write,
/// 1 MiB calls (...): 0.98x native's throughput (0.95–1.01, p = 0.21): within 5 % of
/// native". The test comes adjusted for the `family` of comparisons the runtime's
/// tests make together (Holm): its p and interval are the adjusted ones.
fn sentence(test: &Test, family: usize, margin: f64) -> String {
    let case = &test.to.case.case;
    let call = case.chunk_bytes * u64::from(case.iov);
    let mut dims = vec![case.state.name().to_string(), format!("t{}", case.threads)];
    if case.files > 1 {
        dims.push("a file each".to_string());
    }
    dims.push(case.durability.name());
    if let Some(depth) = case.queue_depth {
        dims.insert(1, format!("qd{depth}"));
    }
    let who = format!("{} {}, {} calls ({})", case.runtime, case.method, format_size(call), dims.join(", "));
    // "native" where the runner's method is native's twin, else the native method it
    // is measured against: "over native write".
    let native = match &test.from.case.case.method {
        method if *method == case.method => "native".to_string(),
        method => format!("native {method}"),
    };
    // factor = native's mean time / the runner's: below 1 where the runner is slower.
    let f = test.factor;
    let corrected =
        if family > 1 { format!(", {family} comparisons with native taken together") } else { String::new() };
    let tie = match test.verdict(margin) {
        Verdict::Faster | Verdict::Slower => String::new(),
        Verdict::Tied => format!(": within {:.0} % of {native}{corrected}", margin * 100.0),
        Verdict::Undecided => format!(": undecided against {native}{corrected}; more runs would tell"),
    };
    if call <= SMALL_CALL {
        let calls_per_writer = case.bytes.div_ceil(call) as f64 / f64::from(case.threads.max(1));
        let native_ns = test.from.mean_seconds() / calls_per_writer * 1e9;
        let runner_ns = test.to.mean_seconds() / calls_per_writer * 1e9;
        let extra = runner_ns - native_ns;
        let sign = if extra >= 0.0 { "+" } else { "−" };
        format!(
            "{who}: {sign}{} ns per call over {native} ({} against {} ns per call; {} the time, {}–{}, {}){tie}",
            round_ns(extra.abs()),
            round_ns(runner_ns),
            round_ns(native_ns),
            factor(1.0 / f.factor),
            factor(1.0 / f.high).trim_end_matches('x'),
            factor(1.0 / f.low),
            p_value(f.p)
        )
    } else {
        format!(
            "{who}: {} {native}'s throughput ({}–{}, {}){tie}",
            factor(f.factor),
            factor(f.low).trim_end_matches('x'),
            factor(f.high),
            p_value(f.p)
        )
    }
}

/// Nanoseconds to two significant digits at most, as a whole number.
fn round_ns(ns: f64) -> String {
    if ns >= 100.0 {
        let scale = 10f64.powi(ns.log10().floor() as i32 - 1);
        format!("{:.0}", (ns / scale).round() * scale)
    } else {
        format!("{ns:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advice::testkit::{Build, around, case};

    fn runner(id: &str, runtime: &str) -> plan::Case {
        case(id).with_runtime(runtime)
    }

    #[test]
    fn small_calls_get_nanoseconds_per_call_and_large_calls_a_ratio() {
        // 1 GiB in 4 KiB calls: 262144 calls. Native 0.5 s, python 1.5 s.
        let result = Build::new()
            .add(case("write empty 4KiB t1 end"), &around(0.5))
            .add(runner("write empty 4KiB t1 end", "python"), &around(1.5))
            .add(case("write empty 1MiB t1 end"), &around(0.4))
            .add(runner("write empty 1MiB t1 end", "python"), &around(0.4))
            .done();
        let findings = overheads(&Measured::of(&result));
        assert_eq!(findings.len(), 2);
        let small = &findings.iter().find(|f| f.observation.text.contains("4 KiB")).unwrap().observation;
        // (1.5 - 0.5) s / 262144 calls = 3815 ns, shown to two digits.
        assert!(
            small.text.starts_with("python write, 4 KiB calls (empty, t1, end): +3800 ns per call"),
            "{}",
            small.text
        );
        assert!(small.text.contains("3.0x the time"), "{}", small.text);
        assert!(small.comparison.as_ref().unwrap().significant);
        let large = &findings.iter().find(|f| f.observation.text.contains("1 MiB")).unwrap().observation;
        assert!(large.text.contains("1.00x native's throughput"), "{}", large.text);
        assert!(
            large.text.ends_with("within 5 % of native, 2 comparisons with native taken together"),
            "{}",
            large.text
        );
    }

    #[test]
    fn a_p_below_alpha_that_holm_does_not_keep_is_adjusted_and_tied() {
        // Four comparisons, each 1.5 % slower with 0.8 % spread: p about 0.02 apiece,
        // which is not significant among four (Holm: 4 × 0.02 > 0.05). The p shown is
        // the adjusted one, the interval widened with it (so it holds 1), and it lies
        // within 5 %: a tie.
        let mut build = Build::new();
        for chunk in ["4KiB", "64KiB", "256KiB", "1MiB"] {
            let id = format!("write empty {chunk} t1 end");
            build = build.add(case(&id), &around(1.0)).add(runner(&id, "c"), &around(1.015));
        }
        let findings = overheads(&Measured::of(&build.done()));
        assert_eq!(findings.len(), 4);
        for finding in &findings {
            let comparison = finding.observation.comparison.as_ref().unwrap();
            assert!((0.05..0.2).contains(&comparison.p_value), "{comparison:?}");
            assert!(!comparison.significant && comparison.low < 1.0 && comparison.high > 1.0, "{comparison:?}");
            assert!(
                finding.observation.text.ends_with("within 5 % of native, 4 comparisons with native taken together"),
                "{}",
                finding.observation.text
            );
        }
    }

    #[test]
    fn a_runner_without_a_native_twin_says_nothing() {
        let result = Build::new().add(runner("write empty 4KiB t1 end", "go"), &around(1.0)).done();
        assert!(overheads(&Measured::of(&result)).is_empty());
    }

    #[test]
    fn a_method_without_a_twin_is_measured_against_the_native_call_it_makes() {
        // Java's channel makes write(2) calls; Node's write-callback pwrite(2) calls,
        // several in flight, against native pwrite's one at a time.
        let result = Build::new()
            .add(case("write empty 4KiB t1 end"), &around(0.5))
            .add(runner("channel empty 4KiB t1 end", "java"), &around(1.0))
            .add(case("pwrite empty 1MiB t1 end"), &around(0.4))
            .add(runner("write-callback empty 1MiB qd4 t1 end", "node"), &around(0.8))
            .done();
        let findings = overheads(&Measured::of(&result));
        let texts: Vec<&str> = findings.iter().map(|f| f.observation.text.as_str()).collect();
        assert_eq!(texts.len(), 2, "{texts:?}");
        assert!(
            texts.iter().any(|t| t.starts_with("java channel, 4 KiB calls (empty, t1, end): +")
                && t.contains("ns per call over native write (")),
            "{texts:?}"
        );
        assert!(
            texts.iter().any(|t| t.starts_with(
                "node write-callback, 1 MiB calls (empty, qd4, t1, end): 0.50x native pwrite's throughput"
            )),
            "{texts:?}"
        );
    }

    #[test]
    fn nanoseconds_are_rounded_to_two_digits() {
        assert_eq!(round_ns(3815.0), "3800");
        assert_eq!(round_ns(87.4), "87");
        assert_eq!(round_ns(1234567.0), "1200000");
    }
}
