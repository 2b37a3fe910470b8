//! The rounds: how many runs each case gets and in which order (`scheduler`), the race
//! that decides which cases the Answer still needs (`race`) and the clock its budget is
//! counted on (`clock`), what a run will cost
//! (`estimate`), and the short calibration's fixed runs (`calibrate`). A floor of its
//! own, above `measure` (which runs a case once, knowing nothing of statistics) and
//! `analysis` (which judges the runs), so that the policy that joins them imports both
//! and neither imports it (docs/design.md §5).

pub mod calibrate;
pub mod clock;
#[cfg(test)]
mod engine_tests;
pub mod estimate;
pub mod race;
pub mod scheduler;
#[cfg(test)]
mod simulation;

use executors::case_runs::{RunSettings, prepare_case};
use measure::runs::CaseRuns;
use measure::source::Source;
use measure::target::Scratch;
use plan::Case;
use result::{CaseResult, Status};
use scheduler::{Order, Schedule};

/// Runs one case `warmup + repeat` times, back to back; `on_run` is called after each
/// run. An error ends the case: it gets a status and the OS text, never a number.
pub fn run_case(
    index: usize,
    case: &Case,
    scratch: &Scratch,
    source: &Source,
    settings: &RunSettings,
    on_run: &mut dyn FnMut(),
) -> CaseResult {
    let prepared = prepare_case(index, case, scratch, source, settings);
    run_alone(case.clone(), prepared, settings.repeat, settings.warmup, settings.seed, on_run)
}

/// Runs a prepared case alone, `warmup + repeat` times back to back, or makes its
/// refusal its result.
pub fn run_alone<'a>(
    case: Case,
    prepared: Result<Box<dyn CaseRuns + 'a>, (Status, String)>,
    repeat: u32,
    warmup: u32,
    seed: u64,
    on_run: &mut dyn FnMut(),
) -> CaseResult {
    match prepared {
        Err((status, reason)) => CaseResult::without_result(case, status, reason),
        Ok(runs) => {
            let schedule = Schedule::fixed(repeat, warmup, Order::Grouped, seed);
            let mut results = scheduler::run(vec![(case, runs)], &schedule, None, &mut |_| on_run());
            results.pop().expect("one case in, one result out")
        }
    }
}
