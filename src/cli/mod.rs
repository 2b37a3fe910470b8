//! The command line (docs/design.md §3): parsing with clap, then validation into a
//! [`Selection`] and [`RunSettings`]. Every bad input becomes one line and exit 2.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

pub mod calibrate;
pub mod compare;
pub mod confirm;
pub mod crash;
pub mod export;
pub mod lab;
pub mod latency;
pub mod mpi;
mod parse;
pub mod report;
pub mod run;
pub mod trace;
mod usage;

pub use crate::cli::compare::CompareArgs;
pub use crate::cli::parse::{MAX_CHUNK, MAX_IOV, MAX_QUEUE_DEPTH, MAX_THREADS};
pub use crate::cli::run::{DEFAULT_MAX_RUNS, MAX_RUNS, OrderName, RunArgs, StyleName, SuiteName};
pub use crate::cli::usage::UsageError;
pub use crate::error::plain;

const EXAMPLES: &str = "\
Examples:
  writebench run                          quick suite in the current directory
  writebench run /dev/shm --export-json r.json --export-csv r.csv
  writebench run /data --methods pwrite,pwritev --chunks 4KiB,1MiB --iov 1,128
  writebench run . --states prealloc --size 1GiB --durability none,end --repeat 10
  writebench run . --export-json r.json --export-html r.html --export-markdown r.md
  writebench run /data --table --explain   every case, then the Answer and the rule behind each pick
  writebench report r.json                the answer of a saved result, again
  writebench trace -- python3 app.py      how your program writes each file (needs strace)
  writebench clean /data                  list and remove what a killed run left behind

Safety: writebench writes only inside its own scratch directory in PATH and removes it
at the end, on errors and on Ctrl-C/SIGTERM/SIGHUP; a run or case that does not fit in
the free space is refused or skipped (docs/safety.md).";

/// `run`'s words, after its examples: what the Answer and the table say (docs/usage.md,
/// "Words the output uses").
const RUN_HELP: &str = "\
Examples:
  writebench run                          quick suite in the current directory
  writebench run /dev/shm --export-json r.json --export-csv r.csv
  writebench run /data --methods pwrite,pwritev --chunks 4KiB,1MiB --iov 1,128
  writebench run . --states prealloc --size 1GiB --durability none,end --repeat 10
  writebench run /data --table --explain   every case, then the Answer and the rule behind each pick

Words the output uses (docs/usage.md):
  figure         bytes (or operations) over the mean run time, with its 95 % range in brackets
  raced          cases run in rounds; a case stops once no goal still open needs it (--budget)
  clearly the fastest   shown faster than every other candidate
  as fast as     shown within the equivalence margin of it (5 %, --equivalence)
  not settled    the next may be faster by up to the amount said; more runs would tell
  naive way      write in 4 KiB calls into an empty file
  noisy          the 95 % range of the mean is wider than ±5 %
  case id        method, file state, chunk, xN buffers a call, qdN requests in flight,
                 tN threads, fN files, then the sync mode (none, end, odsync, direct+end, ...)
  threads spread how far the slowest thread finished behind the fastest, as a share
  of ceiling     the share of this machine's memory copy (mem) or device (dev) rate

Safety: writebench writes only inside its own scratch directory in PATH and removes it
at the end, on errors and on Ctrl-C/SIGTERM/SIGHUP (docs/safety.md).";

#[derive(Debug, Parser)]
#[command(
    name = "writebench",
    version = env!("WRITEBENCH_VERSION"),
    about = "What is the fastest way to write a file here, and what does it cost to make it durable?",
    after_help = EXAMPLES,
    arg_required_else_help = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// One value, made once per process: its size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a suite of write strategies on PATH and answer which is best for each goal.
    #[command(after_help = RUN_HELP)]
    Run(RunArgs),
    /// List the scratch directories that killed runs left in PATH, and remove them
    /// after asking (only `.writebench-<pid>-*` directories owned by you whose pid is
    /// no running writebench; never anything else); also what a killed lab or crash
    /// check left (its mounts, loop devices and files in /dev/shm).
    Clean(CleanArgs),
    /// Time small writes one by one, and crash-safe saves of a whole file: percentiles
    /// per durability mode and per save pattern.
    #[command(after_help = latency::EXAMPLES)]
    Latency(latency::LatencyArgs),
    /// Render a saved result again (from --export-json): the table and the answer, or
    /// Markdown, HTML, JSON and CSV files; a crash check's table too. Reads the file only;
    /// measures nothing.
    #[command(after_help = report::EXAMPLES)]
    Report(report::ReportArgs),
    /// Compare saved results (JSON of `run --export-json`) case by case against the
    /// first: medians, factors with 95 % intervals, and which differences are significant.
    #[command(after_help = crate::cli::compare::EXAMPLES)]
    Compare(CompareArgs),
    /// Measure this machine's ceilings: memory-copy rate (one thread and all, at sizes
    /// from 1 MiB up to a buffer larger than the caches), the cost of a system call and
    /// of a clock read, the best buffered write rate on PATH and
    /// the device's own direct write rate. `run` makes a short one first.
    #[command(after_help = calibrate::EXAMPLES)]
    Calibrate(calibrate::CalibrateArgs),
    /// Build filesystems on RAM-backed loop devices (tmpfs, ext4, xfs, btrfs RAID-0, ext4
    /// on md RAID-0, FUSE and more), run the suite on each, tear each down, and compare them.
    /// Needs root. Takes the options of `run` (but no PATH).
    #[command(
        after_help = lab::EXAMPLES,
        mut_arg("path", |arg| arg.hide(true)),
        mut_arg("export_csv", |arg| arg.hide(true)),
        mut_arg("export_json", |arg| arg.help("Also write the comparison as JSON (each filesystem's result is in --out-dir)")),
        mut_arg("export_markdown", |arg| arg.help("Also write the comparison as Markdown")),
        mut_arg("export_html", |arg| arg.help("Also write the comparison as HTML, the filesystems side by side")),
    )]
    Lab(lab::LabArgs),
    /// Check that durable means durable: record every block write and flush a real
    /// filesystem sends while a workload makes its durability promises, simulate power
    /// losses from the record, and check each promise. Needs root.
    #[command(after_help = crash::EXAMPLES)]
    Crash(crash::CrashArgs),
    /// Learn how a program writes: run it under strace and say, for each file it wrote,
    /// how it was made, written and synced (the calls, their sizes and offsets, the
    /// syncs and what lay between them). Needs strace.
    #[command(after_help = trace::EXAMPLES)]
    Trace(trace::TraceArgs),
    /// The replay `trace --crash-check` runs in each filesystem it records, and the
    /// checker of each crash state.
    #[command(hide = true, name = "trace-crash-replay")]
    TraceCrashReplay(trace::CrashReplayArgs),
    /// Print a shell completion script: `writebench completions bash > /etc/bash_completion.d/writebench`.
    Completions(CompletionsArgs),
    /// Print the manual page (roff): `writebench man > writebench.1; man -l writebench.1`.
    Man,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct CleanArgs {
    /// Directory to look in (the PATH that was given to `run`).
    #[arg(default_value = ".")]
    pub path: PathBuf,

    /// Remove without asking (for scripts). Without a terminal and without --yes,
    /// nothing is removed.
    #[arg(long)]
    pub yes: bool,
}
