//! The Answer's goals at a glance (docs/answer.md, "At a glance"): the typed fields a
//! recommendation's three lines are made of, drawn from the same tests as its
//! sentence. One statistic throughout: a case's figure is its bytes (or operations)
//! over its mean time, with the 95 % range of that figure, as the table shows it.

use super::figures::Figures;
use super::figures::{Metric, Side, Test};
use result::glance::{Alternative, Certainty, Glance, Shown, WIDE_RANGE};
use result::{CaseResult, Comparison, Recommendation, ResultFile};
use stats::race::{NOISY_CV, thin};
use stats::significance::cv_upper;

/// The one figure every output shows for `case` under `metric`.
pub fn shown(case: &CaseResult, metric: Metric) -> Option<Shown> {
    let summary = metric.summary(case)?;
    Some(Shown::of(&summary, unit(metric)))
}

/// [`shown`] with the range the goal's verdicts use: where the goal raced, the noise
/// pooled over its candidates (`pool`, from `significance::pooled_cv2`), so that the range
/// beside the figure and the comparisons under it are one noise model (docs/answer.md);
/// the case's own range otherwise.
pub fn shown_pooled(case: &CaseResult, metric: Metric, pool: Option<(f64, f64)>) -> Option<Shown> {
    let mut shown = shown(case, metric)?;
    let range = pool
        .zip(metric.times(case))
        .and_then(|((cv2, df), times)| stats::significance::pooled_mean_range(&times, cv2, df));
    if let Some((short, long)) = range {
        // A rate is bytes over the mean time: the time's range inverts.
        (shown.low, shown.high) = (Some(shown.value / long), Some(shown.value / short));
        shown.well_measured = long / short <= WIDE_RANGE;
    }
    Some(shown)
}

fn unit(metric: Metric) -> &'static str {
    match metric {
        Metric::Operations => "ops/s",
        Metric::Commits => "commits/s",
        Metric::Saves => "saves/s",
        _ => "bytes/s",
    }
}

/// `other` beside the pick, from a test whose factor is `other`'s mean time over the
/// pick's (`Test { from: other, to: pick }`).
pub fn alternative(test: &Test, action: String) -> Alternative {
    Alternative {
        low99: Some(test.factor.low_at(0.01)),
        runs: test.from.metric.times(test.from.case).map_or(0, |t| t.len()),
        case: test.from.id().to_string(),
        action,
        value: test.from.mean(),
        factor: test.factor.factor,
        low: test.factor.low,
        high: test.factor.high,
        p_value: test.factor.p,
    }
}

/// The pick against a case with too few runs to test (one run, or one timed loop): the
/// ratio of mean times said as it is, with no interval to judge by.
pub fn untested(other: Side, pick: Side, action: String) -> Alternative {
    let ratio = other.mean_seconds() / pick.mean_seconds();
    Alternative {
        low99: None,
        runs: other.metric.times(other.case).map_or(0, |t| t.len()),
        case: other.id().to_string(),
        action,
        value: other.mean(),
        factor: ratio,
        low: ratio,
        high: ratio,
        p_value: 1.0,
    }
}

/// How sure the pick is, by the Answer's one rule against every other candidate of its
/// goal (docs/answer.md, "How sure"; docs/design.md §2.12): `others` each with its test
/// against the pick (oriented as in [`alternative`]: its time over the pick's), and
/// `untested` those with too few runs to test, each with why.
///
/// - clearly the fastest: every other is shown slower (the lower end of its factor above
///   1), the closest by at least the margin at its estimate; shown slower but by less
///   than the margin, the pick leads and either will do;
/// - as fast as: no other can be more than the margin faster (every lower end at least
///   1/(1 + margin)); the line names the fastest measured where the pick is simpler;
/// - otherwise not settled, naming the candidate that may gain the most (the lowest
///   lower end) with its "up to". A candidate that could not be tested keeps the goal
///   open too: it is named where no tested one may gain more.
pub fn judge(
    others: Vec<Alternative>,
    untested: Vec<(Alternative, &str)>,
    margin: f64,
    noise: Option<f64>,
) -> Certainty {
    let mut certainty = judge_tested(&others, &untested, margin, noise);
    // Every candidate's comparison goes with the verdict, the untested with their ratio.
    if let Certainty::Clear { against, .. }
    | Certainty::Leads { against, .. }
    | Certainty::AsFast { against, .. }
    | Certainty::NotSettled { against, .. } = &mut certainty
    {
        *against = others.into_iter().chain(untested.into_iter().map(|(a, _)| a)).collect();
    }
    certainty
}

/// The pick's certainty against every other case of `every` (its goal's candidates):
/// `test` of a case against the pick, None where it cannot be tested; a case with fewer
/// than two runs is untested, one that wrote other bytes is no comparison (docs/answer.md).
pub fn judged<'a>(
    every: &[&'a CaseResult],
    pick: &'a CaseResult,
    (test, pool): (impl Fn(&'a CaseResult) -> Option<Test<'a>>, Option<(f64, f64)>),
    action: impl Fn(&CaseResult) -> String,
    metric: Metric,
    margin: f64,
) -> Certainty {
    let mut tests = Vec::new();
    let mut untested = Vec::new();
    for &case in every.iter().filter(|&&c| !std::ptr::eq(c, pick)) {
        match test(case) {
            Some(t) => tests.push(t),
            None if [case, pick].iter().any(|c| metric.times(c).is_none_or(|t| t.len() < 2)) => {
                let why = if metric.per_operation() {
                    "untested: one timed loop each"
                } else {
                    "it had one run: more runs would tell"
                };
                untested.push((self::untested(Side::new(case, metric), Side::new(pick, metric), action(case)), why));
            }
            None => {}
        }
    }
    // Uncorrected, as the race and the pick: Holm over the candidates was tried and did
    // not bring "clearly" under 5 % wrong at 30 % noise, while it settled fewer races
    // (docs/racing.md, "The error a user sees").
    let others = tests.iter().map(|t| alternative(t, action(t.from.case))).collect();
    // Noisy by what the noise may be, not by its estimate: a few candidates' runs often
    // put a true 30 % below 20 % (stats::significance::cv_upper).
    judge(others, untested, margin, pool.map(|(cv2, df)| cv_upper(cv2, df)))
}

fn judge_tested(
    others: &[Alternative],
    untested: &[(Alternative, &str)],
    margin: f64,
    noise: Option<f64>,
) -> Certainty {
    let bound = 1.0 + margin;
    // Few runs at high noise settle nothing where the 99 % interval does not show the
    // candidate slower: one 3x slower after two runs is no doubt (stats::race::thin).
    let thin: Vec<&Alternative> = if noise.is_some_and(|cv| cv > NOISY_CV) {
        others.iter().filter(|a| thin(a.low99.unwrap_or(a.low), a.runs)).collect()
    } else {
        Vec::new()
    };
    // The "up to" from the lower end of the 99 % interval (see Alternative::low99).
    let up_to = |a: &Alternative| {
        let low = a.low99.unwrap_or(a.low).min(a.low);
        (low > 0.0 && a.high / low <= WIDE_RANGE).then(|| 1.0 / low - 1.0)
    };
    let by = |key: fn(&Alternative) -> f64| move |a: &&Alternative, b: &&Alternative| key(a).total_cmp(&key(b));
    let widest = others.iter().min_by(by(|a| a.low)).cloned();
    if let Some((other, why)) = untested.iter().min_by(|a, b| a.0.factor.total_cmp(&b.0.factor)) {
        // A tested candidate that may gain more than the margin is the one to name.
        if widest.as_ref().is_none_or(|w| w.low >= 1.0 / bound) {
            return Certainty::NotSettled {
                other: other.clone(),
                up_to: None,
                settle: Some(why.to_string()),
                against: Vec::new(),
            };
        }
    }
    let Some(widest) = widest else { return Certainty::Alone };
    let closest = others.iter().min_by(by(|a| a.factor)).cloned().expect("others is not empty");
    if let Some(few) = thin.iter().min_by(|a, b| a.low.total_cmp(&b.low)).filter(|_| widest.low >= 1.0 / bound) {
        let settle =
            format!("{} runs at up to {:.0} % noise are too few to tell", few.runs, 100.0 * noise.unwrap_or_default());
        // Two runs at this noise bound nothing: no "up to" is said.
        return Certainty::NotSettled { other: (*few).clone(), up_to: None, settle: Some(settle), against: Vec::new() };
    }
    if others.iter().all(|a| a.low > 1.0) && untested.is_empty() {
        return if closest.factor < bound {
            Certainty::Leads { next: closest, margin, against: Vec::new() }
        } else {
            Certainty::Clear { next: closest, against: Vec::new() }
        };
    }
    if widest.low >= 1.0 / bound && untested.is_empty() {
        // The fastest measured where the pick is simpler (a factor below 1), else the
        // closest: either way, the one with the lowest factor.
        return Certainty::AsFast { other: closest, margin, against: Vec::new() };
    }
    let up_to = up_to(&widest);
    // Without an "up to", the line says why there is none.
    let settle = if up_to.is_some() { "more runs would tell" } else { "not measured well enough" };
    Certainty::NotSettled { up_to, other: widest, settle: Some(settle.to_string()), against: Vec::new() }
}

/// The candidate the certainty line names: the closest, the fastest measured, or the one
/// that may gain the most; None where the pick was alone.
pub fn named(certainty: &Certainty) -> Option<&Alternative> {
    match certainty {
        Certainty::Clear { next, .. } | Certainty::Leads { next, .. } => Some(next),
        Certainty::AsFast { other, .. } | Certainty::NotSettled { other, .. } => Some(other),
        Certainty::Alone => None,
    }
}

/// The pick (`pick`, its id) against `other` as a stored comparison: the faster of the
/// two as `better`, the factor at least 1 with its interval.
pub fn comparison(pick: &str, other: &Alternative) -> Comparison {
    let (better, baseline, factor, low, high) = if other.factor >= 1.0 {
        (pick.to_string(), other.case.clone(), other.factor, other.low, other.high)
    } else {
        (other.case.clone(), pick.to_string(), 1.0 / other.factor, 1.0 / other.high, 1.0 / other.low)
    };
    Comparison { better, baseline, factor, low, high, p_value: other.p_value, significant: low > 1.0 }
}

/// On tmpfs or ramfs nothing survives a power loss: a durable goal there is said not to
/// apply, whatever its syncs measured (the JSON keeps them).
pub fn mark_not_durable(result: &ResultFile, answer: &mut [Recommendation]) {
    if !result.target.memory_filesystem() {
        return;
    }
    let words = format!(
        "not applicable here: nothing on {} survives a power loss; run on the disk you will use",
        result.target.fs_type
    );
    // The durable goals, which a filesystem that keeps its files in memory cannot answer.
    let durable = |r: &Recommendation| result::goals::by_key(&r.goal).is_some_and(|goal| goal.durable);
    for recommendation in answer.iter_mut().filter(|r| durable(r)) {
        if let Some(glance) = &mut recommendation.glance {
            glance.not_applicable = Some(words.clone());
        }
    }
}

/// A glance with its pick's action and figure, to be given its certainty.
pub fn glance(action: String, figure: Shown, certainty: Certainty) -> Glance {
    Glance {
        action,
        figure,
        certainty,
        gain: None,
        naive_itself: false,
        not_applicable: None,
        caveats: Vec::new(),
        warnings: Vec::new(),
    }
}

/// A pick whose durable (or O_DIRECT) figure is above the device's own direct write
/// rate, the lower end of its range included, as the calibration measured it: the
/// warning goes on the goal's own lines (docs/answer.md), since it undoes the figure. The
/// observation that lists every such figure stays too.
pub fn mark_above_device(result: &ResultFile, answer: &mut [Recommendation]) {
    let Some(calibration) = result.calibration.as_ref() else { return };
    let has_device = result.target.block_device.is_some();
    for recommendation in answer.iter_mut() {
        let Some(case) = result.cases.iter().find(|c| c.case.id == recommendation.best.case) else { continue };
        let Some(glance) = recommendation.glance.as_mut().filter(|g| g.not_applicable.is_none()) else { continue };
        // The figure the device's rate bounds: the durable one where the goal ranks it.
        let metric = match result::goals::by_key(&recommendation.goal).map(|goal| goal.metric) {
            Some(Metric::NewFileDurable) => Metric::Durable,
            _ => Metric::Buffered,
        };
        let above = super::suspicious::implausible(Side::new(case, metric), calibration, has_device);
        match above {
            Some((limit, context::calibration::DEVICE)) => glance.warnings.push(format!(
                "above this disk's direct write rate of {}: a cache below the filesystem held the data, and a \
                 power loss may lose it",
                super::words::gbps(limit)
            )),
            Some((limit, _)) => glance.warnings.push(format!(
                "above this machine's memory-copy rate of {}: the figure cannot be the writes' own (fewer bytes \
                 written than counted, or a run cut short)",
                super::words::gbps(limit)
            )),
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advice::testkit::alternative as next;
    use stats::race::NOISY_RUNS;

    fn named(case: &str, factor: f64, low: f64, high: f64) -> Alternative {
        Alternative { case: case.into(), ..next(factor, low, high) }
    }

    #[test]
    fn one_candidate_decides_clear_leads_as_fast_or_not_settled() {
        let judged = |alt: Alternative| judge(vec![alt], Vec::new(), 0.05, None);
        assert!(matches!(judged(next(1.3, 1.2, 1.4)), Certainty::Clear { .. }));
        assert!(matches!(judged(next(1.03, 1.01, 1.05)), Certainty::Leads { .. }), "shown slower, by under 5 %");
        assert!(matches!(judged(next(1.01, 0.97, 1.04)), Certainty::AsFast { .. }));
        // Non-inferiority: only how much faster the other may be counts.
        assert!(matches!(judged(next(1.2, 0.96, 1.5)), Certainty::AsFast { .. }));
        let Certainty::NotSettled { up_to, .. } = judged(next(1.03, 0.85, 1.2)) else { panic!() };
        assert!((up_to.unwrap() - (1.0 / 0.85 - 1.0)).abs() < 1e-12);
        let Certainty::NotSettled { up_to, .. } = judged(next(1.5, 0.05, 49.0)) else { panic!() };
        assert_eq!(up_to, None, "an interval 1000x wide says no 'up to'");
        assert_eq!(judge(Vec::new(), Vec::new(), 0.05, None), Certainty::Alone);
    }

    /// Three finalists: the pick; a close runner-up shown within the margin; a noisy
    /// third whose interval reaches 30 % faster. The third keeps the goal open and is
    /// the one named, with its own "up to"; shown slower, the goal is settled.
    #[test]
    fn every_finalist_counts_and_the_one_that_may_gain_most_is_named() {
        let close = named("close", 1.01, 0.98, 1.04);
        let noisy = named("noisy", 1.10, 1.0 / 1.3, 1.6);
        let Certainty::NotSettled { other, up_to, against, .. } =
            judge(vec![close.clone(), noisy], Vec::new(), 0.05, None)
        else {
            panic!()
        };
        assert_eq!(other.case, "noisy", "not the runner-up, the one that may gain the most");
        assert!((up_to.unwrap() - 0.3).abs() < 1e-9, "{up_to:?}");
        assert_eq!(against.len(), 2, "every finalist's comparison is kept");
        let slower = named("noisy", 1.4, 1.2, 1.6);
        let Certainty::AsFast { other, .. } = judge(vec![close.clone(), slower.clone()], Vec::new(), 0.05, None) else {
            panic!()
        };
        assert_eq!(other.case, "close");
        let shown = named("close", 1.08, 1.06, 1.10);
        assert!(
            matches!(judge(vec![shown, slower], Vec::new(), 0.05, None), Certainty::Clear { next, .. } if next.case == "close")
        );
    }

    /// The pick is a simpler strategy than the fastest measured: "as fast as" names the
    /// fastest (its factor below 1), and only where no candidate may be more than the
    /// margin faster.
    #[test]
    fn a_simpler_pick_is_as_fast_as_the_fastest_only_against_every_candidate() {
        let fastest = named("fastest", 0.99, 0.97, 1.01);
        let slow = named("slow", 2.0, 1.8, 2.2);
        let Certainty::AsFast { other, .. } = judge(vec![slow.clone(), fastest.clone()], Vec::new(), 0.05, None) else {
            panic!()
        };
        assert_eq!(other.case, "fastest");
        let open = named("open", 1.0, 0.80, 1.25);
        assert!(
            matches!(judge(vec![fastest, slow, open], Vec::new(), 0.05, None), Certainty::NotSettled { other, .. } if other.case == "open")
        );
    }

    #[test]
    fn an_untested_candidate_keeps_the_goal_open() {
        let tested = named("tested", 1.5, 1.4, 1.6);
        let one_run = named("one run", 1.2, 1.2, 1.2);
        let Certainty::NotSettled { other, up_to, settle, .. } =
            judge(vec![tested.clone()], vec![(one_run, "it had one run: more runs would tell")], 0.05, None)
        else {
            panic!()
        };
        assert_eq!(
            (other.case.as_str(), up_to, settle.as_deref()),
            ("one run", None, Some("it had one run: more runs would tell"))
        );
        // A tested candidate that may gain more is named before it.
        let open = named("open", 1.0, 0.7, 1.4);
        let one_run = named("one run", 1.2, 1.2, 1.2);
        assert!(
            matches!(judge(vec![tested, open], vec![(one_run, "one run")], 0.05, None), Certainty::NotSettled { other, .. } if other.case == "open")
        );
    }

    /// Where the goal's noise may be above 20 %, a candidate with fewer than 6 runs shown
    /// slower, but not at 99 %, settles nothing: the line names it and says why, with no
    /// "up to"; with 6 runs, or at lower noise, the same interval settles the goal.
    #[test]
    fn a_candidate_with_too_few_runs_at_high_noise_keeps_the_goal_open_and_says_why() {
        let thin = Alternative { runs: 3, low99: Some(0.80), ..named("thin", 1.48, 1.02, 2.15) };
        let Certainty::NotSettled { other, up_to, settle, .. } =
            judge(vec![thin.clone()], Vec::new(), 0.05, Some(0.34))
        else {
            panic!()
        };
        assert_eq!(
            (other.case.as_str(), up_to, settle.as_deref()),
            ("thin", None, Some("3 runs at up to 34 % noise are too few to tell"))
        );
        let words = crate::advice::words::certainty_words(
            &judge(vec![thin.clone()], Vec::new(), 0.05, Some(0.34)),
            Metric::Commits,
            3.25e6,
        );
        assert!(
            words.contains("thin may be faster, 3 runs at up to 34 % noise are too few to tell (its time 1.48x"),
            "{words}"
        );
        assert!(matches!(judge(vec![thin.clone()], Vec::new(), 0.05, Some(0.18)), Certainty::Clear { .. }));
        let six = Alternative { runs: NOISY_RUNS, ..thin };
        assert!(matches!(judge(vec![six], Vec::new(), 0.05, Some(0.34)), Certainty::Clear { .. }));
        // Shown slower at 99 % too (3x after two runs): no doubt, whatever the runs.
        let far = Alternative { runs: 2, low99: Some(1.8), ..named("far", 3.0, 2.1, 4.3) };
        assert!(matches!(judge(vec![far], Vec::new(), 0.05, Some(0.34)), Certainty::Clear { .. }));
    }

    /// A durable pick above the disk's own direct write rate carries the warning on its
    /// goal's lines; the same figure without a device behind it (tmpfs) does not.
    #[test]
    fn a_durable_pick_above_the_devices_rate_is_warned_on_its_own_lines() {
        use crate::advice::testkit::{Build, around, case, goal};
        // 1 GiB written in 0.1 s and synced in 0.4 s: 2.15 GB/s durable, the disk 1 GB/s.
        let build = || {
            Build::new()
                .synced(case("pwrite empty 1MiB t1 end"), &around(0.1), &around(0.4))
                .calibrated_with(20e9, Some(1e9))
        };
        let mut result = build().done();
        result.target.block_device = Some("/dev/vda".into());
        let answer = crate::advice::recommendations(&result);
        let durable = goal(&answer, "durable-at-end").glance.clone().unwrap();
        assert_eq!(
            durable.warnings,
            ["above this disk's direct write rate of 1.00 GB/s: a cache below the filesystem held the data, and a \
              power loss may lose it"]
        );
        assert!(goal(&answer, "fastest").glance.as_ref().unwrap().warnings.is_empty(), "a buffered figure may be");
        let in_memory = crate::advice::recommendations(&build().done());
        assert!(goal(&in_memory, "durable-at-end").glance.as_ref().unwrap().warnings.is_empty());
    }

    #[test]
    fn a_range_wider_than_ten_times_is_not_measured_well() {
        let summary = |low: Option<f64>, high: Option<f64>| stats::Summary {
            n: 2,
            min: 1.0,
            max: 2.0,
            mean: 1.5,
            stddev: 0.5,
            median: 1.5,
            ci95_low: low,
            ci95_high: high,
        };
        assert!(Shown::of(&summary(Some(1.0), Some(2.0)), "bytes/s").well_measured);
        assert!(!Shown::of(&summary(Some(0.1), Some(2.0)), "bytes/s").well_measured);
        assert!(!Shown::of(&summary(Some(1.0), None), "bytes/s").well_measured, "no upper end");
    }
}
