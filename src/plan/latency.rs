//! The vocabulary of `writebench latency`: write patterns, the plan of one invocation,
//! and the case each pattern and mode becomes in the result file.

use crate::plan::durability::Durability;
use crate::plan::{Case, FileState};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    Overwrite0,
    Append,
}

impl Pattern {
    pub const ALL: [Pattern; 2] = [Pattern::Overwrite0, Pattern::Append];

    pub fn name(self) -> &'static str {
        match self {
            Pattern::Overwrite0 => "overwrite0",
            Pattern::Append => "append",
        }
    }
}

impl std::str::FromStr for Pattern {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        Pattern::ALL
            .into_iter()
            .find(|p| p.name() == text)
            .ok_or_else(|| format!("unknown pattern '{text}' (known: overwrite0, append)"))
    }
}

/// What one `latency` invocation measures.
#[derive(Debug, Clone)]
pub struct Plan {
    pub count: u64,
    pub bytes: usize,
    pub warmup: u64,
    pub patterns: Vec<Pattern>,
    pub durability: Vec<Durability>,
    pub seed: u64,
}

impl Plan {
    /// The plan as applied, for the result file's `options`: the lists parsed and
    /// spelled canonically (`every-fdatasync:1`, not whatever the user typed).
    pub fn applied(&self) -> serde_json::Value {
        serde_json::json!({
            "count": self.count,
            "bytes": self.bytes,
            "warmup": self.warmup,
            "patterns": self.patterns.iter().map(|p| p.name()).collect::<Vec<_>>(),
            "durability": self.durability.iter().map(|d| d.name()).collect::<Vec<_>>(),
            "seed": self.seed,
        })
    }
}

/// Whether a case of a result is a latency case (they share the result file with the
/// throughput cases of `run`'s quick suite): [`case_of`] names them so.
pub fn is_latency_case(case: &Case) -> bool {
    case.id.starts_with("latency ")
}

/// The case of one pattern and mode, for the result file.
pub fn case_of(plan: &Plan, pattern: Pattern, durability: Durability) -> Case {
    let (method, state) = match pattern {
        Pattern::Overwrite0 => ("pwrite", FileState::Overwrite),
        Pattern::Append => ("write", FileState::Empty),
    };
    let bytes = plan.bytes as u64;
    Case {
        id: format!("latency {} {bytes}B {durability}", pattern.name()),
        runtime: "native".into(),
        method: method.into(),
        state,
        chunk_bytes: bytes,
        iov: 1,
        queue_depth: None,
        threads: 1,
        files: 1,
        durability,
        bytes: bytes * plan.count,
    }
}
