//! The application: one pipeline per subcommand (docs/design.md §5), on top of every
//! other floor. `main.rs` parses the command line and hands it to [`dispatch`]; each
//! subcommand's file holds what that subcommand does, in order, and the pieces they
//! share (a scratch directory, measuring the cases, assembling the result) are one file
//! each.

use std::process::ExitCode;

use crate::cli::{Command, UsageError};

mod calibrate;
mod clean;
mod compare;
mod conclude;
mod crash;
mod lab;
mod latency;
mod manual;
mod measure_all;
#[cfg(feature = "mpi")]
mod mpi;
mod progress;
mod report;
mod run;
mod start;
mod trace;
mod trace_crash;
mod trace_replay;

/// Runs `command`: its exit status, or the one line of a refusal (exit status 2).
pub fn dispatch(command: Command) -> Result<ExitCode, UsageError> {
    match command {
        Command::Run(args) if args.mpi.mpi => run_mpi(&args),
        Command::Run(args) => run::run(&args),
        Command::Latency(args) => latency::latency(&args),
        Command::Report(args) => report::report(&args),
        Command::Compare(args) => compare::compare(&args),
        Command::Calibrate(args) => calibrate::calibrate(&args),
        Command::Lab(args) => lab::lab(&args),
        Command::Crash(args) => crash::crash(&args),
        Command::Trace(args) => trace::trace(&args),
        Command::TraceCrashReplay(args) => trace_crash::replay_part(&args),
        Command::Completions(args) => Ok(manual::completions(args.shell)),
        Command::Man => Ok(manual::man()),
        Command::Clean(args) => clean::clean(&args),
    }
}

/// `run --mpi`: every rank's pipeline, when this writebench was built with MPI.
fn run_mpi(args: &crate::cli::RunArgs) -> Result<ExitCode, UsageError> {
    if args.crash_check {
        return Err(UsageError(
            "--crash-check is not offered with --mpi: run `writebench crash` (or run --crash-check) on one node".into(),
        ));
    }
    #[cfg(feature = "mpi")]
    return mpi::run(args);
    #[cfg(not(feature = "mpi"))]
    {
        let _ = args;
        Err(UsageError(crate::cli::mpi::NOT_BUILT.to_string()))
    }
}
