//! The result of a run as plain data (DESIGN §4): what the exporters render and what
//! `report`/`compare` will read back. Nothing here measures or prints.

use serde::{Deserialize, Serialize};

pub mod metric;

use crate::analysis::outliers::outliers;
use crate::analysis::stats::{Summary, ci_relative_half_width};
use crate::context::calibration::{Calibration, CeilingShare};
use crate::context::{Host, TargetInfo};
pub use crate::measure::ring_record::RingRecord;
use crate::plan::Case;

/// v2 added `answer` and the numbers of each observation; v1 files still load (both
/// fields empty), and `report`/`compare` re-derive them from the cases.
pub const SCHEMA: &str = "writebench.v2";
/// Every schema [`ResultFile::load`] reads.
pub const SCHEMAS_READ: [&str; 2] = ["writebench.v1", SCHEMA];

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResultFile {
    pub schema: String,
    pub tool: Tool,
    pub host: Host,
    pub target: TargetInfo,
    /// The run's options exactly as they were applied, and the command line.
    pub options: serde_json::Value,
    pub cases: Vec<CaseResult>,
    /// What the cases show (analysis::advice), each with the numbers it rests on.
    pub observations: Vec<Observation>,
    /// How many tests the observations' p-values and intervals were corrected over
    /// (Holm, docs/answer.md); absent in results from before the correction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation_tests: Option<usize>,
    /// The best strategy for each goal the run can answer (analysis::advice).
    #[serde(default)]
    pub answer: Vec<Recommendation>,
    /// This machine's ceilings, measured before the cases (null with `--no-calibrate`
    /// and in files from before calibration existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<Calibration>,
    /// False when the run was interrupted and this file holds what was done so far.
    pub complete: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

impl Tool {
    pub fn this() -> Tool {
        Tool { name: env!("CARGO_PKG_NAME").to_string(), version: env!("CARGO_PKG_VERSION").to_string() }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Failed,
    Unsupported,
    Skipped,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed => "failed",
            Status::Unsupported => "unsupported",
            Status::Skipped => "skipped",
        }
    }
}

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
    pub user_seconds: f64,
    pub sys_seconds: f64,
    /// The CPU share: `user_seconds + sys_seconds` over the CPU time the writers could
    /// have had, write + sync seconds times the writers that could run at once (their
    /// number, at most this machine's CPUs). Near 1: the calls and copies kept them
    /// busy (CPU-bound); low: they waited, for the device or for each other.
    #[serde(default)]
    pub cpu_share: f64,
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
    pub device: Option<crate::context::device::DeviceIo>,
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
    /// CPU time of its writers and of its executing thread.
    pub user_seconds: f64,
    pub sys_seconds: f64,
    /// Bytes the rank wrote.
    pub bytes: u64,
}

impl RankRun {
    /// The rank's own buffered throughput: its bytes over its own write span.
    pub fn bytes_per_second(&self) -> f64 {
        self.bytes as f64 / (self.end_seconds - self.start_seconds).max(f64::MIN_POSITIVE)
    }
}

impl Run {
    /// Write and sync: the time the durable figure divides by.
    pub fn durable_seconds(&self) -> f64 {
        self.write_seconds + self.sync_seconds
    }

    /// What preparing the file cost a program that does not make it durable: the
    /// preparation less its fsync. None where it was not recorded.
    pub fn prepare_without_sync(&self) -> Option<f64> {
        Some((self.prepare_seconds? - self.prepare_sync_seconds.unwrap_or(0.0)).max(0.0))
    }
}

/// How a case fared against `--target-ci`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TargetCi {
    /// The target: the 95 % CI half-width, in percent of the mean.
    pub pct: f64,
    /// Whether the case reached it before `--max-runs`.
    pub met: bool,
    /// Measured runs the case took.
    pub runs: u32,
    /// The half-width reached, in percent of the mean (the worse of the buffered and,
    /// where the case syncs, the durable time); null with fewer than two runs.
    pub reached_pct: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaseResult {
    #[serde(flatten)]
    pub case: Case,
    pub status: Status,
    pub error: Option<String>,
    pub runs: Vec<Run>,
    /// Buffered throughput in bytes/s, from the write times (see `Summary::throughput`).
    pub stats: Option<Summary>,
    /// Durable throughput in bytes/s, from the write + sync times; null when the case's
    /// durability mode never syncs (`none`, `direct` alone): nothing was made durable.
    pub durable_stats: Option<Summary>,
    pub latency_ns: Option<serde_json::Value>,
    /// Latency cases whose sync is a call of its own (write + fdatasync): that call
    /// alone, with the keys of `latency_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_latency_ns: Option<serde_json::Value>,
    /// Latency cases: operations completed per second of the timed loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_per_second: Option<f64>,
    /// Runs (numbered from 1, as `runs` and the CSV's `run` column) whose write time,
    /// or write + sync time, has a modified z-score above 3.5. Kept in the statistics.
    #[serde(default)]
    pub outliers: Vec<u32>,
    /// The first measured run is an outlier: the warm-up was likely too short.
    #[serde(default)]
    pub first_run_outlier: bool,
    /// With `--target-ci`: whether the case met it, and in how many runs.
    #[serde(default)]
    pub target_ci: Option<TargetCi>,
    /// The median run's CPU share is at least [`CPU_BOUND`]: the writers were busy on
    /// the CPU nearly all the time, so the tool, the copy or the calls set the pace,
    /// not the device.
    #[serde(default)]
    pub cpu_bound: bool,
    /// The medians as a share of this machine's ceilings (`calibration`): memory copy
    /// for buffered figures, the device for durable and direct ones where there is one.
    /// Null without a calibration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ceiling: Option<CeilingShare>,
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

/// A run's CPU share (see [`Run::cpu_share`]) with `cpus` CPUs to run on.
pub fn cpu_share(run: &Run, cpus: usize) -> f64 {
    let writers = run.thread_seconds.len().clamp(1, cpus.max(1)) as f64;
    let seconds = run.durable_seconds() * writers;
    if seconds > 0.0 { (run.user_seconds + run.sys_seconds) / seconds } else { 0.0 }
}

impl CaseResult {
    /// A case with runs: its statistics are derived here, once, from the run times.
    pub fn measured(case: Case, mut runs: Vec<Run>) -> CaseResult {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        for run in &mut runs {
            run.cpu_share = cpu_share(run, cpus);
        }
        let shares: Vec<f64> = runs.iter().map(|run| run.cpu_share).collect();
        let cpu_bound = !runs.is_empty() && crate::analysis::stats::median(&shares) >= CPU_BOUND;
        let bytes = case.bytes as f64;
        let syncs = case.durability.syncs();
        let write: Vec<f64> = runs.iter().map(|run| run.write_seconds).collect();
        let durable: Vec<f64> = runs.iter().map(Run::durable_seconds).collect();
        let mut outlying = outliers(&write);
        if syncs {
            outlying.extend(outliers(&durable));
        }
        outlying.sort_unstable();
        outlying.dedup();
        let outliers: Vec<u32> = outlying.into_iter().map(|index| index as u32 + 1).collect();
        CaseResult {
            first_run_outlier: outliers.first() == Some(&1),
            case,
            status: Status::Ok,
            error: None,
            stats: Summary::throughput(bytes, &write),
            durable_stats: if syncs { Summary::throughput(bytes, &durable) } else { None },
            runs,
            latency_ns: None,
            sync_latency_ns: None,
            ops_per_second: None,
            outliers,
            target_ci: None,
            cpu_bound,
            ceiling: None,
        }
    }

    /// A case without a number: the reason is the only result.
    pub fn without_result(case: Case, status: Status, error: String) -> CaseResult {
        CaseResult {
            case,
            status,
            error: Some(error),
            runs: Vec::new(),
            stats: None,
            durable_stats: None,
            latency_ns: None,
            sync_latency_ns: None,
            ops_per_second: None,
            outliers: Vec::new(),
            first_run_outlier: false,
            target_ci: None,
            cpu_bound: false,
            ceiling: None,
        }
    }

    /// The half-width of the 95 % CI of the mean run time, as a fraction of the mean:
    /// the worse of the write time and, where the case syncs, the write + sync time.
    pub fn ci_relative(&self) -> Option<f64> {
        ci_relative(&self.runs, self.case.durability.syncs())
    }
}

/// See [`CaseResult::ci_relative`]; also what `--target-ci` judges after each run.
pub fn ci_relative(runs: &[Run], syncs: bool) -> Option<f64> {
    let write: Vec<f64> = runs.iter().map(|run| run.write_seconds).collect();
    let buffered = ci_relative_half_width(&write)?;
    if !syncs {
        return Some(buffered);
    }
    let durable: Vec<f64> = runs.iter().map(Run::durable_seconds).collect();
    Some(buffered.max(ci_relative_half_width(&durable)?))
}

/// One thing the cases show, as a sentence and the numbers it rests on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// What kind of observation: `knee`, `threads`, `file-per-thread`, `state`,
    /// `durability-cost`, `durability-mode`, `direct`, `io_uring`, `mmap`, `latency`,
    /// `suspicious-ceiling`, `ci-missed`, `first-run-outlier`; later `runtime` and
    /// `cpu-bound`.
    pub kind: String,
    /// One line a programmer can read, with its numbers.
    pub text: String,
    /// The figures of the cases it rests on.
    #[serde(default)]
    pub figures: Vec<Figure>,
    /// The comparison it states, where it compares two cases.
    #[serde(default)]
    pub comparison: Option<Comparison>,
}

/// One case's figure as an observation or recommendation quotes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub case: String,
    /// `throughput` or `durable` (bytes/s); for a latency case, `ops_per_second`,
    /// `commits_per_second` (durable writes, or groups of N under every:N) or `p99_ns`,
    /// the one timed loop's value standing for both the median and the mean.
    pub metric: String,
    pub median: f64,
    pub mean: f64,
    pub ci95_low: Option<f64>,
    pub ci95_high: Option<f64>,
}

/// Case `better` against case `baseline`: how many times faster, the 95 % interval of
/// that factor and Welch's p-value on the run times (analysis::significance).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub better: String,
    pub baseline: String,
    pub factor: f64,
    pub low: f64,
    pub high: f64,
    pub p_value: f64,
    pub significant: bool,
}

/// The best strategy for one goal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recommendation {
    /// `fastest`, `durable-at-end`, `small-durable-commits`, `crash-safe-saves`,
    /// `threads-one-file`.
    pub goal: String,
    /// The sentence a programmer can act on, with its figure and margins.
    pub text: String,
    pub best: Figure,
    /// Against the second best, and against the naive way where the run has it.
    pub runner_up: Option<Comparison>,
    pub naive: Option<Comparison>,
    /// True only when the two are equivalent: the interval of their factor lies within
    /// the equivalence margin (`verdict` "tied").
    pub tied: bool,
    /// The recommended case against `runner_up`'s other side: "faster", "tied" or
    /// "undecided" (docs/answer.md); absent where nothing was tested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// The fastest case measured, where the recommended one is a simpler case not shown
    /// slower than it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fastest: Option<Figure>,
}

impl ResultFile {
    /// Reads a saved result: one clear line on any failure, naming the file.
    pub fn load(path: &std::path::Path) -> Result<ResultFile, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {}", path.display(), crate::error::plain(&e)))?;
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not a writebench result (not JSON: {e})", path.display()))?;
        match value.get("schema").and_then(|s| s.as_str()) {
            Some(schema) if SCHEMAS_READ.contains(&schema) => {}
            Some(schema) => {
                return Err(format!(
                    "{} has schema {schema}; this writebench reads {}",
                    path.display(),
                    SCHEMAS_READ.join(" and ")
                ));
            }
            None => return Err(format!("{} is not a writebench result (no schema field)", path.display())),
        }
        serde_json::from_value(value)
            .map_err(|e| format!("{} is not a complete writebench result: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::methods;
    use crate::plan::{Durability, FileState};

    fn run(write_seconds: f64, sync_seconds: f64) -> Run {
        Run { write_seconds, sync_seconds, thread_seconds: vec![write_seconds], ..Run::default() }
    }

    fn case(durability: &str, bytes: u64) -> Case {
        Case::new(methods::by_name("write").unwrap(), FileState::Empty, 4096, 1, durability.parse().unwrap(), bytes)
    }

    #[test]
    fn measured_derives_buffered_and_durable_throughput() {
        let result = CaseResult::measured(case("end", 1000), vec![run(1.0, 1.0), run(2.0, 0.0)]);
        let stats = result.stats.unwrap();
        assert_eq!((stats.min, stats.max), (500.0, 1000.0));
        let durable = result.durable_stats.unwrap();
        assert_eq!((durable.min, durable.max), (500.0, 500.0));
    }

    #[test]
    fn the_cpu_share_counts_the_writers_that_can_run_at_once() {
        // 4 writers, 1 s write + 1 s sync, 3 CPU-seconds in all.
        let run = Run {
            write_seconds: 1.0,
            sync_seconds: 1.0,
            thread_seconds: vec![1.0; 4],
            user_seconds: 1.0,
            sys_seconds: 2.0,
            ..Run::default()
        };
        assert_eq!(cpu_share(&run, 8), 3.0 / 8.0);
        // On 2 CPUs only two of them can run at once.
        assert_eq!(cpu_share(&run, 2), 3.0 / 4.0);
        assert_eq!(cpu_share(&Run::default(), 2), 0.0);
        let busy = Run { write_seconds: 1.0, thread_seconds: vec![1.0], user_seconds: 0.95, ..Run::default() };
        let idle = Run { write_seconds: 1.0, thread_seconds: vec![1.0], user_seconds: 0.5, ..Run::default() };
        assert!(CaseResult::measured(case("none", 1), vec![busy.clone(), busy.clone(), idle.clone()]).cpu_bound);
        assert!(!CaseResult::measured(case("none", 1), vec![busy, idle.clone(), idle]).cpu_bound);
    }

    #[test]
    fn the_mean_is_bytes_over_the_mean_time() {
        // Defect 1.6: runs of 1 s and 2 s gave 750 B/s (the mean of 1000 and 500).
        let result = CaseResult::measured(case("end", 1000), vec![run(1.0, 0.5), run(2.0, 0.5)]);
        let mean = result.stats.unwrap().mean;
        assert!((mean * 1.5 - 1000.0).abs() < 1e-9, "{mean}");
        let durable = result.durable_stats.unwrap().mean;
        assert!((durable * 2.0 - 1000.0).abs() < 1e-9, "{durable}");
    }

    #[test]
    fn a_case_that_never_syncs_has_no_durable_figure() {
        // Defect 1.3: none and direct alone stored a durable figure equal to the buffered one.
        for mode in ["none", "direct"] {
            let result = CaseResult::measured(case(mode, 1000), vec![run(1.0, 0.0), run(1.1, 0.0)]);
            assert!(result.stats.is_some(), "{mode}");
            assert_eq!(result.durable_stats, None, "{mode}");
            let json = serde_json::to_value(&result).unwrap();
            assert!(json["durable_stats"].is_null(), "{mode}: {json}");
        }
        for mode in ["end", "every:2", "osync", "odsync", "direct+end"] {
            let result = CaseResult::measured(case(mode, 1000), vec![run(1.0, 0.0), run(1.1, 0.0)]);
            assert!(result.durable_stats.is_some(), "{mode}");
        }
    }

    #[test]
    fn outliers_are_numbered_from_1_kept_and_a_slow_first_run_is_flagged() {
        let times = [3.0, 1.0, 1.02, 0.98, 1.01, 0.99];
        let result = CaseResult::measured(case("none", 1000), times.iter().map(|&t| run(t, 0.0)).collect());
        assert_eq!(result.outliers, vec![1]);
        assert!(result.first_run_outlier);
        assert_eq!(result.stats.unwrap().n, 6, "never dropped");
        // An outlier of the sync alone shows in the durable time.
        let runs = vec![run(1.0, 0.1), run(1.0, 0.1), run(1.0, 0.11), run(1.0, 0.09), run(1.0, 5.0)];
        let result = CaseResult::measured(case("end", 1000), runs);
        assert_eq!((result.outliers.clone(), result.first_run_outlier), (vec![5], false));
    }

    #[test]
    fn results_written_before_rounds_and_targets_still_load() {
        let old = r#"{"id":"write empty 4KiB t1 end","runtime":"native","method":"write","state":"empty",
            "chunk_bytes":4096,"iov":1,"queue_depth":null,"threads":1,"files":1,"durability":"end",
            "bytes":1000,"status":"ok","error":null,"stats":null,"durable_stats":null,"latency_ns":null,
            "runs":[{"write_seconds":1.0,"sync_seconds":0.5,"user_seconds":0.0,"sys_seconds":0.0}]}"#;
        let result: CaseResult = serde_json::from_str(old).unwrap();
        assert_eq!((result.runs[0].round, result.runs[0].sequence), (0, 0));
        assert!(result.outliers.is_empty() && result.target_ci.is_none() && !result.first_run_outlier);
    }

    #[test]
    fn json_field_names_follow_the_design() {
        let case =
            Case::new(methods::by_name("pwritev").unwrap(), FileState::Sparse, 4096, 128, Durability::None, 1 << 20);
        let failed =
            CaseResult::without_result(case, Status::Failed, "write: No space left on device (os error 28)".into());
        let value = serde_json::to_value(&failed).unwrap();
        for key in [
            "id",
            "runtime",
            "method",
            "state",
            "chunk_bytes",
            "iov",
            "queue_depth",
            "threads",
            "files",
            "durability",
            "bytes",
            "status",
            "error",
            "runs",
            "stats",
            "durable_stats",
            "latency_ns",
        ] {
            assert!(value.get(key).is_some(), "missing {key}");
        }
        assert_eq!(value["status"], "failed");
        assert_eq!(value["state"], "sparse");
        assert!(value["stats"].is_null());
        let back: CaseResult = serde_json::from_value(value).unwrap();
        assert_eq!(back.case.id, "pwritev sparse 4KiB x128 t1 none");
    }

    #[test]
    fn load_reads_v1_and_v2_and_refuses_others_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let v1 = r#"{"schema":"writebench.v1","tool":{"name":"writebench","version":"0.1.0"},
            "host":{},"target":{},"options":{},"cases":[],"observations":[],"complete":true}"#;
        let path = dir.path().join("old.json");
        std::fs::write(&path, v1).unwrap();
        match ResultFile::load(&path) {
            Ok(result) => assert!(result.answer.is_empty()),
            // Host and target have required fields; an old file has them, this one not.
            Err(message) => assert!(message.contains("not a complete writebench result"), "{message}"),
        }
        std::fs::write(&path, v1.replace("writebench.v1", "writebench.v9")).unwrap();
        let refused = ResultFile::load(&path).unwrap_err();
        assert!(refused.contains("schema writebench.v9") && !refused.contains('\n'), "{refused}");
        std::fs::write(&path, "[1,2").unwrap();
        assert!(ResultFile::load(&path).unwrap_err().contains("not JSON"));
        assert!(ResultFile::load(&dir.path().join("missing.json")).unwrap_err().starts_with("cannot read"));
    }
}
