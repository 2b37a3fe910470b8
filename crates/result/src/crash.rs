//! What `writebench crash` found, as plain data (docs/crash.md): one entry per
//! filesystem × mount options × workload.

use serde::{Deserialize, Serialize};

use super::Tool;

pub const CRASH_SCHEMA: &str = "writebench.crash.v1";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CrashCheck {
    /// The filesystem, as `--fs` names it.
    pub fs: String,
    /// The mount options the workload ran under ("" for the filesystem's defaults).
    pub mount_options: String,
    /// The workload, named as `run` names the mode (`end`, `odsync`, …) or `latency` the
    /// save pattern or commit (`replace`, `append+odsync`, …); `run` for the user's
    /// program (`crash --run`).
    pub workload: String,
    /// The user's program (`--run`) and its checker (`--check`), as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_command: Option<String>,
    /// Why it did not run, where it could not (atomic writes not offered); the counts
    /// are then 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// What the recording held: block writes (and zeroed ranges), flushes, and the calls
    /// that returned a promise.
    pub writes: usize,
    pub flushes: usize,
    pub promises: usize,
    /// Crash states checked.
    pub states: usize,
    /// States the filesystem's checker found in need of repair (after the journal's
    /// replay by a mount).
    pub repairs: usize,
    /// States in which a promise was broken.
    pub broken: usize,
    /// The promises broken in at least one state, as a reader counts them, in the order
    /// they were made: a program's lines ("commit 3"), a workload's calls that returned.
    /// A state breaks the last promise made before the power went (a program's checker
    /// judges that one), or a workload's first promise it finds broken.
    #[serde(default)]
    pub promises_broken: Vec<String>,
    /// For broken promises: up to three, in plain words (the first state of each of the
    /// first three findings).
    pub examples: Vec<String>,
    /// Every distinct finding: the broken states grouped by what their judge said
    /// (numbers, long hexadecimal strings and path components made placeholders), corrupt
    /// ones first, then by how many states.
    #[serde(default)]
    pub findings: Vec<Finding>,
    /// Every state checked, in the order checked.
    #[serde(default)]
    pub all_states: Vec<StateSeen>,
    /// For repairs: the checker's first complaint, once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair_example: Option<String>,
    /// States the user's checker could not judge (it crashed, timed out or could not
    /// start): counted neither kept nor broken; the first, in words. Always written, as
    /// docs/crash.md lists them (0 and null for the built-in workloads).
    #[serde(default)]
    pub checker_failed: usize,
    #[serde(default)]
    pub checker_failure: Option<String>,
    /// How the user's program ended ("exit status 0") and the end of its standard error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program_exit: Option<String>,
    /// Empty when it wrote none; absent for the built-in workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program_stderr: Option<String>,
    /// How long the recording went on after the workload or program ended (`--linger`),
    /// and when, in that time, the device received its last record (absent: nothing).
    #[serde(default)]
    pub linger_seconds: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_write_after_end: Option<f64>,
    /// How fast the recorder answered (`--device`): "fast" (a RAM device; files written
    /// before the option was, too) or "slow" (each write and flush after a random delay
    /// of up to 3 ms, four requests at a time).
    #[serde(default = "fast")]
    pub device: String,
    /// Wall time of the recording and the states' checks.
    pub seconds: f64,
    /// The log in words, with the calls that returned (`--show-log`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log: Vec<String>,
}

fn fast() -> String {
    "fast".into()
}

/// Broken states that said the same thing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub kind: FindingKind,
    /// What groups them: the judge's words with placeholders (`N` a number, `#` a
    /// hexadecimal string of 7 or more, `*` a path component).
    pub pattern: String,
    pub states: usize,
    /// The first of them, in words.
    pub first: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// The data is corrupt: the filesystem did not mount or needed repair, or the user's
    /// checker said so (exit status 2).
    Corrupt,
    /// A promise was broken.
    Lost,
}

/// One state and what was found in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateSeen {
    /// "after flush 3 of 9 (log record 120), 2 of the 5 writes after it kept".
    pub state: String,
    pub found: Found,
    /// The judge's words (broken or unjudged), and the filesystem checker's complaint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub words: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Found {
    Kept,
    Lost,
    Corrupt,
    /// The user's checker could not judge it.
    Unjudged,
}

/// The file `crash --export-json` writes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CrashReport {
    pub schema: String,
    pub tool: Tool,
    /// The kernel the filesystems ran on (`uname -r`): their behaviour is its.
    pub kernel: String,
    pub seed: u64,
    /// The most states checked per entry (`--states`).
    pub states_per_check: usize,
    pub command: String,
    pub crash: Vec<CrashCheck>,
    /// False when interrupted: the entries done so far.
    pub complete: bool,
}
