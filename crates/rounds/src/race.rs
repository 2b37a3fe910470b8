//! Past 600 lines because of its tests (more than half of the file), which drive the
//! referee through whole rounds on doctored results: kept beside the code they check.
//!
//! The referee of a race for the Answer's goals (docs/racing.md): after each round, the
//! racing rule (`stats::race`) over each open goal's candidates still in its race; a
//! case leaves the goals' rounds once no open goal needs it, sits out a round while the
//! goals it is in run their leaders and simplest contenders first, goes on after the
//! goals while an observation not yet settled needs it, and the report says where each
//! goal stood at the end.
//!
//! A goal is judged only once each candidate still in its race has its first runs
//! (`min_runs`), so that no candidate is judged on fewer than the others. Once won or
//! tied among those left, a goal stays decided; settled for the Answer, it is looked at
//! again each round and reopens when the runs since (of its cases, for other goals or
//! observations) unsettle it. Cases are known by their ids, which are unique within a
//! run.

use std::collections::{BTreeMap, BTreeSet};

use crate::scheduler::{Call, Racing, Referee};
use analysis::advice::contests::{Contest, contests, simplest_first};
use analysis::advice::{Figures, Metric};
use result::CaseResult;
use result::race::{Behind, Decision, Exit, GoalRace, Left, RaceReport};
use stats::race::{self as rule, RACE_ALPHA, Standing, against_leader};
use stats::significance::{pooled_cv2, pooled_factor};

/// When racing: the runs every case gets before any leaves (two give an interval; the
/// warm-up and two runs of the quick suite's cases take most of its 30 s on tmpfs,
/// docs/racing.md).
pub const MIN_RUNS: u32 = 2;

/// When racing: the most runs a case gets. With 10, a disk's 15 % run-to-run noise left
/// 70 % of the simulated five-case races open and the budget unspent; with 20, 44 %,
/// while settled verdicts were wrong no more often (docs/racing.md, "The error a user
/// sees"). The budget, not this, is what usually ends a raced run.
pub const MAX_RUNS: u32 = 20;

/// How many of an open goal's simplest contenders run each round, besides its leader
/// and runner-up (see [`GoalReferee::focus`]).
const SIMPLEST: usize = 2;

/// One goal's race so far.
struct Goal {
    goal: String,
    size: Option<u64>,
    /// The metric whose run times decide it.
    metric: Metric,
    /// Candidates that left its race, by id.
    out: BTreeMap<String, Behind>,
    /// When it was decided: how, after which round, seconds from the start.
    decided: Option<(Decision, u32, f64)>,
    /// Its candidates at the last round, by id.
    candidates: Vec<String>,
    /// The rule has looked at it once (every candidate had its first runs).
    judged: bool,
}

impl Goal {
    fn key(&self) -> (String, Option<u64>) {
        (self.goal.clone(), self.size)
    }
}

/// What an open goal needs of the next round.
struct Focus {
    /// The members that run.
    run: Vec<usize>,
    /// The members that keep the Answer open against its pick (out of the race or
    /// not): they rest when they do not run, and are not stopped while the goal is open.
    keep: Vec<usize>,
}

pub struct GoalReferee {
    min_runs: u32,
    max_runs: u32,
    /// The equivalence margin, as a fraction: what "tied" means (`--equivalence`).
    margin: f64,
    /// The race's start and clock, which the budget counts on.
    race: Racing,
    /// In the order the Answer asks them.
    goals: Vec<Goal>,
}

impl GoalReferee {
    pub fn new(min_runs: u32, max_runs: u32, margin: f64, race: Racing) -> GoalReferee {
        GoalReferee { min_runs, max_runs, margin, race, goals: Vec::new() }
    }

    /// The members of an open goal whose runs the next round needs, once the goal has
    /// been judged (None before: all of its candidates in the race). Runs go where the
    /// Answer is still open: to the leader and the runner-up (which of the two is the
    /// fastest is part of the answer); to the one the Answer would recommend now, the
    /// simplest candidate not shown slower than the leader by the Answer's own test
    /// (`recommend`: the noise pooled over the goal's candidates, 95 %, no correction)
    /// and measured within the equivalence margin of it; to the simplest not shown
    /// slower, which more runs may bring within the margin or show slower; and to the two
    /// candidates, in the race or out, that keep the Answer's certainty open against
    /// that pick and may gain the most (`rule::answer_open`). The others in
    /// the race rest: more runs of them would not change the recommendation until the
    /// simpler ones are shown slower, and then they come back. A candidate with its
    /// most runs made, or one that has stopped (`open`: its goals let it go while
    /// their rounds went to others, and no observation kept it), is no longer anyone's
    /// to run: a goal whose rounds would go only to such cases needs no rounds.
    fn focus(&self, goal: &Goal, contest: &Contest, results: &[CaseResult], open: &[bool]) -> Option<Focus> {
        if !goal.judged {
            return None;
        }
        // Each member's times under the goal's metric, read once.
        let all: BTreeMap<usize, Vec<f64>> =
            contest.members.iter().map(|&m| (m, contest.metric.times(&results[m]).unwrap_or_default())).collect();
        let times = |m: usize| all[&m].as_slice();
        let mean = |m: usize| times(m).iter().sum::<f64>() / times(m).len().max(1) as f64;
        let mut in_race: Vec<usize> =
            contest.members.iter().copied().filter(|&m| !goal.out.contains_key(&results[m].case.id)).collect();
        in_race.sort_by(|&a, &b| mean(a).total_cmp(&mean(b)));
        let pool = pooled_cv2(all.values().map(Vec::as_slice).filter(|t| t.len() >= 2));
        let runnable = |m: &usize| open[*m] && (results[*m].runs.len() as u32) < self.max_runs;
        let mut focus: Vec<usize> = in_race.iter().take(2).copied().collect();
        if let (Some(order), Some(&leader)) = (simplest_first(contest, results), in_race.first()) {
            let leader_times = times(leader);
            let not_slower = |m: &usize| {
                *m == leader
                    || pool.is_none_or(|(cv2, df)| {
                        pooled_factor(times(*m), leader_times, cv2, df)
                            .is_none_or(|f| !(f.significant() && f.factor > 1.0))
                    })
            };
            let simplest: Vec<usize> =
                order.into_iter().filter(|m| in_race.contains(m)).filter(not_slower).filter(runnable).collect();
            // The one the Answer would recommend now: the simplest also measured within
            // the margin of the leader. Its runs confirm it or move the answer on.
            let within = |m: &&usize| mean(**m) <= (1.0 + self.margin) * mean(leader);
            let recommended = simplest.iter().find(within).copied();
            focus.extend(recommended);
            let others = simplest.iter().filter(|&&m| Some(m) != recommended);
            focus.extend(others.take(SIMPLEST - usize::from(recommended.is_some())));
        }
        // What keeps the Answer open: the candidates neither shown slower than its pick
        // nor within the margin of it, in the race or out (`rule::answer_open`). The two
        // that may gain the most run, with the pick; a candidate already shown slower
        // or within the margin runs no more for this goal.
        let every: Vec<Vec<f64>> = contest.members.iter().map(|m| all[m].clone()).collect();
        let in_race_at: Vec<bool> = contest.members.iter().map(|m| in_race.contains(m)).collect();
        let leader_at = in_race.first().and_then(|l| contest.members.iter().position(|m| m == l));
        let order = simplest_first(contest, results).map(|order| {
            order.into_iter().filter_map(|m| contest.members.iter().position(|&x| x == m)).collect::<Vec<_>>()
        });
        let mut keep = Vec::new();
        if let Some((pick, open_at)) =
            leader_at.and_then(|leader| rule::answer_open(&every, &in_race_at, leader, order.as_deref(), self.margin))
        {
            keep = open_at.into_iter().map(|k| contest.members[k]).filter(runnable).collect();
            if !keep.is_empty() {
                focus.push(contest.members[pick]);
            }
            focus.extend(keep.iter().take(SIMPLEST).copied());
        }
        focus.retain(runnable);
        let mut seen = BTreeSet::new();
        focus.retain(|m| seen.insert(*m));
        Some(Focus { run: focus, keep })
    }

    fn goal(&mut self, contest: &Contest) -> &mut Goal {
        let key = (contest.goal.clone(), contest.size);
        match self.goals.iter().position(|goal| goal.key() == key) {
            Some(at) => &mut self.goals[at],
            None => {
                self.goals.push(Goal {
                    goal: contest.goal.clone(),
                    size: contest.size,
                    metric: contest.metric,
                    out: BTreeMap::new(),
                    decided: None,
                    candidates: Vec::new(),
                    judged: false,
                });
                self.goals.last_mut().expect("just pushed")
            }
        }
    }

    /// One round of the rule over `contest`'s candidates still in, once each has its
    /// first runs.
    fn judge_goal(&mut self, round: u32, contest: &Contest, results: &[CaseResult]) {
        let (min_runs, margin, elapsed) = (self.min_runs, self.margin, self.race.elapsed().as_secs_f64());
        let goal = self.goal(contest);
        goal.candidates = contest.members.iter().map(|&m| results[m].case.id.clone()).collect();
        // Won and tied stand; settled is the Answer's test on the runs so far, which
        // other goals' runs of the same cases move (the noise is pooled over them all):
        // looked at again each round, so that the race says what the Answer will.
        let settled_before = matches!(goal.decided, Some((Decision::Settled, ..)));
        if goal.decided.is_some() && !settled_before {
            return;
        }
        let times: Vec<Option<Vec<f64>>> = contest
            .members
            .iter()
            .map(|&m| {
                (!goal.out.contains_key(&results[m].case.id)).then(|| contest.metric.times(&results[m])).flatten()
            })
            .collect();
        if times.iter().flatten().any(|t| (t.len() as u32) < min_runs) {
            return;
        }
        let given: Vec<Option<&[f64]>> = times.iter().map(|t| t.as_deref()).collect();
        // One noise model (docs/racing.md): pooled over every candidate of the goal, in
        // the race or out, as the focus and the Answer pool it.
        let every: Vec<Vec<f64>> =
            contest.members.iter().map(|&m| contest.metric.times(&results[m]).unwrap_or_default()).collect();
        let pool: Vec<&[f64]> = every.iter().map(Vec::as_slice).collect();
        let Some(judged) = rule::round(&given, &pool, RACE_ALPHA, margin) else { return };
        let in_race: Vec<bool> = given.iter().map(Option::is_some).collect();
        // The members simplest first, as positions among them (the Answer's pick).
        let order = simplest_first(contest, results).map(|order| {
            order.into_iter().filter_map(|m| contest.members.iter().position(|&x| x == m)).collect::<Vec<_>>()
        });
        let settled = rule::settled_for_the_answer(&every, &in_race, judged.leader, order.as_deref(), margin);
        if settled_before {
            if !settled {
                goal.decided = None;
            }
            return;
        }
        goal.judged = true;
        let leader = results[contest.members[judged.leader]].case.id.clone();
        for (k, standing) in judged.standings.iter().enumerate() {
            if let Standing::Out(f) = standing {
                let behind = Behind {
                    goal: goal.goal.clone(),
                    leader: leader.clone(),
                    factor: f.factor,
                    low: f.low,
                    high: f.high,
                    p_value: f.p,
                };
                goal.out.insert(results[contest.members[k]].case.id.clone(), behind);
            }
        }
        let decision = match judged.decision {
            // The race's elimination may leave one candidate while the Answer's rule still
            // sees the goal open (a candidate with too few runs at this noise): the goal
            // stays open for the rounds that can settle it, so that the race says what
            // the Answer will.
            _ if !settled => return,
            rule::Decision::Open => Decision::Settled,
            rule::Decision::Won(_) => Decision::Won,
            rule::Decision::Tied(_) => Decision::Tied,
        };
        goal.decided = Some((decision, round, elapsed));
    }

    /// The cases the goals let go that an observation not yet settled still needs
    /// (`advice::unsettled`: a comparison whose interval, among all the observations'
    /// tests, neither excludes 1 nor lies within the margin) go on for it, after the
    /// goals: they run only in a round no goal needs (`goals_done`), so that the
    /// observations get what the Answer leaves of the budget (docs/racing.md, "The
    /// observations").
    fn observe(&self, mut calls: Vec<Call>, results: &[CaseResult], goals_done: bool) -> Vec<Call> {
        if !calls.iter().any(|call| matches!(call, Call::Stop(..))) {
            return calls;
        }
        let needed: BTreeSet<String> =
            analysis::advice::unsettled(results, self.margin).into_iter().flat_map(|(a, b)| [a, b]).collect();
        for (call, result) in calls.iter_mut().zip(results) {
            match call {
                Call::Stop(exit, behind) if needed.contains(&result.case.id) => {
                    *call = Call::Observe { exit: *exit, behind: behind.take(), run: goals_done };
                }
                _ => {}
            }
        }
        calls
    }

    /// Where each goal stood at the end, from the final `results` (every case of the
    /// run, any order): for an open goal, the candidates left against their leader.
    pub fn report(&self, results: &[CaseResult], budget: Option<f64>) -> RaceReport {
        let by_id: BTreeMap<&str, &CaseResult> = results.iter().map(|r| (r.case.id.as_str(), r)).collect();
        let goals = self
            .goals
            .iter()
            .map(|goal| {
                let left_ids: Vec<&String> = goal.candidates.iter().filter(|id| !goal.out.contains_key(*id)).collect();
                let times: Vec<Option<Vec<f64>>> = left_ids
                    .iter()
                    .map(|id| Some(by_id.get(id.as_str()).and_then(|&c| goal.metric.times(c)).unwrap_or_default()))
                    .collect();
                let given: Vec<Option<&[f64]>> = times.iter().map(|t| t.as_deref()).collect();
                // The noise of every candidate, as in the rounds.
                let every: Vec<Vec<f64>> = goal
                    .candidates
                    .iter()
                    .map(|id| by_id.get(id.as_str()).and_then(|&c| goal.metric.times(c)).unwrap_or_default())
                    .collect();
                let pool: Vec<&[f64]> = every.iter().map(Vec::as_slice).collect();
                let left: Vec<Left> = match against_leader(&given, &pool) {
                    Some((leader, against)) => {
                        let mut left: Vec<Left> = left_ids
                            .iter()
                            .zip(&against)
                            .map(|(id, f)| Left {
                                case: id.to_string(),
                                factor: f.map(|f| f.factor),
                                low: f.map(|f| f.low),
                                high: f.map(|f| f.high),
                            })
                            .collect();
                        let first = left.remove(leader);
                        left.insert(0, first);
                        left
                    }
                    None => left_ids
                        .iter()
                        .map(|id| Left { case: id.to_string(), factor: None, low: None, high: None })
                        .collect(),
                };
                let (decision, round, seconds) = match goal.decided {
                    Some((decision, round, seconds)) => (decision, Some(round), Some(seconds)),
                    None => (Decision::Undecided, None, None),
                };
                GoalRace {
                    goal: goal.goal.clone(),
                    size: goal.size,
                    decision,
                    round,
                    seconds,
                    candidates: goal.candidates.len() as u32,
                    left,
                }
            })
            .collect();
        let rounds = results.iter().flat_map(|r| r.runs.iter().map(|run| run.round + 1)).max().unwrap_or(0);
        let out_of_budget = results.iter().any(|r| r.race.as_ref().is_some_and(|race| race.exit == Exit::Budget));
        RaceReport { budget_seconds: budget, seconds: self.race.elapsed().as_secs_f64(), rounds, out_of_budget, goals }
    }
}

impl Referee for GoalReferee {
    fn judge(&mut self, round: u32, results: &[CaseResult], open: &[bool]) -> Vec<Call> {
        let contests = contests(results, self.margin);
        for contest in &contests {
            self.judge_goal(round, contest, results);
        }
        // Which cases an open goal still needs, which of them the next round runs, and
        // which compete for some goal.
        let mut needed = BTreeSet::new();
        let mut focused = BTreeSet::new();
        let mut competing = BTreeSet::new();
        for contest in &contests {
            let at = self.goals.iter().position(|g| g.key() == (contest.goal.clone(), contest.size));
            let goal = &self.goals[at.expect("every contest was judged")];
            let focus = self.focus(goal, contest, results, open);
            for &m in &contest.members {
                competing.insert(m);
                let kept = focus.as_ref().is_some_and(|focus| focus.keep.contains(&m));
                let in_race = goal.decided.is_none() && (kept || !goal.out.contains_key(&results[m].case.id));
                if in_race && focus.as_ref().is_none_or(|focus| !focus.run.is_empty()) {
                    needed.insert(m);
                    if focus.as_ref().is_none_or(|focus| focus.run.contains(&m)) {
                        focused.insert(m);
                    }
                }
            }
        }
        let calls: Vec<Call> = (0..results.len())
            .map(|i| {
                if focused.contains(&i) {
                    return Call::Run;
                }
                if needed.contains(&i) {
                    return Call::Rest;
                }
                if !competing.contains(&i) {
                    return Call::Stop(Exit::NoGoal, None);
                }
                let id = &results[i].case.id;
                // Left behind in every goal it competed for: the goal it came closest in.
                let behind: Vec<&Behind> = self.goals.iter().filter_map(|g| g.out.get(id)).collect();
                let still_in = self.goals.iter().any(|g| g.candidates.contains(id) && !g.out.contains_key(id));
                if still_in || behind.is_empty() {
                    Call::Stop(Exit::Decided, None)
                } else {
                    let closest = behind.into_iter().min_by(|a, b| a.factor.total_cmp(&b.factor)).cloned();
                    Call::Stop(Exit::Slower, closest)
                }
            })
            .collect();
        self.observe(calls, results, focused.is_empty())
    }

    fn decided(&self) -> (usize, usize) {
        (self.goals.iter().filter(|g| g.decided.is_some()).count(), self.goals.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use analysis::advice::testkit::{Build, case};
    use result::race::CaseRace;

    /// The quick suite's race: 2 first runs, at most 10, a margin of 5 %.
    fn referee() -> GoalReferee {
        GoalReferee::new(2, 10, 0.05, Racing::from_now(None))
    }

    /// Each case's exit from the goals' races, None while they keep it (run or
    /// resting): a case kept for the observations only has left them.
    fn judge(referee: &mut GoalReferee, round: u32, result: &result::ResultFile) -> Vec<Option<Exit>> {
        let exit = |call| match goals_call(call) {
            Call::Stop(exit, _) => Some(exit),
            _ => None,
        };
        referee.judge(round, &result.cases, &all_open(&result.cases)).into_iter().map(exit).collect()
    }

    /// Every case still able to run.
    fn all_open(cases: &[CaseResult]) -> Vec<bool> {
        vec![true; cases.len()]
    }

    /// What the goals said of a case: a case kept for the observations as stopped.
    fn goals_call(call: Call) -> Call {
        match call {
            Call::Observe { exit, behind, .. } => Call::Stop(exit, behind),
            call => call,
        }
    }

    #[test]
    fn a_clear_loser_leaves_a_close_pair_races_on_and_a_case_of_no_goal_stops() {
        let result = Build::new()
            .add(case("pwrite empty 1MiB t1 end"), &[1.00, 1.10])
            .add(case("write empty 1MiB t1 end"), &[1.02, 1.14])
            .add(case("write empty 4KiB t1 end"), &[2.40, 2.45])
            .add(case("write empty 1MiB t2 f2 end"), &[0.5, 0.5])
            .done();
        let mut referee = referee();
        let calls = judge(&mut referee, 2, &result);
        assert_eq!(calls, vec![None, None, Some(Exit::Slower), Some(Exit::NoGoal)]);
        let Call::Stop(exit, behind) = goals_call(referee.judge(2, &result.cases, &all_open(&result.cases))[2].clone())
        else {
            panic!("the loser is kept")
        };
        assert_eq!(exit, Exit::Slower);
        let behind = behind.unwrap();
        assert!((behind.factor - 2.4).abs() < 0.1 && behind.low > 1.0, "{behind:?}");
        assert_eq!(referee.decided(), (0, 2), "fastest and durable at the end, both open");
        let report = referee.report(&result.cases, Some(30.0));
        assert_eq!(report.goals.len(), 2);
        let fastest = &report.goals[0];
        assert_eq!((fastest.decision, fastest.candidates, fastest.left.len()), (Decision::Undecided, 3, 2));
        assert_eq!(fastest.left[0].case, "pwrite empty 1MiB t1 end", "the leader first");
        assert!(fastest.left[1].factor.is_some() && fastest.left[0].factor.is_none());
    }

    /// A race that can end (docs/racing.md): a close pair the Answer can already call
    /// "as fast" (no candidate more than the margin faster than its pick, by its own
    /// test) is settled, though neither left the race, and its cases stop.
    #[test]
    fn a_close_pair_within_the_margin_of_the_answers_pick_is_settled() {
        let result = Build::new()
            .add(case("pwrite empty 1MiB t1 end"), &[1.00, 1.02])
            .add(case("write empty 1MiB t1 end"), &[1.01, 1.03])
            .add(case("write empty 4KiB t1 end"), &[2.40, 2.45])
            .done();
        let mut referee = referee();
        let calls = judge(&mut referee, 2, &result);
        assert_eq!(calls, vec![Some(Exit::Decided), Some(Exit::Decided), Some(Exit::Slower)]);
        let report = referee.report(&result.cases, Some(30.0));
        assert!(report.goals.iter().all(|g| g.decision == Decision::Settled), "{report:?}");
        assert_eq!(report.goals[0].left.len(), 2, "both are left, and the Answer is sure");
    }

    #[test]
    fn a_goal_with_one_candidate_left_is_won_and_its_winner_stops() {
        let mut result = Build::new()
            .add(case("pwrite empty 1MiB t1 end"), &[1.00, 1.01, 0.99])
            .add(case("write empty 4KiB t1 end"), &[3.0, 3.1, 2.9])
            .done();
        let mut referee = referee();
        assert_eq!(judge(&mut referee, 3, &result), vec![Some(Exit::Decided), Some(Exit::Slower)]);
        assert_eq!(referee.decided(), (2, 2));
        // The rounds counted from the runs' own (0, 1, 2: three), and a race out of
        // budget only where a case stopped for it.
        for case in &mut result.cases {
            for (round, run) in case.runs.iter_mut().enumerate() {
                run.round = round as u32;
            }
            let runs = case.runs.len() as u32;
            case.race = Some(CaseRace { runs, round: 3, exit: Exit::Decided, behind: None, observed: 0 });
        }
        let report = referee.report(&result.cases, None);
        assert!(report.goals.iter().all(|g| g.decision == Decision::Won && g.round == Some(3)), "{report:?}");
        assert_eq!((report.rounds, report.out_of_budget), (3, false));
        result.cases[1].race.as_mut().unwrap().exit = Exit::Budget;
        assert!(referee.report(&result.cases, None).out_of_budget);
    }

    /// A case that won one goal and was left behind in another is needed no longer
    /// because its goal is decided, not because it was slower.
    #[test]
    fn a_winner_of_one_goal_left_behind_in_another_stops_as_decided() {
        let result = Build::new()
            .synced(case("pwrite empty 1MiB t1 end"), &[1.0, 1.01], &[1.0, 1.01])
            .synced(case("write empty 4KiB t1 end"), &[1.5, 1.51], &[0.0, 0.0])
            .done();
        let mut referee = referee();
        assert_eq!(
            judge(&mut referee, 2, &result),
            vec![Some(Exit::Decided), Some(Exit::Decided)],
            "pwrite wins the fastest and loses durable at the end; write in 4 KiB calls the reverse"
        );
        assert_eq!(referee.decided(), (2, 2));
    }

    /// Each goal keeps its own race: a decided goal's cases stop while another goal,
    /// with other cases, is still open.
    #[test]
    fn a_decided_goal_stops_its_cases_while_another_goal_races_on() {
        let result = Build::new()
            .synced(case("pwrite empty 1MiB t1 end"), &[1.0, 1.02], &[1.0, 1.0])
            .synced(case("write empty 1MiB t1 end"), &[1.01, 1.03], &[0.0, 0.0])
            .add(case("pwrite overwrite 1MiB t1 end"), &[1.0, 1.01])
            .add(case("write overwrite 4KiB t1 end"), &[2.0, 2.02])
            .done();
        let mut referee = referee();
        let calls: Vec<Call> =
            referee.judge(2, &result.cases, &all_open(&result.cases)).into_iter().map(goals_call).collect();
        assert_eq!(calls[..2], [Call::Run, Call::Run], "the fastest is open between the two new-file cases");
        assert!(matches!(calls[2], Call::Stop(Exit::Decided, _)), "rewriting in place is won: {calls:?}");
        assert!(matches!(calls[3], Call::Stop(Exit::Slower, _)), "{calls:?}");
        assert_eq!(referee.decided(), (2, 3), "durable at the end and rewriting in place");
    }

    #[test]
    fn a_goal_waits_until_every_candidate_has_its_first_runs() {
        let result = Build::new()
            .add(case("pwrite empty 1MiB t1 end"), &[1.00, 1.01, 0.99])
            .add(case("write empty 4KiB t1 end"), &[3.0, 3.1])
            .done();
        let mut referee = GoalReferee::new(3, 10, 0.05, Racing::from_now(None));
        assert_eq!(judge(&mut referee, 2, &result), vec![None, None], "the second has 2 of its 3 first runs");
        assert_eq!(referee.decided(), (0, 2));
    }

    /// Five close contenders for the new-file goals, from the most complex and fastest
    /// to the simplest, and a clear loser in 4 KiB calls.
    fn contenders() -> result::ResultFile {
        Build::new()
            .add(case("io_uring empty 1MiB qd32 t1 end"), &[1.00, 1.10])
            .add(case("fwrite empty 1MiB t1 end"), &[1.02, 1.12])
            .add(case("pwritev empty 1MiB x1 t1 end"), &[1.04, 1.14])
            .add(case("write empty 1MiB t1 end"), &[1.08, 1.18])
            .add(case("pwrite empty 64KiB t1 end"), &[1.09, 1.19])
            .add(case("write empty 4KiB t1 end"), &[3.0, 3.1])
            .done()
    }

    /// Once a goal is judged, the next round runs its leader, its runner-up, the one the
    /// Answer would recommend now (the simplest not shown slower and measured within 5 %
    /// of the leader) and the simplest not shown slower; the others still in its race rest.
    #[test]
    fn the_rounds_go_to_the_leader_the_runner_up_and_the_simplest_contenders() {
        let result = contenders();
        let mut referee = referee();
        let calls: Vec<Call> =
            referee.judge(2, &result.cases, &all_open(&result.cases)).into_iter().map(goals_call).collect();
        assert!(matches!(calls[5], Call::Stop(Exit::Slower, _)), "{calls:?}");
        assert_eq!(
            calls[..5],
            [Call::Run, Call::Run, Call::Run, Call::Run, Call::Rest],
            "pwritev runs, the simplest within 5 % of the leader; write runs, the simplest; pwrite in 64 KiB calls \
             rests: as simple as write, but after it"
        );
        // A candidate with its most runs made is no one's to run: with every one at its
        // most, none is kept resting, and all stop.
        let mut full = GoalReferee::new(2, 2, 0.05, Racing::from_now(None));
        assert!(judge(&mut full, 2, &result).iter().all(Option::is_some));
    }

    /// A race that can end (docs/racing.md): the rounds go to what keeps the Answer
    /// open. A candidate neither shown slower than the pick nor within the margin of it
    /// runs, though it is neither the leader, the runner-up nor among the simplest: an
    /// mmap whose two runs reach from 10 % faster to 40 % slower, while the calm ones
    /// between are already settled against the pick.
    #[test]
    fn the_rounds_go_to_the_candidate_that_keeps_the_answer_open() {
        let result = Build::new()
            .add(case("io_uring empty 1MiB qd32 t1 end"), &[1.00, 1.01])
            .add(case("fwrite empty 1MiB t1 end"), &[1.005, 1.015])
            .add(case("pwritev empty 1MiB x1 t1 end"), &[1.01, 1.02])
            .add(case("write empty 1MiB t1 end"), &[1.012, 1.022])
            .add(case("mmap sparse 1MiB t1 end"), &[0.9, 1.4])
            .done();
        let mut referee = referee();
        let calls: Vec<Call> =
            referee.judge(2, &result.cases, &all_open(&result.cases)).into_iter().map(goals_call).collect();
        assert_eq!(calls[4], Call::Run, "mmap may be 10 % faster than write, the pick: {calls:?}");
        assert_eq!(calls[3], Call::Run, "write, the pick, runs beside it: {calls:?}");
        assert_eq!(referee.decided(), (0, 2), "fastest and durable at the end, both open");
    }

    /// A case that has stopped never runs again (its goals let it go while their rounds
    /// went to others, and no observation kept it), so the rounds never wait for it: a
    /// goal whose rounds would go to it goes to the next, and one whose rounds would go
    /// only to stopped cases needs none, so that the rounds the goals leave go to the
    /// observations. Waiting for it had ended a run with 52 s of its 2 minutes left, its
    /// goals undecided and its open cases marked decided.
    #[test]
    fn the_rounds_never_go_to_a_case_that_has_stopped() {
        let result = contenders();
        let calls = |open: &[bool]| -> Vec<Call> {
            referee().judge(2, &result.cases, open).into_iter().map(goals_call).collect()
        };
        // pwritev, the one the Answer would recommend now, has stopped: the rounds go
        // to the leader, the runner-up and the simplest still able to run.
        let without_pwritev = calls(&[true, true, false, true, true, true]);
        assert_ne!(without_pwritev[2], Call::Run, "{without_pwritev:?}");
        assert_eq!(without_pwritev[..2], [Call::Run, Call::Run], "{without_pwritev:?}");
        assert_eq!(without_pwritev[3], Call::Run, "write, the simplest: {without_pwritev:?}");
        // Only pwrite in 64 KiB calls is left able to run: the rounds go to it.
        let only_pwrite = calls(&[false, false, false, false, true, true]);
        assert_eq!(only_pwrite[4], Call::Run, "{only_pwrite:?}");
        // None of the goal's contenders can run: the goal needs no rounds, and no case
        // is kept resting for it.
        let none = calls(&[false, false, false, false, false, true]);
        assert!(none.iter().all(|call| matches!(call, Call::Stop(..))), "{none:?}");
    }

    /// Focused rounds give some cases more runs than others: the leader and the margin
    /// go by mean times, not by totals.
    #[test]
    fn the_focus_ranks_cases_of_unequal_runs_by_their_mean_time() {
        let result = Build::new()
            .add(case("io_uring empty 1MiB qd32 t1 end"), &[0.9, 1.1, 0.9, 1.1])
            .add(case("mmap sparse 1MiB t1 end"), &[0.91, 1.11, 0.91, 1.11])
            .add(case("fwrite empty 1MiB t1 end"), &[0.93, 1.13])
            .add(case("pwritev empty 1MiB x1 t1 end"), &[0.94, 1.14])
            .add(case("write empty 1MiB t1 end"), &[0.98, 1.18])
            .done();
        let mut referee = referee();
        let open = all_open(&result.cases);
        referee.judge(2, &result.cases, &open);
        let contest = contests(&result.cases, 0.05).into_iter().find(|c| c.goal == "fastest").unwrap();
        let goal = referee.goals.iter().find(|g| g.goal == "fastest").unwrap();
        let focus = referee.focus(goal, &contest, &result.cases, &open).unwrap();
        assert_eq!(
            focus.run[..4],
            [0, 1, 3, 4],
            "io_uring leads at 1.00 (four runs; by totals fwrite's two would), mmap follows; pwritev is the \
             simplest within 5 % and write the simplest"
        );
        assert_eq!(focus.run[4..], [2], "fwrite runs too: its two runs leave it open against pwritev, the pick");
    }

    /// A simpler case the Answer's own test shows slower than the leader (95 %, no
    /// correction) is not run for its simplicity, though the race's stricter rule keeps
    /// it in: the Answer would not recommend it.
    #[test]
    fn a_simple_case_shown_slower_by_the_answers_test_rests() {
        let result = Build::new()
            .add(case("io_uring empty 1MiB qd32 t1 end"), &[0.95, 1.05])
            .add(case("fwrite empty 1MiB t1 end"), &[0.96, 1.06])
            .add(case("pwritev empty 1MiB x1 t1 end"), &[0.97, 1.07])
            .add(case("write empty 1MiB t1 end"), &[1.2, 1.3])
            .done();
        let mut referee = referee();
        assert_eq!(
            referee.judge(2, &result.cases, &all_open(&result.cases)),
            [Call::Run, Call::Run, Call::Run, Call::Rest],
            "write at 1.25x: p about 0.03 against the leader, 0.1 after Holm over three"
        );
    }

    /// A case no goal needs goes on while an observation more runs could settle needs
    /// it: resting while a goal's race is open, running once none is. One whose
    /// observations are settled stops.
    #[test]
    fn a_case_an_unsettled_observation_needs_runs_once_no_goal_needs_the_rounds() {
        let open = Build::new()
            .add(case("pwrite empty 1MiB t1 end"), &[1.00, 1.02, 1.01])
            .add(case("write empty 1MiB t1 end"), &[0.95, 1.10, 1.02])
            // Against one thread: 0.95 against 1.02, undecided.
            .add(case("write empty 1MiB t2 f2 end"), &[0.9, 1.0, 0.95])
            // Against one thread: twice as fast, shown.
            .add(case("pwrite empty 1MiB t2 f2 end"), &[0.5, 0.5, 0.5])
            .done();
        let calls = referee().judge(2, &open.cases, &all_open(&open.cases));
        assert_eq!(calls[..2], [Call::Run, Call::Run], "the fastest is open");
        assert_eq!(calls[2], Call::Observe { exit: Exit::NoGoal, behind: None, run: false }, "{calls:?}");
        assert_eq!(calls[3], Call::Stop(Exit::NoGoal, None), "its observation is settled");
        // Every goal decided (one candidate): the observation's cases run, the winner too.
        let decided = Build::new()
            .add(case("write empty 1MiB t1 end"), &[1.01, 1.03])
            .add(case("write empty 1MiB t2 f2 end"), &[0.9, 1.0])
            .done();
        let calls = referee().judge(2, &decided.cases, &all_open(&decided.cases));
        assert_eq!(
            calls,
            [
                Call::Observe { exit: Exit::Decided, behind: None, run: true },
                Call::Observe { exit: Exit::NoGoal, behind: None, run: true }
            ]
        );
    }
}
