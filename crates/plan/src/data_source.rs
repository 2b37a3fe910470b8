//! Where the data a run writes comes from (docs/measurement.md, "The source of the
//! data"): a buffer each writer reuses, which stays in the CPU caches as data a program
//! has just produced does, or memory streamed once, as a program writing out a large
//! buffer it holds reads it.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DataSource {
    /// Each writer's buffer of at most 8 MiB, reused lap after lap: in the CPU caches.
    #[default]
    Cached,
    /// Each writer's buffer as large as its part (the writers' together up to
    /// [`MEMORY_BUDGET`]), flushed from the CPU caches before the run: read from memory.
    Memory,
}

/// The most the writers' buffers of one run take together under `--source memory`: as
/// much as rapidgzip's benchmarkIOWrite writes from, and far above any last-level cache
/// a buffer that wraps would stay in.
pub const MEMORY_BUDGET: usize = 1 << 30;

impl DataSource {
    pub const ALL: [DataSource; 2] = [DataSource::Cached, DataSource::Memory];

    pub fn name(self) -> &'static str {
        match self {
            DataSource::Cached => "cached",
            DataSource::Memory => "memory",
        }
    }

    /// The header's line (docs/measurement.md).
    pub fn description(self) -> &'static str {
        match self {
            DataSource::Cached => {
                "data: each writer reuses an 8 MiB buffer, in the CPU caches as data just produced is \
                 (--source memory streams it from memory)"
            }
            DataSource::Memory => {
                "data: streamed from memory, each writer's buffer as large as its part (up to 1 GiB \
                 together) and out of the CPU caches when the run starts (--source memory)"
            }
        }
    }
}

impl fmt::Display for DataSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DataSource {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        crate::names::find(&DataSource::ALL, DataSource::name, text)
            .map_err(|known| format!("unknown source '{text}' (known: {known})"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_others_are_refused_with_the_known_ones() {
        for source in DataSource::ALL {
            assert_eq!(source.name().parse::<DataSource>(), Ok(source));
            assert_eq!(serde_json::to_value(source).unwrap(), source.name());
        }
        assert_eq!("disk".parse::<DataSource>().unwrap_err(), "unknown source 'disk' (known: cached, memory)");
        assert_eq!(DataSource::default(), DataSource::Cached);
    }
}
