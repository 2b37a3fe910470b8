//! `writebench report`: a saved result rendered again, from the file alone.

use std::io::Write;
use std::process::ExitCode;

use super::conclude::draw_conclusions;
use crate::analysis::advice;
use crate::cli::UsageError;
use crate::cli::report::ReportArgs;
use crate::export::{self, text::Paint};
use crate::result::Saved;
use crate::result::crash::CrashReport;

pub(super) fn report(args: &ReportArgs) -> Result<ExitCode, UsageError> {
    let mut result = match args.load().map_err(UsageError)? {
        Saved::Result(result) => *result,
        Saved::Crash(report) => return Ok(crash_report(&report, args)),
    };
    // The stored Answer and observations are a cache: drawn again from the cases, by
    // this writebench's rules (a file from before the advice stored none at all). Where
    // the stored ones differ, the derived ones are shown, and that is said.
    let (stored_answer, stored_observations) = (result.answer.clone(), result.observations.clone());
    draw_conclusions(&mut result);
    if let Some(note) = advice::stored_differs(&stored_answer, &stored_observations, &result) {
        eprintln!("writebench: note: {note}");
    }
    if !args.export.is_empty() {
        let written = export::write_files(export::RESULT_FORMATS, &result, &args.export.paths());
        return Ok(if written { ExitCode::SUCCESS } else { ExitCode::from(1) });
    }
    let mut stdout = std::io::stdout().lock();
    let command = result.options.command.as_deref();
    let printed = match command {
        Some("calibrate") => export::calibration::render(&result, &mut stdout),
        Some("latency") => export::latency_table::render(&result, &mut stdout).and_then(|()| {
            export::answer::render(&result, &mut stdout, Paint::for_stdout(), export::answer::View::default())
        }),
        _ => {
            let head = if args.table {
                export::table::render(&result, &mut stdout, args.style.style(), Paint::for_stdout())
            } else {
                export::answer::render_header(&result, &mut stdout)
            };
            let view = export::answer::View { explain: args.explain, pointer: !args.table };
            head.and_then(|()| export::ranks::render(&result, &mut stdout))
                .and_then(|()| export::answer::render(&result, &mut stdout, Paint::for_stdout(), view))
        }
    };
    let _ = printed.and_then(|()| stdout.flush());
    Ok(ExitCode::SUCCESS)
}

/// A crash check's table again, as `crash` printed or exported it.
fn crash_report(report: &CrashReport, args: &ReportArgs) -> ExitCode {
    if !args.export.is_empty() {
        let written = export::write_files(export::CRASH_FORMATS, report, &args.export.paths());
        return if written { ExitCode::SUCCESS } else { ExitCode::from(1) };
    }
    let mut stdout = std::io::stdout().lock();
    let _ = export::crash::render_text(report, &mut stdout).and_then(|()| stdout.flush());
    ExitCode::SUCCESS
}
