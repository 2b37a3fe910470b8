//! The order in which the runs of every case happen: rounds, warm-ups and repetition.
//! It knows nothing about files or methods: each case comes as a [`CaseRuns`], and
//! what comes back is a [`CaseResult`] per case.

use crate::result::{Run, Status};

/// One case, ready to run again and again. The runner implements it for write and
/// file-creation cases; tests implement it with given times.
pub trait CaseRuns {
    /// Runs the case once: run `number` counts from 0, warm-ups included. When it
    /// returns, the run's files are gone and their removal is committed, so the next
    /// run (of this case or another) starts clean. An error ends the case: its status
    /// and the OS text, never a number.
    fn run_once(&mut self, number: u32) -> Result<Run, (Status, String)>;
}
