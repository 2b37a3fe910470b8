//! What the rounds (`rounds::scheduler`) ask of a case: run it once more, say how many of
//! its first runs are warm-ups, and what its runs hold besides their times. Write and
//! file-creation cases (`case_runs`, `creation`), ranks (`ranks::executor`) and latency
//! loops (`op_loops`) implement it; the rounds' tests implement it with given times.

use result::{CaseResult, Run, Status};

/// One case, ready to run again and again. `case_runs` implements it for write and
/// file-creation cases; tests implement it with given times.
pub trait CaseRuns {
    /// Runs the case once: run `number` counts from 0, warm-ups included. When it
    /// returns, the run's files are gone and their removal is committed, so the next
    /// run (of this case or another) starts clean. An error ends the case: its status
    /// and the OS text, never a number.
    fn run_once(&mut self, number: u32) -> Result<Run, (Status, String)>;

    /// How many of its first runs are discarded, given the schedule's `--warmup`. A
    /// latency loop warms itself with its own untimed operations (docs/measurement.md),
    /// so a latency case discards none.
    fn warmups(&self, rounds: u32) -> u32 {
        rounds
    }

    /// Once the case is done, what its runs hold besides their times: `result.runs` are
    /// its measured runs, the last ones it made. A latency case merges the histograms
    /// of its loops here.
    fn conclude(&mut self, result: &mut CaseResult) {
        let _ = result;
    }

    /// The operations each run makes, where the case counts them (a latency loop): the
    /// rounds then give the case its operations per second, a statistic of the runs'
    /// times that is not this floor's to compute.
    fn operations_per_run(&self) -> Option<u64> {
        None
    }
}
