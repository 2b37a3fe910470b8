//! What a case measures ([`CaseKind`]), and the operations `writebench latency` times
//! (docs/measurement.md): a write of one call, or a save of a whole file by rename. A
//! latency case carries its pattern in its kind.

use serde::{Deserialize, Serialize};

use crate::catalog;
use crate::durability::{Commit, Durability};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    Overwrite0,
    Append,
    /// Temp file, write, fsync, rename over the target, fsync of the directory.
    Replace,
    /// As `Replace`, the temp file made with O_TMPFILE and given a name with linkat.
    ReplaceTmpfile,
    /// As `Replace` without either fsync: not durable.
    ReplaceUnsafe,
}

impl Pattern {
    pub const ALL: [Pattern; 5] =
        [Pattern::Overwrite0, Pattern::Append, Pattern::Replace, Pattern::ReplaceTmpfile, Pattern::ReplaceUnsafe];

    pub fn name(self) -> &'static str {
        match self {
            Pattern::Overwrite0 => "overwrite0",
            Pattern::Append => "append",
            Pattern::Replace => "replace",
            Pattern::ReplaceTmpfile => "replace-tmpfile",
            Pattern::ReplaceUnsafe => "replace-unsafe",
        }
    }

    /// Whether an operation is a save of a whole file (rather than one write call).
    pub fn is_save(self) -> bool {
        matches!(self, Pattern::Replace | Pattern::ReplaceTmpfile | Pattern::ReplaceUnsafe)
    }

    /// A save's own durability: the two fsyncs, or none at all. `None` for the writes,
    /// which run under the `--durability` modes.
    pub fn own_durability(self) -> Option<Durability> {
        match self {
            Pattern::Replace | Pattern::ReplaceTmpfile => Some(Durability::of(Commit::Save)),
            Pattern::ReplaceUnsafe => Some(Durability::None),
            Pattern::Overwrite0 | Pattern::Append => None,
        }
    }
}

impl std::str::FromStr for Pattern {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        crate::names::find(&Pattern::ALL, Pattern::name, text)
            .map_err(|known| format!("unknown pattern '{text}' (known: {known})"))
    }
}

/// What a case measures, as a type: each export and each piece of advice asks this, not
/// the id's words.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CaseKind {
    /// A file written whole, its runs timed as one span each (`run`).
    #[default]
    Throughput,
    /// A file made to its size by a creation method (`posix_fallocate`, …).
    Creation,
    /// A loop of small writes or saves, each operation timed (`latency`, and `run`'s quick
    /// suite): its pattern.
    Latency(Pattern),
}

impl CaseKind {
    /// The kind of a case of a result saved before cases had one: read from its id and
    /// method, as those results named their cases (`latency replace 4KiB`, and the
    /// runners' `latency python buffered append 8B osync`).
    pub fn of_older_case(id: &str, method: &str) -> CaseKind {
        if let Some(rest) = id.strip_prefix("latency ") {
            let mut words = rest.split(' ');
            let first = words.next().unwrap_or("");
            let word = if first.parse::<Pattern>().is_ok() { first } else { words.nth(1).unwrap_or("") };
            if let Ok(pattern) = word.parse() {
                return CaseKind::Latency(pattern);
            }
        }
        if catalog::by_name(method).is_some_and(|m| m.creation.is_some()) {
            return CaseKind::Creation;
        }
        CaseKind::Throughput
    }
}
