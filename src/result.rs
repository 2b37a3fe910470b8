//! The result of a run as plain data (DESIGN §4): what the exporters render and what
//! `report`/`compare` will read back. Nothing here measures or prints.

use serde::{Deserialize, Serialize};

use crate::analysis::stats::Summary;
use crate::context::{Host, TargetInfo};
use crate::plan::Case;

pub const SCHEMA: &str = "writebench.v1";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResultFile {
    pub schema: String,
    pub tool: Tool,
    pub host: Host,
    pub target: TargetInfo,
    /// The run's options exactly as they were applied, and the command line.
    pub options: serde_json::Value,
    pub cases: Vec<CaseResult>,
    pub observations: Vec<Observation>,
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// First call to last call returned, including closing steps the method needs.
    pub write_seconds: f64,
    /// The call that makes the data durable (0 when the durability mode has none).
    pub sync_seconds: f64,
    /// The method's untimed set-up before the write span (ring creation, buffer
    /// registration); 0 for methods that have none.
    #[serde(default)]
    pub setup_seconds: f64,
    /// For each thread, start of the span to its last call returned: the spread
    /// between the fastest and the slowest shows stragglers.
    #[serde(default)]
    pub thread_seconds: Vec<f64>,
    /// CPU time over write + sync: each writer thread's over its part (and its own
    /// sync), plus the executing thread's over the one sync and the closing steps
    /// (getrusage RUSAGE_THREAD); latency cases, the thread's over the timed loop.
    pub user_seconds: f64,
    pub sys_seconds: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaseResult {
    #[serde(flatten)]
    pub case: Case,
    pub status: Status,
    pub error: Option<String>,
    pub runs: Vec<Run>,
    /// Buffered throughput in bytes/s: bytes / write_seconds.
    pub stats: Option<Summary>,
    /// Durable throughput in bytes/s: bytes / (write_seconds + sync_seconds).
    pub durable_stats: Option<Summary>,
    pub latency_ns: Option<serde_json::Value>,
    /// Latency cases whose sync is a call of its own (write + fdatasync): that call
    /// alone, with the keys of `latency_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_latency_ns: Option<serde_json::Value>,
    /// Latency cases: operations completed per second of the timed loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_per_second: Option<f64>,
}

impl CaseResult {
    /// A case with runs: its statistics are derived here, once.
    pub fn measured(case: Case, runs: Vec<Run>) -> CaseResult {
        let bytes = case.bytes as f64;
        let buffered: Vec<f64> = runs.iter().map(|run| bytes / run.write_seconds).collect();
        let durable: Vec<f64> = runs.iter().map(|run| bytes / (run.write_seconds + run.sync_seconds)).collect();
        CaseResult {
            case,
            status: Status::Ok,
            error: None,
            runs,
            stats: Summary::of(&buffered),
            durable_stats: Summary::of(&durable),
            latency_ns: None,
            sync_latency_ns: None,
            ops_per_second: None,
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
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Observation {
    pub kind: String,
    pub text: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::methods;
    use crate::plan::{Durability, FileState};

    #[test]
    fn measured_derives_buffered_and_durable_throughput() {
        let case = Case::new(methods::by_name("write").unwrap(), FileState::Empty, 4096, 1, Durability::End, 1000);
        let run = |w, s| Run {
            write_seconds: w,
            sync_seconds: s,
            setup_seconds: 0.0,
            thread_seconds: vec![w],
            user_seconds: 0.0,
            sys_seconds: 0.0,
        };
        let result = CaseResult::measured(case, vec![run(1.0, 1.0), run(2.0, 0.0)]);
        let stats = result.stats.unwrap();
        assert_eq!((stats.min, stats.max), (500.0, 1000.0));
        let durable = result.durable_stats.unwrap();
        assert_eq!((durable.min, durable.max), (500.0, 500.0));
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
}
