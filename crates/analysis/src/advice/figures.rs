//! The numbers every observation rests on: which cases take part, their run times under
//! a metric, their figures, the test between two of them, and the twin of a case (the
//! same case with one dimension changed). No words here: `words` turns these into text.

use stats::Summarize;
use std::collections::BTreeMap;

use crate::summarize::counted_runs;
use plan::catalog;
use plan::durability::Commit;
use plan::latency::is_latency_case;
use plan::{Case, FileState};
use result::{CaseResult, Comparison, Figure, Observation, ResultFile, Status};
use stats::Summary;
use stats::significance::{self, Factor, Verdict, holm};

/// An observation and how much it matters, for ordering (see the module doc of `advice`).
#[derive(Debug, Clone)]
pub struct Finding {
    pub observation: Observation,
    /// The natural log of the effect (a factor of 2 scores ln 2); 0 for a "no gain".
    pub score: f64,
}

impl Finding {
    pub fn new(kind: &str, text: String, figures: Vec<Figure>, comparison: Option<Comparison>, score: f64) -> Self {
        Finding {
            observation: Observation { kind: kind.to_string(), text, figures, comparison, numbers: Default::default() },
            score,
        }
    }
}

pub use result::metric::Metric;

/// A metric's figure and the run times behind it, drawn from a case's runs.
pub trait Figures {
    fn summary(self, case: &CaseResult) -> Option<Summary>;
    fn times(self, case: &CaseResult) -> Option<Vec<f64>>;
}

impl Figures for Metric {
    fn summary(self, case: &CaseResult) -> Option<Summary> {
        match self {
            Metric::Buffered => case.stats,
            Metric::Durable => case.durable_stats,
            Metric::NewFile | Metric::NewFileDurable => Summary::throughput(case.case.bytes as f64, &self.times(case)?),
            // Per second of the time per operation (or commit): the loop's count over
            // the mean loop time, as `ops_stats` is.
            Metric::Operations | Metric::Commits | Metric::Saves => Summary::throughput(1.0, &self.times(case)?),
        }
    }

    /// The run times behind the figure; None where there is no figure, so that a case
    /// that never synced is never tested on a "durable" time that is its write time,
    /// and a prepared file whose preparation was not recorded is never a new file's
    /// strategy as if preparing it were free.
    fn times(self, case: &CaseResult) -> Option<Vec<f64>> {
        match self {
            Metric::Buffered | Metric::Durable => {
                self.summary(case)?;
                Some(
                    counted_runs(&case.runs)
                        .into_iter()
                        .map(|run| if self == Metric::Buffered { run.write_time() } else { run.durable_time() })
                        .collect(),
                )
            }
            Metric::NewFile | Metric::NewFileDurable => {
                if self == Metric::NewFileDurable {
                    case.durable_stats?;
                }
                let empty = case.case.state == FileState::Empty;
                counted_runs(&case.runs)
                    .into_iter()
                    .map(|run| {
                        // The one span a program pays (docs/answer.md), where it was timed.
                        let span =
                            if self == Metric::NewFile { run.new_file_seconds } else { run.new_file_durable_seconds };
                        if span.is_some() {
                            return span;
                        }
                        // Results from before it was: the preparation, timed apart, added
                        // to the writes (an empty file's create counted as nothing, which
                        // it nearly is; a prepared file's left out where not recorded).
                        let prepare =
                            if self == Metric::NewFile { run.prepare_without_sync() } else { run.prepare_seconds };
                        let prepare = prepare.or(empty.then_some(0.0))?;
                        let rest = if self == Metric::NewFile { run.write_time() } else { run.durable_time() };
                        Some(prepare + rest)
                    })
                    .collect::<Option<Vec<f64>>>()
                    .filter(|times| !times.is_empty())
            }
            Metric::Operations | Metric::Commits | Metric::Saves => {
                if !is_latency_case(&case.case) || case.status != Status::Ok || case.runs.is_empty() {
                    return None;
                }
                // A loop's operations: a run's bytes over an operation's (a save's, the file's).
                let operations = case.case.bytes as f64 / case.case.chunk_bytes.max(1) as f64;
                let per_loop = if self == Metric::Commits { operations / writes_per_commit(case)? } else { operations };
                Some(counted_runs(&case.runs).into_iter().map(|run| run.write_seconds / per_loop).collect())
            }
        }
    }
}

/// Writes per commit of a latency case whose writes are made durable as they go: N
/// under every:N, 1 under O_SYNC, O_DSYNC and the per-call flags; None for any other
/// mode (a save is a whole file, not a small commit).
pub fn writes_per_commit(case: &CaseResult) -> Option<f64> {
    match case.case.durability.commit {
        Commit::Every(n, _) => Some(f64::from(n)),
        Commit::OSync | Commit::ODsync | Commit::RwfSync | Commit::RwfDsync => Some(1.0),
        Commit::None | Commit::End(_) | Commit::WriteBehind(_) | Commit::Save => None,
    }
}

/// One case under one metric.
#[derive(Debug, Clone, Copy)]
pub struct Side<'a> {
    pub case: &'a CaseResult,
    pub metric: Metric,
}

impl<'a> Side<'a> {
    pub fn new(case: &'a CaseResult, metric: Metric) -> Side<'a> {
        Side { case, metric }
    }

    pub fn id(&self) -> &'a str {
        &self.case.case.id
    }

    /// The median throughput in bytes/s (0 where there is no figure: never shown, as
    /// sides are only made of cases that have the figure).
    pub fn median(&self) -> f64 {
        self.metric.summary(self.case).map_or(0.0, |s| s.median)
    }

    pub fn mean(&self) -> f64 {
        self.metric.summary(self.case).map_or(0.0, |s| s.mean)
    }

    /// The mean of the run times behind the figure, in seconds.
    pub fn mean_seconds(&self) -> f64 {
        let times = self.metric.times(self.case).unwrap_or_default();
        if times.is_empty() { 0.0 } else { times.iter().sum::<f64>() / times.len() as f64 }
    }

    pub fn figure(&self) -> Option<Figure> {
        let summary = self.metric.summary(self.case)?;
        Some(Figure {
            case: self.id().to_string(),
            metric: self.metric.name().to_string(),
            median: summary.median,
            mean: summary.mean,
            ci95_low: summary.ci95_low,
            ci95_high: summary.ci95_high,
        })
    }
}

/// A case's write-alone and durable figures, those it has: what a note about the case
/// as a whole (a doubt, not a comparison) rests on.
pub fn case_figures(case: &CaseResult) -> Vec<Figure> {
    [Metric::Buffered, Metric::Durable].into_iter().filter_map(|m| Side::new(case, m).figure()).collect()
}

/// Welch's test of `to` against `from`, with the factor `to` is faster by (paired, run by
/// run, where both are one case's figures).
#[derive(Debug, Clone, Copy)]
pub struct Test<'a> {
    pub from: Side<'a>,
    pub to: Side<'a>,
    /// mean time of `from` / mean time of `to`: above 1 where `to` is faster.
    pub factor: Factor,
}

/// None where either side has fewer than two runs (a latency case from before loops
/// has one), or the two wrote different byte counts (a ratio of times is a ratio of
/// rates only for the same bytes; times per operation need no such care). Inside
/// [`corrected`], the test is judged among every test the observations make.
pub fn test<'a>(from: Side<'a>, to: Side<'a>) -> Option<Test<'a>> {
    if !comparable(from, to) {
        return None;
    }
    let (a, b) = (from.metric.times(from.case)?, to.metric.times(to.case)?);
    // One case under two metrics (its write time against its write and sync) is two
    // figures of the same runs: paired, run by run (`significance::paired_factor`).
    let factor = if std::ptr::eq(from.case, to.case) {
        significance::paired_factor(&a, &b)?
    } else {
        significance::factor(&a, &b)?
    };
    let key = (from.id().to_string(), from.metric, to.id().to_string(), to.metric);
    let factor = CORRECTION.with_borrow_mut(|correction| match correction {
        Correction::Off => factor,
        Correction::Collect(tests) => {
            tests.entry(key).or_insert(factor);
            factor
        }
        Correction::Apply(adjusted) => adjusted.get(&key).map_or(factor, |&p| factor.adjusted(p)),
    });
    Some(Test { from, to, factor })
}

/// [`test`] with the noise pooled over a family of cases (`significance::pooled_factor`):
/// how a raced result's Answer judges a goal's candidates, as the race did
/// (docs/racing.md). None where [`test`] would be.
pub fn pooled_test<'a>(from: Side<'a>, to: Side<'a>, pool: (f64, f64)) -> Option<Test<'a>> {
    if !comparable(from, to) {
        return None;
    }
    let factor =
        significance::pooled_factor(&from.metric.times(from.case)?, &to.metric.times(to.case)?, pool.0, pool.1)?;
    Some(Test { from, to, factor })
}

/// A ratio of times is a ratio of rates only for the same bytes; times per operation
/// need no such care.
fn comparable(from: Side, to: Side) -> bool {
    (from.metric.per_operation() && to.metric.per_operation()) || from.case.case.bytes == to.case.case.bytes
}

/// A test by what it compares: one side's case and metric, the other's.
type TestKey = (String, Metric, String, Metric);

/// How [`test`] judges: alone (the Answer's own comparisons), or among all the tests of
/// the observations (see [`corrected`]).
enum Correction {
    Off,
    Collect(BTreeMap<TestKey, Factor>),
    Apply(BTreeMap<TestKey, f64>),
}

thread_local! {
    static CORRECTION: std::cell::RefCell<Correction> = const { std::cell::RefCell::new(Correction::Off) };
}

/// Runs `draw` twice: once to gather every test it makes (each pair of sides once),
/// then, after Holm's correction over all of them, again with each test judged at its
/// adjusted p and its interval widened to match (`Factor::adjusted`). Returns what the
/// second pass drew and every test it was corrected over, judged as [`judged_tests`]
/// gives them (docs/answer.md, "Multiplicity"). Within it, [`holm_adjusted`] leaves
/// tests as they are: a family's correction is contained in the correction over every
/// test.
pub fn corrected<T>(draw: impl Fn() -> T) -> (T, Vec<(String, String, Factor)>) {
    let tests = collected(&draw);
    let judged = judged(&tests);
    let (keys, p): (Vec<TestKey>, Vec<f64>) = tests.into_iter().map(|(key, f)| (key, f.p)).unzip();
    CORRECTION.set(Correction::Apply(keys.into_iter().zip(holm(&p)).collect()));
    let drawn = draw();
    CORRECTION.set(Correction::Off);
    (drawn, judged)
}

/// Every test `draw` makes, each pair of sides once, as made (uncorrected).
fn collected<T>(draw: &impl Fn() -> T) -> BTreeMap<TestKey, Factor> {
    CORRECTION.set(Correction::Collect(BTreeMap::new()));
    let _ = draw();
    match CORRECTION.replace(Correction::Off) {
        Correction::Collect(tests) => tests,
        _ => BTreeMap::new(),
    }
}

/// Every test `draw` makes, judged as [`corrected`] judges them (Holm over all of
/// them, each interval widened to match): the two cases' ids and the factor. What a
/// race asks of the observations between rounds (docs/racing.md): which comparisons
/// more runs could still settle.
pub fn judged_tests<T>(draw: impl Fn() -> T) -> Vec<(String, String, Factor)> {
    judged(&collected(&draw))
}

/// Each of `tests` at its p adjusted by Holm over all of them: the two cases' ids and
/// the factor, its interval widened to match.
fn judged(tests: &BTreeMap<TestKey, Factor>) -> Vec<(String, String, Factor)> {
    let p: Vec<f64> = tests.values().map(|f| f.p).collect();
    tests.iter().zip(holm(&p)).map(|((key, factor), p)| (key.0.clone(), key.2.clone(), factor.adjusted(p))).collect()
}

impl<'a> Test<'a> {
    /// Whether `to` is the faster side.
    pub fn gain(&self) -> bool {
        self.factor.factor > 1.0
    }

    /// The faster side against the slower one: the factor, at least 1, and its interval.
    pub fn oriented(&self) -> (f64, f64, f64) {
        let f = self.factor;
        if self.gain() { (f.factor, f.low, f.high) } else { (1.0 / f.factor, 1.0 / f.high, 1.0 / f.low) }
    }

    /// ln of the oriented factor: how large the effect is, whichever way it goes.
    pub fn score(&self) -> f64 {
        self.oriented().0.ln()
    }

    pub fn significant(&self) -> bool {
        self.factor.significant()
    }

    /// Faster, slower, tied within `margin` or undecided: `to` against `from`.
    pub fn verdict(&self, margin: f64) -> Verdict {
        self.factor.verdict(margin)
    }

    /// As stored: the faster case as `better`, the interval and p as judged (raw, or
    /// adjusted for its family), and `significant` exactly when that interval excludes
    /// one. Where both sides are one case (buffered against durable), both names are
    /// its id and the figures tell the metrics apart.
    pub fn comparison(&self) -> Comparison {
        let (better, baseline) = if self.gain() { (self.to, self.from) } else { (self.from, self.to) };
        let (factor, low, high) = self.oriented();
        Comparison {
            better: better.id().to_string(),
            baseline: baseline.id().to_string(),
            factor,
            low,
            high,
            p_value: self.factor.p,
            significant: self.significant(),
        }
    }

    /// This test judged in a family whose correction gave it `adjusted_p`.
    pub fn adjusted(&self, adjusted_p: f64) -> Test<'a> {
        Test { factor: self.factor.adjusted(adjusted_p), ..*self }
    }

    /// The figures of both sides (one where both are the same figure).
    pub fn figures(&self) -> Vec<Figure> {
        [self.from.figure(), self.to.figure()].into_iter().flatten().collect()
    }
}

/// Holm's step-down over a family of tests: each test with its p adjusted for the
/// family's size and its interval widened to match (see `Factor::adjusted`), so that
/// `significant()` of each says whether it holds once the whole family is counted.
pub fn holm_adjusted<'a>(tests: &[Test<'a>]) -> Vec<Test<'a>> {
    if CORRECTION.with_borrow(|c| matches!(c, Correction::Apply(_))) {
        return tests.to_vec();
    }
    let p: Vec<f64> = tests.iter().map(|t| t.factor.p).collect();
    tests.iter().zip(holm(&p)).map(|(test, adjusted)| test.adjusted(adjusted)).collect()
}

/// A case's key among the measured: the id its fields give and its bytes, so that a case
/// changed field by field (`Measured::twin`) finds the one measured so.
pub fn twin_key(case: &Case) -> (String, u64) {
    (case.derived_id(), case.bytes)
}

/// The throughput cases of a result that have figures: `ok`, with statistics, neither
/// a latency case (a rate of operations, with goals and observations of its own) nor a
/// file creation (it writes no data, so its rate is no write strategy's).
pub struct Measured<'a> {
    pub cases: Vec<&'a CaseResult>,
    by_key: BTreeMap<(String, u64), &'a CaseResult>,
    /// What "tied" means here: the equivalence margin δ as a fraction (`--equivalence`,
    /// 5 % unless the run said otherwise).
    pub margin: f64,
}

impl<'a> Measured<'a> {
    pub fn of(result: &'a ResultFile) -> Measured<'a> {
        Measured::of_cases(&result.cases, equivalence_margin(result))
    }

    /// Of cases not yet in a result (a race between rounds), with the margin given.
    pub fn of_cases(cases: &'a [CaseResult], margin: f64) -> Measured<'a> {
        let cases: Vec<&CaseResult> = cases
            .iter()
            .filter(|c| c.status == Status::Ok && c.stats.is_some() && !is_latency_case(&c.case))
            .filter(|c| catalog::by_name(&c.case.method).is_none_or(|m| m.creation.is_none()))
            .collect();
        let by_key = cases.iter().map(|&c| (twin_key(&c.case), c)).collect();
        Measured { cases, by_key, margin }
    }

    /// The case with `case`'s dimensions changed by `change`, if it was measured.
    pub fn twin(&self, case: &CaseResult, change: impl FnOnce(&mut Case)) -> Option<&'a CaseResult> {
        let mut changed = case.case.clone();
        change(&mut changed);
        self.by_key.get(&twin_key(&changed)).copied()
    }
}

/// The run's equivalence margin δ as a fraction ([`RunOptions::margin`]).
///
/// [`RunOptions::margin`]: result::options::RunOptions::margin
pub fn equivalence_margin(result: &ResultFile) -> f64 {
    result.options.margin()
}

/// Whether a method is one of the mmap variants, or io_uring's.
pub fn family(method: &str) -> Option<catalog::Family> {
    catalog::by_name(method).map(|m| m.family)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advice::testkit::{Build, case, sized};

    #[test]
    fn a_case_that_never_synced_has_no_durable_times_to_test() {
        let result = Build::new().add(case("pwrite empty 1MiB t1 none"), &[1.0, 1.1, 0.9]).done();
        let none = &result.cases[0];
        assert!(Metric::Buffered.times(none).is_some());
        assert_eq!(Metric::Durable.times(none), None);
        assert!(Side::new(none, Metric::Durable).figure().is_none());
    }

    #[test]
    fn tests_orient_to_the_faster_side_and_refuse_different_sizes() {
        let result = Build::new()
            .add(case("write empty 4KiB t1 none"), &[2.0, 2.1, 1.9])
            .add(case("write empty 1MiB t1 none"), &[1.0, 1.05, 0.95])
            .add(sized(case("write empty 1MiB t1 none"), 1 << 20), &[1.0, 1.05, 0.95])
            .done();
        let [slow, fast, small] = [&result.cases[0], &result.cases[1], &result.cases[2]];
        let up = test(Side::new(slow, Metric::Buffered), Side::new(fast, Metric::Buffered)).unwrap();
        let down = test(Side::new(fast, Metric::Buffered), Side::new(slow, Metric::Buffered)).unwrap();
        assert!(up.gain() && !down.gain());
        assert_eq!(up.comparison(), down.comparison(), "the same statement either way");
        let stored = up.comparison();
        assert_eq!((stored.better.as_str(), stored.baseline.as_str()), (fast.case.id.as_str(), slow.case.id.as_str()));
        assert!((stored.factor - 2.0).abs() < 1e-9 && stored.low < 2.0 && stored.high > 2.0);
        assert!(test(Side::new(slow, Metric::Buffered), Side::new(small, Metric::Buffered)).is_none());
    }
}
