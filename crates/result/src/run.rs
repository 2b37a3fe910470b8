//! One run of a case as plain data: its timed spans and what was recorded around them
//! (docs/measurement.md), and the figures read from a run alone.

use serde::{Deserialize, Serialize};

use super::RingRecord;

/// One timed run. Seconds are from the monotonic clock.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// First call to last call returned, including closing steps the method needs.
    pub write_seconds: f64,
    /// The call that makes the data durable (0 when the durability mode has none).
    pub sync_seconds: f64,
    /// The method's untimed set-up before the write span (ring creation, buffer
    /// registration); 0 for methods that have none.
    #[serde(default)]
    pub setup_seconds: f64,
    /// Untimed, before the write span: making the run's files and bringing them into
    /// their state (the create, the `ftruncate`, the `fallocate`, the prefill) and the
    /// fsync after it, summed over the files (docs/answer.md: a strategy for a new file
    /// is judged with what it costs). Absent in results from before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prepare_seconds: Option<f64>,
    /// The part of `prepare_seconds` that was the fsync after preparing: a program
    /// writing a new file pays it only where it makes the file durable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prepare_sync_seconds: Option<f64>,
    /// A new file's one span (docs/answer.md, "One span a program pays"): from its
    /// `open(O_CREAT)` through the state's `ftruncate` or `fallocate`, the method's set-up
    /// (a mapping, a ring) and the writes, to the last call returned, as a program making
    /// the file pays it. None for a fully written file, under `--stonewall`, and in
    /// results from before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_file_seconds: Option<f64>,
    /// The same span on to the sync that makes the data durable and the directory's
    /// fsync that makes the file's name durable; None where the mode does not sync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_file_durable_seconds: Option<f64>,
    /// Untimed, before the run: how long the settle step waited for the previous run's
    /// writeback and device I/O to be gone (docs/measurement.md, "Between runs").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle_seconds: Option<f64>,
    /// On a VM that gives freed memory back to its host: how long the settle step took
    /// to touch as much memory as the run writes (`measure::settle`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm_seconds: Option<f64>,
    /// The settle step gave up at its time limit with writeback still under way.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub settle_timed_out: bool,
    /// The case whose run came just before this one (warm-ups included), by id: what
    /// the carry-over check tests a run's time against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// For each thread, start of the span to its last call returned: the spread
    /// between the fastest and the slowest shows stragglers.
    #[serde(default)]
    pub thread_seconds: Vec<f64>,
    /// CPU time over write + sync: each writer thread's over its part (and its own
    /// sync), plus the executing thread's over the one sync and the closing steps
    /// (thread CPU clocks, split as getrusage splits); latency cases, the thread's over the timed loop.
    /// Absent where the writers' CPU time could not be read (a runtime with no
    /// per-thread CPU clock, docs/runtimes.md): never a 0 standing in for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sys_seconds: Option<f64>,
    /// The CPU share: `user_seconds + sys_seconds` over the CPU time the writers could
    /// have had, write + sync seconds times the writers that could run at once (their
    /// number, at most this machine's CPUs). Near 1: the calls and copies kept them
    /// busy (CPU-bound); low: they waited, for the device or for each other. Absent
    /// with the CPU time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_share: Option<f64>,
    /// /proc/meminfo's Dirty and Writeback just before the run's timed spans and just
    /// after them, in bytes (all of the machine's, not only this run's): a run that
    /// starts with much dirty data shares the device with earlier work's writeback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty_before_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writeback_before_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty_after_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writeback_after_bytes: Option<u64>,
    /// What the block device under the path did from just before the timed spans to
    /// just after them (/proc/diskstats); absent where the path has no block device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<context::device::DeviceIo>,
    /// CPU that other processes used during the run, as a share of one CPU over the
    /// run's write + sync time (/proc/stat less this process and its runner); ticks of
    /// 10 ms make it rough for runs of less than a few tenths of a second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub others_cpu_share: Option<f64>,
    /// Bytes of the run's files still in the page cache once the run was over and its
    /// data durable (mincore), before verification read them: what RWF_DONTCACHE
    /// changes. Absent for cases that write no file content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resident_bytes: Option<u64>,
    /// What an io_uring run submitted besides plain writes (linked writes and fsyncs,
    /// registered files, SQPOLL): the SQE flags strace cannot show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ring: Option<RingRecord>,
    /// A latency loop: its operations over its `write_seconds` (docs/measurement.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_per_second: Option<f64>,
    /// A latency loop: its own percentiles per operation in ns, with the keys of the
    /// case's `latency_ns`, which covers every loop of the case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ns: Option<serde_json::Value>,
    /// Under `--mpi`: each rank's part of the run, in rank order (absent otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RankRun>,
    /// The round the run belonged to, warm-up rounds included (the first measured
    /// round is `options.warmup`). With `--order grouped`, the case's own run count.
    #[serde(default)]
    pub round: u32,
    /// The run's place among every run of the command, warm-ups included, from 0: the
    /// order in which the runs really happened, so drift can be read against it.
    #[serde(default)]
    pub sequence: u64,
    /// `--stonewall` (docs/scale.md): what the writers wrote before each stopped at the
    /// wall; absent without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stonewall: Option<Stonewalled>,
}

/// A stonewalled run: every writer (each thread of each rank) stopped issuing calls once
/// the wall's time had passed since its start line, or when its part was written. Its
/// figures are `bytes` over its spans, not the case's bytes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stonewalled {
    /// Written by every writer together before the wall.
    pub bytes: u64,
    /// What the run would have written without the wall: the case's bytes.
    pub of_bytes: u64,
    /// Each writer's bytes, in part order (under `--mpi`, rank by rank).
    pub writer_bytes: Vec<u64>,
    /// Writers the wall stopped (the others finished their part before it).
    pub stopped: u32,
}

/// One MPI rank's part of a run. Times are seconds on the run's common axis, whose 0
/// is the earliest rank's start (see docs/scale.md for how ranks' clocks are aligned):
/// the run's write span is the earliest start to the latest end, as IOR reports it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankRun {
    pub rank: u32,
    /// Its first writer passed the rank's start line.
    pub start_seconds: f64,
    /// Its last write returned (with the closing steps, when the mode has no sync).
    pub end_seconds: f64,
    /// Its data was durable: its last sync (and closing steps) returned. Absent when
    /// the mode has no sync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub synced_seconds: Option<f64>,
    /// CPU time of its writers and of its executing thread; absent where not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sys_seconds: Option<f64>,
    /// Bytes the rank wrote.
    pub bytes: u64,
}

impl RankRun {
    /// The rank's own buffered throughput: its bytes over its own write span.
    pub fn bytes_per_second(&self) -> f64 {
        self.bytes as f64 / (self.end_seconds - self.start_seconds).max(f64::MIN_POSITIVE)
    }
}

impl RankRun {
    /// Its CPU time, user and system, where it was read.
    pub fn cpu_seconds(&self) -> Option<f64> {
        Some(self.user_seconds? + self.sys_seconds?)
    }
}

impl Run {
    /// The writers' CPU time, user and system, where it was read.
    pub fn cpu_seconds(&self) -> Option<f64> {
        Some(self.user_seconds? + self.sys_seconds?)
    }

    /// Write and sync: the span the durable figure divides by.
    pub fn durable_seconds(&self) -> f64 {
        self.write_seconds + self.sync_seconds
    }

    /// The write time the buffered figure is the case's bytes over: the write span, or
    /// in a stonewalled run the span scaled up to the case's bytes (so that the case's
    /// bytes over it are the run's own bytes over its span, and every statistic of
    /// times applies unchanged).
    pub fn write_time(&self) -> f64 {
        self.write_seconds * self.stonewall_scale()
    }

    /// As [`Run::write_time`], for write and sync.
    pub fn durable_time(&self) -> f64 {
        self.durable_seconds() * self.stonewall_scale()
    }

    /// The bytes the run wrote: the case's, or a stonewalled run's own.
    pub fn bytes_written(&self, case_bytes: u64) -> u64 {
        self.stonewall.as_ref().map_or(case_bytes, |wall| wall.bytes)
    }

    fn stonewall_scale(&self) -> f64 {
        match &self.stonewall {
            // Nothing written: no rate, as a time of infinity says.
            Some(wall) if wall.bytes == 0 => f64::INFINITY,
            Some(wall) => wall.of_bytes as f64 / wall.bytes as f64,
            None => 1.0,
        }
    }

    /// What preparing the file cost a program that does not make it durable: the
    /// preparation less its fsync. None where it was not recorded.
    pub fn prepare_without_sync(&self) -> Option<f64> {
        Some((self.prepare_seconds? - self.prepare_sync_seconds.unwrap_or(0.0)).max(0.0))
    }
}

/// A run that starts with more dirty data than this share of its own size starts while
/// earlier work's writeback may still be running.
pub const DIRTY_AT_START: f64 = 0.1;

impl Run {
    /// Whether the run started with more dirty page-cache data than [`DIRTY_AT_START`]
    /// of its `bytes`.
    pub fn started_dirty(&self, bytes: u64) -> bool {
        let waiting = self.dirty_before_bytes.unwrap_or(0) + self.writeback_before_bytes.unwrap_or(0);
        waiting as f64 > DIRTY_AT_START * bytes as f64
    }
}

/// Another process's CPU use, as a share of one CPU, from which a run is said to have
/// shared the machine.
pub const OTHERS_BUSY: f64 = 0.5;

/// The CPU share from which a case is called CPU-bound.
pub const CPU_BOUND: f64 = 0.9;
