//! Measuring a command's cases, for one process and for MPI ranks alike: each case is
//! prepared (or skipped when it does not fit), handed to its executor, and run in the
//! rounds of the schedule with the others (docs/measurement.md).

use std::time::Duration;

use indicatif::ProgressBar;

use super::progress::show_tick;
use crate::executors::case_runs::{RunSettings, prepare_case};
use crate::export::wording::seconds_words;
use crate::measure::runs::CaseRuns;
use crate::measure::source::Source;
use crate::measure::target::Scratch;
use crate::plan::Case;
use crate::plan::durability::Durability;
use crate::plan::latency::{LatencyPlan, Unit};
use crate::result::{CaseResult, Status};
use crate::rounds::scheduler::{Queue, Referee, Schedule};

/// A case ready for the rounds, or refused up front with its status and reason.
pub(super) type Prepared<'a> = Result<Box<dyn CaseRuns + 'a>, (Status, String)>;

/// Where the cases are written and how.
pub(super) struct Setup<'a> {
    pub scratch: &'a Scratch,
    pub source: &'a Source,
    pub settings: &'a RunSettings,
    /// Whether a case that does not fit in the free space is skipped (`--no-space-check`
    /// says no: the filesystem's own ENOSPC then ends it).
    pub space_check: bool,
    /// The case's bytes are split over this many directories (MPI ranks each with their
    /// own, `--mpi-local`), so that each needs this share of them.
    pub split: u64,
}

/// Every case of `cases`, prepared in order and passed through `executor`: itself in one
/// process; under MPI, agreed with the other ranks and wrapped in their executor.
pub(super) fn prepare_all<'a>(
    cases: &'a [Case],
    setup: &Setup<'a>,
    executor: &mut dyn FnMut(Prepared<'a>) -> Prepared<'a>,
) -> Vec<(Case, Prepared<'a>)> {
    let mut prepared = Vec::new();
    for (index, case) in cases.iter().enumerate() {
        // Creation cases check for themselves (ftruncate needs no space at all).
        let creates = case.kind == crate::plan::CaseKind::Creation;
        let too_big = if !setup.space_check || creates {
            None
        } else {
            crate::measure::space::shortfall(setup.scratch.path(), case.bytes.div_ceil(setup.split))
        };
        let ready = match too_big {
            Some(reason) => Err((Status::Skipped, reason)),
            None => prepare_case(index, case, setup.scratch, setup.source, setup.settings),
        };
        prepared.push((case.clone(), executor(ready)));
    }
    prepared
}

/// The latency cases of `plan` (`units` is `plan.cases()`), numbered from `first`.
pub(super) fn prepare_latency<'a>(
    plan: &'a LatencyPlan,
    units: &'a [(Unit, Durability)],
    first: usize,
    scratch: &'a Scratch,
) -> Vec<(Case, Prepared<'a>)> {
    units
        .iter()
        .enumerate()
        .map(|(number, (unit, mode))| {
            let case = crate::plan::latency::case_of(plan, unit, *mode);
            (case, crate::executors::op_loops::prepare(first + number, plan, unit, *mode, scratch))
        })
        .collect()
}

/// Runs the prepared cases in rounds by `schedule`, showing them on `progress`: every
/// case's result, in the order given. When the schedule races, `referee` judges, and a
/// budget stretched when the first runs ended (`Racing::rounds_floor`) is said on stderr
/// and written back to `schedule`, whose record then holds the budget the race had.
pub(super) fn measure_all<'a>(
    prepared: Vec<(Case, Prepared<'a>)>,
    schedule: &mut Schedule,
    referee: Option<&mut dyn Referee>,
    progress: &ProgressBar,
) -> Vec<CaseResult> {
    let mut queue = Queue::default();
    for (case, ready) in prepared {
        queue.add(case, ready);
    }
    let mut budget = schedule.race.and_then(|race| race.budget);
    let results = queue.run(schedule, referee, &mut |tick| {
        if tick.budget != budget {
            if let (Some(was), Some(now)) = (budget, tick.budget) {
                progress.suspend(|| eprintln!("{}", stretched_line(was, now, schedule)));
            }
            budget = tick.budget;
        }
        show_tick(progress, &tick)
    });
    progress.finish_and_clear();
    if let Some(race) = schedule.race.as_mut() {
        race.budget = budget;
    }
    results
}

/// The line that says the race's budget grew from `was` to `now` when the first runs
/// ended, and why.
fn stretched_line(was: Duration, now: Duration, schedule: &Schedule) -> String {
    let floor = schedule.race.and_then(|race| race.rounds_floor).unwrap_or_default();
    format!(
        "writebench: the first runs took {} of the {} budget: the race gets {} in all, so that its rounds get {} \
         (--budget sets another)",
        seconds_words((now - floor).as_secs_f64()),
        seconds_words(was.as_secs_f64()),
        seconds_words(now.as_secs_f64()),
        seconds_words(floor.as_secs_f64()),
    )
}
