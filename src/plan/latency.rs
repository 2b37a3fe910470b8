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
    /// `native` and the runners (`--runtimes`); empty means native.
    pub runtimes: Vec<String>,
}

/// One pattern written by one call of one runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    pub pattern: Pattern,
    pub runtime: String,
    pub method: &'static str,
}

/// The calls a runtime makes for a pattern: at offset 0 with `pwrite` everywhere; at
/// the file position with `write`, and Python's file objects (raw `io.FileIO` and the
/// buffered `open()`, seed 002's three variants) and Go's `bufio` too.
pub fn methods_of(runtime: &str, pattern: Pattern) -> &'static [&'static str] {
    match (runtime, pattern) {
        (_, Pattern::Overwrite0) => &["pwrite"],
        ("python", Pattern::Append) => &["write", "fileio", "buffered"],
        ("go", Pattern::Append) => &["write", "bufio"],
        (_, Pattern::Append) => &["write"],
    }
}

impl Plan {
    /// Every pattern, then every runtime and its calls for it, in the order they run.
    pub fn units(&self) -> Vec<Unit> {
        let native = [crate::measure::methods::NATIVE.to_string()];
        let runtimes = if self.runtimes.is_empty() { &native[..] } else { &self.runtimes[..] };
        let mut units = Vec::new();
        for &pattern in &self.patterns {
            for runtime in runtimes {
                for &method in methods_of(runtime, pattern) {
                    units.push(Unit { pattern, runtime: runtime.clone(), method });
                }
            }
        }
        units
    }

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
            "runtimes": if self.runtimes.is_empty() { vec!["native".to_string()] } else { self.runtimes.clone() },
        })
    }
}

/// Whether a case of a result is a latency case (they share the result file with the
/// throughput cases of `run`'s quick suite): [`case_of`] names them so.
pub fn is_latency_case(case: &Case) -> bool {
    case.id.starts_with("latency ")
}

/// The case of one unit and mode, for the result file. Native's ids stay as they were
/// (`latency append 8B osync`); the runners' name the runtime and the call
/// (`latency python buffered append 8B osync`).
pub fn case_of(plan: &Plan, unit: &Unit, durability: Durability) -> Case {
    let pattern = unit.pattern;
    let state = match pattern {
        Pattern::Overwrite0 => FileState::Overwrite,
        Pattern::Append => FileState::Empty,
    };
    let method = unit.method;
    let bytes = plan.bytes as u64;
    let who = if unit.runtime == crate::measure::methods::NATIVE {
        String::new()
    } else {
        format!("{} {method} ", unit.runtime)
    };
    Case {
        id: format!("latency {who}{} {bytes}B {durability}", pattern.name()),
        runtime: unit.runtime.clone(),
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
