//! Runs cases: warm-up, repetitions, the timed spans, and hygiene between runs
//! (DESIGN §2). The runner knows nothing of a method's internals.

use std::io;
use std::os::fd::AsRawFd;
use std::time::Instant;

use crate::methods::{self, CallError, Span};
use crate::plan::{Case, Durability};
use crate::result::{CaseResult, Run, Status};
use crate::source::Source;
use crate::target::Scratch;

#[derive(Debug, Clone)]
pub struct RunSettings {
    pub repeat: u32,
    pub warmup: u32,
    pub seed: u64,
    /// Leave each case's last file in the scratch directory (tests read it back).
    pub keep_files: bool,
}

/// Runs one case `warmup + repeat` times; `on_run` is called after each run (progress).
/// An error ends the case: it gets a status and the OS text, never a number.
pub fn run_case(
    index: usize,
    case: &Case,
    scratch: &Scratch,
    source: &Source,
    settings: &RunSettings,
    on_run: &mut dyn FnMut(),
) -> CaseResult {
    let total = settings.warmup + settings.repeat;
    let mut runs = Vec::with_capacity(settings.repeat as usize);
    for number in 0..total {
        let name = format!("case{index:04}-run{number}.dat");
        let outcome = run_once(&name, case, scratch, source, settings.seed);
        // Hygiene: every run starts without the previous run's file (it was synced in run_once).
        let last = number + 1 == total;
        if !(settings.keep_files && last && outcome.is_ok()) {
            if let Err(error) = scratch.remove(&name) {
                return CaseResult::without_result(
                    case.clone(),
                    Status::Failed,
                    format!("remove {name}: {error}"),
                );
            }
        }
        on_run();
        match outcome {
            Ok(run) if number >= settings.warmup => runs.push(run),
            Ok(_) => {}
            Err(error) => {
                return CaseResult::without_result(
                    case.clone(),
                    status_of(&error.error),
                    error.to_string(),
                );
            }
        }
    }
    CaseResult::measured(case.clone(), runs)
}

fn run_once(
    name: &str,
    case: &Case,
    scratch: &Scratch,
    source: &Source,
    seed: u64,
) -> Result<Run, CallError> {
    let method = methods::by_name(&case.method).expect("the plan only holds registered methods");
    // Untimed: create the file and bring it into its state.
    let file = scratch.prepare(name, case.state, case.bytes, seed)?;
    let fd = file.as_raw_fd();
    let span = Span {
        fd,
        offset: 0,
        len: case.bytes,
        chunk: case.chunk_bytes as usize,
        iov: case.iov as usize,
        source,
    };

    let cpu_before = cpu_times();
    // Instant is CLOCK_MONOTONIC on Linux; it is read only outside the write loop.
    let started = Instant::now();
    method.write_span(&span)?;
    let written = Instant::now();
    if case.durability == Durability::End {
        fsync(fd)?;
    }
    let synced = Instant::now();
    let cpu_after = cpu_times();

    if case.durability == Durability::None {
        // Untimed: the next run must not pay for this run's writeback.
        fsync(fd)?;
    }
    Ok(Run {
        write_seconds: (written - started).as_secs_f64(),
        // No sync call, no sync time: not the few nanoseconds between two clock reads.
        sync_seconds: if case.durability == Durability::None {
            0.0
        } else {
            (synced - written).as_secs_f64()
        },
        user_seconds: cpu_after.0 - cpu_before.0,
        sys_seconds: cpu_after.1 - cpu_before.1,
    })
}

fn fsync(fd: i32) -> Result<(), CallError> {
    // SAFETY: fsync on an open descriptor.
    if unsafe { libc::fsync(fd) } != 0 {
        return Err(CallError::new("fsync", io::Error::last_os_error()));
    }
    Ok(())
}

/// Errors that mean "this system cannot do that", as opposed to "it went wrong".
pub fn status_of(error: &io::Error) -> Status {
    match error.raw_os_error() {
        Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) => Status::Unsupported,
        _ => Status::Failed,
    }
}

/// (user, system) CPU seconds of the whole process, so worker threads count too.
fn cpu_times() -> (f64, f64) {
    // SAFETY: getrusage fills the struct we pass.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let seconds = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6;
    (seconds(usage.ru_utime), seconds(usage.ru_stime))
}

/// Peak resident set size of this process so far, in bytes.
pub fn peak_rss_bytes() -> u64 {
    // SAFETY: getrusage fills the struct we pass.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    usage.ru_maxrss as u64 * 1024
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::FileState;
    use crate::source::{PERIOD, fill_pattern, first_mismatch};

    fn settings(keep: bool) -> RunSettings {
        RunSettings {
            repeat: 2,
            warmup: 1,
            seed: 9,
            keep_files: keep,
        }
    }

    #[test]
    fn every_method_writes_the_pattern_including_a_short_last_chunk() {
        let parent = tempfile::tempdir().unwrap();
        let scratch = Scratch::create(parent.path()).unwrap();
        let source = Source::new(9, 4096).unwrap();
        let mut pattern = vec![0u8; PERIOD];
        fill_pattern(9, &mut pattern);
        let size = 3 * 4096 + 1000; // not a multiple of the chunk
        for (index, method) in methods::ALL.iter().enumerate() {
            let case = Case::new(
                *method,
                FileState::Overwrite,
                4096,
                3,
                Durability::End,
                size,
            );
            let result = run_case(index, &case, &scratch, &source, &settings(true), &mut || {});
            assert_eq!(result.status, Status::Ok, "{:?}", result.error);
            assert_eq!(result.runs.len(), 2, "warm-up runs are discarded");
            let data =
                std::fs::read(scratch.path().join(format!("case{index:04}-run2.dat"))).unwrap();
            assert_eq!(data.len() as u64, size, "{}", method.name());
            assert_eq!(
                first_mismatch(&pattern, 0, &data),
                None,
                "{}",
                method.name()
            );
        }
    }

    #[test]
    fn durability_none_has_zero_sync_time_and_files_are_removed() {
        let parent = tempfile::tempdir().unwrap();
        let scratch = Scratch::create(parent.path()).unwrap();
        let source = Source::new(9, 4096).unwrap();
        let case = Case::new(
            methods::by_name("pwrite").unwrap(),
            FileState::Empty,
            4096,
            1,
            Durability::None,
            1 << 16,
        );
        let mut calls = 0;
        let result = run_case(0, &case, &scratch, &source, &settings(false), &mut || {
            calls += 1
        });
        assert_eq!(calls, 3);
        assert!(
            result
                .runs
                .iter()
                .all(|run| run.sync_seconds == 0.0 && run.write_seconds > 0.0)
        );
        assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0);
    }

    #[test]
    fn unsupported_and_failed_are_told_apart() {
        assert_eq!(
            status_of(&io::Error::from_raw_os_error(libc::EOPNOTSUPP)),
            Status::Unsupported
        );
        assert_eq!(
            status_of(&io::Error::from_raw_os_error(libc::ENOSPC)),
            Status::Failed
        );
    }
}
