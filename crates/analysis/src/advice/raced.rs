//! What the race (docs/racing.md) says of each recommendation whose goal it did not
//! decide: the rounds stopped, by the budget or at the most runs a case gets, while
//! several candidates were still in contention; the recommendation is the simplest of
//! them not shown slower and measured within the margin, and the user is told how to
//! settle it.

use result::glance::Alternative;
use result::race::{Decision, GoalRace, RaceReport};
use result::{Observation, Recommendation, ResultFile};

/// In a raced result (docs/racing.md), the candidates still in the goal's race when it
/// ended. The others were shown slower than its leader by the race's rule, whose noise
/// is pooled over the candidates, and stopped after the few runs that showed it: too few
/// for [`test`]'s own two-sample interval to show it again, so without this the simplest
/// of them could come back as "not shown slower".
pub fn finalists<'a>(result: &'a ResultFile, goal: &str, size: Option<u64>) -> Option<Vec<&'a str>> {
    let race = result.race.as_ref()?.goals.iter().find(|g| g.goal == goal && g.size == size)?;
    Some(race.left.iter().map(|left| left.case.as_str()).collect())
}

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
            recommendation.text += &format!("; {}", undecided_words(race, goal, result.options.max_runs));
        }
        // What would settle a goal the Answer leaves open, for the candidate it names:
        // whether or not the race's own rule had decided among those it kept.
        let Some(glance) = &mut recommendation.glance else { continue };
        let pick_runs = glance.figure.runs;
        if let result::glance::Certainty::NotSettled { other, settle, up_to, .. } = &mut glance.certainty {
            if other.runs >= 2 {
                let hint = settle_words(result, race, other, pick_runs);
                // Without an "up to", the judgement's reason stays in front of the hint.
                *settle = Some(match (up_to, settle.take()) {
                    (None, Some(why)) if hint == MORE_RUNS => why,
                    (None, Some(why)) => format!("{why}: {hint}"),
                    _ => hint,
                });
            }
        }
    }
}

/// "race undecided after 32 s (budget 30 s): 12 of 77 candidates left, at up to 1.60x the
/// time of the leader, pwrite empty 1MiB t1 end; give --budget 1m to settle more of it". The
/// factors, not their intervals: after two runs an interval can reach hundreds, which
/// says only that two runs were not enough.
fn undecided_words(race: &RaceReport, goal: &GoalRace, max_runs: Option<u32>) -> String {
    let furthest = goal.left.iter().filter_map(|l| l.factor).fold(0.0, f64::max);
    let within = if furthest > 0.0 {
        // The leader named after its title: in brackets it read as the case furthest behind.
        format!(", at up to {furthest:.2}x the time of the leader, {}", goal.left[0].case)
    } else {
        String::new()
    };
    let spent = race.seconds.round();
    let (why, advice) = match race.budget_seconds {
        Some(budget) if race.out_of_budget => (
            format!("after {spent} s (budget {budget:.0} s)"),
            format!("give --budget {}m to settle more of it", more_budget(race, budget)),
        ),
        _ => ("at the most runs a case gets".to_string(), format!("give {} to settle more of it", more_runs(max_runs))),
    };
    format!("race undecided {why}: {} of {} candidates left{within}; {advice}", goal.left.len(), goal.candidates)
}

/// What would settle a goal the Answer leaves open, in the few words its second line
/// has room for ("--max-runs 24", "--budget 2m"): the runs each of the pick (`pick_runs`
/// so far) and `other` would need at the noise their interval shows
/// ([`runs_to_settle`]), and which of the limits stopped them short of it: the most runs
/// a case gets, or the budget.
fn settle_words(result: &ResultFile, race: &RaceReport, other: &Alternative, pick_runs: usize) -> String {
    let margin = super::figures::equivalence_margin(result);
    let Some(mut needed) = runs_to_settle(other, pick_runs, margin) else {
        // Faster by more than the margin at its estimate: more runs would move the
        // pick, not settle this one.
        return "more runs may make it the pick".to_string();
    };
    if stats::race::thin(other.low99.unwrap_or(other.low), other.runs) {
        // Too few runs at the goal's noise to trust its interval, by the rule the
        // certainty line and the race use (stats::race::thin): the goal stays open
        // until it has NOISY_RUNS, whatever its interval says.
        needed = needed.max(stats::race::NOISY_RUNS as u64);
    }
    if needed > MOST_RUNS_SUGGESTED {
        return format!("about {needed} runs each at this noise");
    }
    let capped = result.options.max_runs.is_some_and(|most| needed > u64::from(most));
    let budget = race.budget_seconds.filter(|_| race.out_of_budget);
    match (capped, budget) {
        (true, Some(budget)) => format!("--budget {}m --max-runs {needed}", more_budget(race, budget)),
        (true, None) => format!("--max-runs {needed}"),
        (false, Some(budget)) => format!("--budget {}m", more_budget(race, budget)),
        (false, None) => MORE_RUNS.to_string(),
    }
}

/// The hint where neither limit stopped the runs short.
const MORE_RUNS: &str = "more runs would tell";

/// Past this, a suggested `--max-runs` would be a long wait for a few per cent.
const MOST_RUNS_SUGGESTED: u64 = 100;

/// About how many runs each of the pick and `other` need for the Answer's test to settle
/// between them, at the noise their interval shows: the interval's half-width on the
/// log scale shrinks as one over the root of the runs, and the goal settles once its
/// lower end reaches 1/(1 + margin) (within the margin, or shown slower) from the
/// estimate. None where the estimate itself is below that bound (more runs would show
/// `other` faster, not settle the pick) or nothing was tested. The t quantile falls as
/// runs are added, so this errs on the side of more runs.
pub fn runs_to_settle(other: &Alternative, pick_runs: usize, margin: f64) -> Option<u64> {
    if other.runs < 2 || pick_runs < 2 || other.low <= 0.0 || other.high <= other.low {
        return None;
    }
    let half = (other.high / other.low).ln() / 2.0;
    let room = other.factor.ln() + (1.0 + margin).ln();
    if room <= 0.0 {
        return None;
    }
    // Runs that give the same standard error with both sides alike: the harmonic mean.
    let now = 2.0 / (1.0 / other.runs as f64 + 1.0 / pick_runs as f64);
    Some((now * (half / room).powi(2)).ceil().max(now.ceil() + 1.0) as u64)
}

/// More runs a case to suggest where the most runs a case gets ended the rounds:
/// twice as many ("--max-runs 40" after the raced default of 20), as a goal's own hint
/// says more exactly where it can ([`runs_to_settle`]).
fn more_runs(max_runs: Option<u32>) -> String {
    max_runs.map_or("more runs (--max-runs)".to_string(), |most| format!("--max-runs {}", 2 * most))
}

/// The budget to suggest, in minutes: twice the time spent, in whole minutes past one.
/// Rounds cost what the first ones did, and what is left needs several each.
fn more_budget(race: &RaceReport, budget: f64) -> u64 {
    (2.0 * race.seconds.round().max(budget) / 60.0).ceil() as u64
}

/// What the race left of the observations (docs/racing.md, "The observations"): how
/// many of the comparisons they rest on (`tests` in all) are still open, `open` their
/// cases, and what ended their rounds, so that a user knows that more budget would
/// settle them. None for a result that did not race, or left none open.
pub fn observations_left(result: &ResultFile, open: &[(String, String)], tests: usize) -> Option<Observation> {
    let race = result.race.as_ref()?;
    if open.is_empty() {
        return None;
    }
    let max_runs = result.options.max_runs.map(u64::from);
    let runs = |id: &str| result.cases.iter().find(|c| c.case.id == id).map_or(0, |c| c.runs.len() as u64);
    // A case of an open comparison runs on until it has its most runs: a comparison
    // whose cases had room to run was ended by the budget.
    let room = open.iter().any(|(a, b)| max_runs.is_none_or(|most| runs(a) < most || runs(b) < most));
    // "Still open" only where a goal is: a race whose goals all settled before the
    // budget ended it spent the rest on the observations.
    let goals_open = race.goals.iter().any(|goal| goal.decision == Decision::Undecided);
    let why = match race.budget_seconds {
        Some(budget) if room && race.out_of_budget && goals_open => format!(
            "the budget ({}) ended the race with the Answer's goals still open, and the observations get only \
             what the goals leave; give --budget {}m to settle more of them",
            super::words::seconds_words(budget),
            more_budget(race, budget)
        ),
        Some(budget) if room => format!(
            "the budget ({}) ended their rounds; give --budget {}m to settle more of them",
            super::words::seconds_words(budget),
            more_budget(race, budget)
        ),
        _ => format!(
            "their cases have their {} runs; give {} to settle more of them",
            max_runs.map_or("most".to_string(), |most| most.to_string()),
            more_runs(result.options.max_runs)
        ),
    };
    let margin = 100.0 * super::figures::equivalence_margin(result);
    let text = format!(
        "the race left {} of the {tests} comparisons behind the observations open (neither shown nor within \
         ±{margin:.0} %): {why}",
        open.len()
    );
    let numbers = [("open", open.len() as f64), ("tests", tests as f64)]
        .into_iter()
        .chain(race.budget_seconds.map(|b| ("budget_seconds", b)))
        .map(|(name, value)| (name.to_string(), value))
        .collect();
    Some(Observation { kind: RACE_OPEN.to_string(), text, figures: Vec::new(), comparison: None, numbers })
}

/// The kind of [`observations_left`]'s line.
pub const RACE_OPEN: &str = "race-open";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advice::testkit::{Build, around, case, goal, latency_case};
    use result::glance::Certainty;
    use result::race::Left;

    /// Case `id` of `result` as the race left it: dropped after two runs for `goal`,
    /// shown `(factor, low, high)` times the time of `leader`.
    fn dropped(result: &mut ResultFile, id: &str, (goal, leader): (&str, &str), (factor, low, high): (f64, f64, f64)) {
        let case = result.cases.iter_mut().find(|c| c.case.id == id).expect("the case is in the result");
        case.race = Some(result::race::CaseRace {
            runs: 2,
            round: 2,
            exit: result::race::Exit::Slower,
            behind: Some(result::race::Behind {
                goal: goal.into(),
                leader: leader.into(),
                factor,
                low,
                high,
                p_value: 0.001,
            }),
            observed: 0,
        });
    }

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
        let answer = crate::advice::recommendations(&result);
        let text = &goal(&answer, "fastest").text;
        assert!(
            text.ends_with(
                "; race undecided after 32 s (budget 30 s): 2 of 2 candidates left, at up to 1.02x the time of the \
                 leader, pwrite empty 1MiB t1 end; give --budget 2m to settle more of it"
            ),
            "{text}"
        );
        let mut decided = build().done();
        decided.race = Some(race(Decision::Won));
        let answer = crate::advice::recommendations(&decided);
        assert!(!goal(&answer, "fastest").text.contains("race"), "{}", goal(&answer, "fastest").text);
    }

    /// The hint of a goal left open: the runs the named candidate and the pick need at
    /// the noise their interval shows, and the limit that stopped them short of it.
    #[test]
    fn an_open_goal_is_told_the_runs_that_would_settle_it_and_which_limit_stopped_them() {
        let other = |factor: f64, low: f64, high: f64, runs: usize| Alternative {
            low99: None,
            runs,
            ..crate::advice::testkit::alternative(factor, low, high)
        };
        // At its estimate 3 % slower, its interval 0.90–1.18 at 10 runs each: the lower
        // end reaches 1/1.05 once the half-width (0.135) shrinks to ln 1.03 + ln 1.05
        // (0.078): 10 × (0.135/0.078)² = 30 runs.
        assert_eq!(runs_to_settle(&other(1.03, 0.90, 1.18, 10), 10, 0.05), Some(30));
        // A narrower one needs a run more than it has, not fewer.
        assert_eq!(runs_to_settle(&other(1.20, 1.0, 1.44, 5), 5, 0.05), Some(6));
        // 10 % faster at its estimate: more runs would show it faster, not settle.
        assert_eq!(runs_to_settle(&other(0.90, 0.7, 1.15, 10), 10, 0.05), None);
        assert_eq!(runs_to_settle(&other(1.03, 0.90, 1.18, 1), 10, 0.05), None, "one run: no interval");

        let mut result = Build::new().add(case("pwrite empty 1MiB t1 end"), &around(0.5)).done();
        result.options.max_runs = Some(10);
        let mut race = race(Decision::Undecided);
        race.out_of_budget = false;
        assert_eq!(settle_words(&result, &race, &other(1.03, 0.90, 1.18, 10), 10), "--max-runs 30");
        race.out_of_budget = true;
        assert_eq!(settle_words(&result, &race, &other(1.03, 0.90, 1.18, 10), 10), "--budget 2m --max-runs 30");
        assert_eq!(settle_words(&result, &race, &other(1.03, 0.99, 1.07, 4), 4), "--budget 2m");
        assert_eq!(settle_words(&result, &race, &other(1.0, 0.5, 2.0, 10), 10), "about 2019 runs each at this noise");
        assert_eq!(settle_words(&result, &race, &other(0.9, 0.7, 1.15, 10), 10), "more runs may make it the pick");
        // Shown slower but on too few runs at the goal's noise (the Answer's rule): the
        // runs that rule asks for, at least.
        let thin = Alternative { low99: Some(0.80), ..other(1.48, 1.02, 2.15, 3) };
        assert_eq!(settle_words(&result, &race, &thin, 3), "--budget 2m");
        result.options.max_runs = Some(4);
        assert_eq!(settle_words(&result, &race, &thin, 3), "--budget 2m --max-runs 6");
        // Its 99 % interval shows it slower: not thin, so only the runs its interval needs.
        let shown = Alternative { low99: Some(1.1), ..thin };
        assert_eq!(settle_words(&result, &race, &shown, 3), "--budget 2m");
    }

    /// A case the race dropped after two runs stays out of the recommendation, though
    /// its two runs alone cannot show it slower and it is the simplest. How sure the
    /// pick is, though, is judged against it too, on its final runs with the goal's
    /// pooled noise (docs/answer.md): runs that cannot show it slower keep the goal open
    /// and name it; runs that show it slower make the pick clear, and every goal it
    /// answered names it, not only the one the race dropped it from.
    #[test]
    fn a_case_the_race_dropped_is_not_recommended_again_and_still_counts_for_how_sure() {
        let result = |dropped_runs: &[f64]| {
            Build::new()
                .add(case("pwritev empty 1MiB x1 t1 end"), &around(0.5))
                .add(case("write empty 1MiB t1 end"), dropped_runs)
                .done()
        };
        let answer = crate::advice::recommendations(&result(&[0.3, 0.72]));
        assert_eq!(
            goal(&answer, "fastest").best.case,
            "pwritev empty 1MiB x1 t1 end",
            "unraced: the simpler one is not shown within the margin, so not recommended"
        );
        let raced = |dropped_runs: &[f64]| {
            let mut raced = result(dropped_runs);
            let mut report = race(Decision::Won);
            report.goals[0].left =
                vec![Left { case: "pwritev empty 1MiB x1 t1 end".into(), factor: None, low: None, high: None }];
            raced.race = Some(report);
            let leader = ("fastest", "pwritev empty 1MiB x1 t1 end");
            dropped(&mut raced, "write empty 1MiB t1 end", leader, (3.31, 2.88, 3.80));
            crate::advice::recommendations(&raced)
        };
        let answer = raced(&[0.3, 0.72]);
        let fastest = goal(&answer, "fastest");
        assert_eq!(fastest.best.case, "pwritev empty 1MiB x1 t1 end", "{}", fastest.text);
        let Some(Certainty::NotSettled { other, .. }) = fastest.glance.as_ref().map(|g| &g.certainty) else {
            panic!("{:?}", fastest.glance)
        };
        assert_eq!(other.case, "write empty 1MiB t1 end", "its two runs cannot show it slower");
        assert_eq!(fastest.verdict.as_deref(), Some("not-settled"));
        // Runs that show it slower: clear, and both goals it answered name it.
        let answer = raced(&[1.6, 1.7]);
        for key in ["fastest", "durable-at-end"] {
            let pick = goal(&answer, key);
            assert_eq!(pick.verdict.as_deref(), Some("clear"), "{key}: {}", pick.text);
            let Some(Certainty::Clear { next, against }) = pick.glance.as_ref().map(|g| &g.certainty) else {
                panic!("{:?}", pick.glance)
            };
            assert_eq!((next.case.as_str(), against.len()), ("write empty 1MiB t1 end", 1), "{key}");
            assert!(next.low > 2.0 && (next.factor - 3.3).abs() < 0.01, "{key}: from its final runs: {next:?}");
            let runner_up = pick.runner_up.as_ref().expect("a won race names what it beat");
            assert_eq!(runner_up.baseline, "write empty 1MiB t1 end", "{key}");
            assert!(
                pick.text.contains("clearly the fastest of 2 candidates, each shown slower: the closest, write empty"),
                "{key}: {}",
                pick.text
            );
        }
    }

    /// A latency goal is judged by its race's rule too: the pick among the candidates
    /// still in it; how sure, against every candidate of the size, dropped ones
    /// included, on their final loops.
    #[test]
    fn a_latency_goals_race_decides_its_candidates_and_names_what_it_beat() {
        let result = |append: &[f64]| {
            Build::new()
                .loops(latency_case("overwrite0", "odsync"), &around(3000.0), 410_000)
                .loops(latency_case("overwrite0", "every-fdatasync:1"), append, 300_000)
                .done()
        };
        let raced = |append: &[f64]| {
            let mut raced = result(append);
            let mut report = race(Decision::Won);
            report.goals = vec![GoalRace {
                goal: "small-durable-commits".into(),
                size: Some(8),
                decision: Decision::Won,
                round: Some(3),
                seconds: Some(4.0),
                candidates: 2,
                left: vec![Left { case: "latency overwrite0 8B odsync".into(), factor: None, low: None, high: None }],
            }];
            raced.race = Some(report);
            let beaten = ("small-durable-commits", "latency overwrite0 8B odsync");
            dropped(&mut raced, "latency overwrite0 8B every-fdatasync:1", beaten, (1.4, 1.1, 1.8));
            crate::advice::recommendations(&raced)
        };
        // Faster by the loops it kept, but the race dropped it on the runs it had when
        // it judged: the Answer does not bring it back, and says the goal is open.
        let answer = raced(&[3300.0, 3400.0]);
        let commits = goal(&answer, "small-durable-commits");
        assert_eq!(commits.best.case, "latency overwrite0 8B odsync", "{}", commits.text);
        assert!(matches!(
            commits.glance.as_ref().map(|g| &g.certainty),
            Some(Certainty::NotSettled { other, .. }) if other.case == "latency overwrite0 8B every-fdatasync:1"
        ));
        // Loops that show it slower: clear, and named with the factor of its loops.
        let answer = raced(&[2100.0, 2200.0]);
        let commits = goal(&answer, "small-durable-commits");
        let runner_up = commits.runner_up.as_ref().expect("a won race names what it beat");
        assert_eq!(runner_up.baseline, "latency overwrite0 8B every-fdatasync:1");
        assert!((runner_up.factor - 3000.0 / 2150.0).abs() < 0.01, "{runner_up:?}");
        assert!(matches!(commits.glance.as_ref().map(|g| &g.certainty), Some(Certainty::Clear { .. })));
        // Unraced, both are candidates and the fdatasync's is the higher rate.
        let answer = crate::advice::recommendations(&result(&[3300.0, 3400.0]));
        assert_eq!(goal(&answer, "small-durable-commits").best.case, "latency overwrite0 8B every-fdatasync:1");
    }

    /// After a race, the observations say how many of their comparisons are still
    /// open and what would settle them: more budget where the budget ended the rounds
    /// (with the goals still open, or after them), more runs a case where every open
    /// comparison's cases have their most. Nothing without a race or with none open.
    #[test]
    fn a_raced_result_says_what_it_left_of_the_observations_open_and_how_to_settle_it() {
        // Writes 20 % apart, alternating, and a sync that takes 80 ms one run in six
        // (a journal's commit): comparisons of these cases stay open after two runs,
        // after four and after ten, the sync's cost among them.
        let result = |runs: usize| {
            let times = |a: f64, b: f64| (0..runs).map(|i| if i % 2 == 0 { a } else { b }).collect::<Vec<f64>>();
            let syncs: Vec<f64> = (0..runs).map(|i| if i % 6 == 1 { 0.08 } else { 0.0 }).collect();
            Build::new()
                .synced(case("pwrite empty 1MiB t1 end"), &times(0.50, 0.60), &syncs)
                .add(case("pwrite empty 64KiB t1 end"), &times(0.52, 0.62))
                .add(case("pwrite empty 4KiB t1 end"), &times(2.0, 2.01))
                .option("max_runs", serde_json::json!(10))
                .done()
        };
        let left = |result: &ResultFile| -> Option<String> {
            let observations = crate::advice::observations(result);
            let at = observations.iter().position(|o| o.kind == RACE_OPEN)?;
            let before = &observations[..at];
            assert!(before.iter().all(|o| super::super::DOUBTS.contains(&o.kind.as_str())), "{observations:?}");
            Some(observations[at].text.clone())
        };
        let mut unraced = result(2);
        assert_eq!(left(&unraced), None, "no race: nothing to say of it");
        unraced.race = Some(race(Decision::Undecided));
        let text = left(&unraced).expect("two runs a case leave comparisons open");
        let (_, tests) = crate::advice::counted_observations(&unraced);
        let open = crate::advice::unsettled(&unraced.cases, 0.05);
        assert!(!open.is_empty());
        let counted = format!("the race left {} of the {tests} comparisons behind the observations open", open.len());
        assert!(text.starts_with(&counted), "{text}");
        assert!(
            text.ends_with(
                "(neither shown nor within ±5 %): the budget (30 s) ended the race with the Answer's goals still \
                 open, and the observations get only what the goals leave; give --budget 2m to settle more of them"
            ),
            "{text}"
        );
        // The budget ended it, but after every goal settled: no goal is said open.
        let mut budget_after_goals = result(2);
        let mut report = race(Decision::Settled);
        report.out_of_budget = true;
        budget_after_goals.race = Some(report);
        let text = left(&budget_after_goals).expect("two runs a case leave comparisons open");
        assert!(text.ends_with(": the budget (30 s) ended their rounds; give --budget 2m to settle more of them"));
        let mut after_goals = result(4);
        let mut report = race(Decision::Won);
        report.budget_seconds = Some(120.0);
        after_goals.race = Some(report);
        let text = left(&after_goals).expect("still open after 4 runs");
        assert!(text.ends_with(": the budget (2 min) ended their rounds; give --budget 4m to settle more of them"));
        let mut at_most = result(10);
        at_most.race = Some(race(Decision::Won));
        let text = left(&at_most).expect("still open after 10 runs");
        assert!(text.ends_with(": their cases have their 10 runs; give --max-runs 20 to settle more of them"));
        let mut settled = Build::new()
            .add(case("pwrite empty 1MiB t1 end"), &around(0.5))
            .add(case("pwrite empty 4KiB t1 end"), &around(2.0))
            .done();
        settled.race = Some(race(Decision::Won));
        assert_eq!(left(&settled), None, "every comparison settled");
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
            // The latency goals' answers are among their races' finalists too.
            goal_race("small-durable-appends", Some(4096), Decision::Undecided, &["latency append 4KiB every:4"]),
            goal_race("small-durable-commits", Some(8), Decision::Won, &["latency overwrite0 8B odsync"]),
        ];
        result.race = Some(report);
        let texts = |result: &ResultFile| -> Vec<(String, String)> {
            let answer = crate::advice::recommendations(result);
            answer.into_iter().map(|r| (format!("{} {}", r.goal, r.best.case), r.text)).collect()
        };
        let undecided: Vec<String> =
            texts(&result).into_iter().filter(|(_, text)| text.contains("race undecided")).map(|(g, _)| g).collect();
        assert_eq!(
            undecided,
            ["durable-at-end pwrite empty 1MiB t1 end", "small-durable-appends latency append 4KiB every:4"],
            "{:?}",
            texts(&result)
        );
        result.race.as_mut().unwrap().out_of_budget = false;
        // Twice the most runs a case got: 20 after 10, 40 after the raced default of 20.
        result.options.max_runs = Some(20);
        let texts = texts(&result);
        let durable = &texts.iter().find(|(g, _)| g.starts_with("durable-at-end")).unwrap().1;
        assert!(
            durable.ends_with(
                "; race undecided at the most runs a case gets: 1 of 2 candidates left; give --max-runs 40 to settle \
                 more of it"
            ),
            "{durable}"
        );
    }
}
