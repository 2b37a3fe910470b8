//! The Answer's goals at a glance (docs/answer.md, "At a glance"): the typed fields a
//! recommendation's three lines are made of, drawn from the same tests as its
//! sentence. One statistic throughout: a case's figure is its bytes (or operations)
//! over its mean time, with the 95 % range of that figure, as the table shows it.

use super::figures::{Metric, Side, Test};
use crate::result::glance::{Alternative, Certainty, Glance, Shown, WIDE_RANGE};
use crate::result::{CaseResult, Comparison, Recommendation, ResultFile};
use crate::stats::Summary;

/// The one figure every output shows for `case` under `metric`.
pub fn shown(case: &CaseResult, metric: Metric) -> Option<Shown> {
    let summary = metric.summary(case)?;
    Some(shown_of(&summary, unit(metric)))
}

/// [`shown`] of a summary already drawn.
pub fn shown_of(summary: &Summary, unit: &str) -> Shown {
    let well_measured = match (summary.ci95_low, summary.ci95_high) {
        (Some(low), Some(high)) => low > 0.0 && high / low <= WIDE_RANGE,
        // One run: no range, but nothing to call badly measured either.
        (None, None) => true,
        _ => false,
    };
    Shown {
        value: summary.mean,
        low: summary.ci95_low,
        high: summary.ci95_high,
        unit: unit.to_string(),
        runs: summary.n,
        well_measured,
    }
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
        case: test.from.id().to_string(),
        action,
        value: test.from.mean(),
        factor: test.factor.factor,
        low: test.factor.low,
        high: test.factor.high,
        p_value: test.factor.p,
    }
}

/// The pick against a next case with too few runs to test (one run, or one timed loop):
/// not settled, the ratio of mean times said as it is, with `settle` saying why.
pub fn untested(other: Side, pick: Side, action: String, settle: &str) -> Certainty {
    let ratio = other.mean_seconds() / pick.mean_seconds();
    let other = Alternative {
        case: other.id().to_string(),
        action,
        value: other.mean(),
        factor: ratio,
        low: ratio,
        high: ratio,
        p_value: 1.0,
    };
    Certainty::NotSettled { other, up_to: None, settle: Some(settle.to_string()) }
}

/// The pick against the case closest to it (`next`, its test oriented as in
/// [`alternative`]): shown faster, the same within `margin`, or not settled.
pub fn against_next(next: Alternative, margin: f64) -> Certainty {
    let bound = 1.0 + margin;
    if next.low > 1.0 {
        Certainty::Clear { next }
    } else if next.low >= 1.0 / bound && next.high <= bound {
        Certainty::AsFast { other: next, margin }
    } else {
        let up_to = (next.low > 0.0 && next.high / next.low <= WIDE_RANGE).then(|| 1.0 / next.low - 1.0);
        Certainty::NotSettled { other: next, up_to, settle: Some("more runs would tell".to_string()) }
    }
}

/// Where the race dropped every other candidate of `goal`: the closest of them, with
/// the factor and interval the race stored when it dropped it.
pub fn beaten(
    cases: &[&CaseResult],
    goal: &str,
    action: impl Fn(&CaseResult) -> String,
    value: impl Fn(&CaseResult) -> f64,
) -> Option<Alternative> {
    cases
        .iter()
        .filter_map(|&c| {
            let behind = c.race.as_ref()?.behind.as_ref().filter(|b| b.goal == goal)?;
            Some((c, behind))
        })
        .min_by(|a, b| a.1.factor.total_cmp(&b.1.factor))
        .map(|(case, behind)| Alternative {
            case: case.case.id.clone(),
            action: action(case),
            value: value(case),
            factor: behind.factor,
            low: behind.low,
            high: behind.high,
            p_value: behind.p_value,
        })
}

/// What a race won outright beat, in the recommendation's words: "; the race dropped
/// every other candidate: the closest, X, took 1.40x its time (1.10–1.80x)".
pub fn beaten_words(next: &Alternative) -> String {
    format!(
        "; the race dropped every other candidate: the closest, {}, took {:.2}x its time ({:.2}–{:.2}x)",
        next.case, next.factor, next.low, next.high
    )
}

/// What a race won outright beat, as the recommendation's `runner_up`: the factor the
/// race stored when it dropped it, against `better`, the pick.
pub fn beaten_comparison(better: &CaseResult, next: &Alternative) -> Comparison {
    Comparison {
        better: better.case.id.clone(),
        baseline: next.case.clone(),
        factor: next.factor,
        low: next.low,
        high: next.high,
        p_value: next.p_value,
        significant: next.low > 1.0,
    }
}

/// The durable goals, which a filesystem that keeps its files in memory cannot answer.
const DURABLE_GOALS: [&str; 3] = ["durable-at-end", "small-durable-commits", "crash-safe-saves"];

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
    for recommendation in answer.iter_mut().filter(|r| DURABLE_GOALS.contains(&r.goal.as_str())) {
        if let Some(glance) = &mut recommendation.glance {
            glance.not_applicable = Some(words.clone());
        }
    }
}

/// A glance with its pick's action and figure, to be given its certainty.
pub fn glance(action: String, figure: Shown, certainty: Certainty) -> Glance {
    Glance { action, figure, certainty, gain: None, naive_itself: false, not_applicable: None, caveats: Vec::new() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn next(factor: f64, low: f64, high: f64) -> Alternative {
        Alternative { case: "c".into(), action: "a".into(), value: 1.0, factor, low, high, p_value: 0.5 }
    }

    #[test]
    fn the_next_case_decides_clear_as_fast_or_not_settled() {
        assert!(matches!(against_next(next(1.3, 1.2, 1.4), 0.05), Certainty::Clear { .. }));
        assert!(matches!(against_next(next(1.01, 0.97, 1.04), 0.05), Certainty::AsFast { .. }));
        let Certainty::NotSettled { up_to, .. } = against_next(next(1.03, 0.85, 1.2), 0.05) else { panic!() };
        assert!((up_to.unwrap() - (1.0 / 0.85 - 1.0)).abs() < 1e-12);
        let Certainty::NotSettled { up_to, .. } = against_next(next(1.5, 0.05, 49.0), 0.05) else { panic!() };
        assert_eq!(up_to, None, "an interval 1000x wide says no 'up to'");
    }

    #[test]
    fn a_range_wider_than_ten_times_is_not_measured_well() {
        let summary = |low: Option<f64>, high: Option<f64>| Summary {
            n: 2,
            min: 1.0,
            max: 2.0,
            mean: 1.5,
            stddev: 0.5,
            median: 1.5,
            ci95_low: low,
            ci95_high: high,
        };
        assert!(shown_of(&summary(Some(1.0), Some(2.0)), "bytes/s").well_measured);
        assert!(!shown_of(&summary(Some(0.1), Some(2.0)), "bytes/s").well_measured);
        assert!(!shown_of(&summary(Some(1.0), None), "bytes/s").well_measured, "no upper end");
    }
}
