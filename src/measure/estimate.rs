//! How long a plan will take, said before it starts: a short probe of the target
//! (bandwidth with and without fsync, cost of one small call, cost of one small durable
//! commit), then bytes, calls and commits per case. An estimate, not a measurement: it
//! is printed, never recorded as a result.

use std::time::{Duration, Instant};

use crate::measure::durability::Pacing;
use crate::measure::methods::{self, Family, Job, Part};
use crate::measure::source::{Shape, Source, Streams};
use crate::measure::target::Scratch;
use crate::plan::durability::{Commit, SyncCall};
use crate::plan::{Case, Durability, FileState};

#[derive(Debug, Clone, Copy)]
pub struct Probe {
    pub buffered_bytes_per_second: f64,
    pub durable_bytes_per_second: f64,
    pub seconds_per_call: f64,
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
}

const PROBE_BYTES: u64 = 32 << 20;
const PROBE_CALLS: u64 = 8192;
/// Few: on a disk without a write cache one commit can take 10 ms or more.
const PROBE_COMMITS: u64 = 16;

/// What one probe file cost: the timed write and write + sync, and the untimed rest.
struct Timed {
    written: f64,
    synced: f64,
    /// Create, bring into its state and open: before the write.
    prepared: f64,
    verified: f64,
    removed: f64,
}

/// Writes 32 MiB in 1 MiB `pwrite` calls, fsyncs (and reads it back when `verify`),
/// twice,
/// then makes 8192 one-byte calls, then 16 one-byte calls each followed by
/// `fdatasync`, then preallocates 32 MiB; each file created and removed as a run's are.
/// None if the target cannot take even that (the run will then say why, per case).
pub fn probe(scratch: &Scratch, verify: bool) -> Option<Probe> {
    // Calls of its own size, whatever the plan's (`--chunks 1B` would make the bandwidth
    // probe 32 million calls).
    let chunk = 1 << 20;
    let source = &Source::new(0);
    let pwrite = methods::by_name("pwrite")?;
    let time = |name: &str, state: FileState, bytes: u64, chunk: usize, durability: Durability| -> Option<Timed> {
        let started = Instant::now();
        let file = scratch.prepare(name, state, bytes, 0).ok();
        let prepared = started.elapsed().as_secs_f64();
        let shape = Shape::new(1, chunk as u64, 1, None, bytes);
        let streams = Streams::new(source, &[name.to_string()], &[0], shape).ok();
        let result = file.zip(streams).and_then(|(file, streams)| {
            let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
            let job = Job {
                paths: &[],
                files: &[fd],
                file_lens: &[bytes],
                parts: &[Part { file: 0, offset: 0, len: bytes }],
                chunk,
                iov: 1,
                queue_depth: 1,
                source: &streams,
                durability,
                pacing: Pacing::of(durability, 1, 1),
            };
            let prepared_job = pwrite.prepare(&job).ok()?;
            let started = Instant::now();
            prepared_job.write_part(0).ok()?;
            let written = started.elapsed().as_secs_f64();
            prepared_job.sync().ok()?;
            let synced = started.elapsed().as_secs_f64();
            let started = Instant::now();
            if verify {
                let check = crate::measure::verify::Verify { corrupt: None };
                crate::measure::verify::check(&check, &[fd], &[bytes], &streams).ok()?;
            }
            Some((written, synced, started.elapsed().as_secs_f64()))
        });
        // Committed, so that the first case does not pay for the probe's files.
        let started = Instant::now();
        let _ = scratch.remove(name).and_then(|()| scratch.sync_dir());
        let removed = started.elapsed().as_secs_f64();
        result.map(|(written, synced, verified)| Timed { written, synced, prepared, verified, removed })
    };
    // The better of two: the first write into memory just freed can stall on pages
    // the host took back (a VM's free page reporting); the runs reuse each other's.
    let first = time("probe-bandwidth", FileState::Empty, PROBE_BYTES, chunk, Durability::End)?;
    let second = time("probe-bandwidth", FileState::Empty, PROBE_BYTES, chunk, Durability::End)?;
    let bandwidth = if second.synced < first.synced { second } else { first };
    let bytes = PROBE_BYTES as f64;
    let calls = time("probe-calls", FileState::Empty, PROBE_CALLS, 1, Durability::End)?;
    let every_call = Durability::of(Commit::Every(1, SyncCall::Fdatasync));
    // A target whose fdatasync fails still gets an estimate; its syncing cases will fail.
    let commits =
        time("probe-commits", FileState::Empty, PROBE_COMMITS, 1, every_call).map_or(0.0, |timed| timed.written);
    // Preallocated, then written: only its preparation is wanted.
    let prealloc = time("probe-prealloc", FileState::Prealloc, PROBE_BYTES, chunk, Durability::End);
    // A small file's create, remove and directory fsync: the fixed cost of a file.
    let seconds_per_file = calls.prepared + calls.removed;
    Some(Probe {
        buffered_bytes_per_second: bytes / bandwidth.written.max(1e-9),
        durable_bytes_per_second: bytes / bandwidth.synced.max(1e-9),
        seconds_per_call: calls.written / PROBE_CALLS as f64,
        seconds_per_commit: commits / PROBE_COMMITS as f64,
        seconds_per_file,
        removal_seconds_per_byte: (bandwidth.removed - calls.removed).max(0.0) / bytes,
        verify_seconds_per_byte: bandwidth.verified / bytes,
        prealloc_seconds_per_byte: prealloc.map_or(0.0, |timed| (timed.prepared - calls.prepared).max(0.0) / bytes),
    })
}

/// Expected wall time of `runs` runs of every case.
pub fn estimate(cases: &[Case], runs: u32, probe: &Probe) -> Duration {
    let seconds: f64 = cases.iter().map(|case| f64::from(runs) * run_seconds(case, probe)).sum();
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

/// Expected wall time of `run`'s short calibration (`measure::calibrate`): the memory
/// copies, then `runs` runs of `bytes` buffered and, where there is a device, two
/// O_DIRECT cases at the device's rate.
pub fn estimate_calibration(bytes: u64, runs: u32, device: bool, probe: &Probe) -> Duration {
    // 64 MiB three times with one thread and with every CPU, at a few GB/s: about 0.1 s.
    let copies = 0.1;
    let pwrite = methods::by_name("pwrite").expect("pwrite is a method");
    let buffered = Case::new(pwrite, FileState::Empty, 1 << 20, 1, Durability::None, bytes);
    let mut seconds = copies + f64::from(runs + 1) * run_seconds(&buffered, probe);
    if device {
        let direct = Case::new(pwrite, FileState::Empty, 1 << 20, 1, Durability::End, bytes);
        seconds += 2.0 * f64::from(runs + 1) * run_seconds(&direct, probe);
    }
    Duration::from_secs_f64(seconds)
}

fn run_seconds(case: &Case, probe: &Probe) -> f64 {
    let bytes = case.bytes as f64;
    let bandwidth = if case.durability == Durability::None {
        probe.buffered_bytes_per_second
    } else {
        probe.durable_bytes_per_second
    };
    let mapped = methods::by_name(&case.method).is_some_and(|m| m.family() == Family::Mapped);
    let per_call = if mapped { 0.0 } else { probe.seconds_per_call };
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
    let timed = bytes / bandwidth + calls * per_call / f64::from(case.threads) + commits * probe.seconds_per_commit;
    timed + untimed_seconds(case, probe)
}

/// What a run costs outside its timed span: its files made and removed, their state
/// prepared, a mode that never syncs synced afterwards, and the read-back.
fn untimed_seconds(case: &Case, probe: &Probe) -> f64 {
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
    state + writeback + files + bytes * (probe.removal_seconds_per_byte + probe.verify_seconds_per_byte)
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
    use crate::plan::Case;

    /// 1 GB/s buffered, 0.5 GB/s durable, 1 µs per call, 100 µs per commit, and
    /// nothing untimed.
    fn probe() -> Probe {
        Probe {
            buffered_bytes_per_second: 1e9,
            durable_bytes_per_second: 5e8,
            seconds_per_call: 1e-6,
            seconds_per_commit: 1e-4,
            seconds_per_file: 0.0,
            removal_seconds_per_byte: 0.0,
            verify_seconds_per_byte: 0.0,
            prealloc_seconds_per_byte: 0.0,
        }
    }

    #[test]
    fn estimate_adds_bandwidth_calls_and_prefill() {
        let probe = probe();
        let write = methods::by_name("write").unwrap();
        // 1 GB at 0.5 GB/s durable = 2 s, plus 1e9/1e6 = 1000 calls x 1 µs = 1 ms.
        let case = Case::new(write, FileState::Empty, 1_000_000, 1, Durability::End, 1_000_000_000);
        assert!((run_seconds(&case, &probe) - 2.001).abs() < 1e-9);
        // Overwrite pays one more durable write of the file to prepare it, and a mode
        // that never syncs is synced after the timed span: 1 s more at 0.5 GB/s.
        let overwrite = Case::new(write, FileState::Overwrite, 1_000_000, 1, Durability::None, 1_000_000_000);
        assert!((run_seconds(&overwrite, &probe) - (1.0 + 0.001 + 2.0 + 1.0)).abs() < 1e-9);
        assert_eq!(estimate(&[case], 3, &probe), Duration::from_secs_f64(6.003));
    }

    #[test]
    fn commits_inside_the_loop_are_counted() {
        let probe = probe();
        let pwrite = methods::by_name("pwrite").unwrap();
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
        let write = methods::by_name("write").unwrap();
        let empty = Case::new(write, FileState::Empty, 1_000_000, 1, Durability::End, 1_000_000_000);
        // 2 s + 1 ms of calls, then 1 ms of file, 0.1 s removal, 0.2 s verification.
        assert!((run_seconds(&empty, &probe) - (2.001 + 0.001 + 0.1 + 0.2)).abs() < 1e-9);
        let prealloc = Case { state: FileState::Prealloc, ..empty.clone() };
        assert!((run_seconds(&prealloc, &probe) - run_seconds(&empty, &probe) - 0.3).abs() < 1e-9);
        let two_files = empty.clone().with_threads(2, crate::plan::Layout::FilePerThread);
        // One more file (1 ms), and the 1000 calls shared by two threads (0.5 ms less).
        let more = run_seconds(&two_files, &probe) - run_seconds(&empty, &probe);
        assert!((more - 0.0005).abs() < 1e-9, "{more}");
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
