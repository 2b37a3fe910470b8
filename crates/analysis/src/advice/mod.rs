//! What a result shows, in sentences with their numbers: the observations, and the
//! recommended strategy for each goal. Pure functions of a [`ResultFile`]: no I/O.
//!
//! The rules every line follows:
//! - **Significance on run times.** Whether two cases differ is decided by Welch's
//!   t-test on their run times (`write_seconds` for buffered figures, write + sync for
//!   durable ones), two-sided, at p < 0.05 (`significance::factor`), never by eye nor
//!   by overlapping intervals. The factor stated is the ratio of the mean times, with
//!   its 95 % interval. Where one line sums up a family of tests (a file state against
//!   an empty file over every matched case, a durability mode, O_DIRECT, io_uring,
//!   mmap), the family's p-values are corrected with Holm's method first, so that a
//!   family of twenty cases does not yield its one expected false "significant".
//! - **Silence where there is no difference**, with two exceptions that are said on
//!   purpose: a thread count that brings no significant gain over one thread ("no
//!   gain": adding threads is what users do expecting speed), and a recommendation
//!   whose runner-up is within noise ("tied with X (p = 0.4)").
//! - **Figures as measured.** Numbers shown are medians from `stats` (buffered) or
//!   `durable_stats` (durable); a case without `durable_stats` never synced and has no
//!   durable figure, never one equal to its buffered figure. Only `ok` cases count.
//!   Latency cases are one timed loop: their lines state each mode's figures and
//!   compare nothing, and a margin between them is said to be untested.
//! - **Order.** Figures to doubt come first (above the memory-copy ceiling, a missed CI
//!   target, an outlying first run), then the effects: the strongest of each kind, the
//!   kinds by the size of that effect (the ln of its factor), then the second of each
//!   kind, and so on, so that the first eight lines the terminal shows cover eight
//!   different questions rather than eight chunk sizes of one.
//!
//! Not observed yet: CPU-bound cases (no CPU share is derived yet); see `suspicious`.

mod big_file;
mod carry_over;
mod carry_over_model;
mod commits;
pub mod contests;
mod crash_checked;
mod durability;
mod effects;
mod figures;
pub mod glance;
mod goal_doubts;
mod prealloc;
mod raced;
mod recommend;
mod runtimes;
mod shape;
mod single_writer;
mod small_writes;
mod suspicious;
pub mod words;

// The metrics a recommendation ranks on, which a comparison of files tests again.
pub use figures::{Figures, Metric};

#[cfg(any(test, feature = "testkit"))]
pub mod testkit;

use std::collections::HashMap;

use figures::{Finding, Measured};
use result::{CaseResult, Observation, Recommendation, ResultFile};
use stats::significance::{Factor, Verdict};

/// Kinds that say a figure may be wrong: before any effect, in this order.
const DOUBTS: [&str; 6] =
    ["suspicious-ceiling", "carry-over", "settle-timeout", "page-reporting", "ci-missed", "first-run-outlier"];

/// Everything the result supports, most important first (see the module doc).
/// Figures are held against the result's calibration, where it has one. Every test
/// behind them is judged among all of them (Holm): see [`observation_tests`].
pub fn observations(result: &ResultFile) -> Vec<Observation> {
    counted_observations(result).0
}

/// [`observations`], and how many tests they were corrected over: each comparison of
/// two figures they made, counted once.
pub fn counted_observations(result: &ResultFile) -> (Vec<Observation>, usize) {
    let (mut observations, judged) = figures::corrected(|| drawn(result));
    let tests = judged.len();
    // An effect neither shown (p < 0.05 once corrected) nor shown within the margin is
    // no observation: "1.66x faster, p = 1.00" said nothing (docs/answer.md). The race
    // still counts it among the comparisons left open.
    let margin = figures::equivalence_margin(result);
    observations.retain(|o| o.comparison.as_ref().is_none_or(|c| c.significant || shown_within(c, margin)));
    // The tests the correction judged are those the race judges between rounds
    // (`unsettled`): of the observations, only the effects make any. Said after the
    // doubts, before the effects it would settle.
    if result.race.is_some() {
        let open = undecided(judged, figures::equivalence_margin(result));
        if let Some(left) = raced::observations_left(result, &open, tests) {
            let at = observations.iter().position(|o| !DOUBTS.contains(&o.kind.as_str())).unwrap_or(observations.len());
            observations.insert(at, left);
        }
    }
    (observations, tests)
}

fn drawn(result: &ResultFile) -> Vec<Observation> {
    let measured = Measured::of(result);
    let mut findings = Vec::new();
    let has_device = result.target.block_device.is_some();
    findings.extend(suspicious::above_ceiling(&measured, result.calibration.as_ref(), has_device));
    findings.extend(suspicious::ci_missed(&measured));
    findings.extend(suspicious::first_run_outliers(&measured));
    findings.extend(carry_over::carry_over(&measured, result));
    findings.extend(effects_of(&measured));
    findings.extend(small_writes::per_pattern(result));
    order(findings)
}

/// The observations that compare cases: an effect of one dimension, from a test
/// between two cases' run times. The others (doubts, latency patterns) test nothing.
fn effects_of(measured: &Measured) -> Vec<Finding> {
    let mut findings = shape::knees(measured);
    findings.extend(shape::threads(measured));
    findings.extend(effects::states(measured));
    findings.extend(durability::costs(measured));
    findings.extend(durability::modes(measured));
    findings.extend(effects::direct(measured));
    findings.extend(effects::pages(measured));
    findings.extend(effects::io_uring(measured));
    findings.extend(effects::mmap(measured));
    findings.extend(runtimes::overheads(measured));
    findings
}

/// The comparisons the observations rest on that more runs could still settle, as the
/// ids of their two cases: each test the observations make, judged among all of them
/// as [`observations`] judges, whose interval neither excludes 1 nor lies within the
/// equivalence `margin` (docs/racing.md, "The observations"). Of cases between a race's
/// rounds, not yet in a result.
pub fn unsettled(cases: &[CaseResult], margin: f64) -> Vec<(String, String)> {
    let measured = Measured::of_cases(cases, margin);
    undecided(figures::judged_tests(|| effects_of(&measured)), margin)
}

/// A comparison whose interval lies within ±`margin`: the same, for any purpose.
fn shown_within(comparison: &result::Comparison, margin: f64) -> bool {
    comparison.low >= 1.0 / (1.0 + margin) && comparison.high <= 1.0 + margin
}

/// The two cases of each judged test neither shown nor within `margin`.
fn undecided(judged: Vec<(String, String, Factor)>, margin: f64) -> Vec<(String, String)> {
    judged
        .into_iter()
        .filter(|(_, _, factor)| factor.verdict(margin) == Verdict::Undecided)
        .map(|(from, to, _)| (from, to))
        .collect()
}

/// What of a result's stored conclusions differs from those drawn now, in words; None
/// where nothing was stored (nothing to differ from) or all agree.
pub fn stored_differs(
    answer: &[result::Recommendation],
    observations: &[result::Observation],
    derived: &ResultFile,
) -> Option<String> {
    let texts = |o: &[result::Observation]| o.iter().map(|o| o.text.clone()).collect::<Vec<_>>();
    let answers = |a: &[result::Recommendation]| {
        a.iter().map(|r| (r.goal.clone(), r.best.case.clone(), r.text.clone())).collect::<Vec<_>>()
    };
    if answer.is_empty() && observations.is_empty() {
        return None;
    }
    let parts: Vec<&str> = [
        (answers(answer) != answers(&derived.answer)).then_some("Answer"),
        (texts(observations) != texts(&derived.observations)).then_some("observations"),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!parts.is_empty()).then(|| {
        format!(
            "the {} stored in this result {} from what its cases give by this writebench's rules \
             (docs/answer.md); shown: what they give now",
            parts.join(" and "),
            if parts.len() == 1 && parts[0] == "Answer" { "differs" } else { "differ" }
        )
    })
}

/// The best strategy for each goal the result can answer.
pub fn recommendations(result: &ResultFile) -> Vec<Recommendation> {
    recommendations_for(result, &result::goals::GOALS)
}

/// [`recommendations`] for the goals given (rows as `result::goals::GOALS` holds them).
pub fn recommendations_for(result: &ResultFile, goals: &[result::goals::Goal]) -> Vec<Recommendation> {
    // The cases with their figures, drawn once for the picks and the notes beside them.
    let measured = Measured::of(result);
    let mut answer = recommend::recommendations(result, &measured, goals);
    crash_checked::annotate(result, &mut answer);
    raced::annotate(result, &mut answer);
    glance::mark_not_durable(result, &mut answer);
    glance::mark_above_device(result, &mut answer);
    single_writer::annotate(&measured, &mut answer);
    big_file::annotate(result, &mut answer);
    prealloc::annotate(&measured, &mut answer);
    goal_doubts::annotate(result, &mut answer);
    answer
}

fn order(mut findings: Vec<Finding>) -> Vec<Observation> {
    findings.sort_by(|a, b| b.score.total_cmp(&a.score));
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut keyed: Vec<(usize, usize, Finding)> = findings
        .into_iter()
        .map(|finding| {
            let kind = finding.observation.kind.clone();
            let doubt = DOUBTS.iter().position(|d| *d == kind).unwrap_or(DOUBTS.len());
            let rank = seen.entry(kind).or_default();
            *rank += 1;
            (doubt, *rank, finding)
        })
        .collect();
    // Stable: within a round, the larger effect first, as sorted above.
    keyed.sort_by_key(|(doubt, rank, _)| (*doubt, *rank));
    keyed.into_iter().map(|(_, _, finding)| finding.observation).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use testkit::{Build, around, case};

    fn kinds(observations: &[Observation]) -> Vec<&str> {
        observations.iter().map(|o| o.kind.as_str()).collect()
    }

    #[test]
    fn doubts_first_then_the_strongest_of_each_kind() {
        let result = Build::new()
            // Knees: write 4.0x (the strongest effect of all), pwrite 2.0x.
            .add(case("write empty 4KiB t1 none"), &around(4.0))
            .add(case("write empty 1MiB t1 none"), &around(1.0))
            .add(case("pwrite empty 4KiB t1 none"), &around(2.0))
            .add(case("pwrite empty 1MiB t1 none"), &around(1.0))
            // State: 1.5x.
            .add(case("pwrite prealloc 1MiB t1 none"), &around(1.0 / 1.5))
            // Threads: 1.2x, and a case that missed its CI target.
            .add(case("pwrite empty 1MiB t2 none"), &around(1.0 / 1.2))
            .missed_ci(5.0, 6.0)
            .calibrated(1e9)
            .done();
        let observations = observations(&result);
        assert_eq!(
            kinds(&observations),
            ["suspicious-ceiling", "ci-missed", "knee", "state", "threads", "knee"],
            "{observations:#?}"
        );
        assert!(observations[2].text.starts_with("write empty t1 none"), "{}", observations[2].text);
        assert!(observations.iter().all(|o| !o.text.is_empty()));
        assert!(observations.iter().filter(|o| o.kind != "latency").all(|o| !o.figures.is_empty()));
    }

    #[test]
    fn observations_are_judged_among_all_their_tests() {
        // One thread against two: p about 0.03 alone. The same result asks more
        // questions (chunk sizes that make no difference, a file state): among them all,
        // the gain of a second thread is not shown.
        let result = Build::new()
            .add(case("pwrite empty 1MiB t1 end"), &[1.0, 1.1, 0.9, 1.05, 0.95])
            .add(case("pwrite empty 1MiB t2 end"), &[0.86, 0.95, 0.80, 0.90, 0.84])
            .add(case("write empty 4KiB t1 end"), &[1.0, 1.2, 0.8, 1.1, 0.9])
            .add(case("write empty 64KiB t1 end"), &[1.1, 1.0, 0.9, 0.8, 1.2])
            .add(case("write empty 1MiB t1 end"), &[0.9, 1.1, 1.2, 1.0, 0.8])
            .add(case("write prealloc 1MiB t1 end"), &[1.0, 0.9, 1.1, 1.2, 0.8])
            .done();
        let threads = |observations: &[Observation]| {
            observations.iter().find(|o| o.kind == "threads").map(|o| o.text.clone()).unwrap_or_default()
        };
        let alone = drawn(&result);
        assert!(threads(&alone).contains("faster than one thread"), "{alone:#?}");
        let (observations, tests) = counted_observations(&result);
        // Not shown once corrected, nor within the margin: no observation at all.
        assert_eq!(threads(&observations), "", "{observations:#?}");
        assert!(tests >= 4, "{tests}");
        assert!(
            observations.iter().filter_map(|o| o.comparison.as_ref()).all(|c| c.significant || c.high <= 1.05),
            "{observations:#?}"
        );
    }

    #[test]
    fn failed_cases_and_a_result_without_runs_say_nothing() {
        let result =
            Build::new().failed(case("write empty 4KiB t1 none")).add(case("write empty 1MiB t1 none"), &[1.0]).done();
        assert!(observations(&result).is_empty());
        let answer = recommendations(&result);
        // One run: a figure, so a recommendation, but no test against anything.
        assert_eq!(answer.len(), 1);
        assert!(answer[0].text.ends_with("; the only candidate measured"), "{}", answer[0].text);
    }

    /// What a race asks of the observations between rounds: the comparisons more runs
    /// could settle, judged among all of the observations' tests as the observations are.
    #[test]
    fn unsettled_names_the_comparisons_neither_shown_nor_tied() {
        let pair = |case: &str, other: &str| (case.to_string(), other.to_string());
        let result = Build::new()
            .add(case("pwrite empty 1MiB t1 none"), &around(1.0))
            // Twice as fast: shown.
            .add(case("pwrite empty 1MiB t2 f2 none"), &around(0.5))
            // The same within 5 % and calm: tied.
            .add(case("pwrite prealloc 1MiB t1 none"), &around(1.0))
            // 3 % faster on noisy runs: neither.
            .add(case("pwrite overwrite 1MiB t1 none"), &[0.9, 1.05, 0.95, 1.0, 0.95])
            .done();
        assert_eq!(
            unsettled(&result.cases, 0.05),
            [pair("pwrite empty 1MiB t1 none", "pwrite overwrite 1MiB t1 none")]
        );
        // With a margin of 20 %, the noisy one is tied too.
        assert_eq!(unsettled(&result.cases, 0.20), []);
        // 5 % faster on calm runs: shown, though within the margin.
        let shown = Build::new()
            .add(case("pwrite empty 1MiB t1 none"), &[1.0, 1.02, 0.98, 1.01, 0.99])
            .add(case("pwrite overwrite 1MiB t1 none"), &[0.95, 0.97, 0.93, 0.96, 0.94])
            .done();
        assert_eq!(unsettled(&shown.cases, 0.05), []);
    }
}
