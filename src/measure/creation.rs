//! Runs the file creation cases (seed 003's "File Creation"): the timed span is open +
//! `posix_fallocate`/`fallocate`/`ftruncate` + close; with `end`, an fsync before the
//! close is the sync span. A size that statvfs says cannot fit is `skipped` before any
//! call, unless the space check is off (`--no-space-check`), in which case the call's
//! own error (ENOSPC) makes the case `failed`: never a bandwidth either way.

use std::io;
use std::os::fd::{AsRawFd, IntoRawFd};
use std::time::Instant;

use crate::measure::methods::{CallError, CreateCall};
use crate::measure::runner::{FileRuns, RunSettings, cpu_times};
use crate::measure::scheduler::CaseRuns;
use crate::measure::target::Scratch;
use crate::plan::Case;
use crate::plan::units::format_size;
use crate::result::{Run, Status};

/// The case ready for the scheduler, or why not: it cannot fit (skipped), or statvfs failed.
pub fn case_runs<'a>(
    index: usize,
    case: &'a Case,
    create: CreateCall,
    scratch: &'a Scratch,
    settings: &RunSettings,
) -> Result<Box<dyn CaseRuns + 'a>, (Status, String)> {
    if settings.space_check && create.allocates {
        match scratch.free_bytes() {
            Ok(free) if case.bytes > free => {
                let reason = format!(
                    "{} of {} needs more than the {} free here (statvfs); --no-space-check lets the call fail itself",
                    case.method,
                    format_size(case.bytes),
                    format_size(free)
                );
                return Err((Status::Skipped, reason));
            }
            Ok(_) => {}
            Err(error) => {
                return Err((Status::Failed, format!("statvfs: {error}")));
            }
        }
    }
    Ok(FileRuns::boxed(index, 1, scratch, settings, move |names| create_once(&names[0], case, create, scratch)))
}

fn create_once(name: &str, case: &Case, create: CreateCall, scratch: &Scratch) -> Result<Run, CallError> {
    let cpu_before = cpu_times();
    let started = Instant::now();
    let file = scratch.create_empty(name).map_err(|error| CallError::new(format!("create {name}"), error))?;
    (create.call)(file.as_raw_fd(), case.bytes)
        .map_err(|error| CallError::new(format!("{} of {} bytes", case.method, case.bytes), error))?;
    let mut sync_seconds = 0.0;
    if let Some(call) = case.durability.end_sync() {
        let sync_started = Instant::now();
        call.call(file.as_raw_fd())?;
        sync_seconds = sync_started.elapsed().as_secs_f64();
    }
    // SAFETY: we own the descriptor and give it up here; close's result is checked.
    if unsafe { libc::close(file.into_raw_fd()) } != 0 {
        return Err(CallError::new(format!("close {name}"), io::Error::last_os_error()));
    }
    let seconds = started.elapsed().as_secs_f64();
    let cpu_after = cpu_times();
    Ok(Run {
        write_seconds: seconds - sync_seconds,
        sync_seconds,
        setup_seconds: 0.0,
        thread_seconds: vec![seconds],
        user_seconds: cpu_after.0 - cpu_before.0,
        sys_seconds: cpu_after.1 - cpu_before.1,
        ..Run::default()
    })
}
