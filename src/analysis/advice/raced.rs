//! What the race (docs/racing.md) says of each recommendation whose goal it did not
//! decide: the rounds stopped, by the budget or at the most runs a case gets, while
//! several candidates were still in contention; the recommendation is the simplest of
//! them not shown slower and measured within the margin, and the user is told how to
//! settle it.

use crate::result::race::{Decision, GoalRace, RaceReport};
use crate::result::{Recommendation, ResultFile};

/// Adds to each recommendation of an undecided goal how its race ended.
pub fn annotate(result: &ResultFile, answer: &mut [Recommendation]) {
    let Some(race) = &result.race else { return };
    for recommendation in answer {
        let size = result.cases.iter().find(|c| c.case.id == recommendation.best.case).map(|c| c.case.chunk_bytes);
        let Some(goal) =
            race.goals.iter().find(|g| g.goal == recommendation.goal && g.size.is_none_or(|s| Some(s) == size))
        else {
            continue;
        };
        if goal.decision == Decision::Undecided {
            recommendation.text += &format!("; {}", undecided_words(race, goal));
        }
    }
}

/// "race undecided after 32 s (budget 30 s): 12 of 77 candidates left, at up to 1.60x the
/// leader's time (pwrite empty 1MiB t1 end); give --budget 1m to settle more of it". The
/// factors, not their intervals: after two runs an interval can reach hundreds, which
/// says only that two runs were not enough.
fn undecided_words(race: &RaceReport, goal: &GoalRace) -> String {
    let furthest = goal.left.iter().filter_map(|l| l.factor).fold(0.0, f64::max);
    let within = if furthest > 0.0 {
        format!(", at up to {furthest:.2}x the leader's time ({})", goal.left[0].case)
    } else {
        String::new()
    };
    let spent = race.seconds.round();
    let (why, advice) = match race.budget_seconds {
        Some(budget) if race.out_of_budget => {
            // Twice the time spent, in whole minutes past one: rounds cost what the
            // first ones did, and the candidates left need several each.
            let more = (2.0 * spent.max(budget) / 60.0).ceil() as u64;
            (format!("after {spent} s (budget {budget:.0} s)"), format!("give --budget {more}m to settle more of it"))
        }
        _ => ("at the most runs a case gets".to_string(), "give --max-runs 20 to settle more of it".to_string()),
    };
    format!("race undecided {why}: {} of {} candidates left{within}; {advice}", goal.left.len(), goal.candidates)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::advice::testkit::{Build, around, case, goal, latency_case};
    use crate::result::race::Left;

    fn race(decision: Decision) -> RaceReport {
        RaceReport {
            budget_seconds: Some(30.0),
            seconds: 32.4,
            rounds: 3,
            out_of_budget: decision == Decision::Undecided,
            goals: vec![GoalRace {
                goal: "fastest".into(),
                size: None,
                decision,
                round: None,
                seconds: None,
                candidates: 2,
                left: vec![
                    Left { case: "pwrite empty 1MiB t1 end".into(), factor: None, low: None, high: None },
                    Left {
                        case: "write empty 1MiB t1 end".into(),
                        factor: Some(1.02),
                        low: Some(0.9),
                        high: Some(1.2),
                    },
                ],
            }],
        }
    }

    #[test]
    fn an_undecided_goal_says_how_its_race_ended_and_a_decided_one_says_nothing() {
        let build = || {
            Build::new()
                .add(case("pwrite empty 1MiB t1 end"), &around(0.5))
                .add(case("write empty 1MiB t1 end"), &around(0.51))
        };
        let mut result = build().done();
        result.race = Some(race(Decision::Undecided));
        let answer = crate::analysis::advice::recommendations(&result);
        let text = &goal(&answer, "fastest").text;
        assert!(
            text.ends_with(
                "; race undecided after 32 s (budget 30 s): 2 of 2 candidates left, at up to 1.02x the leader's time \
                 (pwrite empty 1MiB t1 end); give --budget 2m to settle more of it"
            ),
            "{text}"
        );
        let mut decided = build().done();
        decided.race = Some(race(Decision::Won));
        let answer = crate::analysis::advice::recommendations(&decided);
        assert!(!goal(&answer, "fastest").text.contains("race"), "{}", goal(&answer, "fastest").text);
    }

    /// A case the race dropped after two runs stays out of the recommendation, though
    /// its two runs alone cannot show it slower, it measured within the margin and it is
    /// the simplest.
    #[test]
    fn a_case_the_race_dropped_is_not_recommended_again() {
        let result = || {
            Build::new()
                .add(case("pwritev empty 1MiB x1 t1 end"), &around(0.5))
                .add(case("write empty 1MiB t1 end"), &[0.3, 0.72])
                .done()
        };
        let answer = crate::analysis::advice::recommendations(&result());
        assert_eq!(
            goal(&answer, "fastest").best.case,
            "write empty 1MiB t1 end",
            "unraced: the simplest not shown slower and within the margin"
        );
        let mut raced = result();
        let mut report = race(Decision::Won);
        report.goals[0].left =
            vec![Left { case: "pwritev empty 1MiB x1 t1 end".into(), factor: None, low: None, high: None }];
        raced.race = Some(report);
        let answer = crate::analysis::advice::recommendations(&raced);
        assert_eq!(
            goal(&answer, "fastest").best.case,
            "pwritev empty 1MiB x1 t1 end",
            "{}",
            goal(&answer, "fastest").text
        );
    }

    /// Each recommendation is told how its own goal's race ended: goals by name, and the
    /// latency goals' answers by write size too. A race that stopped at the most runs a
    /// case gets, with budget to spare, says so instead of the budget.
    #[test]
    fn each_recommendation_is_annotated_by_its_own_goals_race() {
        let mut big = latency_case("append", "every:4");
        big.chunk_bytes = 4096;
        big.id = "latency append 4KiB every:4".into();
        let mut result = Build::new()
            .add(case("pwrite empty 1MiB t1 end"), &around(0.5))
            .loops(big, &around(8000.0), 300_000)
            .loops(latency_case("overwrite0", "odsync"), &around(3000.0), 410_000)
            .done();
        // The new-file goals keep their one case in the race (the Answer's candidates
        // are those left); no factor, so the words name no leader.
        let goal_race = |goal: &str, size, decision, left: &[&str]| GoalRace {
            goal: goal.into(),
            size,
            decision,
            round: None,
            seconds: None,
            candidates: 2,
            left: left.iter().map(|&case| Left { case: case.into(), factor: None, low: None, high: None }).collect(),
        };
        let pwrite = ["pwrite empty 1MiB t1 end"];
        let mut report = race(Decision::Undecided);
        report.goals = vec![
            goal_race("durable-at-end", None, Decision::Undecided, &pwrite),
            goal_race("fastest", None, Decision::Won, &pwrite),
            goal_race("small-durable-commits", Some(4096), Decision::Undecided, &[]),
            goal_race("small-durable-commits", Some(8), Decision::Won, &[]),
        ];
        result.race = Some(report);
        let texts = |result: &ResultFile| -> Vec<(String, String)> {
            let answer = crate::analysis::advice::recommendations(result);
            answer.into_iter().map(|r| (format!("{} {}", r.goal, r.best.case), r.text)).collect()
        };
        let undecided: Vec<String> =
            texts(&result).into_iter().filter(|(_, text)| text.contains("race undecided")).map(|(g, _)| g).collect();
        assert_eq!(
            undecided,
            ["durable-at-end pwrite empty 1MiB t1 end", "small-durable-commits latency append 4KiB every:4"],
            "{:?}",
            texts(&result)
        );
        result.race.as_mut().unwrap().out_of_budget = false;
        let texts = texts(&result);
        let durable = &texts.iter().find(|(g, _)| g.starts_with("durable-at-end")).unwrap().1;
        assert!(
            durable.ends_with(
                "; race undecided at the most runs a case gets: 1 of 2 candidates left; give --max-runs 20 to settle \
                 more of it"
            ),
            "{durable}"
        );
    }
}
