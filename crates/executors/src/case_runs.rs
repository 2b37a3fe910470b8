//! Runs cases: refusals up front, then each run (docs/design.md §2): the files prepared in
//! their state, the parts written by an executor, the timed spans made into a `Run`,
//! then the untimed sync, verification and removal. The order of the runs is the
//! rounds' (`rounds::scheduler`). Nothing here knows a method's internals: the executor and the method's
//! engine do the writing. (The language programs that write other runtimes' cases are the
//! *runners*, `executors::runtimes`; this module only picks their executor.)

use std::os::fd::{AsRawFd, RawFd};

use crate::runtimes;
use context::CpuTicks;
use context::device::BlockDevice;
use error::CallError;
use measure::creation;
use measure::durability::{Pacing, direct_refusal};
use measure::executor::{Cpu, Execution, Executor, InProcess};
use measure::fd;
use measure::hygiene::{RunFiles, status_of};
use measure::methods::{self, CreateCall, Job, Part, Stonewall, fsync_all};
use measure::runs::CaseRuns;
use measure::source::{Shape, Source, Streams};
use measure::target::Scratch;
use plan::catalog::{self, NATIVE};
use plan::data_source::DataSource;
use plan::{Case, Durability, FileState};
use result::{Run, Status, Stonewalled};

#[derive(Debug, Clone)]
pub struct RunSettings {
    pub repeat: u32,
    pub warmup: u32,
    pub seed: u64,
    /// Leave every run's files in the scratch directory (tests read them back).
    pub keep_files: bool,
    /// Read every run's files back after its timed span (`--verify`).
    pub verify: Option<measure::verify::Verify>,
    /// Skip creation cases that statvfs says cannot fit (off: let the call fail itself).
    pub space_check: bool,
    /// `--drop-cache`: drop each prepared file's pages from the page cache before the
    /// timed span (the overwrite state is otherwise cache-warm).
    pub drop_cache: bool,
    /// `--mpi`: this process is one rank of an MPI job, and runs its share of each case.
    pub ranks: Option<crate::ranks::Ranks>,
    /// `--stonewall`: each writer stops issuing calls this long after its start line.
    pub stonewall: Option<std::time::Duration>,
    /// `--source`: where the writers' data comes from (docs/measurement.md).
    pub source: DataSource,
}

/// A case ready to run again and again, or why it is refused up front, before any of
/// its runs: `unsupported`, `skipped` or `failed`, with the reason (as the error of
/// [`CaseRuns::run_once`]; `CaseResult::without_result` makes it the case's result).
pub fn prepare_case<'a>(
    index: usize,
    case: &'a Case,
    scratch: &'a Scratch,
    source: &'a Source,
    settings: &'a RunSettings,
) -> Result<Box<dyn CaseRuns + 'a>, (Status, String)> {
    let Some(method) = catalog::find(&case.runtime, &case.method) else {
        let reason = format!("the {} runtime has no method {}", case.runtime, case.method);
        return Err((Status::Unsupported, reason));
    };
    // Native write methods have an engine here; the other runtimes' methods are written
    // by their runner process, and the creation methods by `creation`.
    let engine = if case.runtime == NATIVE { methods::engine(&case.method) } else { None };
    let refusal = engine
        .and_then(|engine| engine.unsupported_reason())
        .or_else(|| method.durability_refusal(case.durability))
        .or_else(|| method.mode_refusal(case.durability))
        .or_else(|| settings.stonewall.and_then(|_| stonewall_refusal(case, engine)))
        .or_else(|| source_refusal(case, settings.source))
        .or_else(|| {
            if case.state == FileState::Empty { method.empty_file_refusal() } else { method.sized_file_refusal() }
        });
    if let Some(reason) = refusal {
        return Err((Status::Unsupported, reason));
    }
    let share = match (settings.ranks, case.ranks) {
        (Some(_), Some(_)) if method.creation.is_some() || case.runtime != NATIVE => {
            return Err((Status::Unsupported, "under --mpi only the native write methods run".to_string()));
        }
        (Some(ranks), Some(size)) if size as usize == ranks.size() => Share::of_rank(case, ranks.rank(), ranks.size()),
        (Some(ranks), _) => {
            let reason = format!("a case for {:?} ranks in a job of {}", case.ranks, ranks.size());
            return Err((Status::Failed, reason));
        }
        (None, _) => Share::whole(case),
    };
    // On a shared file, only rank 0 creates and removes it; the others join it.
    let keep = settings.keep_files || share.joins;
    let files = RunFiles::new(scratch, format!("case{index:04}{}", share.suffix), share.file_lens.len() as u32, keep);
    if let Some(create) = method.creation {
        let runs = creation::prepare(files, case, CreateCall::of(create), scratch, settings.space_check)?;
        return Ok(Box::new(runs));
    }
    // Each rank probes a file of its own, also in a shared directory.
    let rank = settings.ranks.map(|ranks| format!("-rank{}", ranks.rank())).unwrap_or_default();
    let probe = format!("case{index:04}{rank}-probe.dat");
    open_flags_refusal(&probe, case.durability, case.chunk_bytes, &share.file_lens, share.shape.period(), scratch)?;
    let executor: Box<dyn Executor> = match (engine, settings.ranks) {
        (Some(engine), Some(ranks)) => Box::new(crate::ranks::executor::RankExecutor::new(engine, ranks)),
        (Some(engine), None) => Box::new(InProcess::new(engine)),
        (None, _) => {
            let launch = runtimes::launch(&case.runtime).map_err(|reason| (Status::Unsupported, reason))?;
            Box::new(runtimes::External::new(&case.runtime, &case.method, launch))
        }
    };
    let device = BlockDevice::of(scratch.path());
    let Share { parts, file_lens, mut shape, joins, shared, .. } = share;
    if settings.source == DataSource::Memory {
        shape = shape.from_memory(parts.iter().map(|part| part.len).max().unwrap_or(0));
    }
    Ok(Box::new(WriteRuns {
        work: WriteCase { case, parts, file_lens, shape, joins, shared, executor, scratch, source, settings, device },
        files,
        last_written: None,
    }))
}

/// Why `--stonewall` cannot stop `case`'s writers, if it cannot (its engine says why;
/// the other runtimes' runners have no wall).
fn stonewall_refusal(case: &Case, engine: Option<&dyn methods::Engine>) -> Option<String> {
    match engine {
        Some(engine) => {
            engine.wall_refusal().map(|why| format!("--stonewall: {} cannot stop at the wall: {why}", case.method))
        }
        None => Some(format!("--stonewall: only the native methods stop at the wall, not {}", case.runtime)),
    }
}

/// Why the case cannot write from `source`, if it cannot: the other runtimes' runners
/// write from the one buffer they map (docs/runtimes.md).
fn source_refusal(case: &Case, source: DataSource) -> Option<String> {
    (source == DataSource::Memory
        && case.runtime != NATIVE
        && catalog::by_name(&case.method).is_none_or(|m| m.creation.is_none()))
    .then(|| {
        format!(
            "--source memory: the {} runner writes from the source writebench hands it, just written and not flushed from the CPU caches",
            case.runtime
        )
    })
}

/// What one process writes of a case: all of it, or under `--mpi` its rank's share.
struct Share {
    parts: Vec<Part>,
    file_lens: Vec<u64>,
    shape: Shape,
    /// Added to the names of the rank's files (its own, on a PATH all ranks share).
    suffix: String,
    /// Every rank writes into one file (the same on every rank).
    shared: bool,
    /// This rank opens the shared file that rank 0 made (every rank but 0).
    joins: bool,
}

impl Share {
    fn whole(case: &Case) -> Share {
        let parts = split(case.bytes, case.chunk_bytes, case.threads, case.files);
        let file_lens: Vec<u64> = if case.files > 1 { parts.iter().map(|p| p.len).collect() } else { vec![case.bytes] };
        Share { parts, file_lens, shape: shape_of(case), suffix: String::new(), shared: false, joins: false }
    }

    /// Rank `rank` of `size`: with one shared file, its threads' parts of the split of
    /// the whole over every thread of every rank (disjoint ranges at chunk boundaries);
    /// with a file per rank, its share of the size in a file of its own, split over its
    /// threads. Its threads always share its file (or the one file).
    fn of_rank(case: &Case, rank: usize, size: usize) -> Share {
        let threads = case.threads as usize;
        if case.files == 1 {
            let all = split(case.bytes, case.chunk_bytes, (threads * size) as u32, 1);
            let writers = (threads * size) as u32;
            // The same stream period on every rank: each writes the one file's stream.
            let shape =
                Shape::new(writers, case.chunk_bytes, case.iov, case.queue_depth, case.bytes).with_pages(case.pages);
            let parts = all[rank * threads..(rank + 1) * threads].to_vec();
            Share { parts, file_lens: vec![case.bytes], shape, suffix: String::new(), shared: true, joins: rank != 0 }
        } else {
            let bytes = split(case.bytes, case.chunk_bytes, size as u32, size as u32)[rank].len;
            let parts = split(bytes, case.chunk_bytes, case.threads, 1);
            let shape =
                Shape::new(case.threads, case.chunk_bytes, case.iov, case.queue_depth, bytes).with_pages(case.pages);
            Share { parts, file_lens: vec![bytes], shape, suffix: format!("-rank{rank}"), shared: false, joins: false }
        }
    }
}

/// What preparing a run's files took: (seconds, of which their fsyncs), summed over
/// the files; None where this process did not prepare them (an MPI rank joining). A new
/// file has no fsync of its preparation: a program folds it into its one final sync.
type PrepareTimes = Option<(f64, Option<f64>)>;

/// A write case, ready to run again and again.
struct WriteRuns<'a> {
    work: WriteCase<'a>,
    files: RunFiles<'a>,
    /// Under `--stonewall`: what the last run wrote by the wall.
    last_written: Option<u64>,
}

impl CaseRuns for WriteRuns<'_> {
    fn run_once(&mut self, number: u32) -> Result<Run, (Status, String)> {
        let work = &self.work;
        // What the run puts in memory: its bytes through the page cache, none past it;
        // under --stonewall, about what the last run wrote by the wall (a quarter more
        // for a faster run), not the whole --size, which can be far more.
        let bytes = self.last_written.map_or(work.case.bytes, |last| (last + last / 4).min(work.case.bytes));
        let memory = if work.case.durability.direct { 0 } else { bytes };
        // The room it needs is what it writes, as the check before the cases counted it.
        let run = self.files.run_settled(number, (memory, bytes), |names| work.run(names, number));
        if let Ok(Run { stonewall: Some(wall), .. }) = &run {
            self.last_written = Some(wall.bytes);
        }
        run
    }
}

/// What every run of a write case shares.
struct WriteCase<'a> {
    case: &'a Case,
    parts: Vec<Part>,
    file_lens: Vec<u64>,
    /// What the writers' source buffers must hold (see `measure::source`).
    shape: Shape,
    /// `--mpi` with one shared file: every rank writes into it.
    shared: bool,
    /// This rank opens the shared file rank 0 made instead of making it.
    joins: bool,
    executor: Box<dyn Executor + 'a>,
    scratch: &'a Scratch,
    source: &'a Source,
    settings: &'a RunSettings,
    /// The block device under the scratch directory, whose counters each run reads.
    device: Option<BlockDevice>,
}

impl WriteCase<'_> {
    /// Run `number` (warm-ups included) into the files `names`.
    fn run(&self, names: &[String], number: u32) -> Result<Run, CallError> {
        let case = self.case;
        // Untimed, before any of the run's files exists: each part's buffer, with the
        // streams of this run's files, and the first lap of each stamped for its part
        // (measure::source). Every step that can fail is agreed with the other ranks
        // under --mpi (see Executor::agree).
        let part_files: Vec<usize> = self.parts.iter().map(|part| part.file).collect();
        let streams = Streams::new(self.source, names, &part_files, self.shape)
            .map_err(|error| CallError::new("allocate the writers' source buffers", error));
        self.executor.agree(streams.as_ref().err())?;
        let streams = streams?;
        streams.prestamp(self.parts.iter().map(|part| (part.offset, part.len)));
        if self.settings.source == DataSource::Memory {
            streams.evict();
        }
        let wall = self.settings.stonewall.map(|after| Stonewall::new(after, self.parts.len()));
        // A new file's span opens at its open(O_CREAT) (docs/answer.md, "One span a
        // program pays"): the machine's state is read before it. A fully written file's
        // preparation (its prefill and fsync) is no program's: read after it.
        let new_file = case.state.is_new_file();
        let mut before = new_file.then(|| Samples::now(self.device.as_ref()));
        let opened = std::time::Instant::now();
        let files = if self.joins { Ok((Vec::new(), None)) } else { self.prepare(names) };
        self.executor.agree(files.as_ref().err())?;
        let (mut files, prepared) = files?;
        if self.shared {
            // Rank 0 made the shared file (agreed above); the others open it now.
            let joined = if self.joins { self.join(names) } else { Ok(Vec::new()) };
            self.executor.agree(joined.as_ref().err())?;
            files.extend(joined?);
        }
        let fds: Vec<RawFd> = files.iter().map(|f| f.as_raw_fd()).collect();
        let paths: Vec<std::path::PathBuf> = names.iter().map(|name| self.scratch.path().join(name)).collect();
        let job = Job {
            stonewall: wall.as_ref(),
            files: &fds,
            paths: &paths,
            file_lens: &self.file_lens,
            parts: &self.parts,
            chunk: case.chunk_bytes as usize,
            iov: case.iov as usize,
            queue_depth: case.queue_depth.unwrap_or(1) as usize,
            source: &streams,
            durability: case.durability,
            pacing: Pacing::of(case.durability, self.parts.len(), fds.len()),
        };
        let before = before.get_or_insert_with(|| Samples::now(self.device.as_ref()));
        let called = opened.elapsed().as_secs_f64();
        let execution = self.executor.execute(&job)?;
        // A new file's name is durable once its directory is synced: the durable span
        // of a program that makes the file holds that fsync too (rank 0 made a shared file).
        let dir_sync = if new_file && case.durability.syncs() && !self.joins {
            let started = std::time::Instant::now();
            let synced = self.scratch.sync_dir().map_err(|error| CallError::new("fsync of the directory", error));
            Some(synced.map(|()| started.elapsed().as_secs_f64()))
        } else {
            None
        };
        // Agreed, so that no rank waits at the next step for one that failed here.
        self.executor.agree(dir_sync.as_ref().and_then(|synced| synced.as_ref().err()))?;
        let dir_sync = dir_sync.transpose()?;
        let after = Samples::now(self.device.as_ref());
        let mut run = run_of(&execution);
        if let Some(wall) = &mut run.stonewall {
            wall.of_bytes = case.bytes;
        }
        (run.prepare_seconds, run.prepare_sync_seconds) =
            prepared.map_or((None, None), |(all, sync)| (Some(all), sync));
        if new_file && run.stonewall.is_none() {
            (run.new_file_seconds, run.new_file_durable_seconds) =
                new_file_spans(&execution, &run, called, case.durability.syncs().then_some(dir_sync.unwrap_or(0.0)));
        }
        // A runner's CPU is in /proc/stat's but not in ours: it is the run's own. So is
        // that of the other ranks on this host under --mpi: they are the job.
        let runner_cpu = match &self.settings.ranks {
            Some(ranks) => run
                .ranks
                .iter()
                .filter(|other| other.rank as usize != ranks.rank())
                .filter(|other| ranks.hosts.get(other.rank as usize).is_some_and(|host| host == ranks.host))
                .map(|other| other.cpu_seconds().unwrap_or(0.0))
                .sum(),
            None if case.runtime == NATIVE => 0.0,
            // A runner that cannot read its CPU time leaves it in the others' share.
            None => run.cpu_seconds().unwrap_or(0.0),
        };
        // Over the window the samples span: a new file's whole span, else the timed spans.
        let window = run.new_file_durable_seconds.or(run.new_file_seconds).unwrap_or_else(|| run.durable_seconds());
        run.others_cpu_share = before
            .cpu
            .zip(after.cpu)
            .map(|(before, after)| before.others_seconds(&after, runner_cpu) / window.max(f64::MIN_POSITIVE));
        run.device = before.disk.zip(after.disk).map(|(before, after)| before.until(&after));
        run.dirty_before_bytes = before.dirty.map(|m| m.dirty);
        run.writeback_before_bytes = before.dirty.map(|m| m.writeback);
        run.dirty_after_bytes = after.dirty.map(|m| m.dirty);
        run.writeback_after_bytes = after.dirty.map(|m| m.writeback);
        // Each step agreed: every rank's part is written and synced before any rank reads
        // the shared file back, and every rank is done with it before rank 0 removes it.
        let durable = self.make_durable(&fds, &mut run);
        self.executor.agree(durable.as_ref().err())?;
        durable?;
        let verified = self.verify(&fds, &streams, number);
        self.executor.agree(verified.as_ref().err())?;
        verified?;
        Ok(run)
    }
}

/// What is read of the machine on either side of a run's span, untimed: its dirty
/// memory, the device's counters and every CPU's ticks.
struct Samples {
    dirty: Option<context::DirtyMemory>,
    disk: Option<context::device::DiskSample>,
    cpu: Option<CpuTicks>,
}

impl Samples {
    fn now(device: Option<&BlockDevice>) -> Samples {
        Samples { dirty: context::DirtyMemory::now(), disk: device.and_then(BlockDevice::sample), cpu: CpuTicks::now() }
    }
}

/// A new file's one span (`Run::new_file_seconds` and, with `dir_sync` where the mode
/// syncs, `new_file_durable_seconds`): `called` seconds from `open(O_CREAT)` to the
/// executor's call, the executor's lead to its origin, then the write span, or on through
/// the sync and closing steps, and the directory's fsync. One clock (CLOCK_MONOTONIC)
/// where the executor is this process; a runner process reports its set-up as its lead.
/// Left out, as from the write span: the writer threads' start between the origin and
/// the start line, which a program that keeps its threads (a pool) does not pay per file.
fn new_file_spans(execution: &Execution, run: &Run, called: f64, dir_sync: Option<f64>) -> (Option<f64>, Option<f64>) {
    if execution.parts.is_empty() {
        return (None, None);
    }
    let written = called + execution.lead_seconds + run.write_seconds;
    (Some(written), dir_sync.map(|dir| written + run.sync_seconds + dir))
}

impl WriteCase<'_> {
    /// The files `names`, made and brought into the case's state, each opened with the
    /// mode's flags for the timed run.
    /// Also what preparing them took: (seconds, of which the fsync), summed over the files.
    fn prepare(&self, names: &[String]) -> Result<(Vec<std::os::fd::OwnedFd>, PrepareTimes), CallError> {
        let case = self.case;
        let flags = case.durability.open_flags();
        let mut files = Vec::with_capacity(names.len());
        let (mut seconds, mut sync_seconds) = (0.0, 0.0);
        if case.state.is_new_file() {
            // As a program makes it: opened with the mode's flags, no fsync of its own.
            let started = std::time::Instant::now();
            for (name, &len) in names.iter().zip(&self.file_lens) {
                files.push(self.scratch.create_new(name, case.state, len, flags)?);
            }
            return Ok((files, Some((started.elapsed().as_secs_f64(), None))));
        }
        for (name, &len) in names.iter().zip(&self.file_lens) {
            let timed = self.scratch.prepare_timed(name, case.state, len, self.settings.seed)?;
            seconds += timed.seconds;
            sync_seconds += timed.sync_seconds;
            let prepared = timed.fd;
            if self.settings.drop_cache {
                // Untimed, after prepare's fsync: the pages are clean, so they can go.
                fd::drop_cache(prepared.as_raw_fd())
                    .map_err(|error| CallError::new(format!("posix_fadvise(DONTNEED) of {name}"), error))?;
            }
            // The timed run gets a descriptor with the mode's open flags; the state was
            // prepared without them.
            files.push(if flags != 0 { self.scratch.reopen(name, prepared.as_raw_fd(), flags)? } else { prepared });
        }
        Ok((files, Some((seconds, Some(sync_seconds)))))
    }

    /// The shared file of an `--mpi` case, made by rank 0, opened by another rank.
    fn join(&self, names: &[String]) -> Result<Vec<std::os::fd::OwnedFd>, CallError> {
        let flags = self.case.durability.open_flags();
        names.iter().map(|name| self.scratch.join(name, flags)).collect()
    }

    /// Untimed, after the timed spans: the data made durable where the mode did not,
    /// then what stayed in the page cache.
    fn make_durable(&self, fds: &[RawFd], run: &mut Run) -> Result<(), CallError> {
        if self.case.durability.end_sync().is_none() {
            // Untimed: the next run must not pay for this run's writeback.
            fsync_all(fds)?;
        }
        // Untimed, once the data is durable and before verification reads it back.
        run.resident_bytes = measure::residency::resident_bytes(fds, &self.file_lens);
        Ok(())
    }

    /// Untimed: the content must be what was written (a shared file: all of it, on
    /// every rank).
    fn verify(&self, fds: &[RawFd], streams: &Streams, number: u32) -> Result<(), CallError> {
        match &self.settings.verify {
            Some(verify) if !verify.first_only || number == self.settings.warmup => {
                measure::verify::check(verify, fds, &self.file_lens, streams)
            }
            _ => Ok(()),
        }
    }
}

/// The timed spans of an execution (see `methods::Prepared`): the write span from the
/// earliest start to the last part written; the sync span, the one sync, or with a
/// sync per file from the last part written to the last sync returned. The closing
/// steps end the sync span when there is one, else the write span. CPU time is the
/// writers' and the executing thread's over those spans.
fn run_of(execution: &Execution) -> Run {
    let parts = &execution.parts;
    let start = parts.iter().map(|p| p.start).fold(f64::INFINITY, f64::min);
    let written = parts.iter().map(|p| p.end).fold(f64::NEG_INFINITY, f64::max);
    let last_synced = parts.iter().filter_map(|p| p.synced).reduce(f64::max);
    let sync = match (execution.sync, last_synced) {
        (Some(sync), _) => Some(sync.seconds()),
        (None, Some(synced)) => Some(synced - written),
        (None, None) => None,
    };
    let close = execution.close.map_or(0.0, |close| close.seconds());
    let (write_seconds, sync_seconds) = match sync {
        Some(sync) => (written - start, sync + close),
        // No sync call, no sync time: not the few nanoseconds between two clock reads.
        None => (written - start + close, 0.0),
    };
    let cpu = Cpu::sum(std::iter::once(execution.cpu).chain(parts.iter().map(|part| part.cpu)));
    // Every part reports what it wrote under --stonewall (the case's bytes: the caller's).
    let stonewall =
        parts.iter().map(|part| part.written).collect::<Option<Vec<(u64, bool)>>>().map(|written| Stonewalled {
            bytes: written.iter().map(|w| w.0).sum(),
            of_bytes: 0,
            writer_bytes: written.iter().map(|w| w.0).collect(),
            stopped: written.iter().filter(|w| w.1).count() as u32,
        });
    Run {
        stonewall,
        write_seconds,
        sync_seconds,
        setup_seconds: execution.setup_seconds,
        thread_seconds: parts.iter().map(|part| part.end - start).collect(),
        user_seconds: cpu.map(|cpu| cpu.user),
        sys_seconds: cpu.map(|cpu| cpu.sys),
        ring: execution.ring.clone(),
        ranks: execution.ranks.clone(),
        ..Run::default()
    }
}

/// What the writers' source buffers of `case` must hold (see `measure::source`).
fn shape_of(case: &Case) -> Shape {
    Shape::new(case.threads, case.chunk_bytes, case.iov, case.queue_depth, case.bytes).with_pages(case.pages)
}

/// Whether the filesystem opens files with the case's flags, and, for O_DIRECT, whether
/// the case's calls meet the alignment (asked on a throw-away file, once per case).
/// `probe` is the name of the throw-away file; `lens` the lengths of the case's files;
/// `period` the period of the writers' source buffers, whose memory must be aligned too.
pub fn open_flags_refusal(
    probe: &str,
    durability: Durability,
    chunk: u64,
    lens: &[u64],
    period: usize,
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
        if let Some(reason) = direct_refusal(&alignment, chunk, lens, period) {
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

/// The settings the tests run a case with, here and in the rounds' engine tests: a
/// warm-up and two runs, seed 9, files removed unless `keep`.
#[cfg(any(test, feature = "testkit"))]
pub fn test_settings(keep: bool) -> RunSettings {
    RunSettings {
        repeat: 2,
        warmup: 1,
        seed: 9,
        keep_files: keep,
        verify: None,
        space_check: true,
        drop_cache: false,
        ranks: None,
        stonewall: None,
        source: plan::data_source::DataSource::Cached,
    }
}

#[cfg(test)]
mod tests;
