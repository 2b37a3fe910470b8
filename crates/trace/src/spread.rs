//! Values counted exactly (a size and how often it was seen), and their spread: the
//! order statistics a pattern shows (docs/trace.md). Exact, not binned: a program's
//! sizes are few distinct values, and a median of 301 B must read 301 B.

use std::collections::BTreeMap;

use result::trace::Spread;

/// How often each value was seen.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counts(BTreeMap<u64, u64>);

impl Counts {
    pub fn add(&mut self, value: u64) {
        *self.0.entry(value).or_default() += 1;
    }

    pub fn absorb(&mut self, other: Counts) {
        for (value, n) in other.0 {
            *self.0.entry(value).or_default() += n;
        }
    }

    pub fn total(&self) -> u64 {
        self.0.values().sum()
    }

    /// The spread of the values: the lower median, the nearest-rank 10th and 90th
    /// percentiles, so that each is a value that was seen.
    pub fn spread(&self) -> Spread {
        let count = self.total();
        if count == 0 {
            return Spread::default();
        }
        let at = |rank: u64| -> u64 {
            let mut seen = 0;
            for (&value, &n) in &self.0 {
                seen += n;
                if seen > rank {
                    return value;
                }
            }
            *self.0.keys().next_back().expect("not empty")
        };
        let rank = |share: f64| ((count as f64 * share).ceil() as u64).saturating_sub(1).min(count - 1);
        Spread {
            count,
            min: *self.0.keys().next().expect("not empty"),
            p10: at(rank(0.1)),
            median: at((count - 1) / 2),
            p90: at(rank(0.9)),
            max: *self.0.keys().next_back().expect("not empty"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spread_is_of_values_that_were_seen() {
        let mut counts = Counts::default();
        assert_eq!(counts.spread(), Spread::default());
        for value in 1..=10 {
            counts.add(value * 100);
        }
        let spread = counts.spread();
        assert_eq!(
            (spread.count, spread.min, spread.p10, spread.median, spread.p90, spread.max),
            (10, 100, 100, 500, 900, 1000)
        );
        let mut same = Counts::default();
        for _ in 0..1000 {
            same.add(301);
        }
        same.add(4096);
        assert_eq!(same.spread().median, 301);
        assert_eq!(same.spread().p90, 301);
        assert_eq!(same.spread().max, 4096);
        let mut other = Counts::default();
        other.add(7);
        same.absorb(other);
        assert_eq!((same.total(), same.spread().min), (1002, 7));
    }
}
