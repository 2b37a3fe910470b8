//! An MPI rank as an executor (docs/design.md §5, "one per MPI rank"). Each rank writes its own
//! parts on its own threads, exactly as [`InProcess`] does, behind two start lines: all
//! ranks meet at a barrier, then each rank's threads at their own. Then every rank sends
//! its times to every other, and each makes the same execution of the whole job from
//! them (`aggregate`), so that every rank's scheduler takes the same decisions (the next
//! case, a CI target met) without being told.
//!
//! A failure on one rank fails the run on all of them, with the rank, its host and the
//! OS text: the outcome is exchanged after every step, so no rank waits for one that has
//! given up.

use std::cell::Cell;
use std::io;

use serde::{Deserialize, Serialize};

use crate::ranks::Ranks;
use crate::ranks::aggregate::{RankExecution, combine};
use crate::ranks::collective::{agree, gather, monotonic_seconds};
use error::CallError;
use measure::executor::{Execution, Executor, InProcess};
use measure::methods::{Engine, Job};
use measure::runs::CaseRuns;
use result::{Run, Status};

/// A CallError as it travels between ranks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireError {
    call: String,
    errno: Option<i32>,
    text: String,
}

impl WireError {
    pub fn of(error: &CallError) -> WireError {
        WireError { call: error.call.clone(), errno: error.error.raw_os_error(), text: error.error.to_string() }
    }

    pub fn into_call_error(self) -> CallError {
        let error = match self.errno {
            Some(code) => io::Error::from_raw_os_error(code),
            None => io::Error::other(self.text),
        };
        CallError::new(self.call, error)
    }

    /// The same error, said to be rank `rank`'s on `host`.
    fn of_rank(mut self, rank: usize, host: &str) -> WireError {
        self.call = format!("rank {rank} on {host}: {}", self.call);
        self
    }
}

pub struct RankExecutor {
    inner: InProcess,
    ranks: Ranks,
}

impl RankExecutor {
    pub const OVERHEAD: &'static str = "an MPI rank per process, threads in each as in-process; all ranks meet at an \
        MPI barrier before each run, then exchange their times after it (untimed)";

    pub fn new(method: &'static dyn Engine, ranks: Ranks) -> RankExecutor {
        RankExecutor { inner: InProcess::unplaced(method), ranks }
    }
}

impl Executor for RankExecutor {
    fn overhead(&self) -> &'static str {
        RankExecutor::OVERHEAD
    }

    fn execute(&self, job: &Job) -> Result<Execution, CallError> {
        let comm = self.ranks.comm;
        let origin = Cell::new(0.0);
        let local = self.inner.execute_behind(job, &|| {
            comm.barrier();
            origin.set(monotonic_seconds());
        });
        // Under --stonewall, what its writers wrote before the wall.
        let bytes = match &local {
            Ok(execution) if job.stonewall.is_some() => {
                execution.parts.iter().zip(job.parts).map(|(times, part)| times.written.map_or(part.len, |w| w.0)).sum()
            }
            _ => job.parts.iter().map(|part| part.len).sum(),
        };
        let mine = local.as_ref().map_err(WireError::of).map(|execution| RankExecution {
            execution: execution.clone(),
            origin_monotonic: origin.get(),
            hostname: self.ranks.host.to_string(),
            bytes,
        });
        let all: Vec<Result<RankExecution, WireError>> = gather(comm, &mine);
        if let Some((rank, error)) = all.iter().enumerate().find_map(|(rank, r)| r.as_ref().err().map(|e| (rank, e))) {
            return Err(error.clone().of_rank(rank, &self.hosts_name(rank)).into_call_error());
        }
        Ok(combine(&all.into_iter().map(|r| r.expect("no rank failed")).collect::<Vec<_>>()))
    }

    fn agree(&self, local: Option<&CallError>) -> Result<(), CallError> {
        let local = local.map_or(Ok(()), |error| Err(WireError::of(error)));
        agree(self.ranks.comm, self.ranks.host, local, WireError::of_rank).map_err(WireError::into_call_error)
    }
}

impl RankExecutor {
    /// Rank `rank`'s host name, as the ranks told each other at the start.
    fn hosts_name(&self, rank: usize) -> String {
        self.ranks.hosts.get(rank).cloned().unwrap_or_else(|| "?".to_string())
    }
}

/// A case's runs on one rank, whose every outcome is agreed with the other ranks: a run
/// that failed anywhere failed everywhere, so every rank's scheduler drops the case at
/// the same run.
pub struct Agreed<'a> {
    pub runs: Box<dyn CaseRuns + 'a>,
    pub ranks: Ranks,
}

impl CaseRuns for Agreed<'_> {
    fn run_once(&mut self, number: u32) -> Result<Run, (Status, String)> {
        let outcome = self.runs.run_once(number);
        let local = outcome.as_ref().map(|_| ()).map_err(Clone::clone);
        let name = |(status, text): (Status, String), rank: usize, host: &str| {
            (status, format!("rank {rank} on {host}: {text}"))
        };
        agree(self.ranks.comm, self.ranks.host, local, name)?;
        outcome
    }
}
