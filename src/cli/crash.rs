//! `writebench crash`: its arguments, checked into a plan before anything is built.

use std::time::Duration;

use clap::Args;

use crate::cli::export::{CrashExports, ExportArgs};
use crate::cli::usage::UsageError;
use crate::crash::filesystems::{self, CrashFs};
use crate::crash::program::Program;
use crate::crash::recorder::Pace;
use crate::crash::subject::Subject;
use crate::crash::workloads::{self, Workload};

pub const EXAMPLES: &str = "\
Examples:
  writebench crash                                   ext4, every workload
  writebench crash --fs ext4,xfs,btrfs --export-json crash.json
  writebench crash --mount-opt ext4=defaults --mount-opt ext4=barrier=0 --workloads end,replace
  writebench crash --run 'python3 app.py' --check 'python3 check.py' --fs ext4,xfs
                                                     your own program, judged by your checker
  writebench clean --yes                             after a killed check: its leftovers

Each filesystem is made on a loop device over writebench's recorder (a FUSE file in
memory) that logs every block write and flush; each workload runs on it and notes when
each call that promises durability returned; then power losses are simulated from the
log (what was flushed, and any subset of what was not) and each is mounted, checked
with the filesystem's checker and read back against the promises. Needs root and
/dev/fuse. See docs/crash.md.

With --run, the workload is your program: every line it prints is a promise (stamped
with how far the device's log was when the line was read); in each simulated power
loss your --check command runs in the recovered filesystem's root, with
WB_CRASH_PROMISE (the last line said before the power went), WB_CRASH_PROMISES (a file
of all of them) and WB_CRASH_STATE (the state in words): exit 0 means kept, another
status broken (its first line says why). Both run in the filesystem's root; the
directory you started writebench in is WB_CRASH_FROM (--run 'python3 \"$WB_CRASH_FROM/app.py\"').";

#[derive(Debug, Args)]
pub struct CrashArgs {
    /// Filesystems, comma-separated: ext4, xfs, btrfs.
    #[arg(long, value_name = "LIST", default_value = "ext4")]
    pub fs: String,

    /// Mount options for one filesystem, e.g. `ext4=barrier=0` (repeatable: each is a
    /// configuration of its own; `FS=defaults` keeps the defaults among them).
    #[arg(long, value_name = "FS=OPTS")]
    pub mount_opt: Vec<String>,

    /// Workloads, comma-separated [default: all]: the durability modes of `run` (end,
    /// end-fdatasync, every:4, osync, odsync, rwf-sync, rwf-dsync, direct+end,
    /// writebehind:64KiB, io_uring+every:4), the save patterns of `latency` (replace,
    /// replace-tmpfile, replace-unsafe), small commits (append+odsync,
    /// append+every-fdatasync:1, overwrite0+odsync, overwrite0+every-fdatasync:1) and
    /// pwritev2-atomic; any other durable mode of `run` by its name too (every:16,
    /// direct+odsync).
    #[arg(long, value_name = "LIST")]
    pub workloads: Option<String>,

    /// Your program, run once on each filesystem in its root (`sh -c CMD`; the directory
    /// is also in WB_CRASH_DIR): each line it prints is a promise. Needs --check.
    #[arg(long, value_name = "CMD", requires = "check", conflicts_with = "workloads")]
    pub run: Option<String>,

    /// Your checker, run in each crash state in the recovered filesystem's root (`sh -c
    /// CMD`): exit 0 if every promise in WB_CRASH_PROMISES holds, else non-zero with
    /// what is wrong in its first line.
    #[arg(long, value_name = "CMD", requires = "run")]
    pub check: Option<String>,

    /// Only the lines of --run's standard output that start with TEXT are promises (its
    /// other output is not). A program may instead write its promises, a line each, to
    /// the descriptor WB_CRASH_PROMISE_FD (3): once it does, only those lines are.
    #[arg(long, value_name = "TEXT", requires = "run")]
    pub promise_prefix: Option<String>,

    /// How long --run may take on one filesystem.
    #[arg(long, value_name = "DURATION", default_value = "60s", requires = "run")]
    pub timeout: String,

    /// How long --check may take in one crash state.
    #[arg(long, value_name = "DURATION", default_value = "10s", requires = "run")]
    pub check_timeout: String,

    /// The most crash states checked for each workload (or your program) on each
    /// filesystem and mount options [default: 24 a workload, 100 for --run: one program
    /// is checked where 18 workloads would be].
    #[arg(long, value_name = "N")]
    pub states: Option<usize>,

    /// How long the recording goes on after the workload or your program ended, for what
    /// the kernel then writes by itself (journal commits, writeback), with crash states
    /// in that time too [default: 40s for --run, as a machine that keeps running would
    /// write; 0 for the built-in workloads, whose promises end with their syncs].
    #[arg(long, value_name = "DURATION")]
    pub linger: Option<String>,

    /// How fast the recorded device answers: `fast`, a RAM device; `slow`, each write and
    /// flush answered after a random delay of up to 3 ms (from --seed), four requests at
    /// a time, as a slow disk would: the kernel's writeback and a program's commits then
    /// race as they do on one, which opens windows a fast device hides.
    #[arg(long, value_name = "SPEED", value_enum, default_value_t = DeviceSpeed::Fast)]
    pub device: DeviceSpeed,

    /// Seed of the sample of subsets of unflushed writes (the same seed, the same states).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,

    /// Print every state checked and what was found in it (the JSON has them always).
    #[arg(long)]
    pub show_states: bool,

    /// Print each recording's log: every block write (what it holds, and on ext4 and xfs
    /// the file each of its blocks belongs to) and flush, and where each call returned.
    #[arg(long)]
    pub show_log: bool,

    #[command(flatten)]
    pub export: ExportArgs<CrashExports>,
}

/// `--device`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DeviceSpeed {
    Fast,
    Slow,
}

/// The default of `--linger` for the user's program: the kernel writes data back once it
/// has been dirty for 30 s (looking every 5 s), and ext4 commits its journal every 5 s,
/// btrfs every 30 s, xfs pushes its log every 30 s; a 1 MiB file written without a sync
/// reached the device's log 36.3 s after the program exited on ext4, 31.4 s on xfs and
/// 30.8 s on btrfs (docs/crash.md, "After the program exits").
pub const PROGRAM_LINGER: Duration = Duration::from_secs(40);

/// The default of `--states` for each built-in workload, and for the user's program,
/// which is checked alone where the workloads are 18: a program that commits often has
/// as many flushes as states to spread them over.
const WORKLOAD_STATES: usize = 24;
const PROGRAM_STATES: usize = 100;

/// What to check, validated.
#[derive(Debug)]
pub struct CrashPlan {
    /// Each filesystem with its mount options ("" for its defaults).
    pub configs: Vec<(&'static CrashFs, String)>,
    /// The workloads, or the user's program alone.
    pub subjects: Vec<Subject>,
    pub states: usize,
    pub seed: u64,
    pub show_log: bool,
    pub linger: Duration,
    pub pace: Pace,
}

impl CrashArgs {
    pub fn plan(&self) -> Result<CrashPlan, UsageError> {
        let mut chosen: Vec<&'static CrashFs> = Vec::new();
        for name in self.fs.split(',').map(str::trim) {
            let fs = filesystems::by_name(name).ok_or_else(|| {
                UsageError(format!("unknown filesystem '{name}' for --fs (known: {})", filesystems::names().join(", ")))
            })?;
            if !chosen.iter().any(|c| c.name == fs.name) {
                chosen.push(fs);
            }
        }
        let mut options: Vec<(&'static CrashFs, String)> = Vec::new();
        for given in &self.mount_opt {
            let (name, opts) = given
                .split_once('=')
                .ok_or_else(|| UsageError(format!("--mount-opt takes FS=OPTS, e.g. ext4=barrier=0 (got '{given}')")))?;
            let Some(fs) = chosen.iter().find(|fs| fs.name == name) else {
                return Err(UsageError(format!("--mount-opt {given}: {name} is not among --fs {}", self.fs)));
            };
            if opts.contains(char::is_whitespace) || opts.is_empty() {
                return Err(UsageError(format!("--mount-opt {given}: options are comma-separated, without spaces")));
            }
            let opts = if opts == "defaults" { String::new() } else { opts.to_string() };
            if !options.iter().any(|(f, o)| f.name == fs.name && *o == opts) {
                options.push((fs, opts));
            }
        }
        let mut configs = Vec::new();
        for fs in chosen {
            let own: Vec<_> = options.iter().filter(|(f, _)| f.name == fs.name).cloned().collect();
            if own.is_empty() { configs.push((fs, String::new())) } else { configs.extend(own) }
        }
        let workloads = match &self.workloads {
            None if self.run.is_some() => Vec::new(),
            None => workloads::all(),
            Some(list) => {
                let mut out: Vec<Workload> = Vec::new();
                for name in list.split(',').map(str::trim) {
                    let workload = workloads::by_name(name).ok_or_else(|| {
                        UsageError(format!(
                            "unknown workload '{name}' for --workloads (known: {})",
                            workloads::names().join(", ")
                        ))
                    })?;
                    if !out.contains(&workload) {
                        out.push(workload);
                    }
                }
                out
            }
        };
        let states = self.states.unwrap_or(if self.run.is_some() { PROGRAM_STATES } else { WORKLOAD_STATES });
        let linger = match &self.linger {
            // 0 (or 0s) records nothing after the end, as before `--linger` was.
            Some(text) if text.trim().trim_end_matches(char::is_alphabetic).parse::<f64>() == Ok(0.0) => Duration::ZERO,
            Some(text) => {
                crate::plan::units::parse_duration(text).map_err(|why| UsageError(format!("--linger: {why}")))?
            }
            None if self.run.is_some() => PROGRAM_LINGER,
            None => Duration::ZERO,
        };
        if states == 0 {
            return Err(UsageError("--states must be at least 1".into()));
        }
        let mut subjects: Vec<Subject> = workloads.into_iter().map(Subject::Workload).collect();
        if let (Some(run), Some(check)) = (&self.run, &self.check) {
            for (flag, command) in [("--run", run), ("--check", check)] {
                if command.trim().is_empty() {
                    return Err(UsageError(format!("{flag} needs a command")));
                }
            }
            let limit = |flag: &str, text: &str| {
                crate::plan::units::parse_duration(text).map_err(|why| UsageError(format!("{flag}: {why}")))
            };
            subjects.push(Subject::Program(Program {
                run: run.clone(),
                check: check.clone(),
                run_limit: limit("--timeout", &self.timeout)?,
                check_limit: limit("--check-timeout", &self.check_timeout)?,
                from: std::env::current_dir().unwrap_or_else(|_| "/".into()),
                label: None,
                prefix: self.promise_prefix.clone(),
            }));
        }
        self.export.check()?;
        let pace = match self.device {
            DeviceSpeed::Fast => Pace::Fast,
            DeviceSpeed::Slow => Pace::Slow { seed: self.seed },
        };
        Ok(CrashPlan { configs, subjects, states, seed: self.seed, show_log: self.show_log, linger, pace })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn plan(argv: &[&str]) -> CrashPlan {
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Crash(args) => args.plan().unwrap(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_program_is_recorded_after_it_exits_and_a_workload_is_not() {
        assert_eq!(plan(&["writebench", "crash"]).linger, Duration::ZERO);
        assert_eq!(plan(&["writebench", "crash", "--run", "a", "--check", "b"]).linger, PROGRAM_LINGER);
        for zero in ["0", "0s"] {
            assert_eq!(
                plan(&["writebench", "crash", "--run", "a", "--check", "b", "--linger", zero]).linger,
                Duration::ZERO
            );
        }
        assert_eq!(plan(&["writebench", "crash", "--linger", "2m"]).linger, Duration::from_secs(120));
    }

    #[test]
    fn a_program_is_checked_alone_in_more_states_than_each_workload() {
        assert_eq!(plan(&["writebench", "crash"]).states, WORKLOAD_STATES);
        let program = plan(&["writebench", "crash", "--run", "./app", "--check", "./check", "--timeout", "2m"]);
        assert_eq!(program.states, PROGRAM_STATES);
        let [Subject::Program(p)] = &program.subjects[..] else { panic!("{:?}", program.subjects) };
        assert_eq!((p.run.as_str(), p.check.as_str()), ("./app", "./check"));
        assert_eq!((p.run_limit.as_secs(), p.check_limit.as_secs()), (120, 10));
        assert_eq!(plan(&["writebench", "crash", "--run", "a", "--check", "b", "--states", "7"]).states, 7);
    }
}
