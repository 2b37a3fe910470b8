//! The Answer's goals as races (docs/racing.md): for each goal, the cases that compete
//! for it and the metric whose run times decide it, so that the rounds can drop a case
//! once every goal it competes for has left it behind. The same candidates as the
//! recommendations rank (`recommend`, `commits`), taken from cases still being measured.

use super::figures::Figures;
use std::collections::BTreeMap;

use super::commits::appends;
use super::figures::{Measured, Metric};
use super::recommend::{candidates, simplicity, writers};
use plan::latency::{is_latency_case, is_not_durable_save, pattern_of};
use result::goals::{AnsweredBy, GOALS};
use result::{CaseResult, Status};

/// One goal's candidates.
#[derive(Debug, Clone, PartialEq)]
pub struct Contest {
    /// The goal's key, as its recommendation carries it (`fastest`, `small-durable-commits`).
    pub goal: String,
    /// The size a latency goal is for: commits of 8 B and of 4 KiB are two questions,
    /// answered apart.
    pub size: Option<u64>,
    pub metric: Metric,
    /// Positions in the cases given, in their order.
    pub members: Vec<usize>,
}

/// The contest's members, simplest first by the order the Answer recommends in
/// (`recommend::simplicity`); None for a latency goal, whose recommendation is its
/// fastest.
pub fn simplest_first(contest: &Contest, cases: &[CaseResult]) -> Option<Vec<usize>> {
    contest.size.is_none().then(|| {
        let mut members = contest.members.clone();
        members.sort_by_key(|&m| simplicity(&cases[m].case, writers(&cases[m])));
        members
    })
}

/// Every goal the cases can answer, with its candidates: the throughput goals (with the
/// equivalence `margin` the twins' lookup does not need) and, per write size, small
/// durable commits in place, appended, and crash-safe saves.
pub fn contests(cases: &[CaseResult], margin: f64) -> Vec<Contest> {
    let position = |member: &CaseResult| cases.iter().position(|c| std::ptr::eq(c, member)).expect("a member is given");
    let measured = Measured::of_cases(cases, margin);
    let latency = |goal: &str, metric: Metric, fits: &dyn Fn(&CaseResult) -> bool| {
        let mut sizes: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
        for (index, case) in cases.iter().enumerate() {
            if is_latency_case(&case.case) && case.status == Status::Ok && fits(case) && metric.times(case).is_some() {
                sizes.entry(case.case.chunk_bytes).or_default().push(index);
            }
        }
        sizes
            .into_iter()
            .map(|(size, members)| Contest { goal: goal.to_string(), size: Some(size), metric, members })
            .collect::<Vec<Contest>>()
    };
    let durable_save = |c: &CaseResult| {
        pattern_of(&c.case).is_some_and(|p| p.is_save()) && c.case.durability.syncs() && !is_not_durable_save(&c.case)
    };
    let mut throughput = Vec::new();
    let mut by_size = Vec::new();
    for goal in &GOALS {
        match goal.answered_by {
            AnsweredBy::Throughput(_) => throughput.push(Contest {
                goal: goal.key.to_string(),
                size: None,
                metric: goal.metric,
                members: candidates(&measured, goal).into_iter().map(position).collect(),
            }),
            AnsweredBy::Commits { appends: log } => {
                by_size.extend(latency(goal.key, goal.metric, &|c: &CaseResult| appends(c) == log))
            }
            AnsweredBy::Saves => by_size.extend(latency(goal.key, goal.metric, &durable_save)),
        }
    }
    // The throughput goals first, then the latency goals' sizes.
    let mut contests: Vec<Contest> = throughput.into_iter().filter(|contest| !contest.members.is_empty()).collect();
    contests.extend(by_size);
    contests
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advice::testkit::{Build, case, latency_case};

    #[test]
    fn each_goal_names_the_cases_that_answer_it() {
        let result = Build::new()
            .add(case("write empty 1MiB t1 end"), &[1.0, 1.1])
            .add(case("pwrite empty 1MiB t1 end"), &[1.2, 1.1])
            .add(case("pwrite empty 1MiB t2 end"), &[0.6, 0.7])
            .add(case("write overwrite 1MiB t1 end"), &[0.5, 0.5])
            .add(case("write empty 1MiB t2 f2 end"), &[0.5, 0.5])
            .loops(latency_case("overwrite0", "odsync"), &[1000.0, 1100.0], 900)
            .loops(latency_case("append", "odsync"), &[900.0, 950.0], 900)
            .loops(latency_case("overwrite0", "none"), &[1e6, 1e6], 90)
            .done();
        let contests = contests(&result.cases, 0.05);
        let of = |goal: &str| contests.iter().find(|c| c.goal == goal).map(|c| c.members.clone());
        assert_eq!(of("fastest"), Some(vec![0, 1]));
        assert_eq!(of("durable-at-end"), Some(vec![0, 1]));
        assert_eq!(of("threads-one-file"), Some(vec![2]));
        assert_eq!(of("rewrite-in-place"), Some(vec![3]));
        assert_eq!(of("small-durable-commits"), Some(vec![5]), "the durable one in place, not the page-cache one");
        assert_eq!(of("small-durable-appends"), Some(vec![6]), "an append answers the log's goal");
        let commits = contests.iter().find(|c| c.goal == "small-durable-commits").unwrap();
        assert_eq!((commits.size, commits.metric), (Some(8), Metric::Commits));
        assert!(contests.iter().all(|c| !c.members.contains(&4)), "a file per thread answers no goal");
        assert_eq!(of("crash-safe-saves"), None, "no save measured, no such goal");
    }
}
