//! The file creation cases (benchmarkIOWrite's "File Creation"): the timed span is open +
//! `posix_fallocate`/`fallocate`/`ftruncate` + close. With `end`, the fsync comes
//! before the close and is the sync span alone; the close after it is counted in the
//! write span, as it is without a sync. Figures: µs per call, not rates (no data moves). A size that
//! statvfs says cannot fit is `skipped` before any call, unless the space check is off
//! (`--no-space-check`), in which case the call's own error (ENOSPC) makes the case
//! `failed`: never a bandwidth either way.

use std::os::fd::AsRawFd;
use std::time::Instant;

use crate::durability::sync_fd;
use crate::executor::CpuClock;
use crate::fd;
use crate::hygiene::RunFiles;
use crate::methods::CreateCall;
use crate::runs::CaseRuns;
use crate::target::Scratch;
use error::CallError;
use plan::Case;
use plan::units::format_size;
use result::{Run, Status};

/// A creation case, ready to run again and again.
pub struct CreationRuns<'a> {
    case: &'a Case,
    create: CreateCall,
    scratch: &'a Scratch,
    files: RunFiles<'a>,
}

/// The case's runs, or the case refused up front (a size that cannot fit, said with
/// the numbers).
pub fn prepare<'a>(
    files: RunFiles<'a>,
    case: &'a Case,
    create: CreateCall,
    scratch: &'a Scratch,
    space_check: bool,
) -> Result<CreationRuns<'a>, (Status, String)> {
    if space_check && create.allocates {
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
    Ok(CreationRuns { case, create, scratch, files })
}

impl CaseRuns for CreationRuns<'_> {
    fn run_once(&mut self, number: u32) -> Result<Run, (Status, String)> {
        let (case, create, scratch) = (self.case, self.create, self.scratch);
        // Only a creation that allocates puts pages in memory (on tmpfs); warming memory
        // before an ftruncate would only leave the CPU's caches cold for a 3 µs call.
        // The same bytes are all the room it takes.
        let memory = if create.allocates { case.bytes } else { 0 };
        self.files.run_settled(number, (memory, memory), |names| create_once(&names[0], case, create, scratch))
    }
}

/// Untimed, just before the timed call: the same calls on a throw-away file (an
/// allocating call for one block only), so that the code and the kernel's structures
/// they use are in the CPU's caches whatever ran before. A creation takes microseconds,
/// and after a run that went through a gigabyte of memory a cold cache alone made an
/// ftruncate take 18-24 µs against 2.3-3.8 µs (bench/carry-over, tmpfs).
fn rehearse(name: &str, case: &Case, create: CreateCall, scratch: &Scratch) -> Result<(), CallError> {
    let rehearsal = format!("{name}.rehearsal");
    let file =
        scratch.create_empty(&rehearsal).map_err(|error| CallError::new(format!("create {rehearsal}"), error))?;
    let bytes = if create.allocates { 4096.min(case.bytes) } else { case.bytes };
    let called = (create.call)(file.as_raw_fd(), bytes)
        .map_err(|error| CallError::new(format!("{} of {bytes} bytes (rehearsal)", case.method), error));
    // Synced, removed and the removal committed like any run's file, so that no journal
    // work of the rehearsal lands in the timed call (docs/measurement.md).
    fd::fsync(file.as_raw_fd()).map_err(|error| CallError::new(format!("fsync {rehearsal}"), error))?;
    drop(file);
    scratch.remove(&rehearsal).map_err(|error| CallError::new(format!("remove {rehearsal}"), error))?;
    scratch.sync_dir().map_err(|error| CallError::new("fsync of the scratch directory".to_string(), error))?;
    called
}

/// One timed creation; afterwards (untimed) the file is synced if the mode did not, so
/// that the next run does not pay for this one's metadata.
fn create_once(name: &str, case: &Case, create: CreateCall, scratch: &Scratch) -> Result<Run, CallError> {
    rehearse(name, case, create, scratch)?;
    let cpu = CpuClock::now();
    let started = Instant::now();
    let file = scratch.create_empty(name).map_err(|error| CallError::new(format!("create {name}"), error))?;
    (create.call)(file.as_raw_fd(), case.bytes)
        .map_err(|error| CallError::new(format!("{} of {} bytes", case.method, case.bytes), error))?;
    let end_sync = case.durability.end_sync();
    let created = Instant::now();
    if let Some(call) = end_sync {
        sync_fd(call, file.as_raw_fd())?;
    }
    let synced = Instant::now();
    fd::close(file).map_err(|error| CallError::new(format!("close {name}"), error))?;
    let closed = Instant::now();
    let cpu = CpuClock::now().since(cpu);
    if end_sync.is_none() {
        scratch.sync_name(name).map_err(|error| CallError::new(format!("fsync {name} after the run"), error))?;
    }
    // The write span is open + call + close in every mode, so that the µs per call of
    // `none` and of `end` count the same calls; the sync span is the sync call alone.
    let write_seconds = (created - started).as_secs_f64() + (closed - synced).as_secs_f64();
    let sync_seconds = if end_sync.is_some() { (synced - created).as_secs_f64() } else { 0.0 };
    Ok(Run {
        write_seconds,
        sync_seconds,
        setup_seconds: 0.0,
        thread_seconds: vec![write_seconds],
        user_seconds: Some(cpu.user),
        sys_seconds: Some(cpu.sys),
        ..Run::default()
    })
}
