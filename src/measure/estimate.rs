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
}

const PROBE_BYTES: u64 = 32 << 20;
const PROBE_CALLS: u64 = 8192;
/// Few: on a disk without a write cache one commit can take 10 ms or more.
const PROBE_COMMITS: u64 = 16;

/// Writes 32 MiB in 1 MiB `pwrite` calls, fsyncs, then makes 8192 one-byte calls, then
/// 16 one-byte calls each followed by `fdatasync`.
/// None if the target cannot take even that (the run will then say why, per case).
pub fn probe(scratch: &Scratch) -> Option<Probe> {
    // Calls of its own size, whatever the plan's (`--chunks 1B` would make the bandwidth
    // probe 32 million calls).
    let chunk = 1 << 20;
    let source = &Source::new(0);
    let pwrite = methods::by_name("pwrite")?;
    let time = |name: &str, bytes: u64, chunk: usize, durability: Durability| -> Option<(f64, f64)> {
        let file = scratch.prepare(name, FileState::Empty, bytes, 0).ok();
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
            let prepared = pwrite.prepare(&job).ok()?;
            let started = Instant::now();
            prepared.write_part(0).ok()?;
            let written = started.elapsed().as_secs_f64();
            prepared.sync().ok()?;
            Some((written, started.elapsed().as_secs_f64()))
        });
        // Committed, so that the first case does not pay for the probe's files.
        let _ = scratch.remove(name).and_then(|()| scratch.sync_dir());
        result
    };
    let (written, synced) = time("probe-bandwidth", PROBE_BYTES, chunk, Durability::End)?;
    let bytes = PROBE_BYTES as f64;
    let (calls, _) = time("probe-calls", PROBE_CALLS, 1, Durability::End)?;
    let every_call = Durability::of(Commit::Every(1, SyncCall::Fdatasync));
    // A target whose fdatasync fails still gets an estimate; its syncing cases will fail.
    let commits = time("probe-commits", PROBE_COMMITS, 1, every_call).map_or(0.0, |(seconds, _)| seconds);
    Some(Probe {
        buffered_bytes_per_second: bytes / written.max(1e-9),
        durable_bytes_per_second: bytes / synced.max(1e-9),
        seconds_per_call: calls / PROBE_CALLS as f64,
        seconds_per_commit: commits / PROBE_COMMITS as f64,
    })
}

/// Expected wall time of `runs` runs of every case.
pub fn estimate(cases: &[Case], runs: u32, probe: &Probe) -> Duration {
    let seconds: f64 = cases.iter().map(|case| f64::from(runs) * run_seconds(case, probe)).sum();
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
    // Preparing the overwrite state writes the file once more, untimed but not free.
    let prefill = if case.state == FileState::Overwrite { bytes / probe.durable_bytes_per_second } else { 0.0 };
    bytes / bandwidth + calls * per_call / f64::from(case.threads) + commits * probe.seconds_per_commit + prefill
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

    /// 1 GB/s buffered, 0.5 GB/s durable, 1 µs per call, 100 µs per commit.
    fn probe() -> Probe {
        Probe {
            buffered_bytes_per_second: 1e9,
            durable_bytes_per_second: 5e8,
            seconds_per_call: 1e-6,
            seconds_per_commit: 1e-4,
        }
    }

    #[test]
    fn estimate_adds_bandwidth_calls_and_prefill() {
        let probe = probe();
        let write = methods::by_name("write").unwrap();
        // 1 GB at 0.5 GB/s durable = 2 s, plus 1e9/1e6 = 1000 calls x 1 µs = 1 ms.
        let case = Case::new(write, FileState::Empty, 1_000_000, 1, Durability::End, 1_000_000_000);
        assert!((run_seconds(&case, &probe) - 2.001).abs() < 1e-9);
        // Overwrite pays one more durable write of the file to prepare it.
        let overwrite = Case::new(write, FileState::Overwrite, 1_000_000, 1, Durability::None, 1_000_000_000);
        assert!((run_seconds(&overwrite, &probe) - (1.0 + 0.001 + 2.0)).abs() < 1e-9);
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
    fn human_durations() {
        assert_eq!(human(Duration::from_secs(45)), "45 s");
        assert_eq!(human(Duration::from_secs(200)), "3 min 20 s");
        assert_eq!(human(Duration::from_secs(3900)), "1 h 05 min");
    }
}
