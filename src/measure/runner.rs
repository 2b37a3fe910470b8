//! Runs cases: warm-up, repetitions, the timed spans, and hygiene between runs
//! (DESIGN §2). The runner knows nothing of a method's internals.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

use crate::measure::creation;
use crate::measure::durability::direct_refusal;
use crate::measure::methods::{self, CallError, Job, Part, Prepared, fsync_all};
use crate::measure::source::{Shape, Source, Streams};
use crate::measure::target::Scratch;
use crate::plan::{Case, Durability};
use crate::result::{CaseResult, Run, Status};

#[derive(Debug, Clone)]
pub struct RunSettings {
    pub repeat: u32,
    pub warmup: u32,
    pub seed: u64,
    /// Leave every run's files in the scratch directory (tests read them back).
    pub keep_files: bool,
    /// Read every run's files back after its timed span (`--verify`).
    pub verify: Option<crate::measure::verify::Verify>,
    /// Skip creation cases that statvfs says cannot fit (off: let the call fail itself).
    pub space_check: bool,
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
    let method = methods::by_name(&case.method).expect("the plan only holds registered methods");
    if let Some(reason) = method.unsupported_reason().or_else(|| method.durability_refusal(case.durability)) {
        return CaseResult::without_result(case.clone(), Status::Unsupported, reason);
    }
    if let Some(create) = method.creation() {
        return creation::run_case(index, case, create, scratch, settings, on_run);
    }
    let parts = split(case.bytes, case.chunk_bytes, case.threads, case.files);
    let lens: Vec<u64> = if case.files > 1 { parts.iter().map(|p| p.len).collect() } else { vec![case.bytes] };
    let probe = format!("case{index:04}-probe.dat");
    if let Err((status, reason)) = open_flags_refusal(&probe, case.durability, case.chunk_bytes, &lens, scratch) {
        return CaseResult::without_result(case.clone(), status, reason);
    }
    repeat_runs(index, case.files, case, scratch, settings, on_run, |names| {
        run_once(names, &parts, case, scratch, source, settings)
    })
}

/// The runs of a case, `warmup + repeat` of them: `run` makes one into the files it is
/// given (`files` of them, named per case and run). Hygiene: every run starts without
/// the previous run's files (the run synced them); with `--keep` all of them stay.
/// `on_run` follows each run; an error ends the case with its status and text.
pub(crate) fn repeat_runs(
    index: usize,
    files: u32,
    case: &Case,
    scratch: &Scratch,
    settings: &RunSettings,
    on_run: &mut dyn FnMut(),
    mut run: impl FnMut(&[String]) -> Result<Run, CallError>,
) -> CaseResult {
    let total = settings.warmup + settings.repeat;
    let mut runs = Vec::with_capacity(settings.repeat as usize);
    for number in 0..total {
        let names: Vec<String> = (0..files).map(|file| format!("case{index:04}-run{number}-f{file}.dat")).collect();
        let outcome = run(&names);
        let keep = settings.keep_files && outcome.is_ok();
        let removal = if keep { None } else { remove_files(scratch, &names) };
        on_run();
        match after_removal(outcome, removal) {
            Ok(run) if number >= settings.warmup => runs.push(run),
            Ok(_) => {}
            Err((status, reason)) => return CaseResult::without_result(case.clone(), status, reason),
        }
    }
    CaseResult::measured(case.clone(), runs)
}

/// Removes a run's files; the first failure, described.
pub(crate) fn remove_files(scratch: &Scratch, names: &[String]) -> Option<String> {
    names.iter().find_map(|name| scratch.remove(name).err().map(|error| format!("remove {name}: {error}")))
}

/// A run's outcome once its files were removed. The run's own error is the finding (an
/// EIO from fsync, say); a removal that failed after it (the filesystem went read-only)
/// only follows it. A removal that failed after a good run fails the case.
pub(crate) fn after_removal<T>(outcome: Result<T, CallError>, removal: Option<String>) -> Result<T, (Status, String)> {
    match (outcome, removal) {
        (Err(error), removal) => {
            let then = removal.map(|removal| format!("; then {removal}")).unwrap_or_default();
            Err((status_of(&error.error), format!("{error}{then}")))
        }
        (Ok(_), Some(removal)) => Err((Status::Failed, removal)),
        (Ok(value), None) => Ok(value),
    }
}

/// Whether the filesystem opens files with the case's flags, and, for O_DIRECT, whether
/// the case's calls meet the alignment (asked on a throw-away file, once per case).
/// `probe` is the name of the throw-away file; `lens` the lengths of the case's files.
pub fn open_flags_refusal(
    probe: &str,
    durability: Durability,
    chunk: u64,
    lens: &[u64],
    scratch: &Scratch,
) -> Result<(), (Status, String)> {
    let flags = durability.open_flags();
    if flags == 0 {
        return Ok(());
    }
    let alignment = scratch.probe_open(probe, flags).map_err(|error| {
        // open(2) says EINVAL when the filesystem does not do O_DIRECT.
        let status = if error.error.raw_os_error() == Some(libc::EINVAL) {
            Status::Unsupported
        } else {
            status_of(&error.error)
        };
        (status, error.to_string())
    })?;
    if durability.direct {
        if let Some(reason) = direct_refusal(&alignment, chunk, lens) {
            return Err((Status::Unsupported, reason));
        }
    }
    Ok(())
}

/// Splits `size` bytes over `threads` parts at chunk boundaries (so every call but the
/// very last is a whole chunk), either as ranges of one file or as one file per thread.
/// Earlier parts get one chunk more when the chunks do not divide evenly.
pub fn split(size: u64, chunk: u64, threads: u32, files: u32) -> Vec<Part> {
    let threads = u64::from(threads.max(1));
    let chunks = size.div_ceil(chunk);
    let (base, extra) = (chunks / threads, chunks % threads);
    let mut parts = Vec::with_capacity(threads as usize);
    let mut start = 0u64;
    for index in 0..threads {
        let end = (start + (base + u64::from(index < extra)) * chunk).min(size);
        let (file, offset) = if files > 1 { (index as usize, 0) } else { (0, start) };
        parts.push(Part { file, offset, len: end - start });
        start = end;
    }
    parts
}

fn run_once(
    names: &[String],
    parts: &[Part],
    case: &Case,
    scratch: &Scratch,
    source: &Source,
    settings: &RunSettings,
) -> Result<Run, CallError> {
    let seed = settings.seed;
    let method = methods::by_name(&case.method).expect("the plan only holds registered methods");
    // Untimed: create the files and bring them into their state.
    let file_lens: Vec<u64> = if case.files > 1 { parts.iter().map(|p| p.len).collect() } else { vec![case.bytes] };
    let mut files = Vec::with_capacity(names.len());
    let flags = case.durability.open_flags();
    for (name, &len) in names.iter().zip(&file_lens) {
        let prepared = scratch.prepare(name, case.state, len, seed)?;
        // The timed run gets a descriptor with the mode's open flags; the state was
        // prepared without them.
        files.push(if flags != 0 { scratch.reopen(name, prepared.as_raw_fd(), flags)? } else { prepared });
    }
    let fds: Vec<RawFd> = files.iter().map(|f| f.as_raw_fd()).collect();
    // Untimed: each part's buffer, with the streams of this run's files.
    let part_files: Vec<usize> = parts.iter().map(|part| part.file).collect();
    let streams = Streams::new(source, names, &part_files, Shape::of(case))
        .map_err(|error| CallError::new("allocate the writers' source buffers", error))?;
    let job = Job {
        files: &fds,
        file_lens: &file_lens,
        parts,
        chunk: case.chunk_bytes as usize,
        iov: case.iov as usize,
        queue_depth: case.queue_depth.unwrap_or(1) as usize,
        source: &streams,
        durability: case.durability,
    };
    // Untimed but recorded: the method's set-up (rings, registered buffers).
    let setup_started = Instant::now();
    let mut prepared = method.prepare(&job)?;
    let setup_seconds = setup_started.elapsed().as_secs_f64();

    let cpu_before = cpu_times();
    // Instant is CLOCK_MONOTONIC on Linux; it is read only outside the write loops.
    let (started, thread_ends) = write_parts(prepared.as_ref(), parts.len())?;
    let written = Instant::now();
    // every:N, osync and odsync commit inside the write span; only `end` has a sync span.
    let sync_seconds = if case.durability.end_sync().is_some() {
        prepared.sync()?;
        written.elapsed().as_secs_f64()
    } else {
        // No sync call, no sync time: not the few nanoseconds between two clock reads.
        0.0
    };
    let finish_started = Instant::now();
    prepared.finish()?;
    let finish_seconds = finish_started.elapsed().as_secs_f64();
    let cpu_after = cpu_times();
    drop(prepared);

    if case.durability.end_sync().is_none() {
        // Untimed: the next run must not pay for this run's writeback.
        fsync_all(&fds)?;
    }
    if let Some(verify) = &settings.verify {
        // Untimed: the content must be what was written.
        crate::measure::verify::check(verify, &fds, &file_lens, &streams)?;
    }
    Ok(Run {
        write_seconds: (written - started).as_secs_f64() + finish_seconds,
        sync_seconds,
        setup_seconds,
        thread_seconds: thread_ends.iter().map(|end| (*end - started).as_secs_f64()).collect(),
        user_seconds: cpu_after.0 - cpu_before.0,
        sys_seconds: cpu_after.1 - cpu_before.1,
    })
}

/// Writes every part, each from its own thread when there are several. The threads are
/// created and waiting before the clock starts; one gate releases them together; the
/// span closes when the last one is done. Returns the start and each part's end.
fn write_parts(prepared: &dyn Prepared, count: usize) -> Result<(Instant, Vec<Instant>), CallError> {
    if count == 1 {
        let started = Instant::now();
        prepared.write_part(0)?;
        return Ok((started, vec![Instant::now()]));
    }
    let gate = Gate::default();
    std::thread::scope(|scope| {
        let mut workers = Vec::with_capacity(count);
        for index in 0..count {
            let gate = &gate;
            let spawned = std::thread::Builder::new().name(format!("writer-{index}")).spawn_scoped(scope, move || {
                crate::measure::signals::block_in_this_thread();
                if !gate.wait() {
                    return Ok(None);
                }
                prepared.write_part(index).map(|()| Some(Instant::now()))
            });
            match spawned {
                Ok(worker) => workers.push(worker),
                Err(error) => {
                    // Release the threads already waiting, without letting them write.
                    gate.open(false);
                    return Err(CallError::new(format!("start writer thread {index} of {count}"), error));
                }
            }
        }
        let started = Instant::now();
        gate.open(true);
        let mut ends = Vec::with_capacity(count);
        let mut first_error = None;
        for worker in workers {
            match worker.join().expect("a writer thread panicked") {
                Ok(end) => ends.extend(end),
                Err(error) => first_error = first_error.or(Some(error)),
            }
        }
        match first_error {
            Some(error) => Err(error),
            None => Ok((started, ends)),
        }
    })
}

/// A start line for writer threads: they wait until it opens, then go (true) or give up
/// (false). Unlike a barrier it can be opened for fewer threads than were planned.
#[derive(Default)]
struct Gate {
    state: Mutex<Option<bool>>,
    opened: Condvar,
}

impl Gate {
    fn wait(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(go) = *state {
                return go;
            }
            state = self.opened.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn open(&self, go: bool) {
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = Some(go);
        self.opened.notify_all();
    }
}

/// Errors that mean "this system cannot do that", as opposed to "it went wrong".
pub fn status_of(error: &io::Error) -> Status {
    match error.raw_os_error() {
        Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) => Status::Unsupported,
        _ => Status::Failed,
    }
}

/// (user, system) CPU seconds of the whole process, so worker threads count too.
pub(crate) fn cpu_times() -> (f64, f64) {
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
    use crate::measure::source::Stream;
    use crate::plan::FileState;

    fn settings(keep: bool) -> RunSettings {
        RunSettings { repeat: 2, warmup: 1, seed: 9, keep_files: keep, verify: None, space_check: true }
    }

    #[test]
    fn a_runs_own_error_comes_before_the_removal_error_that_followed_it() {
        let eio = CallError::new("fsync", io::Error::from_raw_os_error(libc::EIO));
        let (status, reason) = after_removal::<()>(Err(eio), Some("remove f: Read-only".into())).unwrap_err();
        assert_eq!(status, Status::Failed);
        assert!(reason.starts_with("fsync: Input/output error"), "{reason}");
        assert!(reason.ends_with("; then remove f: Read-only"), "{reason}");
        let unsupported = CallError::new("fallocate", io::Error::from_raw_os_error(libc::EOPNOTSUPP));
        assert_eq!(after_removal::<()>(Err(unsupported), None).unwrap_err().0, Status::Unsupported);
        // A good run whose files cannot be removed fails the case; otherwise the run stands.
        assert_eq!(after_removal(Ok(1), Some("remove f: x".into())), Err((Status::Failed, "remove f: x".into())));
        assert_eq!(after_removal(Ok(1), None), Ok(1));
    }

    #[test]
    fn every_method_writes_its_stream_including_a_short_last_chunk() {
        let parent = tempfile::tempdir().unwrap();
        let scratch = Scratch::create(parent.path()).unwrap();
        let source = Source::new(9);
        let size = 3 * 4096 + 1000; // not a multiple of the chunk
        // Every write method (creation methods write no data).
        for (index, method) in methods::ALL.iter().filter(|m| m.creation().is_none()).enumerate() {
            let case = Case::new(*method, FileState::Overwrite, 4096, 3, Durability::End, size);
            let result = run_case(index, &case, &scratch, &source, &settings(true), &mut || {});
            assert_eq!(result.status, Status::Ok, "{:?}", result.error);
            assert_eq!(result.runs.len(), 2, "warm-up runs are discarded");
            let name = format!("case{index:04}-run2-f0.dat");
            let data = std::fs::read(scratch.path().join(&name)).unwrap();
            assert_eq!(data.len() as u64, size, "{}", method.name());
            let stream = Stream::timed(9, &name, Shape::of(&case).stream_period());
            assert_eq!(stream.first_mismatch(&source, 0, &data), None, "{}", method.name());
        }
    }

    #[test]
    fn durability_none_has_zero_sync_time_and_files_are_removed() {
        let parent = tempfile::tempdir().unwrap();
        let scratch = Scratch::create(parent.path()).unwrap();
        let source = Source::new(9);
        let case = Case::new(methods::by_name("pwrite").unwrap(), FileState::Empty, 4096, 1, Durability::None, 1 << 16);
        let mut calls = 0;
        let result = run_case(0, &case, &scratch, &source, &settings(false), &mut || calls += 1);
        assert_eq!(calls, 3);
        assert!(result.runs.iter().all(|run| run.sync_seconds == 0.0 && run.write_seconds > 0.0));
        assert_eq!(std::fs::read_dir(scratch.path()).unwrap().count(), 0);
    }

    #[test]
    fn split_covers_the_size_at_chunk_boundaries() {
        // 10 chunks of 100 over 3 threads: 4, 3, 3 chunks; the last is 50 bytes short.
        let parts = split(950, 100, 3, 1);
        assert_eq!(
            parts,
            vec![
                Part { file: 0, offset: 0, len: 400 },
                Part { file: 0, offset: 400, len: 300 },
                Part { file: 0, offset: 700, len: 250 },
            ]
        );
        let per_file = split(950, 100, 3, 3);
        assert_eq!(
            per_file.iter().map(|p| (p.file, p.offset, p.len)).collect::<Vec<_>>(),
            vec![(0, 0, 400), (1, 0, 300), (2, 0, 250)]
        );
        assert_eq!(split(5, 4096, 1, 1), vec![Part { file: 0, offset: 0, len: 5 }]);
        // More threads than chunks: the extra threads get nothing (the plan avoids this).
        assert_eq!(split(100, 100, 2, 1)[1].len, 0);
    }

    #[test]
    fn unsupported_and_failed_are_told_apart() {
        assert_eq!(status_of(&io::Error::from_raw_os_error(libc::EOPNOTSUPP)), Status::Unsupported);
        assert_eq!(status_of(&io::Error::from_raw_os_error(libc::ENOSPC)), Status::Failed);
    }
}
