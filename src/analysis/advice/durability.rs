//! What durability costs: each mode's durable figure against the buffered one, and the
//! modes against each other. A case that never syncs has no durable figure (docs/design.md
//! §2.10) and takes part only as the page-cache baseline of a mode that syncs inside
//! its write span (O_SYNC, O_DSYNC, every:N), whose own write time already holds the
//! syncs, so that comparing its durable figure with its buffered one would show nothing.

use std::collections::{BTreeMap, BTreeSet};

use super::effects::aggregate;
use super::figures::{Finding, Measured, Metric, Side, Test, test};
use super::words::{Token, id_without, mode};
use crate::plan::Durability;
use crate::plan::durability::Commit;

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
        findings.extend(aggregate("durability-cost", &subject, tests, &|c| id_without(c, &[Token::Durability])));
    }
    findings
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
        findings.extend(aggregate("durability-mode", &subject, tests, &|c| id_without(c, &[Token::Durability])));
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::advice::testkit::{Build, around, case};

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
