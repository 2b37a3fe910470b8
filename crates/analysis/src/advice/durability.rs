//! What durability costs: each mode's durable figure against the buffered one, and the
//! modes against each other. A case that never syncs has no durable figure (docs/design.md
//! §2.10) and takes part only as the page-cache baseline of a mode that syncs inside
//! its write span (O_SYNC, O_DSYNC, every:N), whose own write time already holds the
//! syncs, so that comparing its durable figure with its buffered one would show nothing.

use std::collections::{BTreeMap, BTreeSet};

use super::effects::aggregate;
use super::figures::{Finding, Measured, Metric, Side, Test, holm_adjusted, test};
use super::words::{Token, direction, factor, gbps_change, id_without, mode};
use plan::durability::Commit;
use plan::{Case, Durability};

/// Per mode that syncs: `end` modes against their own write time (the sync span is the
/// cost), the others against the same case through the page cache only.
pub fn costs(measured: &Measured) -> Vec<Finding> {
    let mut families: BTreeMap<Durability, (Option<Durability>, Vec<Test>)> = BTreeMap::new();
    for &case in measured.cases.iter().filter(|c| c.durable_stats.is_some()) {
        let durability = case.case.durability;
        let (baseline, against) = match durability.commit {
            Commit::End(_) => (Some(case), None),
            _ => {
                let cached = Durability { commit: Commit::None, ..durability };
                (measured.twin(case, |d| d.durability = cached), Some(cached))
            }
        };
        let Some(baseline) = baseline else { continue };
        let tested = test(Side::new(baseline, Metric::Buffered), Side::new(case, Metric::Durable));
        let family = families.entry(durability).or_insert((against, Vec::new()));
        family.1.extend(tested);
    }
    let mut findings = Vec::new();
    for (durability, (against, tests)) in families {
        let subject = match against {
            None => format!("durable with {} vs buffered", mode(durability)),
            Some(cached) => format!("durable with {} vs {}", mode(durability), mode(cached)),
        };
        let tag = |c: &Case| id_without(c, &[Token::Durability]);
        findings.extend(negligible(&subject, &tests, &tag, measured.margin));
        findings.extend(aggregate("durability-cost", &subject, tests, &tag, measured.margin));
    }
    findings
}

/// The cases of a mode whose sync is shown to cost less than the margin, after Holm's
/// correction over the mode's tests, in one line: "durable with one fsync at the end vs
/// buffered: within ±5 % in 93 of 106 cases: the sync adds at most 3 % to the time of
/// each; widest io_uring empty 4KiB qd32 t1: 1.11 → 1.11 GB/s (1.00x slower, 0.970–1.030x
/// the time)".
/// What durability costs is an answer even where it is nothing: on tmpfs an fsync at
/// the end takes a few µs of a 25 ms run. None where no case's cost is within it.
fn negligible(subject: &str, tests: &[Test], tag: &dyn Fn(&Case) -> String, margin: f64) -> Option<Finding> {
    let adjusted = holm_adjusted(tests);
    let within: Vec<&Test> = adjusted.iter().filter(|t| t.factor.equivalent(margin)).collect();
    // The durable time over the buffered one: the inverse of the factor, `to` (the
    // durable side) being the slower. The widest is the one whose interval reaches
    // furthest above 1.
    let bounds = |t: &Test| (1.0 / t.factor.high, 1.0 / t.factor.low);
    let widest = *within.iter().max_by(|a, b| bounds(a).1.total_cmp(&bounds(b).1))?;
    let (low, high) = bounds(widest);
    let added = (high - 1.0) * 100.0;
    let added = if added < 1.0 { "less than 1 %".to_string() } else { format!("at most {added:.0} %") };
    // The factor beside the two figures is their ratio, as everywhere; the interval
    // after it is what "at most" rests on.
    let text = format!(
        "{subject}: within ±{:.0} % in {} of {} cases: the sync adds {added} to the time of each; widest {}: {} \
         ({} {}, {low:.3}–{high:.3}x the time)",
        margin * 100.0,
        within.len(),
        tests.len(),
        tag(&widest.to.case.case),
        gbps_change(widest.from.mean(), widest.to.mean()),
        factor(widest.oriented().0),
        direction(widest),
    );
    Some(Finding::new("durability-cost", text, widest.figures(), Some(widest.comparison()), 0.0))
}

/// Every two modes that sync, with or without O_DIRECT alike (O_DIRECT's own effect
/// is `effects::direct`), on their durable figures, for the cases measured under both.
pub fn modes(measured: &Measured) -> Vec<Finding> {
    let mut families: BTreeMap<(Durability, Durability), Vec<Test>> = BTreeMap::new();
    let durable: Vec<_> = measured.cases.iter().copied().filter(|c| c.durable_stats.is_some()).collect();
    let present: BTreeSet<Durability> = durable.iter().map(|c| c.case.durability).collect();
    for &case in &durable {
        let this = case.case.durability;
        // Each pair once, from the smaller mode to the larger.
        for &that in present.iter().filter(|&&that| that < this && that.direct == this.direct) {
            let Some(other) = measured.twin(case, |d| d.durability = that) else { continue };
            let tests = families.entry((that, this)).or_default();
            tests.extend(test(Side::new(other, Metric::Durable), Side::new(case, Metric::Durable)));
        }
    }
    let mut findings = Vec::new();
    for ((that, this), tests) in families {
        let subject = format!("{} vs {}, durable", mode(this), mode(that));
        findings.extend(aggregate(
            "durability-mode",
            &subject,
            tests,
            &|c| id_without(c, &[Token::Durability]),
            measured.margin,
        ));
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advice::testkit::{Build, around, case};

    #[test]
    fn the_sync_span_is_the_cost_of_end_and_none_has_no_durable_figure() {
        let result = Build::new()
            .add(case("pwrite empty 1MiB t1 none"), &around(1.0))
            .synced(case("pwrite empty 1MiB t1 end"), &around(1.0), &around(1.0))
            .add(case("pwrite empty 1MiB t1 odsync"), &around(4.0))
            .done();
        let measured = Measured::of(&result);
        let findings = costs(&measured);
        let texts: Vec<&str> = findings.iter().map(|f| f.observation.text.as_str()).collect();
        assert_eq!(texts.len(), 2, "{texts:?}");
        assert!(texts[0].starts_with("durable with one fsync at the end vs buffered: 2.0x slower in 1 of 1 cases; most pwrite empty 1MiB t1: 1.07 → 0.537 GB/s"), "{}", texts[0]);
        assert!(
            texts[1].starts_with("durable with O_DSYNC vs page cache only: 4.0x slower in 1 of 1 cases"),
            "{}",
            texts[1]
        );
        // The case without a sync is a baseline's buffered figure, never a durable one.
        for finding in &findings {
            for figure in &finding.observation.figures {
                assert!(!(figure.case.ends_with(" none") && figure.metric == "durable"), "{figure:?}");
            }
        }
        let compared = modes(&measured);
        assert_eq!(compared.len(), 1, "{compared:?}");
        assert!(
            compared[0]
                .observation
                .text
                .starts_with("O_DSYNC vs one fsync at the end, durable: 2.0x slower in 1 of 1 cases"),
            "{compared:?}"
        );
    }

    /// A sync of 1 ms after writes of about a second that vary by 10 % from run to run:
    /// paired run by run, its cost is shown to lie within 5 %, and said so; a sync of
    /// half a second is a cost, said apart. Two independent samples would have left the
    /// first undecided.
    #[test]
    fn a_sync_within_the_margin_is_said_to_cost_less_than_it() {
        let writes = [1.0, 1.1, 0.9, 1.05, 0.95];
        let result = Build::new()
            .synced(case("pwrite empty 1MiB t1 end"), &writes, &[0.001; 5])
            .synced(case("pwrite empty 64KiB t1 end"), &writes, &[0.5, 0.52, 0.48, 0.51, 0.49])
            .done();
        let texts: Vec<String> = costs(&Measured::of(&result)).into_iter().map(|f| f.observation.text).collect();
        assert_eq!(texts.len(), 2, "{texts:?}");
        assert!(
            texts[0].starts_with(
                "durable with one fsync at the end vs buffered: within ±5 % in 1 of 2 cases: the sync adds less than \
                 1 % to the time of each; widest pwrite empty 1MiB t1: 1.07 → 1.07 GB/s (1.00x slower, 1.001–1.001x \
                 the time)"
            ),
            "{}",
            texts[0]
        );
        assert!(
            texts[1].starts_with("durable with one fsync at the end vs buffered: 1.50x slower in 1 of 2 cases; most"),
            "{}",
            texts[1]
        );
        // A sync of 1–3 % of the run: within the margin still, and its most said.
        let small =
            Build::new().synced(case("pwrite empty 1MiB t1 end"), &writes, &[0.02, 0.03, 0.01, 0.025, 0.015]).done();
        let said = costs(&Measured::of(&small));
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].observation.text.contains(": the sync adds at most 3 % to the time of each; widest pwrite empty"),
            "{}",
            said[0].observation.text
        );
        let apart = stats::significance::factor(&writes, &writes.map(|w| w + 0.001)).unwrap();
        assert_eq!(apart.verdict(0.05), stats::significance::Verdict::Undecided, "{apart:?}");
    }

    #[test]
    fn only_none_gives_no_durability_observation() {
        let result = Build::new()
            .add(case("pwrite empty 1MiB t1 none"), &around(1.0))
            .add(case("pwrite empty 4KiB t1 none"), &around(2.0))
            .done();
        let measured = Measured::of(&result);
        assert!(costs(&measured).is_empty() && modes(&measured).is_empty());
    }
}
