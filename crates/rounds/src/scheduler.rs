//! The order in which the runs of every case happen: rounds, warm-ups and repetition.
//! It knows nothing about files or methods: each case comes as a [`CaseRuns`], and
//! what comes back is a [`CaseResult`] per case.
//!
//! Past 600 lines (about half of it tests): the rounds, the race's allocation and the
//! observations' rounds share one loop.
//!
//! Interleaved (the default, docs/design.md §2.4): round *r* runs every case still running
//! once, in an order shuffled from `--seed`, so that the machine's drift (other tenants,
//! writeback, thermal state) spreads over every case instead of lining up with the
//! dimension the cases happen to be sorted by. Rounds `0..warmup` are warm-ups, also
//! interleaved, and discarded (but for a case that warms itself, [`CaseRuns::warmups`]). `--order grouped` runs all runs of one case back to back,
//! case after case, as before.
//!
//! A case leaves the rounds when it has its runs: `min_runs` of them without a target;
//! with `--target-ci`, as soon as it has `min_runs` and the 95 % CI half-width of its
//! mean time is within the target, or when it has `max_runs`. A case whose run fails
//! leaves at once with its error, and its runs so far are not reported.
//!
//! Racing (`Schedule::race`, docs/racing.md): every case gets `min_runs`, then after each
//! round a [`Referee`] says which cases the Answer no longer needs, and those leave or
//! wait for the rounds the goals leave to the observations ([`Call::Observe`]); the
//! others go on to `max_runs`. Before each round past the first runs, the round's cost
//! (each case's mean run so far, everything around its timed span included) is held
//! against the budget's end: a round that would end past it is not started.

use std::time::{Duration, Instant};

use rand::seq::SliceRandom;
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::SeedableRng;

use super::clock::Clock;
use analysis::summarize::{self, Noise, ci_relative_at};
use measure::runs::CaseRuns;
use plan::Case;
use result::race::{Behind, CaseRace, Exit};
use result::{CaseResult, Run, Status, TargetCi};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Round after round, every case once per round, in a shuffled order.
    Interleaved,
    /// All runs of a case back to back, in the plan's order.
    Grouped,
}

impl Order {
    pub fn name(self) -> &'static str {
        match self {
            Order::Interleaved => "interleaved",
            Order::Grouped => "grouped",
        }
    }
}

/// Racing's clock: when the command started (its budget counts from there, probe and
/// calibration included), the budget, if any, the least time the rounds after the first
/// runs get, if any, and the clock it is counted on (the wall clock, but for the
/// simulation's).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Racing {
    pub start: Instant,
    pub budget: Option<Duration>,
    /// The rounds after every case's first runs get at least this long: where the first
    /// runs take longer than estimated (a disk in a slower hour), the budget is
    /// stretched when they end ([`Racing::stretched`]) rather than left with no round.
    pub rounds_floor: Option<Duration>,
    pub clock: Clock,
}

impl Racing {
    /// A race on the wall clock from now.
    pub fn from_now(budget: Option<Duration>) -> Racing {
        Racing { start: Instant::now(), budget, rounds_floor: None, clock: Clock::Wall }
    }

    fn deadline(&self) -> Option<Instant> {
        self.budget.map(|budget| self.start + budget)
    }

    /// The budget stretched so that the rounds from now (the first runs just ended) get
    /// `rounds_floor`, in whole seconds; None when the budget already leaves them that.
    pub fn stretched(&self) -> Option<Duration> {
        let (budget, floor) = (self.budget?, self.rounds_floor?);
        let needed = self.elapsed() + floor;
        (needed > budget).then(|| Duration::from_secs(needed.as_secs_f64().ceil() as u64))
    }

    /// Decides the race's budget once, before the first runs, from `first`, what every
    /// case's first runs are estimated to cost from the race's start: the slower path's
    /// budget (`slow_path`, on a path with a device unless `--budget` was given) where
    /// they would take more than two thirds of the budget, leaving the race too little
    /// to race with (docs/racing.md); and the rounds' floor (`rounds_floor`, on the same
    /// terms), which [`Racing::stretched`] holds when the first runs end. The probe's
    /// estimate varies by a quarter from run to run on a disk: with "past the budget", a
    /// disk's first runs announced at 41 s got 1 minute and settled every goal, while the
    /// next run's, announced under 30 s, got 30 s and ended after 3 rounds with none. The
    /// disk itself slows too (the same first runs took 39 s and, an hour later, 55 s of the
    /// minute, 2026-11-29), which the estimate cannot see coming: the floor mends that.
    /// What was decided is returned for the announcement to say.
    pub fn decide_budget(
        &mut self,
        first: Duration,
        slow_path: Option<Duration>,
        rounds_floor: Option<Duration>,
    ) -> BudgetDecided {
        self.rounds_floor = rounds_floor;
        let Some(budget) = self.budget else { return BudgetDecided::Kept };
        match slow_path.filter(|&slow| first * 3 > budget * 2 && slow > budget) {
            Some(slow) => {
                self.budget = Some(slow);
                BudgetDecided::SlowerPath { was: budget }
            }
            None if first > budget => BudgetDecided::PastBudget,
            None => BudgetDecided::Kept,
        }
    }

    pub fn now(&self) -> Instant {
        self.clock.now(self.start)
    }

    /// The time since the start, on its clock.
    pub fn elapsed(&self) -> Duration {
        self.now() - self.start
    }
}

/// What [`Racing::decide_budget`] made of the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BudgetDecided {
    /// As it was (or none).
    Kept,
    /// The slower path's, instead of `was`.
    SlowerPath { was: Duration },
    /// As it was, though the first runs alone are estimated to pass it: only goals
    /// clear after them will be decided.
    PastBudget,
}

/// What a referee says of a case after a round.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    /// Run it in the next round.
    Run,
    /// Still in contention, but it sits out the next round: its runs would not change
    /// the answer while others are settled first. It may run again in a later round.
    Rest,
    /// It needs no more runs: why.
    Stop(Exit, Option<Behind>),
    /// The Answer's goals need no more runs of it (why, as for `Stop`), but an
    /// observation not yet settled does: it runs in the next round when `run` (no goal
    /// needs the round), else sits it out. Its record keeps the goals' why, and counts
    /// the runs it gets from then on apart (`CaseRace::observed`).
    Observe { exit: Exit, behind: Option<Behind>, run: bool },
}

/// After a round, which cases the Answer still needs (see the module doc).
pub trait Referee {
    /// `results` are every case's results so far, in the order of the cases (a case
    /// that stopped keeps its last ones), and `open` says of each whether it can still
    /// run: a stopped case never runs again, whatever is said of it; one call for each.
    /// Called only once some running case has its first `min_runs`; a case with fewer
    /// keeps running whatever is said.
    fn judge(&mut self, round: u32, results: &[CaseResult], open: &[bool]) -> Vec<Call>;

    /// Goals decided so far, of how many (for the progress bar).
    fn decided(&self) -> (usize, usize);
}

/// How many runs each case gets, and in which order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    /// Discarded runs per case, before the measured ones.
    pub warmup: u32,
    /// Measured runs per case at least: `--repeat`, or `--min-runs` with a target.
    pub min_runs: u32,
    /// Measured runs per case at most; equal to `min_runs` without a target.
    pub max_runs: u32,
    /// `--target-ci`: the CI half-width to reach, in percent of the mean.
    pub target_ci: Option<f64>,
    pub order: Order,
    /// The seed of the shuffles (the data's seed, on a stream of its own).
    pub seed: u64,
    /// Race the cases for the Answer (interleaved only): `min_runs` each, then up to
    /// `max_runs` while the referee needs them.
    pub race: Option<Racing>,
}

impl Schedule {
    /// Exactly `repeat` measured runs per case.
    pub fn fixed(repeat: u32, warmup: u32, order: Order, seed: u64) -> Schedule {
        Schedule { warmup, min_runs: repeat, max_runs: repeat, target_ci: None, order, seed, race: None }
    }

    /// Whether the rounds race: a race set, interleaved rounds.
    pub fn races(&self) -> bool {
        self.race.is_some() && self.order == Order::Interleaved
    }
}

/// The stopping rule: whether a case with `runs` measured runs, whose mean time is known
/// to `ci` (the CI half-width as a fraction of the mean, None below two runs), has
/// enough. Never before `min_runs`; always at `max_runs` (and at one run at least, so
/// that a schedule with zero runs still ends); in between only when a target is set and
/// met.
pub fn enough(runs: u32, ci: Option<f64>, schedule: &Schedule) -> bool {
    if runs >= schedule.max_runs.max(1) {
        return true;
    }
    if runs < schedule.min_runs {
        return false;
    }
    match schedule.target_ci {
        None => true,
        Some(pct) => target_met(ci, pct),
    }
}

fn target_met(ci: Option<f64>, pct: f64) -> bool {
    ci.is_some_and(|ci| ci <= pct / 100.0)
}

/// Where the run stands, after each run (for a progress bar).
pub struct Tick<'a> {
    /// The case whose run just ended.
    pub case: &'a Case,
    /// Runs made so far, warm-ups included.
    pub done: u64,
    /// Runs the whole schedule will make at most, as known now: it shrinks when a case
    /// meets its target early or fails. When racing, the runs up to every case's first
    /// `min_runs` and then the next round's.
    pub planned: u64,
    /// When racing: goals decided so far, of how many.
    pub goals: Option<(usize, usize)>,
    /// When racing: the run was for the observations, the goals having let its case go
    /// (docs/racing.md, "The observations").
    pub observing: bool,
    /// When racing: the budget as it stands, stretched once the first runs ended
    /// ([`Racing::rounds_floor`]).
    pub budget: Option<Duration>,
}

/// The shuffles draw from the seed on a stream of their own, so that the order does
/// not correlate with the data written ("order" in ASCII).
const ORDER_STREAM: u64 = 0x006f_7264_6572;

enum End {
    Done,
    Failed(Status, String),
    /// Racing: why it got no more runs, after which round.
    Raced(Exit, Option<Behind>, u32),
}

struct Slot<'a> {
    case: Case,
    runs: Box<dyn CaseRuns + 'a>,
    /// Its first runs to discard ([`CaseRuns::warmups`]).
    warmups: u32,
    made: u32,
    measured: Vec<Run>,
    end: Option<End>,
    /// Sits out the next round ([`Call::Rest`]).
    resting: bool,
    /// The goals let it go, and it runs on for the observations ([`Call::Observe`]):
    /// its record as of then, `observed` counted at the end.
    left_goals: Option<CaseRace>,
    /// Each run's wall time, everything around its timed span included: what a round
    /// of it costs the budget.
    walls: Vec<f64>,
    /// The pooled noise `--target-ci` judged its last run by: its record says what the
    /// stopping rule saw, not a later pool's verdict.
    judged_by: Noise,
}

impl Slot<'_> {
    fn mean_wall(&self) -> f64 {
        if self.walls.is_empty() { 0.0 } else { self.walls.iter().sum::<f64>() / self.walls.len() as f64 }
    }

    /// Its results so far, as a referee sees them.
    fn partial(&self, cpus: usize) -> CaseResult {
        match &self.end {
            Some(End::Failed(status, reason)) => CaseResult::without_result(self.case.clone(), *status, reason.clone()),
            _ => summarize::measured(self.case.clone(), self.measured.clone(), cpus),
        }
    }
}

/// Runs every case by the schedule; the results come back in the order of `cases`.
/// When the schedule races, `referee` says after each round which cases leave.
pub fn run<'a>(
    cases: Vec<(Case, Box<dyn CaseRuns + 'a>)>,
    schedule: &Schedule,
    mut referee: Option<&mut dyn Referee>,
    on_run: &mut dyn FnMut(Tick),
) -> Vec<CaseResult> {
    let mut slots: Vec<Slot> = cases
        .into_iter()
        .map(|(case, runs)| {
            let warmups = runs.warmups(schedule.warmup);
            Slot {
                case,
                runs,
                warmups,
                made: 0,
                measured: Vec::new(),
                end: None,
                resting: false,
                left_goals: None,
                walls: Vec::new(),
                judged_by: Noise::default(),
            }
        })
        .collect();
    let mut racing = if schedule.races() { schedule.race } else { None };
    // Whether the first runs have ended and the budget was held against the rounds'
    // floor (once).
    let mut floored = false;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut sequence = 0u64;
    let mut goals: Option<(usize, usize)> = None;
    // The case whose run came last, warm-ups included: each run records it (`after`),
    // for the carry-over check.
    let mut previous: Option<String> = None;
    let races = racing.is_some();
    let tick = |slots: &[Slot],
                index: usize,
                sequence: u64,
                (goals, budget): (Option<(usize, usize)>, Option<Duration>),
                on_run: &mut dyn FnMut(Tick)| {
        let planned = slots
            .iter()
            .map(|slot| match slot.end {
                Some(_) => u64::from(slot.made),
                // The next round's run, unless the case rests in it.
                None if races => {
                    u64::from(slot.made.max(slot.warmups + schedule.min_runs))
                        + u64::from(slot.made >= slot.warmups + schedule.min_runs && !slot.resting)
                }
                None => u64::from(slot.warmups) + u64::from(schedule.max_runs.max(1)),
            })
            .sum();
        let observing = slots[index].left_goals.is_some();
        on_run(Tick { case: &slots[index].case, done: sequence, planned, goals, observing, budget });
    };
    match schedule.order {
        Order::Interleaved => {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(schedule.seed ^ ORDER_STREAM);
            for round in 0u32.. {
                let open: Vec<usize> = (0..slots.len()).filter(|&i| slots[i].end.is_none()).collect();
                let mut order: Vec<usize> = open.iter().copied().filter(|&i| !slots[i].resting).collect();
                if order.is_empty() {
                    // Only resting cases left: nothing the referee wants settled first.
                    for &i in &open {
                        slots[i].end = Some(End::Raced(Exit::Decided, None, round.saturating_sub(1)));
                    }
                    break;
                }
                let racing_round = order.iter().all(|&i| slots[i].measured.len() as u32 >= schedule.min_runs);
                if let Some(race) = racing.as_mut().filter(|_| racing_round && !floored) {
                    floored = true;
                    if let Some(stretched) = race.stretched() {
                        race.budget = Some(stretched);
                    }
                }
                if let Some((race, deadline)) = racing.and_then(|r| Some((r, r.deadline()?))) {
                    let cost: f64 = order.iter().map(|&i| slots[i].mean_wall()).sum();
                    if racing_round && race.now() + Duration::from_secs_f64(cost) > deadline {
                        for &i in &open {
                            slots[i].end = Some(End::Raced(Exit::Budget, None, round.saturating_sub(1)));
                        }
                        break;
                    }
                }
                order.shuffle(&mut rng);
                let noise = noise_of(&slots, schedule);
                for index in order {
                    let after = previous.replace(slots[index].case.id.clone());
                    step(&mut slots[index], round, sequence, schedule, after, &noise);
                    sequence += 1;
                    tick(&slots, index, sequence, (goals, racing.and_then(|r| r.budget)), on_run);
                }
                if let (Some(referee), Some(_)) = (referee.as_deref_mut(), racing) {
                    goals = judged(referee, &mut slots, round, schedule, cpus).or(goals);
                }
            }
        }
        Order::Grouped => {
            for index in 0..slots.len() {
                // The cases measured before this one: in grouped order there is no other.
                let noise = noise_of(&slots[..index], schedule);
                while slots[index].end.is_none() {
                    let round = slots[index].made;
                    let after = previous.replace(slots[index].case.id.clone());
                    step(&mut slots[index], round, sequence, schedule, after, &noise);
                    sequence += 1;
                    tick(&slots, index, sequence, (goals, racing.and_then(|r| r.budget)), on_run);
                }
            }
        }
    }
    slots.into_iter().map(|slot| finish(slot, schedule, cpus)).collect()
}

/// After a round of a race: the referee's calls on the cases that have had their first
/// runs (leave, rest, or run on for the observations), applied; the goals it has decided,
/// or None where no case was ready to be judged.
fn judged(
    referee: &mut dyn Referee,
    slots: &mut [Slot],
    round: u32,
    schedule: &Schedule,
    cpus: usize,
) -> Option<(usize, usize)> {
    let ready = |slot: &Slot| slot.end.is_none() && slot.measured.len() as u32 >= schedule.min_runs;
    if !slots.iter().any(ready) {
        return None;
    }
    let partial: Vec<CaseResult> = slots.iter().map(|slot| slot.partial(cpus)).collect();
    let open: Vec<bool> = slots.iter().map(|slot| slot.end.is_none()).collect();
    let calls = referee.judge(round, &partial, &open);
    for (slot, call) in slots.iter_mut().zip(calls) {
        match (ready(slot), call) {
            (true, Call::Stop(exit, behind)) => slot.end = Some(End::Raced(exit, behind, round)),
            (true, Call::Observe { exit, behind, run }) => {
                let runs = slot.measured.len() as u32;
                slot.left_goals.get_or_insert(CaseRace { runs, round, exit, behind, observed: 0 });
                slot.resting = !run;
            }
            (ready, call) => {
                slot.resting = ready && call == Call::Rest;
                // Back in a goal's rounds (the runs the observations
                // gave it moved it up its race): its record is the
                // goals' again, from when they let it go next.
                if ready {
                    slot.left_goals = None;
                }
            }
        }
    }
    Some(referee.decided())
}

/// The noise of the cases' runs so far, pooled, where `--target-ci` will judge by it
/// (`summarize::ci_relative_at`); none otherwise.
fn noise_of(slots: &[Slot], schedule: &Schedule) -> Noise {
    if schedule.target_ci.is_none() || schedule.races() {
        return Noise::default();
    }
    Noise::of(slots.iter().map(|slot| (slot.measured.as_slice(), slot.case.durability.syncs())))
}

/// The cases of a command in the order of its plan, which is the order of its results:
/// each either ready for the rounds or refused up front with its status and reason.
#[derive(Default)]
pub struct Queue<'a> {
    runnable: Vec<(Case, Box<dyn CaseRuns + 'a>)>,
    /// Where each runnable case's result goes.
    positions: Vec<usize>,
    done: Vec<Option<CaseResult>>,
}

impl<'a> Queue<'a> {
    /// The next case of the plan: ready to run, or its refusal as its result.
    pub fn add(&mut self, case: Case, prepared: Result<Box<dyn CaseRuns + 'a>, (Status, String)>) {
        match prepared {
            Ok(runs) => {
                self.positions.push(self.done.len());
                self.runnable.push((case, runs));
                self.done.push(None);
            }
            Err((status, reason)) => self.done.push(Some(CaseResult::without_result(case, status, reason))),
        }
    }

    /// Runs the ready cases by `schedule` (see [`run`]): every case's result, in order.
    /// A referee judges the ready cases only, in the order of the plan.
    pub fn run(
        self,
        schedule: &Schedule,
        referee: Option<&mut dyn Referee>,
        on_run: &mut dyn FnMut(Tick),
    ) -> Vec<CaseResult> {
        let Queue { runnable, positions, mut done } = self;
        for (index, result) in positions.into_iter().zip(run(runnable, schedule, referee, on_run)) {
            done[index] = Some(result);
        }
        done.into_iter().map(|result| result.expect("every case has a result")).collect()
    }
}

/// One run of one case, recorded with its round, sequence and the case run just before
/// it, then the stopping rule (when racing: only `max_runs`, the referee does the rest).
fn step(slot: &mut Slot, round: u32, sequence: u64, schedule: &Schedule, after: Option<String>, noise: &Noise) {
    let number = slot.made;
    slot.made += 1;
    // On the race's clock: the simulation's runs take the time they stand for.
    let now = || schedule.race.map_or_else(Instant::now, |race| race.now());
    let started = now();
    let outcome = slot.runs.run_once(number);
    slot.walls.push((now() - started).as_secs_f64());
    match outcome {
        Err((status, reason)) => slot.end = Some(End::Failed(status, reason)),
        Ok(mut run) => {
            run.round = round;
            run.sequence = sequence;
            run.after = after;
            if number < slot.warmups {
                return;
            }
            slot.measured.push(run);
            let runs = slot.measured.len() as u32;
            if schedule.races() {
                if runs >= schedule.max_runs.max(1) {
                    slot.end = Some(End::Raced(Exit::MaxRuns, None, round));
                }
                return;
            }
            slot.judged_by = *noise;
            let ci =
                schedule.target_ci.and_then(|_| ci_relative_at(&slot.measured, slot.case.durability.syncs(), noise));
            if enough(runs, ci, schedule) {
                slot.end = Some(End::Done);
            }
        }
    }
}

fn finish(mut slot: Slot, schedule: &Schedule, cpus: usize) -> CaseResult {
    match slot.end {
        Some(End::Failed(status, reason)) => CaseResult::without_result(slot.case, status, reason),
        Some(End::Done | End::Raced(..)) | None => {
            let measured = slot.measured.len() as u32;
            // A case the goals let go on for the observations: its record is the goals',
            // whatever ended its runs after.
            let race = match (slot.end, slot.left_goals) {
                (Some(End::Raced(..)), Some(left)) => Some(CaseRace { observed: measured - left.runs, ..left }),
                (Some(End::Raced(exit, behind, round)), None) => {
                    Some(CaseRace { runs: measured, round, exit, behind, observed: 0 })
                }
                _ => None,
            };
            let mut result = summarize::measured(slot.case, slot.measured, cpus);
            slot.runs.conclude(&mut result);
            if let Some(per_run) = slot.runs.operations_per_run() {
                summarize::set_loop_rates(&mut result, per_run);
            }
            result.race = race;
            if let Some(pct) = schedule.target_ci {
                let ci = summarize::case_ci_relative(&result);
                let judged = ci_relative_at(&result.runs, result.case.durability.syncs(), &slot.judged_by);
                result.target_ci = Some(TargetCi {
                    pct,
                    met: target_met(judged, pct),
                    runs: result.runs.len() as u32,
                    reached_pct: ci.map(|ci| 100.0 * ci),
                    judged_pct: judged.filter(|&judged| Some(judged) != ci).map(|judged| 100.0 * judged),
                });
            }
            result
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::*;
    use plan::catalog;
    use plan::{Durability, FileState};

    /// Returns the given write times in turn (the last one again when they run out),
    /// or fails at run `fail_at`; logs (case, number) of every call.
    struct ScriptedRuns {
        name: usize,
        times: Vec<f64>,
        fail_at: Option<u32>,
        log: Rc<RefCell<Vec<(usize, u32)>>>,
    }

    impl CaseRuns for ScriptedRuns {
        fn run_once(&mut self, number: u32) -> Result<Run, (Status, String)> {
            self.log.borrow_mut().push((self.name, number));
            if self.fail_at == Some(number) {
                return Err((Status::Failed, format!("run {number}: Input/output error")));
            }
            let time = self.times.get(number as usize).or(self.times.last()).copied().unwrap_or(1.0);
            Ok(Run { write_seconds: time, ..Run::default() })
        }
    }

    fn case(chunk: u64) -> Case {
        Case::new(catalog::by_name("pwrite").unwrap(), FileState::Empty, chunk, 1, Durability::None, 1 << 20)
    }

    type Log = Rc<RefCell<Vec<(usize, u32)>>>;

    /// `count` cases with the given times (the same for each), run by `schedule`.
    fn run_given(
        count: usize,
        times: &[f64],
        fail: Option<(usize, u32)>,
        schedule: &Schedule,
    ) -> (Vec<CaseResult>, Log) {
        let log: Log = Rc::default();
        let cases = (0..count)
            .map(|name| {
                let fail_at = fail.filter(|(case, _)| *case == name).map(|(_, number)| number);
                let runs = ScriptedRuns { name, times: times.to_vec(), fail_at, log: log.clone() };
                (case(4096 << name), Box::new(runs) as Box<dyn CaseRuns>)
            })
            .collect();
        let results = run(cases, schedule, None, &mut |_| {});
        (results, log)
    }

    /// The budget is decided once, before the first runs: a path whose first runs take
    /// most of it gets the slower path's, never a smaller one, and only where one is
    /// offered (a device, no --budget); the floor is kept for the rounds either way.
    #[test]
    fn a_path_whose_first_runs_take_most_of_the_budget_gets_the_slower_paths_budget() {
        let decide = |first: u64, slow: Option<u64>| {
            let mut race = Racing::from_now(Some(Duration::from_secs(30)));
            let decided = race.decide_budget(
                Duration::from_secs(first),
                slow.map(Duration::from_secs),
                Some(Duration::from_secs(25)),
            );
            assert_eq!(race.rounds_floor, Some(Duration::from_secs(25)));
            (decided, race.budget.map(|b| b.as_secs()))
        };
        let was = Duration::from_secs(30);
        assert_eq!(decide(45, Some(60)), (BudgetDecided::SlowerPath { was }, Some(60)), "a disk");
        assert_eq!(decide(25, Some(60)), (BudgetDecided::SlowerPath { was }, Some(60)), "25 s of 30 leave no race");
        assert_eq!(decide(19, Some(60)), (BudgetDecided::Kept, Some(30)), "19 s of 30: the budget stays");
        assert_eq!(decide(45, None), (BudgetDecided::PastBudget, Some(30)), "--budget given: no other");
        assert_eq!(decide(45, Some(20)), (BudgetDecided::PastBudget, Some(30)), "never a smaller one");
        let mut unbounded = Racing::from_now(None);
        assert_eq!(
            unbounded.decide_budget(Duration::from_secs(45), Some(Duration::from_secs(60)), None),
            BudgetDecided::Kept
        );
        assert_eq!(unbounded.budget, None);
    }

    #[test]
    fn interleaved_rounds_run_every_case_once_each_in_a_shuffled_order() {
        let schedule = Schedule::fixed(4, 1, Order::Interleaved, 7);
        let (results, log) = run_given(5, &[1.0], None, &schedule);
        let log = log.borrow();
        assert_eq!(log.len(), 5 * 5);
        let rounds: Vec<Vec<usize>> =
            log.chunks(5).map(|round| round.iter().map(|(case, _)| *case).collect()).collect();
        for (round, cases) in rounds.iter().enumerate() {
            let mut sorted = cases.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, vec![0, 1, 2, 3, 4], "round {round}: every case once");
            assert!(log[round * 5..round * 5 + 5].iter().all(|(_, number)| *number == round as u32));
        }
        assert!(rounds.windows(2).any(|pair| pair[0] != pair[1]), "the order changes between rounds: {rounds:?}");
        assert_ne!(rounds[0], vec![0, 1, 2, 3, 4], "shuffled, not the plan's order");
        for result in &results {
            assert_eq!(result.runs.len(), 4, "the warm-up round is discarded");
            let rounds: Vec<u32> = result.runs.iter().map(|run| run.round).collect();
            assert_eq!(rounds, vec![1, 2, 3, 4]);
        }
        // Each run names the case run just before it (a warm-up's included).
        let ids: Vec<String> = results.iter().map(|r| r.case.id.clone()).collect();
        let id_at = |at: usize| ids[log[at].0].clone();
        for result in &results {
            for run in &result.runs {
                assert_eq!(run.after, Some(id_at(run.sequence as usize - 1)), "{}", result.case.id);
            }
        }
        // Sequence numbers are the real order: each of 0..25 once, warm-ups included.
        let mut sequences: Vec<u64> = results.iter().flat_map(|r| r.runs.iter().map(|run| run.sequence)).collect();
        sequences.sort_unstable();
        assert_eq!(sequences, (5..25).collect::<Vec<u64>>());
    }

    /// A case that warms itself (as a latency loop does): no run discarded; what it
    /// concludes sees its measured runs.
    struct SelfWarmed {
        log: Log,
        concluded: Rc<RefCell<Option<usize>>>,
    }

    impl CaseRuns for SelfWarmed {
        fn run_once(&mut self, number: u32) -> Result<Run, (Status, String)> {
            self.log.borrow_mut().push((9, number));
            Ok(Run { write_seconds: 1.0 + f64::from(number), ..Run::default() })
        }

        fn warmups(&self, _rounds: u32) -> u32 {
            0
        }

        fn conclude(&mut self, result: &mut CaseResult) {
            *self.concluded.borrow_mut() = Some(result.runs.len());
        }
    }

    #[test]
    fn a_case_that_warms_itself_is_measured_from_its_first_run_in_the_same_rounds() {
        let schedule = Schedule::fixed(3, 2, Order::Interleaved, 5);
        let log: Log = Rc::default();
        let concluded = Rc::default();
        let warmed = SelfWarmed { log: log.clone(), concluded: Rc::clone(&concluded) };
        let other = ScriptedRuns { name: 0, times: vec![1.0], fail_at: None, log: log.clone() };
        let cases: Vec<(Case, Box<dyn CaseRuns>)> = vec![(case(4096), Box::new(other)), (case(8192), Box::new(warmed))];
        let mut ticks = Vec::new();
        let results = run(cases, &schedule, None, &mut |tick| ticks.push(tick.planned));
        let times: Vec<f64> = results[1].runs.iter().map(|run| run.write_seconds).collect();
        assert_eq!(times, vec![1.0, 2.0, 3.0], "its first three runs, none discarded");
        assert_eq!(results[1].runs.iter().map(|run| run.round).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!(results[0].runs.len(), 3, "the other case still discards its two warm-ups");
        assert_eq!(*concluded.borrow(), Some(3));
        // In the rounds of the other case: in each of the first three, both ran.
        let log = log.borrow();
        for round in log[..6].chunks(2) {
            let mut names: Vec<usize> = round.iter().map(|(name, _)| *name).collect();
            names.sort_unstable();
            assert_eq!(names, vec![0, 9], "{log:?}");
        }
        assert_eq!(ticks.first(), Some(&(5 + 3)));
        assert_eq!(ticks.last(), Some(&8));
    }

    #[test]
    fn a_queue_gives_every_result_in_the_plans_order_refused_ones_included() {
        let log: Log = Rc::default();
        let mut queue = Queue::default();
        queue.add(case(4096), Err((Status::Unsupported, "no O_DIRECT here".into())));
        queue
            .add(case(8192), Ok(Box::new(ScriptedRuns { name: 1, times: vec![2.0], fail_at: None, log: log.clone() })));
        queue.add(case(16384), Err((Status::Skipped, "too big".into())));
        let results = queue.run(&Schedule::fixed(2, 0, Order::Interleaved, 1), None, &mut |_| {});
        let statuses: Vec<Status> = results.iter().map(|r| r.status).collect();
        assert_eq!(statuses, [Status::Unsupported, Status::Ok, Status::Skipped]);
        assert_eq!(results[1].runs.len(), 2);
        assert_eq!(results[2].error.as_deref(), Some("too big"));
    }

    #[test]
    fn grouped_runs_each_case_back_to_back_in_the_plans_order() {
        let schedule = Schedule::fixed(2, 1, Order::Grouped, 7);
        let (results, log) = run_given(3, &[1.0], None, &schedule);
        let expected: Vec<(usize, u32)> = (0..3).flat_map(|case| (0..3).map(move |n| (case, n))).collect();
        assert_eq!(*log.borrow(), expected);
        assert_eq!(results[2].runs.iter().map(|r| (r.round, r.sequence)).collect::<Vec<_>>(), vec![(1, 7), (2, 8)]);
    }

    #[test]
    fn warm_ups_are_discarded_and_their_times_count_for_nothing() {
        // Warm-ups of 100 s, then 1 s and 2 s: the statistics see only 1 and 2.
        let schedule = Schedule::fixed(2, 2, Order::Interleaved, 1);
        let (results, _) = run_given(2, &[100.0, 100.0, 1.0, 2.0], None, &schedule);
        for result in results {
            let times: Vec<f64> = result.runs.iter().map(|run| run.write_seconds).collect();
            assert_eq!(times, vec![1.0, 2.0]);
            assert!((result.stats.unwrap().mean * 1.5 - (1 << 20) as f64).abs() < 1e-6);
        }
    }

    #[test]
    fn a_failed_case_leaves_with_its_error_and_the_others_go_on() {
        let schedule = Schedule::fixed(3, 1, Order::Interleaved, 3);
        let (results, log) = run_given(3, &[1.0], Some((1, 2)), &schedule);
        assert_eq!(results[1].status, Status::Failed);
        assert_eq!(results[1].error.as_deref(), Some("run 2: Input/output error"));
        assert!(results[1].runs.is_empty() && results[1].stats.is_none());
        let calls_of = |case: usize| log.borrow().iter().filter(|(c, _)| *c == case).count();
        assert_eq!(calls_of(1), 3, "no run after the failure");
        assert_eq!((calls_of(0), calls_of(2)), (4, 4));
        assert!(results[0].status == Status::Ok && results[2].runs.len() == 3);
    }

    #[test]
    fn the_same_seed_gives_the_same_order_and_another_seed_another() {
        let order = |seed| {
            let (_, log) = run_given(6, &[1.0], None, &Schedule::fixed(3, 1, Order::Interleaved, seed));
            log.borrow().clone()
        };
        assert_eq!(order(42), order(42));
        assert_ne!(order(42), order(43));
    }

    #[test]
    fn the_stopping_rule() {
        let target = Schedule { warmup: 1, min_runs: 3, max_runs: 10, target_ci: Some(5.0), ..fixed() };
        assert!(!enough(2, Some(0.0), &target), "never before min_runs");
        assert!(enough(3, Some(0.05), &target), "met: exactly 5 %");
        assert!(!enough(3, Some(0.0501), &target));
        assert!(!enough(9, None, &target));
        assert!(enough(10, Some(0.9), &target), "always at max_runs");
        let plain = fixed();
        assert!(!enough(4, Some(0.0), &plain) && enough(5, None, &plain), "without a target: min_runs");
        let zero = Schedule { min_runs: 0, max_runs: 0, ..plain };
        assert!(enough(1, None, &zero), "a schedule of 0 runs still ends after its first");
    }

    fn fixed() -> Schedule {
        Schedule::fixed(5, 1, Order::Interleaved, 1)
    }

    #[test]
    fn with_a_target_quiet_cases_leave_early_and_a_noisy_one_runs_to_max() {
        let schedule = Schedule { warmup: 1, min_runs: 3, max_runs: 8, target_ci: Some(2.0), ..fixed() };
        let log: Log = Rc::default();
        let quiet =
            |name| ScriptedRuns { name, times: vec![5.0, 1.0, 1.001, 0.999, 1.0], fail_at: None, log: log.clone() };
        let noisy =
            ScriptedRuns { name: 2, times: vec![5.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0], fail_at: None, log: log.clone() };
        let cases: Vec<(Case, Box<dyn CaseRuns>)> =
            vec![(case(4096), Box::new(quiet(0))), (case(8192), Box::new(quiet(1))), (case(16384), Box::new(noisy))];
        let mut ticks = Vec::new();
        let results = run(cases, &schedule, None, &mut |tick| ticks.push((tick.done, tick.planned)));
        // The quiet ones are the typical noise here: the noisy one, 20 times past it, is
        // left out of the pool, and the quiet ones are judged by their own.
        for quiet in &results[..2] {
            let quiet = quiet.target_ci.unwrap();
            assert_eq!((quiet.met, quiet.runs, quiet.pct, quiet.judged_pct), (true, 3, 2.0, None));
            assert!(quiet.reached_pct.unwrap() <= 2.0);
        }
        let noisy = results[2].target_ci.unwrap();
        assert_eq!((noisy.met, noisy.runs), (false, 8));
        assert!(noisy.reached_pct.unwrap() > 2.0);
        // The quiet cases left the rounds: from round 4 on only the noisy one ran.
        let log = log.borrow();
        assert_eq!(log.iter().filter(|(case, _)| *case == 0).count(), 4);
        assert!(log[12..].iter().all(|(case, _)| *case == 2), "{log:?}");
        // Progress: one tick per run; the plan shrinks once the quiet cases are done.
        assert_eq!(ticks.len(), 4 + 4 + 9);
        assert_eq!(ticks.first(), Some(&(1, 27)));
        assert_eq!(ticks.last(), Some(&(17, 17)));
    }

    #[test]
    fn with_a_target_a_case_calm_by_chance_among_noisy_ones_is_held_to_their_noise() {
        // Its three runs agree to 0.1 %, but the machine's runs typically vary by 10 %:
        // its own interval is luck (a calm minute), and its mean that minute's.
        let schedule = Schedule { warmup: 1, min_runs: 3, max_runs: 8, target_ci: Some(2.0), ..fixed() };
        let log: Log = Rc::default();
        let calm = ScriptedRuns { name: 0, times: vec![5.0, 1.0, 1.001, 0.999, 1.0], fail_at: None, log: log.clone() };
        let varied = |name| ScriptedRuns {
            name,
            times: vec![5.0, 1.0, 1.2, 1.0, 1.2, 1.0, 1.2, 1.0, 1.2],
            fail_at: None,
            log: log.clone(),
        };
        let cases: Vec<(Case, Box<dyn CaseRuns>)> =
            vec![(case(4096), Box::new(calm)), (case(8192), Box::new(varied(1))), (case(16384), Box::new(varied(2)))];
        let results = run(cases, &schedule, None, &mut |_| {});
        let calm = results[0].target_ci.unwrap();
        assert_eq!((calm.met, calm.runs), (false, 8));
        assert!(calm.reached_pct.unwrap() <= 2.0, "{calm:?}");
        let judged = calm.judged_pct.unwrap();
        assert!(judged > 2.0 && judged < 10.0, "{calm:?}");
        // Without a target nothing is pooled or judged.
        let results = run_given(3, &[1.0, 1.2], None, &fixed()).0;
        assert!(results.iter().all(|r| r.target_ci.is_none()));
    }

    /// Stops the cases named in `slower` at its first judgement, the others once they
    /// have `decide_at` runs; logs the rounds it judged.
    struct Scripted {
        slower: Vec<usize>,
        decide_at: usize,
        judged: Vec<u32>,
    }

    impl Scripted {
        /// A referee that never stops a case: the rounds end by the budget or at max_runs.
        fn never() -> Scripted {
            Scripted { slower: Vec::new(), decide_at: usize::MAX, judged: Vec::new() }
        }
    }

    impl Referee for Scripted {
        fn judge(&mut self, round: u32, results: &[CaseResult], _open: &[bool]) -> Vec<Call> {
            self.judged.push(round);
            (0..results.len())
                .map(|i| {
                    if self.slower.contains(&i) {
                        Call::Stop(Exit::Slower, None)
                    } else if results[i].runs.len() >= self.decide_at {
                        Call::Stop(Exit::Decided, None)
                    } else {
                        Call::Run
                    }
                })
                .collect()
        }

        fn decided(&self) -> (usize, usize) {
            (0, 1)
        }
    }

    /// Keeps every case, and rests case 1 after the rounds listed.
    struct Resting {
        rest_after: Vec<u32>,
    }

    impl Referee for Resting {
        fn judge(&mut self, round: u32, results: &[CaseResult], _open: &[bool]) -> Vec<Call> {
            let rests = |i: usize| i == 1 && self.rest_after.contains(&round);
            (0..results.len()).map(|i| if rests(i) { Call::Rest } else { Call::Run }).collect()
        }

        fn decided(&self) -> (usize, usize) {
            (0, 1)
        }
    }

    #[test]
    fn a_resting_case_sits_out_a_round_and_runs_again_in_the_next() {
        let cases = steady(2);
        let mut referee = Resting { rest_after: vec![2, 3] };
        let mut ticks = Vec::new();
        let results =
            run(cases, &racing(2, 5, None), Some(&mut referee), &mut |tick| ticks.push((tick.done, tick.planned)));
        // Round 3's one run (the 7th): case 0 has 4 runs and one to come, resting case 1
        // its 3 and none planned.
        assert!(ticks.contains(&(7, 8)), "{ticks:?}");
        assert_eq!(ticks.last().map(|&(done, planned)| done == planned), Some(true), "{ticks:?}");
        let rounds = |r: &CaseResult| r.runs.iter().map(|run| run.round).collect::<Vec<u32>>();
        assert_eq!(rounds(&results[0]), vec![1, 2, 3, 4, 5]);
        assert_eq!(rounds(&results[1]), vec![1, 2, 5, 6, 7], "out of rounds 3 and 4, then back to its most runs");
        assert_eq!(results[1].race.as_ref().unwrap().exit, Exit::MaxRuns);
        // Only resting cases left: they stop, decided.
        let cases = steady(2);
        let mut referee = Resting { rest_after: vec![3, 4, 5] };
        let results = run(cases, &racing(2, 5, None), Some(&mut referee), &mut |_| {});
        assert_eq!(results[1].runs.len(), 3, "resting from round 4, and alone once the other had its most runs");
        assert_eq!(results[1].race.as_ref().unwrap().exit, Exit::Decided);
    }

    /// `count` cases whose every run takes 1 s.
    fn steady(count: usize) -> Vec<(Case, Box<dyn CaseRuns>)> {
        let log: Log = Rc::default();
        (0..count)
            .map(|name| {
                let runs = ScriptedRuns { name, times: vec![1.0], fail_at: None, log: log.clone() };
                (case(4096 << name), Box::new(runs) as Box<dyn CaseRuns>)
            })
            .collect()
    }

    fn racing(min_runs: u32, max_runs: u32, budget: Option<Duration>) -> Schedule {
        Schedule {
            min_runs,
            max_runs,
            race: Some(Racing::from_now(budget)),
            ..Schedule::fixed(2, 1, Order::Interleaved, 3)
        }
    }

    #[test]
    fn a_race_gives_every_case_its_first_runs_then_only_the_cases_the_referee_keeps() {
        let cases = steady(3);
        let mut referee = Scripted { slower: vec![1], decide_at: 4, judged: Vec::new() };
        let mut goals = Vec::new();
        let results = run(cases, &racing(2, 10, None), Some(&mut referee), &mut |tick| goals.push(tick.goals));
        let runs: Vec<usize> = results.iter().map(|r| r.runs.len()).collect();
        assert_eq!(runs, vec![4, 2, 4], "the slower one left after its 2 runs, the others went on to 4");
        assert_eq!(referee.judged, vec![2, 3, 4], "judged once the first runs were in (round 0 is the warm-up)");
        let race = results[1].race.as_ref().unwrap();
        assert_eq!((race.runs, race.round, race.exit), (2, 2, Exit::Slower));
        assert_eq!(results[0].race.as_ref().unwrap().exit, Exit::Decided);
        assert!(results.iter().all(|r| r.target_ci.is_none()));
        assert_eq!(goals.first(), Some(&None), "no goal is known before the first judgement");
        assert_eq!(goals.last(), Some(&Some((0, 1))));
        // Without a referee's word, a race stops at max_runs.
        let (results, _) = {
            let log: Log = Rc::default();
            let cases: Vec<(Case, Box<dyn CaseRuns>)> =
                vec![(case(4096), Box::new(ScriptedRuns { name: 0, times: vec![1.0], fail_at: None, log }))];
            let mut never = Scripted::never();
            (run(cases, &racing(2, 5, None), Some(&mut never), &mut |_| {}), ())
        };
        let race = results[0].race.as_ref().unwrap();
        assert_eq!((race.runs, race.exit), (5, Exit::MaxRuns));
    }

    /// Each run takes `seconds` of wall time.
    struct Sleeping(Duration);

    impl CaseRuns for Sleeping {
        fn run_once(&mut self, _number: u32) -> Result<Run, (Status, String)> {
            std::thread::sleep(self.0);
            Ok(Run { write_seconds: 1.0, ..Run::default() })
        }
    }

    #[test]
    fn the_budget_stops_the_rounds_after_the_first_runs_but_never_before_them() {
        let cases = || -> Vec<(Case, Box<dyn CaseRuns>)> {
            (0..2)
                .map(|n| (case(4096 << n), Box::new(Sleeping(Duration::from_millis(20))) as Box<dyn CaseRuns>))
                .collect()
        };
        // 40 ms a round: a budget of 100 ms is spent by the warm-up and the two first
        // runs (120 ms), which still all happen; no round after them starts.
        let mut never = Scripted::never();
        let results = run(cases(), &racing(2, 10, Some(Duration::from_millis(100))), Some(&mut never), &mut |_| {});
        for result in &results {
            let race = result.race.as_ref().unwrap();
            assert_eq!((race.runs, race.exit), (2, Exit::Budget), "{race:?}");
        }
        // A budget with room for two more rounds (40 ms each) and not a third.
        let mut never = Scripted::never();
        let results = run(cases(), &racing(2, 10, Some(Duration::from_millis(230))), Some(&mut never), &mut |_| {});
        // On a busy machine a round takes longer than its sleeps, and fewer fit.
        let runs = results[0].race.as_ref().unwrap().runs;
        assert!((2..=4).contains(&runs), "{runs} runs: the rounds that fit, then the budget");
        assert_eq!(results[0].race.as_ref().unwrap().exit, Exit::Budget);
    }

    /// Each run takes its time on the race's virtual clock, and no wall time.
    struct Ticking(Duration);

    impl CaseRuns for Ticking {
        fn run_once(&mut self, _number: u32) -> Result<Run, (Status, String)> {
            Clock::advance(self.0);
            Ok(Run { write_seconds: self.0.as_secs_f64(), ..Run::default() })
        }
    }

    #[test]
    fn first_runs_that_take_the_budget_stretch_it_to_leave_the_rounds_their_floor() {
        let cases = || -> Vec<(Case, Box<dyn CaseRuns>)> {
            (0..2).map(|n| (case(4096 << n), Box::new(Ticking(Duration::from_secs(10))) as Box<dyn CaseRuns>)).collect()
        };
        let race = |budget: u64, floor: Option<u64>| Schedule {
            race: Some(Racing {
                budget: Some(Duration::from_secs(budget)),
                rounds_floor: floor.map(Duration::from_secs),
                clock: Clock::Virtual,
                ..Racing::from_now(None)
            }),
            ..racing(2, 10, None)
        };
        // A warm-up and two runs of two cases: 60 s, past the 50 s budget.
        Clock::reset(Duration::ZERO);
        let mut never = Scripted::never();
        let results = run(cases(), &race(50, None), Some(&mut never), &mut |_| {});
        assert_eq!(results[0].race.as_ref().unwrap().runs, 2, "no floor: no round after the first runs");
        // A floor of 40 s: the budget becomes 100 s when the first runs end, and two
        // rounds of 20 s fit in it.
        Clock::reset(Duration::ZERO);
        let (mut never, mut budgets) = (Scripted::never(), Vec::new());
        let results = run(cases(), &race(50, Some(40)), Some(&mut never), &mut |tick| budgets.push(tick.budget));
        let record = results[0].race.as_ref().unwrap();
        assert_eq!((record.runs, record.exit), (4, Exit::Budget), "{record:?}");
        assert_eq!(budgets.first(), Some(&Some(Duration::from_secs(50))), "the budget until the first runs end");
        assert_eq!(budgets.last(), Some(&Some(Duration::from_secs(100))), "then the stretched one");
        // A budget that already leaves the floor after the first runs is kept.
        Clock::reset(Duration::ZERO);
        let (mut never, mut budgets) = (Scripted::never(), Vec::new());
        let results = run(cases(), &race(100, Some(40)), Some(&mut never), &mut |tick| budgets.push(tick.budget));
        assert_eq!(results[0].race.as_ref().unwrap().runs, 4);
        assert!(budgets.iter().all(|&budget| budget == Some(Duration::from_secs(100))), "{budgets:?}");
    }

    /// A round's cost is each case's mean run so far, counted from the start of the
    /// command: with runs of 200 ms and a budget of 2 s, the warm-up and first runs take
    /// 0.6 s and six rounds more fit. (The test above allows for a busy machine down to
    /// no round at all; here a round's sleep dwarfs what load adds to it: even 30 ms
    /// more a run leaves four rounds, where a cost of all the runs so far, not their
    /// mean, would leave two.)
    #[test]
    fn the_budget_holds_as_many_rounds_as_their_mean_cost_allows() {
        let cases: Vec<(Case, Box<dyn CaseRuns>)> =
            vec![(case(4096), Box::new(Sleeping(Duration::from_millis(200))) as Box<dyn CaseRuns>)];
        let mut never = Scripted::never();
        let mut ticks = Vec::new();
        let results = run(cases, &racing(2, 20, Some(Duration::from_secs(2))), Some(&mut never), &mut |tick| {
            ticks.push((tick.done, tick.planned))
        });
        let race = results[0].race.as_ref().unwrap();
        assert!((6..=8).contains(&race.runs), "{} runs: 8 fit in 2 s", race.runs);
        assert_eq!(race.exit, Exit::Budget);
        // The progress counts the warm-up and first runs (3) until they are made, then
        // one run more than made while the case races.
        assert_eq!(ticks[..4], [(1, 3), (2, 3), (3, 4), (4, 5)], "{ticks:?}");
    }

    /// Records the status of each case as the referee is shown it.
    struct Watching(Vec<Vec<Status>>);

    impl Referee for Watching {
        fn judge(&mut self, _round: u32, results: &[CaseResult], _open: &[bool]) -> Vec<Call> {
            self.0.push(results.iter().map(|r| r.status).collect());
            vec![Call::Run; results.len()]
        }

        fn decided(&self) -> (usize, usize) {
            (0, 1)
        }
    }

    #[test]
    fn the_referee_sees_a_failed_case_as_failed() {
        let log: Log = Rc::default();
        let cases: Vec<(Case, Box<dyn CaseRuns>)> = (0..2)
            .map(|name| {
                let runs = ScriptedRuns { name, times: vec![1.0], fail_at: (name == 1).then_some(3), log: log.clone() };
                (case(4096 << name), Box::new(runs) as Box<dyn CaseRuns>)
            })
            .collect();
        let mut watching = Watching(Vec::new());
        let results = run(cases, &racing(2, 5, None), Some(&mut watching), &mut |_| {});
        assert_eq!(watching.0.first(), Some(&vec![Status::Ok, Status::Ok]), "after the first runs");
        assert_eq!(watching.0.get(1), Some(&vec![Status::Ok, Status::Failed]), "after its fourth run failed");
        assert_eq!(results[1].status, Status::Failed);
    }

    /// Runs case 0 to 4 runs for a goal; case 1 the goals let go after its first runs,
    /// and an observation keeps until it has `observed_to` runs.
    struct Observing {
        observed_to: usize,
    }

    impl Referee for Observing {
        fn judge(&mut self, _round: u32, results: &[CaseResult], _open: &[bool]) -> Vec<Call> {
            let goals_done = results[0].runs.len() >= 4;
            let first = if goals_done { Call::Stop(Exit::Decided, None) } else { Call::Run };
            let second = if results[1].runs.len() >= self.observed_to {
                Call::Stop(Exit::Decided, None)
            } else {
                Call::Observe { exit: Exit::Slower, behind: None, run: goals_done }
            };
            vec![first, second]
        }

        fn decided(&self) -> (usize, usize) {
            (0, 1)
        }
    }

    /// Lets case 0 go for the observations after its first runs, takes it back into a
    /// goal's rounds after round 3, and stops it decided at 5 runs.
    struct Returning;

    impl Referee for Returning {
        fn judge(&mut self, round: u32, results: &[CaseResult], _open: &[bool]) -> Vec<Call> {
            let call = match (round, results[0].runs.len()) {
                (_, 5..) => Call::Stop(Exit::Decided, None),
                (..=2, _) => Call::Observe { exit: Exit::Slower, behind: None, run: true },
                _ => Call::Run,
            };
            vec![call]
        }

        fn decided(&self) -> (usize, usize) {
            (0, 1)
        }
    }

    #[test]
    fn a_case_back_in_a_goals_rounds_has_the_goals_record_of_its_end() {
        let results = run(steady(1), &racing(2, 10, None), Some(&mut Returning), &mut |_| {});
        let race = results[0].race.clone().unwrap();
        assert_eq!((race.runs, race.exit, race.observed), (5, Exit::Decided, 0), "{race:?}");
    }

    #[test]
    fn a_case_kept_for_the_observations_runs_after_the_goals_and_keeps_the_goals_record() {
        let rounds = |r: &CaseResult| r.runs.iter().map(|run| run.round).collect::<Vec<u32>>();
        let record = |r: &CaseResult| r.race.clone().map(|race| (race.runs, race.round, race.exit, race.observed));
        // Until its most runs: after the goal's rounds, round after round; the progress
        // bar is told which runs are the observations'.
        let mut observing = Vec::new();
        let results = run(steady(2), &racing(2, 6, None), Some(&mut Observing { observed_to: 99 }), &mut |tick| {
            observing.push((tick.case.chunk_bytes, tick.observing))
        });
        let observed: Vec<_> = observing.iter().filter(|(_, observing)| *observing).collect();
        assert_eq!(observed, [&(8192, true); 4], "{observing:?}");
        assert_eq!(rounds(&results[0]), vec![1, 2, 3, 4]);
        assert_eq!(rounds(&results[1]), vec![1, 2, 5, 6, 7, 8], "resting while the goal runs, then its most runs");
        assert_eq!(record(&results[0]), Some((4, 4, Exit::Decided, 0)));
        assert_eq!(record(&results[1]), Some((2, 2, Exit::Slower, 4)), "left the goals after round 2, 4 runs more");
        // Until its observation is settled: the goals' record still.
        let results = run(steady(2), &racing(2, 6, None), Some(&mut Observing { observed_to: 3 }), &mut |_| {});
        assert_eq!(rounds(&results[1]), vec![1, 2, 5]);
        assert_eq!(record(&results[1]), Some((2, 2, Exit::Slower, 1)));
        // Until the budget: runs of 200 ms within 2.4 s. The warm-ups and first runs
        // take 1.2 s and the goal's two rounds 0.4 s; the observation gets rounds in
        // the 0.8 s left, and its record is still the goals'.
        let sleeping = |_| Box::new(Sleeping(Duration::from_millis(200))) as Box<dyn CaseRuns>;
        let cases: Vec<(Case, Box<dyn CaseRuns>)> = (0..2).map(|name| (case(4096 << name), sleeping(name))).collect();
        let schedule = racing(2, 20, Some(Duration::from_millis(2400)));
        let results = run(cases, &schedule, Some(&mut Observing { observed_to: 99 }), &mut |_| {});
        let (runs, round, exit, observed) = record(&results[1]).unwrap();
        assert_eq!((runs, round, exit), (2, 2, Exit::Slower), "the budget ended its runs, the goals its record");
        assert!((1..=4).contains(&observed), "{observed} runs for the observation: 4 fit in 0.8 s");
    }
}
