//! `writebench trace --crash-check` (docs/trace.md, "Crash check"): the program's way
//! and every other way of making its calls, each recorded on a new ext4 as `crash --run`
//! records a program, and each crash state judged by the program's own promises (what
//! was durable after each of its syncs, `plan::replay_promises`): a way that keeps them
//! loses nothing the program's way would not. The recorded program is this writebench
//! (`trace-crash-replay run FILE`), and so is the checker (`… check FILE`).

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use crate::cli::UsageError;
use crate::cli::trace::{CrashReplayArgs, CrashReplayPart};
use crate::crash::check::Budget;
use crate::crash::filesystems::CrashFs;
use crate::crash::program::Program;
use crate::crash::subject::Subject;
use crate::executors::replay_check;
use crate::plan::replay::Replay;
use crate::plan::replay_changes::{Change, changes};
use crate::plan::replay_promises::{Promised, promises, up_to};
use crate::result::trace::{CrashedWay, TraceCrash};

/// The program's promises checked: a long program's first ones (each costs a flush in
/// the recording, and the states are drawn among them).
const PROMISES: usize = 64;
/// Bytes the calls checked may write: the check's ext4 is 64 MiB (`lab::filesystems`),
/// and the recorder holds what is written in memory.
const BYTES: u64 = 32 << 20;
/// Crash states per way.
const STATES: usize = 32;
/// The filesystem checked: ext4 at its defaults, the commonest place a program runs.
const FS: &str = "ext4";

/// The filesystem checked, and whether it can be checked here (asked before the program
/// is traced: root, /dev/fuse, mkfs.ext4).
pub(super) fn ready() -> Result<&'static CrashFs, UsageError> {
    let fs = crate::crash::filesystems::by_name(FS).expect("ext4 is a crash filesystem");
    super::crash::preflight(&[(fs, String::new())])
        .map_err(|UsageError(why)| UsageError(format!("--crash-check: {why}")))?;
    Ok(fs)
}

/// Checks the program's way (`calls`) and every other way on `fs`. Ok(None) when the
/// calls promise nothing (no sync); Err when the check could not be made (said on
/// stderr already by the crash check for a recording that failed).
pub(super) fn check(fs: &'static CrashFs, calls: &Replay, seed: u64) -> Result<Option<TraceCrash>, UsageError> {
    let all = promises(calls);
    if all.is_empty() {
        let read = if calls.cut { " in the calls read (--size)" } else { "" };
        eprintln!("writebench trace: no crash check: the program made no durable sync{read}, so it promised nothing");
        return Ok(None);
    }
    let fit = all.iter().take(PROMISES).take_while(|point| point.written <= BYTES).count();
    if fit == 0 {
        eprintln!(
            "writebench trace: no crash check: the program's first sync comes after {} written, more than the check's \
             filesystem holds ({})",
            crate::plan::units::format_size(all[0].written),
            crate::plan::units::format_size(BYTES)
        );
        return Ok(None);
    }
    let checked = up_to(calls, &all, fit);
    let points = promises(&checked);
    let ways: Vec<(Option<Change>, Replay)> = std::iter::once((None, checked.clone()))
        .chain(changes(&checked).into_iter().map(|(change, calls)| (Some(change), calls)))
        .collect();
    let folder = crate::trace::record::PrivateDir::new().map_err(|why| UsageError(format!("--crash-check: {why}")))?;
    let exe = std::env::current_exe()
        .map_err(|e| UsageError(format!("--crash-check: where is this writebench? {}", crate::error::plain(&e))))?;
    let quote = |path: &Path| format!("'{}'", path.display().to_string().replace('\'', r"'\''"));
    let mut subjects = Vec::new();
    for (index, (change, calls)) in ways.iter().enumerate() {
        let job = Promised { seed, calls: calls.clone(), points: points.clone() };
        let file = folder.path.join(format!("way-{index}.json"));
        let text = serde_json::to_string(&job).expect("a replay as JSON");
        std::fs::write(&file, text).map_err(|e| UsageError(format!("--crash-check: {}: {e}", file.display())))?;
        let part = |part: &str| format!("{} trace-crash-replay {part} {}", quote(&exe), quote(&file));
        subjects.push(Subject::Program(Program {
            run: part("run"),
            check: part("check"),
            run_limit: Duration::from_secs(120),
            check_limit: Duration::from_secs(20),
            from: folder.path.clone(),
            prefix: None,
            label: Some(change.map_or("your way".to_string(), crate::export::trace_words::change_words)),
        }));
    }
    // No lingering: every promise of a replay comes with a sync it waits for.
    let budget = Budget {
        states: STATES,
        seed,
        show_log: false,
        linger: Duration::ZERO,
        pace: crate::crash::recorder::Pace::Fast,
    };
    let done = super::crash::check_all(&[(fs, String::new())], &subjects, &budget)?;
    if done.failed || done.entries.len() != ways.len() {
        return Err(UsageError("--crash-check: the crash check could not check every way (said above)".into()));
    }
    let ways =
        ways.iter().zip(done.entries).map(|((change, _), check)| CrashedWay { change: *change, check }).collect();
    Ok(Some(TraceCrash {
        fs: FS.to_string(),
        mount_options: String::new(),
        promises: points.len(),
        promises_in_all: all.len(),
        more: calls.cut,
        ways,
    }))
}

/// `writebench trace-crash-replay run|check FILE`, in the crash check's filesystem (its
/// working directory): `run` makes the calls and prints the promises; `check` reads the
/// last promise (`WB_CRASH_PROMISE`) back, and says what is missing on its first line
/// with status 1.
pub(super) fn replay_part(args: &CrashReplayArgs) -> Result<ExitCode, UsageError> {
    let text = std::fs::read_to_string(&args.file)
        .map_err(|e| UsageError(format!("{}: {}", args.file.display(), crate::error::plain(&e))))?;
    let job: Promised =
        serde_json::from_str(&text).map_err(|e| UsageError(format!("{}: not a replay: {e}", args.file.display())))?;
    let here = std::env::current_dir().map_err(|e| UsageError(format!("no working directory: {e}")))?;
    match args.part {
        CrashReplayPart::Run => match replay_check::run_promising(&job, &here, &mut std::io::stdout()) {
            Ok(()) => Ok(ExitCode::SUCCESS),
            Err(error) => {
                eprintln!("writebench: the replay failed: {error}");
                Ok(ExitCode::from(1))
            }
        },
        CrashReplayPart::Check => {
            let promise = std::env::var("WB_CRASH_PROMISE").unwrap_or_default();
            match replay_check::check(&job, &here, &promise) {
                Ok(()) => Ok(ExitCode::SUCCESS),
                Err(words) => {
                    println!("{words}");
                    Ok(ExitCode::from(1))
                }
            }
        }
    }
}
