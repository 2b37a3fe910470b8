//! `writebench calibrate`: this machine's ceilings on PATH, printed and exported; and the
//! short calibration `run` makes before its cases.

use std::io::Write;
use std::process::ExitCode;

use serde_json::json;

use super::conclude::{argv, assemble};
use super::progress::spinner;
use super::start::{finish, start_in};
use crate::cli::UsageError;
use crate::cli::calibrate::CalibrateArgs;
use crate::context::{self, calibration::Calibration};
use crate::export;
use crate::measure::calibrate::Effort;
use crate::measure::target::Scratch;

pub(super) fn calibrate(args: &CalibrateArgs) -> Result<ExitCode, UsageError> {
    let size = args.check()?;
    crate::measure::space::check_up_front(&args.path, size).map_err(UsageError)?;
    let (scratch, target) = start_in(&args.path)?;
    let swap_before = context::swapped_out_pages();
    let calibration = calibrate_in(&scratch, Effort::full(size), &[], args.seed);
    finish(scratch, false);
    let options = json!({"command": "calibrate", "size": size, "seed": args.seed, "argv": argv()});
    // No conclusions: a calibration has no cases to draw them from.
    let result = assemble(context::host(swap_before), target, options, Vec::new(), Some(calibration));
    let mut stdout = std::io::stdout().lock();
    let _ = export::calibration::render(&result, &mut stdout).and_then(|()| stdout.flush());
    let exported = export::write_files(export::RESULT_FORMATS, &result, &args.export.paths());
    Ok(if exported { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// The calibration, with a spinner on a terminal (nothing otherwise) saying its step.
pub(super) fn calibrate_in(scratch: &Scratch, effort: Effort, case_sizes: &[u64], seed: u64) -> Calibration {
    let spinner = spinner();
    let calibration = crate::measure::calibrate::calibrate(scratch, effort, case_sizes, seed, &mut |step| {
        spinner.set_message(format!("calibrating: {step}"))
    });
    spinner.finish_and_clear();
    calibration
}
