//! The result of a run as plain data (docs/design.md §4): what the exporters render and what
//! `report`/`compare` will read back. Nothing here measures, computes or prints: a case's
//! statistics are derived from its runs in `analysis::summarize`.

use serde::{Deserialize, Serialize};

pub mod compare;
pub mod crash;
pub mod facts;
pub mod glance;
pub mod goals;
pub mod metric;
pub mod options;
pub mod race;
mod ring_record;
mod run;
mod summary;
pub mod trace;

use context::calibration::{Calibration, CeilingShare};
use context::{Host, TargetInfo};
use plan::Case;
pub use ring_record::RingRecord;
pub use run::{CPU_BOUND, DIRTY_AT_START, OTHERS_BUSY, RankRun, Run, Stonewalled};
pub use summary::{NOISY_CI, Summary};

/// v2 added `answer` and the numbers of each observation; v1 files still load (both
/// fields empty), and `report`/`compare` re-derive them from the cases. v3: a
/// recommendation's `verdict` is its certainty's (`clear`, `leads`, `as-fast`,
/// `not-settled`, `alone`: the one rule against every candidate, docs/answer.md) where
/// v2's was the test against the runner-up alone (`faster`, `tied`, `undecided`), and
/// `tied` follows it; v2 files load as they were.
pub const SCHEMA: &str = "writebench.v3";
/// Every schema [`ResultFile::load`] reads.
pub const SCHEMAS_READ: [&str; 3] = ["writebench.v1", "writebench.v2", SCHEMA];

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResultFile {
    pub schema: String,
    pub tool: Tool,
    pub host: Host,
    pub target: TargetInfo,
    /// The run's options exactly as they were applied, and the command line.
    pub options: options::RunOptions,
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
    /// Crash checks of the target's filesystem with its mount options, one per durable
    /// mode measured (`run --crash-check`, docs/crash.md); the durable recommendations
    /// say what they found.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub crash: Vec<crash::CrashCheck>,
    /// How the rounds raced the cases for the Answer's goals (docs/racing.md); absent
    /// without racing (`--budget none`, `--repeat`, `--target-ci`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub race: Option<race::RaceReport>,
    /// False when the run was interrupted and this file holds what was done so far.
    pub complete: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

impl Tool {
    /// The tool's name is the program's, not this crate's (`writebench-result`); the
    /// version is the workspace's, one for every crate.
    pub fn this() -> Tool {
        Tool { name: "writebench".to_string(), version: env!("CARGO_PKG_VERSION").to_string() }
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
    /// Where the target was judged at the noise pooled over the run's cases, because
    /// that was wider than the case's own (docs/measurement.md, "How many runs"): the
    /// half-width judged, in percent of the mean. Absent where it is `reached_pct`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged_pct: Option<f64>,
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
    /// Latency cases: operations per second, the operations of a loop over the mean
    /// loop time (results from before loops: of the one timed loop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_per_second: Option<f64>,
    /// Latency cases: operations per second over the loops, from the loop times as
    /// `stats` is from the run times (its mean is `ops_per_second`). Absent in results
    /// from before latency cases ran in loops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_stats: Option<Summary>,
    /// A file creation (no data moved, so no rate): microseconds per call, open through
    /// close, from the run times; `stats` and `durable_stats` are null for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_us: Option<Summary>,
    /// The same with the call's sync, where the case syncs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durable_call_us: Option<Summary>,
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
    /// Why a raced case got no more runs (docs/racing.md); absent without racing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub race: Option<race::CaseRace>,
    /// What the notes beside its figures say, drawn from its runs by analysis before
    /// anything is rendered; not saved (drawn again when the result is read back).
    #[serde(skip)]
    pub facts: facts::CaseFacts,
}

impl CaseResult {
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
            ops_stats: None,
            call_us: None,
            durable_call_us: None,
            outliers: Vec::new(),
            first_run_outlier: false,
            target_ci: None,
            cpu_bound: false,
            ceiling: None,
            race: None,
            facts: facts::CaseFacts::default(),
        }
    }
}

/// One thing the cases show, as a sentence and the numbers it rests on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// What kind of observation: `knee`, `threads`, `file-per-thread`, `state`,
    /// `durability-cost`, `durability-mode`, `direct`, `io_uring`, `mmap`, `latency`,
    /// `suspicious-ceiling`, `ci-missed`, `first-run-outlier`, `race-open` (what a
    /// race left of the observations' comparisons open); later `runtime` and
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
    /// The other numbers its text states, by name (counts, seconds, bytes), where they
    /// are not in `figures` or `comparison`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub numbers: std::collections::BTreeMap<String, f64>,
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
/// that factor and Welch's p-value on the run times (stats::significance).
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
    /// Against the candidate the certainty names (the closest, the fastest measured, or
    /// the one that may gain the most), and against the naive way where the run has it.
    pub runner_up: Option<Comparison>,
    pub naive: Option<Comparison>,
    /// Either will do: the pick leads by less than the margin, or no candidate may be
    /// more than the margin faster (`verdict` "leads" or "as-fast").
    pub tied: bool,
    /// How sure the pick is, by the one rule against every candidate: "clear",
    /// "leads", "as-fast", "not-settled" or "alone" (docs/answer.md), the glance's
    /// certainty; in files before writebench.v3, the test against the runner-up alone
    /// ("faster", "tied" or "undecided").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// The fastest case measured, where the recommended one is a simpler case not shown
    /// slower than it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fastest: Option<Figure>,
    /// What the result's crash check of the recommended case's mode found, where it has
    /// one: states checked and promises broken (docs/crash.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crash_checked: Option<CrashChecked>,
    /// The same recommendation at a glance: the fields its three lines are made of
    /// (absent in results saved before them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glance: Option<glance::Glance>,
}

/// A durable recommendation's crash check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrashChecked {
    /// The workload checked (the mode's or pattern's name).
    pub workload: String,
    pub states: usize,
    pub broken: usize,
}

impl ResultFile {
    /// Reads a saved result: one clear line on any failure, naming the file.
    pub fn load(path: &std::path::Path) -> Result<ResultFile, String> {
        match Saved::load(path)? {
            Saved::Result(result) => Ok(*result),
            Saved::Crash(_) => Err(format!(
                "{} is a crash check's table ({}); this reads the results of run and latency",
                path.display(),
                crash::CRASH_SCHEMA
            )),
        }
    }
}

/// Any file writebench saves and `report` renders again: a result of `run`, `latency`
/// or `calibrate`, or a crash check's table.
#[derive(Debug)]
pub enum Saved {
    Result(Box<ResultFile>),
    Crash(crash::CrashReport),
}

impl Saved {
    /// Reads a saved file of either kind, told apart by its schema: one clear line on any
    /// failure, naming the file.
    pub fn load(path: &std::path::Path) -> Result<Saved, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {}", path.display(), error::plain(&e)))?;
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not a writebench result (not JSON: {e})", path.display()))?;
        let incomplete = |e: serde_json::Error| format!("{} is not a complete writebench result: {e}", path.display());
        match value.get("schema").and_then(|s| s.as_str()) {
            Some(schema) if SCHEMAS_READ.contains(&schema) => {
                serde_json::from_value(value).map(|r| Saved::Result(Box::new(r))).map_err(incomplete)
            }
            Some(crash::CRASH_SCHEMA) => serde_json::from_value(value).map(Saved::Crash).map_err(incomplete),
            Some(schema) => Err(format!(
                "{} has schema {schema}; this writebench reads {}",
                path.display(),
                SCHEMAS_READ.join(" and ")
            )),
            None => Err(format!("{} is not a writebench result (no schema field)", path.display())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plan::catalog;
    use plan::{Durability, FileState};

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
    fn the_tool_is_named_writebench_not_its_crate() {
        assert_eq!(Tool::this().name, "writebench");
    }

    #[test]
    fn json_field_names_follow_the_design() {
        let case =
            Case::new(catalog::by_name("pwritev").unwrap(), FileState::Sparse, 4096, 128, Durability::None, 1 << 20);
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
