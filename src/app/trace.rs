//! `writebench trace` (docs/trace.md): runs the program under strace (or reads a log),
//! folds its calls into a pattern per file, prints it and writes the exports.

use std::process::ExitCode;

use crate::cli::UsageError;
use crate::cli::trace::{TraceArgs, TraceSource};
use crate::result::Tool;
use crate::result::trace::{TRACE_SCHEMA, TraceReport};
use crate::trace::fold::Folded;
use crate::trace::record;

use super::trace_replay;

pub(super) fn trace(args: &TraceArgs) -> Result<ExitCode, UsageError> {
    let replay_plan = args.replay()?;
    let source = args.source()?;
    let crash_fs = if args.crash_check { Some(super::trace_crash::ready()?) } else { None };
    let limit = args.prefix()?;
    let directory = std::env::current_dir().map(|d| d.to_string_lossy().into_owned()).unwrap_or_default();
    let (folded, command, tracer, directory, ended) = match source {
        TraceSource::Program { command, tracer } => {
            eprintln!(
                "writebench trace: running {} under {tracer} (every call is slowed; nothing is timed for an answer)",
                command.join(" ")
            );
            let traced = record::run(&command, tracer.clone(), args.keep_log.as_deref(), limit).map_err(UsageError)?;
            let ended = Ended { words: traced.ended, succeeded: traced.succeeded, interrupted: traced.interrupted };
            (traced.folded, command, tracer, directory, Some(ended))
        }
        TraceSource::Log { log, directory: given } => {
            let folded = record::read_log(&log, given.as_deref(), limit).map_err(UsageError)?;
            (folded, Vec::new(), format!("the strace log {}", log.display()), given.unwrap_or_default(), None)
        }
    };
    let calls = folded.replay.clone();
    let mut report = report(folded, command, tracer, directory, ended.as_ref());
    let stopped = ended.as_ref().is_some_and(|e| e.interrupted.is_some());
    // A replay that fails (a full disk, a call the target refuses) leaves the pattern to
    // print, and ends with status 1.
    let mut replay_failed = false;
    if let (Some(plan), Some(calls), false) = (replay_plan, &calls, stopped) {
        let on = plan.on.or_else(|| trace_replay::busiest_directory(&report.files));
        match on {
            _ if calls.bytes == 0 && calls.syncs == 0 => {}
            Some(on) => {
                match trace_replay::replay_on(calls, &on, plan.runs, crate::plan::DEFAULT_SEED, plan.with_gaps) {
                    Ok(figures) => report.replay = Some(figures),
                    Err(UsageError(why)) => {
                        eprintln!("writebench: {why}");
                        replay_failed = true;
                    }
                }
            }
            None => eprintln!("writebench trace: no replay: the directories the program wrote in are gone (--on DIR)"),
        }
    }
    if let (Some(fs), Some(calls), false) = (crash_fs, &calls, stopped) {
        match super::trace_crash::check(fs, calls, crate::plan::DEFAULT_SEED) {
            Ok(crash) => report.crash = crash,
            Err(UsageError(why)) => {
                eprintln!("writebench: {why}");
                replay_failed = true;
            }
        }
    }
    let mut stdout = std::io::stdout().lock();
    let _ = crate::export::trace::render_text(&report, &mut stdout);
    let written = crate::export::write_files(crate::export::TRACE_FORMATS, &report, &args.export.paths());
    let Some(ended) = ended else { return Ok(ExitCode::from(if written && !replay_failed { 0 } else { 1 })) };
    if let Some(signal) = ended.interrupted {
        return Ok(ExitCode::from(128 + signal as u8));
    }
    if !ended.succeeded {
        let words =
            if ended.words.starts_with("killed") { format!("was {}", ended.words) } else { ended.words.clone() };
        eprintln!("writebench: the program {words}; what it wrote until then is above");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::from(if written && !replay_failed { 0 } else { 1 }))
}

/// How the traced program ended.
struct Ended {
    words: String,
    succeeded: bool,
    interrupted: Option<i32>,
}

fn report(
    folded: Folded,
    command: Vec<String>,
    tracer: String,
    directory: String,
    ended: Option<&Ended>,
) -> TraceReport {
    TraceReport {
        schema: TRACE_SCHEMA.to_string(),
        tool: Tool::this(),
        command,
        directory,
        tracer,
        exit: ended.map(|e| e.words.clone()),
        seconds: folded.seconds,
        calls: folded.calls,
        files: folded.files,
        left_out: folded.left_out,
        io_uring: folded.io_uring,
        mapped: folded.mapped,
        whole_syncs: folded.whole_syncs,
        complete: ended.is_none_or(|e| e.interrupted.is_none()),
        replay: None,
        crash: None,
    }
}
