//! The options a result was measured with, as applied (docs/design.md §4): the ones the
//! analysis and the exports read are typed fields, read in one place; the rest (what the
//! engines and the runners were, the suite's expanded lists, the lab's build) are kept as
//! they were written, for `compare` and for the reader of the JSON. Every field is
//! optional, and left out when it has no value (null and missing read alike):
//! `latency`, `calibrate` and older results carry fewer of them.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunOptions {
    /// The subcommand that measured: `run`, `latency`, `calibrate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<String>,
    /// Bytes per run of the reference size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Measured runs per case without a target (`--repeat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    /// Warm-up rounds (`run`), or untimed operations before each loop (`latency`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<u64>,
    /// `--target-ci`: the CI half-width aimed at, in percent of the mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_ci: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_runs: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_runs: Option<u32>,
    /// `interleaved` or `grouped`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<String>,
    /// Racing (docs/racing.md): the budget in seconds, null when there was none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_seconds: Option<f64>,
    /// Whether the cases were raced for the Answer's goals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub race: Option<bool>,
    /// `--stonewall` (docs/scale.md): each writer's time before it stops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stonewall_seconds: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// `--drop-cache`: each prepared file's pages dropped before the timed span.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_cache: Option<bool>,
    /// `--source`: where the data written came from; absent in results from before it
    /// was chosen (all of them cached).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<plan::data_source::DataSource>,
    /// What "tied" means in the Answer, in percent (`--equivalence`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equivalence_pct: Option<f64>,
    /// The command line as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argv: Option<Vec<String>>,
    /// Everything else, as written: the engines' and runners' overheads, the source's
    /// period, the toolchains, the suite's expanded lists, `mpi`, and the lab's `lab`.
    #[serde(flatten)]
    pub other: serde_json::Map<String, serde_json::Value>,
}

/// The default equivalence margin δ: 5 % (`--equivalence`), which a result saved
/// before the option existed was judged by.
pub const EQUIVALENCE: f64 = 0.05;

impl RunOptions {
    /// The equivalence margin δ as a fraction: the `--equivalence` the run was given,
    /// else the default (a result saved before the option existed used it).
    pub fn margin(&self) -> f64 {
        self.equivalence_pct.filter(|pct| pct.is_finite() && *pct > 0.0).map_or(EQUIVALENCE, |pct| pct / 100.0)
    }

    /// The filesystem the lab built for this result (`lab.filesystem`), if it did.
    pub fn lab_filesystem(&self) -> Option<&str> {
        self.other.get("lab")?.get("filesystem")?.as_str()
    }

    /// Adds `keys` (a subcommand's own, a plan's lists as applied): a key that is a typed
    /// field lands in it, so that no key is saved twice and every reader finds it.
    pub fn extend(&mut self, keys: serde_json::Map<String, serde_json::Value>) {
        let mut json = self.to_json();
        if let serde_json::Value::Object(object) = &mut json {
            object.extend(keys);
        }
        *self = serde_json::from_value(json).expect("this writebench's own options read back");
    }

    /// The options as one JSON object, as saved.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("plain data serializes")
    }

    /// Options written as JSON (the extra keys of a subcommand), typed where they are
    /// read; anything that is not an object is kept whole under `other`.
    pub fn from_json(value: serde_json::Value) -> RunOptions {
        serde_json::from_value(value).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_object_reads_back_the_same_with_its_other_keys() {
        let saved = serde_json::json!({
            "command": "run", "min_runs": 2, "max_runs": 40, "budget_seconds": 30.0,
            "equivalence_pct": 2.5, "argv": ["writebench", "run"], "executor": {"ns": 1}, "warmup": 5_000_000_000u64,
            "lab": {"filesystem": "ext4"},
        });
        let options = RunOptions::from_json(saved.clone());
        assert_eq!(options.margin(), 0.025);
        assert_eq!((options.min_runs, options.max_runs), (Some(2), Some(40)));
        assert_eq!(options.lab_filesystem(), Some("ext4"));
        assert_eq!(options.to_json(), saved, "nothing lost, nothing added");
        assert_eq!(RunOptions::default().margin(), EQUIVALENCE, "an older result: the default");

        // A plan's keys that are typed fields land in them, once.
        let mut latency = RunOptions { command: Some("latency".into()), ..RunOptions::default() };
        let applied = serde_json::json!({"seed": 7, "warmup": 100, "count": 1000});
        latency.extend(applied.as_object().unwrap().clone());
        assert_eq!((latency.seed, latency.warmup), (Some(7), Some(100)));
        assert_eq!(latency.other.keys().collect::<Vec<_>>(), ["count"]);
    }
}
