//! `writebench trace`: its arguments, checked before the program is started.

use std::path::PathBuf;

use clap::Args;

use crate::cli::export::{ExportArgs, TraceExports};
use crate::cli::usage::UsageError;

pub const EXAMPLES: &str = "\
Examples:
  writebench trace -- python3 app.py --out data/        how app.py writes each file
  writebench trace --export-json pattern.json -- ./mydb load 1GiB
  writebench trace -- sh -c 'gzip -c big > big.gz'      a pipeline: every process is followed
  writebench trace --from-log app.strace                a log of strace -f -yy -ttt -T -o FILE
  writebench trace --crash-check -- python3 app.py      and every way under simulated power loss (root)

The program runs once, as given (its directory, environment and arguments), under strace,
which records the calls that shape how it writes: opens and their flags, every write
call with its size and offset, the syncs, preallocation, truncation, renames and the
directory syncs around them, per thread and process. Then, per file it wrote: how the
file was made, the write calls and their sizes, where they went, how often it was synced
and how much lay between two syncs. Tracing slows every call: the times shown are the
traced program's, not a measurement. Needs strace (docs/trace.md).";

#[derive(Debug, Args)]
pub struct TraceArgs {
    /// Read a log strace already wrote (strace -f -yy -ttt -T -o FILE CMD) instead of
    /// running a program.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["command", "keep_log"])]
    pub from_log: Option<PathBuf>,

    /// The directory the logged program ran in, for the paths it named relative to it
    /// (--from-log; otherwise learnt from the log where strace named it).
    #[arg(long, value_name = "DIR", requires = "from_log")]
    pub directory: Option<PathBuf>,

    /// Also keep strace's log in FILE (read again with --from-log).
    #[arg(long, value_name = "FILE")]
    pub keep_log: Option<PathBuf>,

    /// Replay the program's calls in a scratch directory made in DIR [default: the
    /// directory that received most of its bytes].
    #[arg(long, value_name = "DIR")]
    pub on: Option<PathBuf>,

    /// Timed replays, after one untimed warm-up.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub runs: u32,

    /// Replay (and crash-check) the program's calls up to this many bytes written (a long
    /// program's prefix).
    #[arg(long, value_name = "SIZE", default_value = "256MiB")]
    pub size: String,

    /// Only the pattern: no replay.
    #[arg(long, conflicts_with_all = ["on", "with_gaps"])]
    pub no_replay: bool,

    /// Replay with the program's recorded pauses between its calls (its own work, its
    /// waits), not at full speed.
    #[arg(long)]
    pub with_gaps: bool,

    /// Also check the program's way and every other way under simulated power loss on
    /// a new ext4 (as `crash --run`): each is judged by the program's own promises, what
    /// was durable after each of its syncs. Needs root.
    #[arg(long)]
    pub crash_check: bool,

    #[command(flatten)]
    pub export: ExportArgs<TraceExports>,

    /// The program and its arguments, after `--`.
    #[arg(value_name = "CMD", trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
}

/// Where and how much to replay, validated.
#[derive(Debug)]
pub struct ReplayPlan {
    /// None: the directory that received most of the program's bytes.
    pub on: Option<PathBuf>,
    pub runs: usize,
    pub size: u64,
    pub with_gaps: bool,
}

/// What to trace, validated.
#[derive(Debug)]
pub enum TraceSource {
    /// Run this program (found as the shell would find it) under strace.
    Program { command: Vec<String>, tracer: String },
    /// Read this log, of a program that ran in this directory (where given).
    Log { log: PathBuf, directory: Option<String> },
}

impl TraceArgs {
    /// The replay asked for (None with --no-replay).
    pub fn replay(&self) -> Result<Option<ReplayPlan>, UsageError> {
        let size = self.prefix()?;
        if self.no_replay {
            return Ok(None);
        }
        if let Some(on) = self.on.as_ref().filter(|on| !on.is_dir()) {
            return Err(UsageError(format!("--on {}: not a directory", on.display())));
        }
        let size = size.expect("a prefix for a replay");
        Ok(Some(ReplayPlan { on: self.on.clone(), runs: self.runs as usize, size, with_gaps: self.with_gaps }))
    }

    /// The bytes of the program's calls kept as a sequence to make again (the replay's
    /// and the crash check's): None when neither is asked.
    pub fn prefix(&self) -> Result<Option<u64>, UsageError> {
        if self.no_replay && !self.crash_check {
            return Ok(None);
        }
        let size = crate::plan::units::parse_size(&self.size).map_err(|e| UsageError(format!("--size: {e}")))?;
        if size == 0 {
            return Err(UsageError("--size: give more than 0 bytes".into()));
        }
        Ok(Some(size))
    }

    pub fn source(&self) -> Result<TraceSource, UsageError> {
        self.export.check()?;
        if let Some(keep) = &self.keep_log {
            crate::export::check_destination("--keep-log", keep).map_err(UsageError)?;
        }
        if let Some(log) = &self.from_log {
            if !log.is_file() {
                return Err(UsageError(format!("--from-log {}: no such file", log.display())));
            }
            if let Some(directory) = self.directory.as_ref().filter(|d| !d.is_absolute()) {
                return Err(UsageError(format!("--directory {}: give the absolute path", directory.display())));
            }
            let directory = self.directory.as_ref().map(|d| d.to_string_lossy().into_owned());
            return Ok(TraceSource::Log { log: log.clone(), directory });
        }
        let Some(program) = self.command.first() else {
            return Err(UsageError(
                "trace needs a program to run (writebench trace -- CMD ARGS...) or --from-log FILE".into(),
            ));
        };
        let tracer = crate::trace::record::tracer().map_err(UsageError)?;
        crate::trace::record::find_program(program).map_err(UsageError)?;
        Ok(TraceSource::Program { command: self.command.clone(), tracer })
    }
}

/// `trace --crash-check`'s own replay under the crash check, run by it (hidden).
#[derive(Debug, Args)]
pub struct CrashReplayArgs {
    /// `run`: make the calls and print the promises; `check`: read them back.
    #[arg(value_enum)]
    pub part: CrashReplayPart,
    /// The calls, the promises and the seed (JSON, written by `trace --crash-check`).
    pub file: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CrashReplayPart {
    Run,
    Check,
}
