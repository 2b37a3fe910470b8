//! `writebench latency`: the C/Python O_SYNC write-up's experiment done properly. N
//! small writes, each timed on its own into a histogram (docs/design.md §2.1: latency
//! cases time each operation), under each durability mode and write pattern:
//!
//! - `overwrite0`: `pwrite` of the same bytes at offset 0 (the C/Python O_SYNC
//!   write-up's device command);
//! - `append`: `write` at the file position, so the file grows by every call;
//! - the saves (`replace`, `replace-tmpfile`, `replace-unsafe`): an operation is one
//!   whole save of the file, every call of it (`measure::save` has them and why), and
//!   the case is one per size, under the save's own syncs rather than a mode. Each save
//!   writes the next `--bytes` of the case's stream (no two saves alike), and after each
//!   loop the target must hold exactly the last save's bytes, or the case fails.
//!
//! A case is several timed loops (`LatencyPlan::loops`, `--count` split over them), each a run
//! of its own into a new file, which the scheduler puts in its rounds with the other
//! cases, after the settle step, as it does write runs (docs/measurement.md): so that
//! the machine's drift spreads over every case and the margins between cases can be
//! tested on the spread of their loops. Each run has its loop's own rate and
//! percentiles; the case's percentiles merge the histograms of all its loops.
//!
//! An operation is the write call plus, when the mode syncs after it (`every:N`), the
//! sync call; the sync call is also recorded alone (`sync_latency_ns`). `end` has one
//! sync after the loop, timed as the run's sync span. Preparing the file (and opening it
//! with the mode's flags) is outside the timed loop; the first `warmup` operations of
//! each loop are done but not recorded. The run's `write_seconds` is the wall time of
//! the timed loop (two clock reads around it), and its CPU times are the thread's over
//! the loop and the sync (`getrusage` around them): measured, never a 0 standing for
//! "not read".

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;
use std::time::Instant;

use hdrhistogram::Histogram;
use serde_json::json;

use crate::case_runs::open_flags_refusal;
use crate::runtimes::{self, Launch, loops::Request};
use error::{CallError, no_progress, retry_eintr};
use measure::durability::{Pacing, sync_fd};
use measure::executor::{Cpu, CpuClock};
use measure::fd;
use measure::hygiene::RunFiles;
use measure::runs::CaseRuns;
use measure::save::Saver;
use measure::source::{Shape, Source, Stream, Streams};
use measure::target::Scratch;
use plan::FileState;
use plan::catalog::{self, NATIVE};
use plan::durability::{Durability, SyncCall};
use plan::latency::{LatencyPlan, Pattern, Unit};
use result::{CaseResult, Run, Status};

/// A latency case ready to run its loops, or why it is refused before any of them
/// (`unsupported`: a mode the call cannot take, a runner that is missing, no O_TMPFILE;
/// or `failed`). Each run is one timed loop into a file of its own, and the scheduler
/// puts the loops in its rounds with the other cases (docs/measurement.md).
pub fn prepare<'a>(
    index: usize,
    plan: &'a LatencyPlan,
    unit: &'a Unit,
    durability: Durability,
    scratch: &'a Scratch,
) -> Result<Box<dyn CaseRuns + 'a>, (Status, String)> {
    let pattern = unit.pattern;
    let launch = match unit.runtime.as_str() {
        NATIVE => None,
        runtime => Some(runtimes::launch(runtime).map_err(|reason| (Status::Unsupported, reason))?),
    };
    let prefix = format!("latency{index:04}");
    let bytes = unit.bytes as u64;
    let (files, memory) = if pattern.is_save() {
        // The target and the temp name: both removed after each loop, whatever happened.
        let files = RunFiles::new(scratch, prefix, 2, false);
        let names = files.names(0);
        let saver = Saver::new(scratch.dir_fd(), pattern, &names[0], &names[1])
            .map_err(|error| (Status::Failed, error.to_string()))?;
        if let Some(reason) = (pattern == Pattern::ReplaceTmpfile).then(|| saver.tmpfile_refusal()).flatten() {
            return Err((Status::Unsupported, reason));
        }
        // A save replaces the file: the old one and the new one are all it holds at once.
        (files, 2 * bytes)
    } else {
        if let Some(reason) = catalog::find(&unit.runtime, unit.method).and_then(|m| m.durability_refusal(durability)) {
            return Err((Status::Unsupported, reason));
        }
        let file_len = if pattern == Pattern::Overwrite0 { bytes } else { bytes * plan.per_loop() };
        let shape = Shape::new(1, bytes, 1, None, bytes);
        let probe = format!("{prefix}-probe.dat");
        open_flags_refusal(&probe, durability, bytes, &[file_len], shape.period(), scratch)?;
        (RunFiles::new(scratch, prefix, 1, false), file_len)
    };
    Ok(Box::new(Loops {
        plan,
        unit,
        durability,
        launch,
        source: Source::new(plan.seed),
        scratch,
        files,
        memory,
        operations: histogram(),
        syncs: histogram(),
        merged: 0,
    }))
}

/// The loops of one latency case, and the histograms of every loop so far, merged.
struct Loops<'a> {
    plan: &'a LatencyPlan,
    unit: &'a Unit,
    durability: Durability,
    /// The runner, for the runtimes other than native.
    launch: Option<Launch>,
    source: Source,
    scratch: &'a Scratch,
    files: RunFiles<'a>,
    /// What a loop puts in the page cache, for the settle step before it.
    memory: u64,
    operations: Histogram<u64>,
    syncs: Histogram<u64>,
    /// Loops whose histograms are merged in.
    merged: usize,
}

impl CaseRuns for Loops<'_> {
    fn run_once(&mut self, number: u32) -> Result<Run, (Status, String)> {
        let how = How { plan: self.plan, unit: self.unit, durability: self.durability, launch: self.launch.as_ref() };
        let (source, scratch) = (&self.source, self.scratch);
        let mut histograms = None;
        let run = self.files.run_settled(number, (self.memory, self.memory), |names| {
            let measured = if how.unit.pattern.is_save() {
                let saver = Saver::new(scratch.dir_fd(), how.unit.pattern, &names[0], &names[1])
                    .map_err(|error| CallError::new("name the save's files", error))?;
                saves(&saver, &names[0], &how, source, scratch)?
            } else {
                measure(&names[0], &how, source, scratch)?
            };
            histograms = Some((measured.operations, measured.syncs));
            Ok(measured.run)
        })?;
        if let Some((operations, syncs)) = histograms {
            // Same bounds on both sides: adding cannot fail.
            self.operations.add(&operations).expect("histograms of one shape");
            self.syncs.add(&syncs).expect("histograms of one shape");
            self.merged += 1;
        }
        Ok(run)
    }

    /// Every loop is measured: its own untimed operations warm it.
    fn warmups(&self, _rounds: u32) -> u32 {
        0
    }

    /// The case's percentiles cover every operation of every loop.
    fn conclude(&mut self, result: &mut CaseResult) {
        debug_assert_eq!(self.merged, result.runs.len(), "no loop is discarded");
        result.latency_ns = Some(summary(&self.operations));
        result.sync_latency_ns = (!self.syncs.is_empty()).then(|| summary(&self.syncs));
    }

    /// Its operations per second are a summary over the loops, from their times, as
    /// `stats` is: the rounds compute it.
    fn operations_per_run(&self) -> Option<u64> {
        Some(self.plan.per_loop())
    }
}

struct Measured {
    run: Run,
    operations: Histogram<u64>,
    syncs: Histogram<u64>,
}

impl Measured {
    /// One timed loop, native's or a runner's: the run is the loop and its `end` sync,
    /// with the loop's own rate and percentiles.
    fn of_loop(
        plan: &LatencyPlan,
        loop_seconds: f64,
        sync_seconds: f64,
        cpu: Option<Cpu>,
        operations: Histogram<u64>,
        syncs: Histogram<u64>,
    ) -> Measured {
        let run = Run {
            write_seconds: loop_seconds,
            sync_seconds,
            setup_seconds: 0.0,
            thread_seconds: vec![loop_seconds],
            user_seconds: cpu.map(|cpu| cpu.user),
            sys_seconds: cpu.map(|cpu| cpu.sys),
            ops_per_second: Some(plan.per_loop() as f64 / loop_seconds),
            latency_ns: Some(summary(&operations)),
            ..Run::default()
        };
        Measured { run, operations, syncs }
    }
}

fn histogram() -> Histogram<u64> {
    // 1 ns to an hour at 3 significant digits; values above are clamped by `saturating_record`.
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid histogram bounds")
}

/// What one latency case is: the plan, who writes, under which mode.
struct How<'a> {
    plan: &'a LatencyPlan,
    unit: &'a Unit,
    durability: Durability,
    /// The runner, for the runtimes other than native.
    launch: Option<&'a Launch>,
}

fn measure(name: &str, how: &How, source: &Source, scratch: &Scratch) -> Result<Measured, CallError> {
    let (plan, pattern, durability, size) = (how.plan, how.unit.pattern, how.durability, how.unit.bytes);
    let shape = Shape::new(1, size as u64, 1, None, size as u64);
    let streams = Streams::new(source, &[name.to_string()], &[0], shape)
        .map_err(|e| CallError::new("allocate the source buffer", e))?;
    let (state, len) = match pattern {
        Pattern::Overwrite0 => (FileState::Overwrite, size as u64),
        _ => (FileState::Empty, 0),
    };
    let prepared = scratch.prepare(name, state, len, plan.seed)?;
    let flags = durability.open_flags();
    let file = if flags != 0 { scratch.reopen(name, prepared.as_raw_fd(), flags)? } else { prepared };
    let fd = file.as_raw_fd();
    if let Some(launch) = how.launch {
        return through_runner(how, launch, &scratch.path().join(name), &streams, fd);
    }
    let mut operations = histogram();
    let mut syncs = histogram();
    let pacing = Pacing::of(durability, 1, 1);
    let mut pacer = pacing.pacer();
    let mut cursor = streams.writer(0).cursor(0);
    let mut loop_started = Instant::now();
    let mut cpu = CpuClock::now();
    for number in 0..plan.warmup + plan.per_loop() {
        if number == plan.warmup {
            cpu = CpuClock::now();
            loop_started = Instant::now();
        }
        if pattern == Pattern::Overwrite0 {
            // The same bytes at offset 0 every time.
            cursor.restart(0);
        }
        let bytes = cursor.take(size);
        let started = Instant::now();
        write_once(fd, pattern, bytes)?;
        let written = Instant::now();
        let synced = if pacer.due() {
            pacer.sync_now(fd)?;
            Some(Instant::now())
        } else {
            None
        };
        if number >= plan.warmup {
            operations.saturating_record(nanos(synced.unwrap_or(written) - started));
            if let Some(synced) = synced {
                syncs.saturating_record(nanos(synced - written));
            }
        }
    }
    let loop_ended = Instant::now();
    let sync_seconds = match durability.end_sync() {
        Some(call) => {
            sync_fd(call, fd)?;
            loop_ended.elapsed().as_secs_f64()
        }
        None => 0.0,
    };
    let cpu = CpuClock::now().since(cpu);
    if durability.end_sync().is_none() {
        // Untimed: the next case must not pay for this one's writeback.
        sync_fd(SyncCall::Fsync, fd)?;
    }
    let loop_seconds = (loop_ended - loop_started).as_secs_f64();
    Ok(Measured::of_loop(plan, loop_seconds, sync_seconds, Some(cpu), operations, syncs))
}

/// The saves of one case, each timed whole, and the check that the target holds the
/// last one. Preparing the target, and the source data of each save, are untimed.
fn saves(saver: &Saver, target: &str, how: &How, source: &Source, scratch: &Scratch) -> Result<Measured, CallError> {
    let (plan, size) = (how.plan, how.unit.bytes);
    let saves = plan.warmup + plan.per_loop();
    let shape = Shape::new(1, size as u64, 1, None, (size as u64).saturating_mul(saves));
    let streams = Streams::new(source, &[target.to_string()], &[0], shape)
        .map_err(|e| CallError::new("allocate the source buffer", e))?;
    // The target exists before the first save, so that every rename replaces a file;
    // it holds other bytes than any save (a prefill), and its creation is committed.
    let prepared = scratch.prepare(target, FileState::Overwrite, size as u64, plan.seed)?;
    fd::close(prepared).map_err(|e| CallError::new(format!("close {target}"), e))?;
    scratch.sync_dir().map_err(|e| CallError::new("fsync of the scratch directory", e))?;
    let mut operations = histogram();
    // Each save takes the next `size` bytes of the stream: no two saves alike.
    let mut cursor = streams.writer(0).cursor(0);
    let mut loop_started = Instant::now();
    let mut cpu = CpuClock::now();
    for number in 0..saves {
        if number == plan.warmup {
            cpu = CpuClock::now();
            loop_started = Instant::now();
        }
        let bytes = cursor.take(size);
        let started = Instant::now();
        saver.save(bytes)?;
        if number >= plan.warmup {
            operations.saturating_record(nanos(started.elapsed()));
        }
    }
    let loop_seconds = loop_started.elapsed().as_secs_f64();
    let cpu = CpuClock::now().since(cpu);
    drop(cursor);
    let held = saver.read_target()?;
    holds_last_save(&held, streams.file(0), source, (saves - 1) * size as u64, size)
        .map_err(|what| CallError::new(format!("check of {target}"), io::Error::other(what)))?;
    if how.durability == Durability::None {
        // Untimed: the next case must not pay for this one's writeback.
        scratch.sync_name(target).map_err(|e| CallError::new(format!("fsync of {target}"), e))?;
        scratch.sync_dir().map_err(|e| CallError::new("fsync of the scratch directory", e))?;
    }
    Ok(Measured::of_loop(plan, loop_seconds, 0.0, Some(cpu), operations, histogram()))
}

/// Whether `held`, the target read back, is exactly the last save: `size` bytes of the
/// stream from file offset `last`. Else what is wrong with it.
fn holds_last_save(held: &[u8], stream: &Stream, source: &Source, last: u64, size: usize) -> Result<(), String> {
    if held.len() != size {
        return Err(format!("holds {} bytes, the last save wrote {size}", held.len()));
    }
    match stream.first_mismatch(source, last, held) {
        Some(at) => Err(format!("differs from the last save's bytes at byte {}", at - last)),
        None => Ok(()),
    }
}

/// The case in a runner: it times the operations, writebench makes the histograms.
fn through_runner(
    how: &How,
    launch: &Launch,
    path: &Path,
    streams: &Streams,
    fd: RawFd,
) -> Result<Measured, CallError> {
    let (plan, unit) = (how.plan, how.unit);
    let mut bytes = vec![0u8; unit.bytes];
    streams.file(0).fill(streams.source(), 0, &mut bytes);
    let request = Request {
        method: unit.method,
        pattern: unit.pattern.name(),
        count: plan.per_loop(),
        warmup: plan.warmup,
        durability: how.durability,
        path,
        source: &bytes,
    };
    let samples = runtimes::loops::measure(&unit.runtime, launch, &request)?;
    if how.durability.end_sync().is_none() {
        // Untimed: the next case must not pay for this one's writeback.
        sync_fd(SyncCall::Fsync, fd)?;
    }
    let mut operations = histogram();
    let mut syncs = histogram();
    samples.ops.iter().for_each(|&ns| operations.saturating_record(ns));
    samples.syncs.iter().for_each(|&ns| syncs.saturating_record(ns));
    Ok(Measured::of_loop(plan, samples.loop_seconds, samples.sync_seconds, samples.cpu, operations, syncs))
}

fn nanos(duration: std::time::Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX).max(1)
}

/// One call of the pattern; a short write continues with the rest (never seen for a
/// few bytes into a regular file, but a short count is not an error).
fn write_once(fd: RawFd, pattern: Pattern, mut buf: &[u8]) -> Result<(), CallError> {
    let mut offset = 0u64;
    while !buf.is_empty() {
        // SAFETY: `buf` is valid for reads of its length; `fd` is open.
        let written = retry_eintr(|| unsafe {
            match pattern {
                Pattern::Overwrite0 => libc::pwrite(fd, buf.as_ptr().cast(), buf.len(), offset as libc::off_t),
                _ => libc::write(fd, buf.as_ptr().cast(), buf.len()),
            }
        })
        .and_then(|n| if n == 0 { Err(no_progress()) } else { Ok(n) })
        .map_err(|error| CallError::new(format!("{} of {} bytes", pattern.name(), buf.len()), error))?;
        buf = &buf[written..];
        offset += written as u64;
    }
    Ok(())
}

/// docs/design.md §4's latency keys, in nanoseconds. The p99.9 only from 10,000
/// operations on: below, fewer than ten operations lie beyond it, and of 1,000 it is the
/// slowest but one, a figure of one or two samples (docs/measurement.md).
fn summary(histogram: &Histogram<u64>) -> serde_json::Value {
    let p999 = (histogram.len() >= P999_FROM).then(|| histogram.value_at_quantile(0.999));
    json!({
        "count": histogram.len(),
        "mean": histogram.mean(),
        "p50": histogram.value_at_quantile(0.50),
        "p90": histogram.value_at_quantile(0.90),
        "p99": histogram.value_at_quantile(0.99),
        "p999": p999,
        "max": histogram.max(),
    })
}

/// The operations a p99.9 needs: ten beyond it.
const P999_FROM: u64 = 10_000;

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn the_target_must_hold_the_last_save_not_an_earlier_one_nor_a_part() {
        let source = Source::new(1);
        let stream = Stream::timed(1, "t", measure::source::PERIOD);
        let save = |number: u64| {
            let mut bytes = vec![0u8; 8192];
            stream.fill(&source, number * 8192, &mut bytes);
            bytes
        };
        assert_eq!(holds_last_save(&save(9), &stream, &source, 9 * 8192, 8192), Ok(()));
        let earlier = holds_last_save(&save(8), &stream, &source, 9 * 8192, 8192).unwrap_err();
        assert!(earlier.starts_with("differs from the last save's bytes at byte 0"), "{earlier}");
        let mut flipped = save(9);
        flipped[5000] ^= 1;
        let error = holds_last_save(&flipped, &stream, &source, 9 * 8192, 8192).unwrap_err();
        assert!(error.ends_with("at byte 5000"), "{error}");
        let error = holds_last_save(&save(9)[..4096], &stream, &source, 9 * 8192, 8192).unwrap_err();
        assert_eq!(error, "holds 4096 bytes, the last save wrote 8192");
    }
}
