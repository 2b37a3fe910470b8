//! `writebench calibrate`: this machine's ceilings on PATH, printed and exported; and the
//! short calibration `run` makes before its cases, or reuses from the last hour
//! (`context::calibration_cache`).

use std::io::Write;
use std::process::ExitCode;

use super::conclude::{argv, assemble};
use super::progress::spinner;
use super::start::{finish, start_in};
use crate::cli::UsageError;
use crate::cli::calibrate::CalibrateArgs;
use crate::context::calibration_cache::{self, Key};
use crate::context::{self, TargetInfo, calibration::Calibration};
use crate::export;
use crate::measure::target::Scratch;
use crate::result::options::RunOptions;
use crate::rounds::calibrate::Effort;

pub(super) fn calibrate(args: &CalibrateArgs) -> Result<ExitCode, UsageError> {
    let size = args.check()?;
    crate::measure::space::check_up_front(&args.path, size).map_err(UsageError)?;
    let (scratch, target) = start_in(&args.path)?;
    let swap_before = context::swapped_out_pages();
    let calibration = calibrate_in(&scratch, Effort::full(size), &[], args.seed);
    finish(scratch, false);
    let options = RunOptions {
        command: Some("calibrate".into()),
        size: Some(size),
        seed: Some(args.seed),
        argv: Some(argv()),
        ..RunOptions::default()
    };
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
    let calibration = crate::rounds::calibrate::calibrate(scratch, effort, case_sizes, seed, &mut |step| {
        spinner.set_message(format!("calibrating: {step}"))
    });
    spinner.finish_and_clear();
    calibration
}

/// What `run`'s short calibration on `target` for cases of `case_sizes` is kept under.
fn short_key(target: &TargetInfo, case_sizes: &[u64]) -> Key {
    let effort = Effort::SHORT;
    let classes = context::copy::classes(effort.memcpy_bytes as u64, case_sizes);
    Key::new(target, format!("{effort:?}, copy classes {classes:?}"))
}

/// The short calibration kept for `target` and cases of `case_sizes` from the last hour,
/// if any, with its age in `reused_age_seconds`.
pub(super) fn kept_short(target: &TargetInfo, case_sizes: &[u64]) -> Option<Calibration> {
    let dir = calibration_cache::dir().ok()?;
    let (mut calibration, age) =
        calibration_cache::load(&dir, &short_key(target, case_sizes), std::time::SystemTime::now())?;
    calibration.reused_age_seconds = Some(age.as_secs_f64());
    Some(calibration)
}

/// `run`'s short calibration, measured now and kept for the next hour's runs on this
/// path, unless a ceiling failed under a file-size limit ([`not_worth_keeping`]). A cache
/// that cannot be written costs only the next run's calibration: said, and the run goes
/// on.
pub(super) fn measure_short(scratch: &Scratch, target: &TargetInfo, case_sizes: &[u64], seed: u64) -> Calibration {
    let calibration = calibrate_in(scratch, Effort::SHORT, case_sizes, seed);
    let kept = match not_worth_keeping(&calibration, target, file_size_limit()) {
        Some(why) => Err(why),
        None => calibration_cache::dir().and_then(|dir| {
            let key = short_key(target, case_sizes);
            calibration_cache::store(&dir, &key, &calibration, std::time::SystemTime::now())
                .map_err(|e| format!("{}: {e}", dir.display()))
        }),
    };
    if let Err(why) = kept {
        eprintln!("writebench: the calibration is not kept for the next run ({why})");
    }
    calibration
}

/// This process's file-size limit (`ulimit -f`), bytes; None when there is none.
fn file_size_limit() -> Option<u64> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes the struct it is given.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut limit) } == 0;
    (read && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

/// Why a calibration must not be kept for the next hour's runs on this path: a ceiling
/// (the buffered rate, or the device's where the path has one) failed while this process
/// ran under a file-size limit, which is this process's, not the path's: kept, it would
/// deny every run of the hour its ceiling (found when a test under `ulimit -f` left
/// "File too large" as the disk's device rate). A ceiling a small path has no room for
/// is the path's, and kept.
fn not_worth_keeping(calibration: &Calibration, target: &TargetInfo, file_size_limit: Option<u64>) -> Option<String> {
    let limit = file_size_limit?;
    let failed = |name: &str, ceiling: &context::calibration::Ceiling| {
        ceiling.bytes_per_s.is_none().then(|| {
            format!(
                "{name} could not be measured under this process's file-size limit of {}: {}",
                crate::plan::units::format_size(limit),
                ceiling.why_not.as_deref().unwrap_or("no figure")
            )
        })
    };
    failed("the buffered rate", &calibration.page_cache)
        .or_else(|| target.block_device.as_ref().and_then(|_| failed("the device's rate", &calibration.device)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::calibration::Ceiling;

    /// A calibration whose ceilings were measured is kept; one whose device rate failed
    /// on a path with a device under a file-size limit ("File too large") is not; without
    /// a limit a failure is the path's (no room on a small tmpfs) and kept; the device's
    /// rate missing where there is no device is no failure.
    #[test]
    fn a_calibration_whose_ceiling_failed_under_a_file_size_limit_is_not_kept() {
        let measured = Ceiling { bytes_per_s: Some(2e9), how: "direct".into(), why_not: None };
        let mut calibration = Calibration { page_cache: measured.clone(), device: measured, ..Default::default() };
        let mut disk = TargetInfo { block_device: Some("vda".into()), ..Default::default() };
        let limit = Some(2 << 20);
        assert_eq!(not_worth_keeping(&calibration, &disk, limit), None, "measured under a limit: kept");
        calibration.device =
            Ceiling::missing("direct", "fallocate of 33554432 bytes: File too large (os error 27)".into());
        let why = not_worth_keeping(&calibration, &disk, limit).expect("a failed device rate is not kept");
        assert!(
            why.starts_with(
                "the device's rate could not be measured under this process's file-size limit of 2 MiB: fallocate"
            ),
            "{why}"
        );
        assert_eq!(not_worth_keeping(&calibration, &disk, None), None, "no limit: the path's failure, kept");
        disk.block_device = None;
        assert_eq!(not_worth_keeping(&calibration, &disk, limit), None, "no device: nothing failed");
        calibration.page_cache = Ceiling::missing("buffered", "no room".into());
        assert!(not_worth_keeping(&calibration, &disk, limit).unwrap().starts_with("the buffered rate"));
    }
}
