//! How long a plan will take, said before it starts: a short probe of the target
//! (bandwidth with and without fsync, cost of one small call, cost of one small durable
//! commit), then bytes, calls and commits per case. An estimate, not a measurement: it
//! is printed, never recorded as a result.

use plan::data_source::DataSource;
use std::time::{Duration, Instant};

use measure::durability::Pacing;
use measure::methods::{self, Job, Part};
use measure::source::{Shape, Source, Streams};
use measure::target::Scratch;
use plan::catalog::{self, Family};
use plan::durability::{Commit, SyncCall};
use plan::{Case, Durability, FileState};

#[derive(Debug, Clone, Copy)]
pub struct Probe {
    pub buffered_bytes_per_second: f64,
    pub durable_bytes_per_second: f64,
    pub seconds_per_call: f64,
    /// What a 4 KiB call costs beyond its bytes at the 1 MiB calls' rate: a page's
    /// worth of work per call (on ext4 and xfs a small folio each, where 1 MiB calls get
    /// large ones), which a one-byte call does not show.
    pub seconds_per_page_call: f64,
    /// One small write made durable (`fdatasync`): what `every:N`, `osync` and
    /// `odsync` pay per commit, inside the write span.
    pub seconds_per_commit: f64,
    /// Untimed, around every run: creating a file, removing it and committing the
    /// removal (a directory fsync), per file.
    pub seconds_per_file: f64,
    /// Untimed: removing a written file, per byte (freeing its pages or extents).
    pub removal_seconds_per_byte: f64,
    /// Untimed: reading a run's files back and comparing (`--verify`); 0 without it.
    pub verify_seconds_per_byte: f64,
    /// Untimed: bringing a file into the preallocated state, per byte (tmpfs zeroes
    /// pages, ext4 and xfs only mark extents).
    pub prealloc_seconds_per_byte: f64,
    /// One 4 KiB io_uring write with one in flight, submitted and reaped: on tmpfs the
    /// kernel hands each to a worker thread (tens of µs), far more than a plain call.
    pub seconds_per_ring_op: f64,
    /// Writing through a shared mapping: page faults instead of calls.
    pub mapped_bytes_per_second: f64,
    /// Untimed, before every run: the writers' source buffers mapped and filled, per
    /// byte of buffer (page faults and a copy of the pattern; see `measure::source`).
    pub source_seconds_per_byte: f64,
    /// The run's `--source`: from memory, each writer's buffer is as long as its part.
    pub source: DataSource,
}

const PROBE_BYTES: u64 = 32 << 20;
const PROBE_CALLS: u64 = 8192;
/// Few: on a disk without a write cache one commit can take 10 ms or more.
const PROBE_COMMITS: u64 = 16;
/// 4 KiB calls: 16 MiB of them.
const PROBE_PAGE_CALLS: u64 = 4096;
/// 4 KiB io_uring writes, one in flight: a few ms even where each takes 50 µs.
const PROBE_RING_OPS: u64 = 1024;

/// What one probe file cost: the timed write and write + sync, and the untimed rest.
struct Timed {
    written: f64,
    synced: f64,
    /// Create, bring into its state and open: before the write.
    prepared: f64,
    /// The writer's source buffer made: before the write.
    sourced: f64,
    verified: f64,
    removed: f64,
}

/// Writes 32 MiB in 1 MiB `pwrite` calls, fsyncs (and reads it back when `verify`),
/// twice; then makes 8192 one-byte calls, writes 16 MiB in 4 KiB calls, makes 16
/// one-byte calls each followed by `fdatasync`, preallocates 32 MiB, makes 1024 4-KiB
/// io_uring writes one at a time (fewer run faster than a run's many do) and writes 32
/// MiB through a mapping; each file created and removed as a run's are, so that the
/// probe never holds more than 32 MiB (a small or nearly full target must take it). None
/// if the target cannot take even that (the run will then say why, per case).
pub fn probe(scratch: &Scratch, verify: bool) -> Option<Probe> {
    // Calls of its own size, whatever the plan's (`--chunks 1B` would make the bandwidth
    // probe 32 million calls).
    let chunk = 1 << 20;
    let source = &Source::new(0);
    let pwrite = methods::engine("pwrite")?;
    let time_with = |method: &dyn methods::Engine,
                     queue_depth: usize,
                     name: &str,
                     state: FileState,
                     bytes: u64,
                     chunk: usize,
                     durability: Durability|
     -> Option<Timed> {
        let started = Instant::now();
        let file = scratch.prepare(name, state, bytes, 0).ok();
        let prepared = started.elapsed().as_secs_f64();
        let shape = Shape::new(1, chunk as u64, 1, None, bytes);
        let started = Instant::now();
        let streams = Streams::new(source, &[name.to_string()], &[0], shape).ok();
        let sourced = started.elapsed().as_secs_f64();
        let result = file.zip(streams).and_then(|(file, streams)| {
            let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
            let job = Job {
                paths: &[],
                files: &[fd],
                file_lens: &[bytes],
                parts: &[Part { file: 0, offset: 0, len: bytes }],
                chunk,
                iov: 1,
                queue_depth,
                source: &streams,
                durability,
                pacing: Pacing::of(durability, 1, 1),
                stonewall: None,
            };
            let prepared_job = method.prepare(&job).ok()?;
            let started = Instant::now();
            prepared_job.write_part(0).ok()?;
            let written = started.elapsed().as_secs_f64();
            prepared_job.sync().ok()?;
            let synced = started.elapsed().as_secs_f64();
            let started = Instant::now();
            if verify {
                let check = measure::verify::Verify { corrupt: None, first_only: false };
                measure::verify::check(&check, &[fd], &[bytes], &streams).ok()?;
            }
            Some((written, synced, started.elapsed().as_secs_f64()))
        });
        // Committed, so that the first case does not pay for the probe's files.
        let started = Instant::now();
        let _ = scratch.remove(name).and_then(|()| scratch.sync_dir());
        let removed = started.elapsed().as_secs_f64();
        result.map(|(written, synced, verified)| Timed { written, synced, prepared, sourced, verified, removed })
    };
    let time = |name: &str, state: FileState, bytes: u64, chunk: usize, durability: Durability| {
        time_with(pwrite, 1, name, state, bytes, chunk, durability)
    };
    // The better of two: the first write into memory just freed can stall on pages
    // the host took back (a VM's free page reporting); the runs reuse each other's.
    let first = time("probe-bandwidth", FileState::Empty, PROBE_BYTES, chunk, Durability::End)?;
    let second = time("probe-bandwidth", FileState::Empty, PROBE_BYTES, chunk, Durability::End)?;
    let bandwidth = if second.synced < first.synced { second } else { first };
    let bytes = PROBE_BYTES as f64;
    let calls = time("probe-calls", FileState::Empty, PROBE_CALLS, 1, Durability::End)?;
    let pages = time("probe-pages", FileState::Empty, PROBE_PAGE_CALLS * 4096, 4096, Durability::End)?;
    let every_call = Durability::of(Commit::Every(1, SyncCall::Fdatasync));
    // A target whose fdatasync fails still gets an estimate; its syncing cases will fail.
    let commits =
        time("probe-commits", FileState::Empty, PROBE_COMMITS, 1, every_call).map_or(0.0, |timed| timed.written);
    // Preallocated, then written: only its preparation is wanted.
    let prealloc = time("probe-prealloc", FileState::Prealloc, PROBE_BYTES, chunk, Durability::End);
    // A small file's create, remove and directory fsync: the fixed cost of a file.
    let seconds_per_file = calls.prepared + calls.removed;
    let buffered_bytes_per_second = bytes / bandwidth.written.max(1e-9);
    // Where the kernel or the method refuses, the plan's own cases will say so; the
    // estimate falls back to what a call costs.
    let ring_bytes = PROBE_RING_OPS * 4096;
    let seconds_per_ring_op = methods::engine("io_uring")
        .and_then(|ring| time_with(ring, 1, "probe-ring", FileState::Empty, ring_bytes, 4096, Durability::End))
        .map_or(0.0, |timed| timed.written / PROBE_RING_OPS as f64);
    let mapped_bytes_per_second = methods::engine("mmap")
        .and_then(|mmap| time_with(mmap, 1, "probe-mapped", FileState::Sparse, PROBE_BYTES, chunk, Durability::End))
        .map_or(buffered_bytes_per_second, |timed| bytes / timed.written.max(1e-9));
    Some(Probe {
        buffered_bytes_per_second,
        durable_bytes_per_second: bytes / bandwidth.synced.max(1e-9),
        seconds_per_call: calls.written / PROBE_CALLS as f64,
        seconds_per_page_call: ((pages.written - (PROBE_PAGE_CALLS * 4096) as f64 / buffered_bytes_per_second)
            / PROBE_PAGE_CALLS as f64)
            .max(calls.written / PROBE_CALLS as f64),
        seconds_per_commit: commits / PROBE_COMMITS as f64,
        seconds_per_file,
        removal_seconds_per_byte: (bandwidth.removed - calls.removed).max(0.0) / bytes,
        verify_seconds_per_byte: bandwidth.verified / bytes,
        prealloc_seconds_per_byte: prealloc.map_or(0.0, |timed| (timed.prepared - calls.prepared).max(0.0) / bytes),
        seconds_per_ring_op,
        mapped_bytes_per_second,
        source_seconds_per_byte: bandwidth.sourced / buffer_bytes(Shape::new(1, chunk as u64, 1, None, PROBE_BYTES)),
        source: DataSource::Cached,
    })
}

/// What the writers' source buffers of a run of `shape` hold: each its period and one
/// call more (`source::Writer::new`).
fn buffer_bytes(shape: Shape) -> f64 {
    let page = measure::source::page_size() as f64;
    let each = shape.period() as f64 + (shape.max_take as f64 / page).ceil() * page;
    each * shape.writers as f64
}

/// Which of a case's runs are read back (`measure::verify`): the probe times the read-back
/// per byte, and a run pays it only when it is one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadBack {
    /// None (`--no-verify`, or a plan without it).
    None,
    /// Each case's first measured run (the quick suite's default): once per case,
    /// however many runs it gets.
    First,
    /// Every run, warm-ups included (`--verify`).
    Every,
}

impl ReadBack {
    /// How many of `runs` runs of a case are read back.
    fn runs(self, runs: u32) -> u32 {
        match self {
            ReadBack::None => 0,
            ReadBack::First => runs.min(1),
            ReadBack::Every => runs,
        }
    }
}

/// Expected wall time of `runs` runs of every case, `read_back` saying which of them are
/// read back. `wall`: `--stonewall`, which ends each run's writing there (docs/scale.md).
pub fn estimate(cases: &[Case], runs: u32, read_back: ReadBack, probe: &Probe, wall: Option<Duration>) -> Duration {
    let seconds: f64 = cases
        .iter()
        .map(|case| {
            let (run, read) = walled_run_seconds(case, probe, wall);
            f64::from(runs) * run + f64::from(read_back.runs(runs)) * read
        })
        .sum();
    Duration::from_secs_f64(seconds)
}

/// Expected wall time of latency cases: `operations` each (warm-up included), one
/// call per operation, or a commit where the mode makes one; a save is a new file,
/// its fsync, a rename and a directory fsync.
pub fn estimate_latency(cases: &[(bool, Durability)], operations: u64, probe: &Probe) -> Duration {
    let seconds: f64 = cases
        .iter()
        .map(|&(save, mode)| {
            let operation = match (save, mode.commit) {
                (true, _) => 2.0 * probe.seconds_per_commit + probe.seconds_per_file,
                (false, Commit::None) => probe.seconds_per_call,
                (false, _) => probe.seconds_per_commit,
            };
            operations as f64 * operation + probe.seconds_per_file
        })
        .sum();
    Duration::from_secs_f64(seconds)
}

/// Expected wall time of `run`'s short calibration (`rounds::calibrate`): the memory
/// copies, then `runs` runs of `bytes` buffered and, where there is a device, four
/// O_DIRECT cases at the device's rate, two of them over a file first written whole.
pub fn estimate_calibration(bytes: u64, runs: u32, device: bool, probe: &Probe) -> Duration {
    // 64 MiB three times with one thread and with every CPU, at a few GB/s: about 0.1 s.
    let copies = 0.1;
    let pwrite = catalog::by_name("pwrite").expect("pwrite is a method");
    let buffered = Case::new(pwrite, FileState::Empty, 1 << 20, 1, Durability::None, bytes);
    let mut seconds = copies + f64::from(runs + 1) * run_seconds(&buffered, probe);
    if device {
        let direct = Case::new(pwrite, FileState::Empty, 1 << 20, 1, Durability::End, bytes);
        // Four cases; the two over a written file write it first, about a run each.
        seconds += 6.0 * f64::from(runs + 1) * run_seconds(&direct, probe);
        // The big file timed for where writers wait (`calibrate::big_write`): its time
        // limit, which a disk whose writers wait reaches.
        seconds += super::calibrate::BIG_WRITE_TIME.as_secs_f64();
    }
    Duration::from_secs_f64(seconds)
}

/// A run of `case`, read back.
fn run_seconds(case: &Case, probe: &Probe) -> f64 {
    let (run, read) = walled_run_seconds(case, probe, None);
    run + read
}

/// A run of `case` whose writers stop at `wall`: the share of its bytes written by then
/// is timed, written back and removed; its files are still made and prepared whole.
/// Apart: what reading that share back adds, for the runs that are (`ReadBack`).
fn walled_run_seconds(case: &Case, probe: &Probe, wall: Option<Duration>) -> (f64, f64) {
    let timed = timed_seconds(case, probe);
    let share = match wall {
        Some(wall) if timed > 0.0 => (wall.as_secs_f64() / timed).min(1.0),
        _ => 1.0,
    };
    (timed * share + untimed_seconds(case, probe, share), share * case.bytes as f64 * probe.verify_seconds_per_byte)
}

/// The timed spans of a run of `case`: write, its calls and commits, and the sync.
fn timed_seconds(case: &Case, probe: &Probe) -> f64 {
    let bytes = case.bytes as f64;
    let family = catalog::by_name(&case.method).map(|method| method.family);
    let mapped = family == Some(Family::Mapped);
    let rate = if mapped { probe.mapped_bytes_per_second } else { probe.buffered_bytes_per_second };
    // What a sync at the end adds: the device's time for the bytes beyond the copy.
    let syncing = match case.durability == Durability::None {
        true => 0.0,
        false => (bytes / probe.durable_bytes_per_second - bytes / probe.buffered_bytes_per_second).max(0.0),
    };
    // An io_uring round trip replaces the call; with N in flight, N share its wait.
    let per_call = match family {
        Some(Family::Mapped) => 0.0,
        Some(Family::Asynchronous) => {
            let waited = (probe.seconds_per_ring_op - 4096.0 / probe.buffered_bytes_per_second).max(0.0);
            probe.seconds_per_call.max(waited / f64::from(case.queue_depth.unwrap_or(1).max(1)))
        }
        // A call of a page or more does a page's work at least once more than the 1 MiB
        // calls of the bandwidth probe did; below a page, what a one-byte call costs.
        _ if case.chunk_bytes >= 4096 => probe.seconds_per_page_call,
        _ => probe.seconds_per_call,
    };
    let calls = case.bytes.div_ceil(case.chunk_bytes * u64::from(case.iov));
    // Commits inside the loop; not divided by the threads, since commits to one
    // filesystem queue behind its journal.
    let commits = match case.durability.commit {
        Commit::Every(n, _) => calls.div_ceil(u64::from(n)),
        Commit::OSync | Commit::ODsync | Commit::RwfSync | Commit::RwfDsync => calls,
        // One wait per window: about the device's time for the bytes, which the
        // bandwidth probe's durable rate already counts.
        Commit::None | Commit::End(_) | Commit::WriteBehind(_) | Commit::Save => 0,
    } as f64;
    let calls = calls as f64;
    bytes / rate + syncing + calls * per_call / f64::from(case.threads) + commits * probe.seconds_per_commit
}

/// What a run costs outside its timed span: its files made and removed, their state
/// prepared, and a mode that never syncs synced afterwards (the read-back apart:
/// `walled_run_seconds`); `written` is the share of the bytes the run writes (less than
/// 1 under `--stonewall`).
fn untimed_seconds(case: &Case, probe: &Probe, written: f64) -> f64 {
    let bytes = case.bytes as f64;
    let state = match case.state {
        // Preparing the overwrite state writes the file once more, durably.
        FileState::Overwrite => bytes / probe.durable_bytes_per_second,
        FileState::Prealloc => bytes * probe.prealloc_seconds_per_byte,
        FileState::Empty | FileState::Sparse => 0.0,
    };
    // The next run must not pay for this one's writeback.
    let writeback = match case.durability == Durability::None {
        true => (bytes / probe.durable_bytes_per_second - bytes / probe.buffered_bytes_per_second).max(0.0),
        false => 0.0,
    };
    let files = f64::from(case.files) * probe.seconds_per_file;
    let mut shape = Shape::new(case.threads, case.chunk_bytes, case.iov, case.queue_depth, case.bytes);
    if probe.source == DataSource::Memory {
        shape = shape.from_memory(case.bytes.div_ceil(u64::from(case.threads.max(1))));
    }
    let sources = buffer_bytes(shape) * probe.source_seconds_per_byte;
    state + files + sources + written * (writeback + bytes * probe.removal_seconds_per_byte)
}

/// `1 h 05 min`, `3 min 20 s`, `45 s`.
pub fn human(duration: Duration) -> String {
    let seconds = duration.as_secs();
    match seconds {
        0..=59 => format!("{} s", seconds.max(1)),
        60..=3599 => format!("{} min {:02} s", seconds / 60, seconds % 60),
        _ => format!("{} h {:02} min", seconds / 3600, seconds % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plan::Case;
    use plan::catalog;

    /// 1 GB/s buffered, 0.5 GB/s durable, 1 µs per call, 100 µs per commit, and
    /// nothing untimed.
    fn probe() -> Probe {
        Probe {
            buffered_bytes_per_second: 1e9,
            durable_bytes_per_second: 5e8,
            seconds_per_call: 1e-6,
            seconds_per_page_call: 1e-6,
            seconds_per_commit: 1e-4,
            seconds_per_file: 0.0,
            removal_seconds_per_byte: 0.0,
            verify_seconds_per_byte: 0.0,
            prealloc_seconds_per_byte: 0.0,
            seconds_per_ring_op: 0.0,
            mapped_bytes_per_second: 1e9,
            source_seconds_per_byte: 0.0,
            source: DataSource::Cached,
        }
    }

    #[test]
    fn estimate_adds_bandwidth_calls_and_prefill() {
        let probe = probe();
        let write = catalog::by_name("write").unwrap();
        // 1 GB at 0.5 GB/s durable = 2 s, plus 1e9/1e6 = 1000 calls x 1 µs = 1 ms.
        let case = Case::new(write, FileState::Empty, 1_000_000, 1, Durability::End, 1_000_000_000);
        assert!((run_seconds(&case, &probe) - 2.001).abs() < 1e-9);
        // Overwrite pays one more durable write of the file to prepare it, and a mode
        // that never syncs is synced after the timed span: 1 s more at 0.5 GB/s.
        let overwrite = Case::new(write, FileState::Overwrite, 1_000_000, 1, Durability::None, 1_000_000_000);
        assert!((run_seconds(&overwrite, &probe) - (1.0 + 0.001 + 2.0 + 1.0)).abs() < 1e-9);
        assert_eq!(
            estimate(std::slice::from_ref(&case), 3, ReadBack::Every, &probe, None),
            Duration::from_secs_f64(6.003)
        );
        // Under --stonewall at a tenth of its timed span, a run writes a tenth of its bytes.
        let walled = walled_run_seconds(&case, &probe, Some(Duration::from_secs_f64(0.2))).0;
        let untimed = run_seconds(&case, &probe) - timed_seconds(&case, &probe);
        assert!((walled - (0.2 + untimed * 0.1)).abs() < 1e-6, "{walled}");
        assert_eq!(walled_run_seconds(&case, &probe, Some(Duration::from_secs(60))).0, run_seconds(&case, &probe));
    }

    #[test]
    fn commits_inside_the_loop_are_counted() {
        let probe = probe();
        let pwrite = catalog::by_name("pwrite").unwrap();
        let end = Case::new(pwrite, FileState::Empty, 1_000_000, 1, Durability::End, 1_000_000_000);
        let base = run_seconds(&end, &probe);
        // 1000 calls: every:10 commits 100 times, odsync 1000 times, 100 µs each.
        let every = Durability::of(Commit::Every(10, SyncCall::Fsync));
        let case = Case::new(pwrite, FileState::Empty, 1_000_000, 1, every, 1_000_000_000);
        assert!((run_seconds(&case, &probe) - (base + 0.01)).abs() < 1e-9);
        let odsync = Case::new(pwrite, FileState::Empty, 1_000_000, 1, Durability::of(Commit::ODsync), 1_000_000_000);
        assert!((run_seconds(&odsync, &probe) - (base + 0.1)).abs() < 1e-9);
        // every:N rounds up: 1000 calls at every:300 commit 4 times (the last after the loop).
        let every = Durability::of(Commit::Every(300, SyncCall::Fdatasync));
        let case = Case::new(pwrite, FileState::Empty, 1_000_000, 1, every, 1_000_000_000);
        assert!((run_seconds(&case, &probe) - (base + 0.0004)).abs() < 1e-9);
    }

    #[test]
    fn untimed_work_counts_files_removal_verification_and_preallocation() {
        let probe = Probe {
            seconds_per_file: 0.001,
            removal_seconds_per_byte: 1e-10,
            verify_seconds_per_byte: 2e-10,
            prealloc_seconds_per_byte: 3e-10,
            ..probe()
        };
        let write = catalog::by_name("write").unwrap();
        let empty = Case::new(write, FileState::Empty, 1_000_000, 1, Durability::End, 1_000_000_000);
        // 2 s + 1 ms of calls, then 1 ms of file, 0.1 s removal, 0.2 s verification.
        assert!((run_seconds(&empty, &probe) - (2.001 + 0.001 + 0.1 + 0.2)).abs() < 1e-9);
        let prealloc = Case { state: FileState::Prealloc, ..empty.clone() };
        assert!((run_seconds(&prealloc, &probe) - run_seconds(&empty, &probe) - 0.3).abs() < 1e-9);
        // The quick suite reads back each case's first measured run only: 3 runs pay
        // the 0.2 s once, `--verify` three times, and without a check never.
        let one = std::slice::from_ref(&empty);
        let three = 3.0 * (2.001 + 0.001 + 0.1);
        for (read_back, reads) in [(ReadBack::First, 1.0), (ReadBack::Every, 3.0), (ReadBack::None, 0.0)] {
            let seconds = estimate(one, 3, read_back, &probe, None).as_secs_f64();
            assert!((seconds - (three + reads * 0.2)).abs() < 1e-6, "{read_back:?}: {seconds}");
        }
        assert_eq!(estimate(one, 0, ReadBack::First, &probe, None), Duration::ZERO, "no run, nothing read back");
        let two_files = empty.clone().with_threads(2, plan::Layout::FilePerThread);
        // One more file (1 ms), and the 1000 calls shared by two threads (0.5 ms less).
        let more = run_seconds(&two_files, &probe) - run_seconds(&empty, &probe);
        assert!((more - 0.0005).abs() < 1e-9, "{more}");
    }

    #[test]
    fn io_uring_pays_its_round_trip_shared_by_those_in_flight_and_mmap_its_own_rate() {
        // 41 µs per 4 KiB op with one in flight: 4.096 µs of copy at 1 GB/s, 36.9 µs waited.
        let probe = Probe { seconds_per_ring_op: 41e-6, mapped_bytes_per_second: 5e8, ..probe() };
        let ring = catalog::by_name("io_uring").unwrap();
        let one = Case::new(ring, FileState::Empty, 4096, 1, Durability::None, 4096 * 1000);
        // The copy at 1 GB/s, then (untimed) the writeback a mode that never syncs is
        // given afterwards: as long again at 0.5 GB/s durable.
        let copy = 2.0 * 4096.0 * 1000.0 / 1e9;
        let waited = 41e-6 - 4096.0 / 1e9;
        assert!((run_seconds(&one, &probe) - (copy + 1000.0 * waited)).abs() < 1e-9);
        // 32 in flight share the wait, but never below a plain call.
        let deep = one.clone().with_queue_depth(32);
        assert!((run_seconds(&deep, &probe) - (copy + 1000.0 * waited / 32.0)).abs() < 1e-9);
        let very_deep = one.clone().with_queue_depth(4096);
        assert!((run_seconds(&very_deep, &probe) - (copy + 1000.0 * 1e-6)).abs() < 1e-9);
        // mmap: no calls, at the mapped rate, plus the sync's extra when it syncs.
        let mmap = catalog::by_name("mmap").unwrap();
        let mapped = Case::new(mmap, FileState::Empty, 1 << 20, 1, Durability::End, 1_000_000_000);
        assert!((run_seconds(&mapped, &probe) - (2.0 + (2.0 - 1.0))).abs() < 1e-9);
    }

    #[test]
    fn each_writers_source_buffer_is_paid_before_every_run() {
        let probe = Probe { source_seconds_per_byte: 1e-9, ..probe() };
        let write = catalog::by_name("write").unwrap();
        let one = Case::new(write, FileState::Empty, 1 << 20, 1, Durability::End, 64 << 20);
        let without = run_seconds(&one, &Probe { source_seconds_per_byte: 0.0, ..probe });
        // One writer: an 8 MiB period and one 1 MiB call more, at 1 ns a byte.
        assert!((run_seconds(&one, &probe) - without - 9.0 * 1048576.0 * 1e-9).abs() < 1e-9);
        // Two writers: two such buffers.
        let two = one.clone().with_threads(2, plan::Layout::OneFile);
        let without = run_seconds(&two, &Probe { source_seconds_per_byte: 0.0, ..probe });
        assert!((run_seconds(&two, &probe) - without - 18.0 * 1048576.0 * 1e-9).abs() < 1e-9);
        // From memory: each writer's buffer is its part (32 MiB) and one call more.
        let memory = Probe { source: DataSource::Memory, ..probe };
        let without = run_seconds(&two, &Probe { source_seconds_per_byte: 0.0, ..memory });
        assert!((run_seconds(&two, &memory) - without - 66.0 * 1048576.0 * 1e-9).abs() < 1e-9);
    }

    #[test]
    fn calls_of_a_page_or_more_pay_the_page_call_and_smaller_ones_the_one_byte_call() {
        let probe = Probe { seconds_per_page_call: 3e-6, ..probe() };
        let write = catalog::by_name("write").unwrap();
        let at = |chunk: u64| Case::new(write, FileState::Empty, chunk, 1, Durability::End, 1 << 20);
        // 1 MiB at 0.5 GB/s durable, plus the calls.
        let bytes = (1u64 << 20) as f64 / 5e8;
        assert!((run_seconds(&at(4096), &probe) - (bytes + 256.0 * 3e-6)).abs() < 1e-9);
        assert!((run_seconds(&at(65536), &probe) - (bytes + 16.0 * 3e-6)).abs() < 1e-9);
        assert!((run_seconds(&at(1024), &probe) - (bytes + 1024.0 * 1e-6)).abs() < 1e-9);
    }

    #[test]
    fn latency_cases_cost_a_call_or_a_commit_per_operation() {
        let probe = probe();
        let none = estimate_latency(&[(false, Durability::None)], 1000, &probe);
        assert_eq!(none, Duration::from_secs_f64(1000.0 * 1e-6));
        let odsync = estimate_latency(&[(false, Durability::of(Commit::ODsync))], 1000, &probe);
        assert_eq!(odsync, Duration::from_secs_f64(1000.0 * 1e-4));
        let save = estimate_latency(&[(true, Durability::End)], 10, &probe);
        assert_eq!(save, Duration::from_secs_f64(10.0 * 2e-4));
    }

    #[test]
    fn human_durations() {
        assert_eq!(human(Duration::from_secs(45)), "45 s");
        assert_eq!(human(Duration::from_secs(200)), "3 min 20 s");
        assert_eq!(human(Duration::from_secs(3900)), "1 h 05 min");
    }
}
