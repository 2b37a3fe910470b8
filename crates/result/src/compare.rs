//! What `compare` finds, as plain data: the comparison of saved results that the
//! exporters render and `compare --export-json` writes (docs/results.md). Computed in
//! `analysis::compare`; nothing here computes.

use serde::{Deserialize, Serialize};

use crate::Status;
use plan::units::format_size;

/// The schema of `compare --export-json`.
pub const SCHEMA: &str = "writebench.compare.v1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareResult {
    pub schema: String,
    /// The files in the order given; the first is the baseline.
    pub files: Vec<FileInfo>,
    pub alpha: f64,
    /// How the p-values were corrected, in words.
    pub correction: String,
    /// Context and applied options that differ between the files.
    pub differences: Vec<Difference>,
    /// Cases in the baseline and at least one other file, in the baseline's order.
    pub cases: Vec<CaseComparison>,
    /// Cases that nothing is compared with: absent from the baseline, or only in it.
    pub unmatched: Vec<Unmatched>,
    /// The recommendations, goal by goal.
    pub answers: Vec<GoalComparison>,
    /// One per file after the baseline.
    pub summary: Vec<PairSummary>,
    /// Effects measured inside each file, set side by side (the lab's comparison of
    /// filesystems; plain `compare` leaves it empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub across: Vec<CrossObservation>,
    /// Per goal, the fastest file and strategy of all (filled with `across`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fastest: Vec<Fastest>,
    /// Which files keep their data in memory and what a sync there measures, said once
    /// (see `analysis::compare::memory::note`); null where none does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_note: Option<String>,
    /// The files' crash checks (`run --crash-check`, `lab --crash`; docs/crash.md), each
    /// filesystem, mount options and workload once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub crash: Vec<crate::crash::CrashCheck>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileInfo {
    /// The file as the user named it.
    pub name: String,
    /// A, B, C…: the column heading.
    pub label: String,
    pub schema: String,
    pub complete: bool,
    /// False for files written before recommendations were stored (or without any).
    pub answer_stored: bool,
}

/// One field and its value in each file (None where the file does not have it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    /// `tool.version`, `host.kernel`, `target.fs_type`, `options.size`, …
    pub field: String,
    pub values: Vec<Option<String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseComparison {
    pub id: String,
    /// What the case measures (the baseline's).
    #[serde(default)]
    pub kind: plan::CaseKind,
    /// The baseline's bytes per run (each file's own are in its [`FileCase`]).
    pub bytes: u64,
    /// Per file: the case there, None where that file does not have it.
    pub files: Vec<Option<FileCase>>,
    /// Per file after the baseline (index 0 is the second file): against the baseline;
    /// None where that file does not have the case.
    pub versus: Vec<Option<Versus>>,
}

/// A case as one file has it. Medians are throughput in bytes/s from the run times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileCase {
    /// Bytes per run of this file's case.
    #[serde(default)]
    pub bytes: u64,
    pub status: Status,
    pub error: Option<String>,
    pub runs: usize,
    pub median: Option<f64>,
    /// Write + sync; None where the mode never syncs.
    pub durable_median: Option<f64>,
    /// Latency cases: operations per second of the timed loop.
    pub ops_per_second: Option<f64>,
}

/// One case of one file against the baseline. A test is None where either side has no
/// figure (failed, skipped, no runs, or for `durable`, a mode that never syncs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Versus {
    pub write: Option<BaselineTest>,
    pub durable: Option<BaselineTest>,
    /// Set where the two cases wrote different bytes per run: the tests then have both
    /// medians and no factor (`tested` is None).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub different_sizes: Option<Sizes>,
}

/// Bytes per run of the baseline's case and of the other file's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sizes {
    pub baseline: u64,
    pub other: u64,
}

impl Sizes {
    /// Why there is no factor: "different sizes: 64 MiB vs 256 MiB".
    pub fn reason(&self) -> String {
        format!("different sizes: {} vs {}", format_size(self.baseline), format_size(self.other))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineTest {
    /// Median throughput, bytes/s.
    pub baseline_median: f64,
    pub other_median: f64,
    /// None when a side has fewer than two runs: no spread, so no test.
    pub tested: Option<Tested>,
}

impl BaselineTest {
    pub fn significant(&self) -> bool {
        self.tested.as_ref().is_some_and(|t| t.significant)
    }
}

/// The factor (other's rate over the baseline's, by mean run times), its 95 % interval,
/// Welch's p on the run times, and that p after Holm's correction across the pair.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Tested {
    pub factor: f64,
    pub low: f64,
    pub high: f64,
    pub p: f64,
    pub p_holm: f64,
    /// p_holm < α.
    pub significant: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unmatched {
    pub id: String,
    pub bytes: u64,
    /// Indexes of the files that have it.
    pub in_files: Vec<usize>,
}

/// One goal's recommendation in each file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoalComparison {
    pub goal: String,
    /// The record size a latency goal is answered for (small durable commits are answered
    /// per size, each its own goal here); absent for the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record_bytes: Option<u64>,
    /// Per file; None where the file has no recommendation for this goal.
    pub picks: Vec<Option<Pick>>,
    /// Whether every file that answers the goal names the same case; None when fewer
    /// than two do.
    pub same_strategy: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pick {
    pub case: String,
    /// A name from `result::metric`: `throughput`, `new-file`, `commits_per_second`, `p99_ns`…
    pub metric: String,
    pub median: f64,
    pub tied: bool,
}

/// How one file compares with the baseline, in counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairSummary {
    /// Index of the file (1 for the second).
    pub file: usize,
    /// Cases with at least one test, and those of them with a significant one.
    pub cases_tested: usize,
    pub cases_significant: usize,
    /// Cases both files have that could not be tested (failed, one run, different sizes…).
    pub cases_untested: usize,
    /// Tests (write and durable) in the Holm family, and the significant ones.
    pub tests: usize,
    pub tests_significant: usize,
}

// The lab's comparison of filesystems: effects measured inside each file, side by side.

/// One effect across the files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossObservation {
    /// `state:prealloc`, `state:sparse`, `state:overwrite`, `durability-cost`.
    pub kind: String,
    pub text: String,
    /// Per file; None where the file has no pair for this effect.
    pub files: Vec<Option<Effect>>,
}

/// One effect in one file.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Effect {
    /// Geometric mean of the pairs' factors (rate with the change over rate without).
    pub factor: f64,
    pub pairs: usize,
    /// Pairs significantly faster with the change, and significantly slower.
    pub faster: usize,
    pub slower: usize,
}

impl Effect {
    pub fn verdict(&self) -> &'static str {
        match (self.faster > 0, self.slower > 0) {
            (true, false) => "helps",
            (false, true) => "hurts",
            (true, true) => "mixed",
            // Not shown to differ is not shown the same: no interval here says "tied".
            (false, false) => "none",
        }
    }
}

/// Per goal, the fastest file and strategy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fastest {
    pub goal: String,
    pub text: String,
    /// Index of the file whose pick is best.
    pub file: usize,
    pub case: String,
    pub metric: String,
    pub median: f64,
    /// The best of the other files: its index, and the factor and p of the test between
    /// the two (None when the metric has no run times to test).
    pub runner_up: Option<usize>,
    pub factor: Option<f64>,
    pub p: Option<f64>,
}
