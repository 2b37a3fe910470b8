//! The names a figure's `metric` carries (docs/results.md) and how each is read: its
//! unit, and whether less is better. Every renderer of a figure, and the comparison
//! that ranks picks across files, reads them here so that a new metric is one line.

/// A metric's value in the unit it is shown in, with the words around the number:
/// "p99 12.3 µs", "4.10 GB/s durable, for a new file".
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    pub value: f64,
    pub before: &'static str,
    pub unit: &'static str,
    pub after: &'static str,
}

impl Reading {
    /// The whole reading, the number written by `number`.
    pub fn text(&self, number: impl Fn(f64) -> String) -> String {
        format!("{}{} {}{}", self.before, number(self.value), self.unit, self.after)
    }
}

pub fn reading(metric: &str, value: f64) -> Reading {
    let gbps = |after| Reading { value: value / 1e9, before: "", unit: "GB/s", after };
    match metric {
        "throughput" => gbps(""),
        "durable" => gbps(" durable"),
        // Preparation counted (docs/answer.md): what a program making the file pays.
        "new-file" => gbps(", for a new file"),
        "new-file-durable" => gbps(" durable, for a new file"),
        "commits_per_second" => Reading { value, before: "", unit: "commits/s", after: "" },
        "saves_per_second" => Reading { value, before: "", unit: "saves/s", after: "" },
        "ops_per_second" => Reading { value, before: "", unit: "writes/s", after: "" },
        "p99_ns" => Reading { value: value / 1e3, before: "p99 ", unit: "µs", after: "" },
        other if other.ends_with("_ns") => Reading { value: value / 1e3, before: "", unit: "µs", after: "" },
        _ => Reading { value, before: "", unit: "", after: "" },
    }
}

/// Latencies are better lower; rates higher.
pub fn lower_is_better(metric: &str) -> bool {
    metric.ends_with("_ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rate_reads_in_its_unit_and_latencies_are_better_lower() {
        let three = |v: f64| format!("{v:.3}");
        assert_eq!(reading("throughput", 4.1e9).text(three), "4.100 GB/s");
        assert_eq!(reading("new-file-durable", 2e9).text(three), "2.000 GB/s durable, for a new file");
        assert_eq!(reading("p99_ns", 12_300.0).text(three), "p99 12.300 µs");
        assert_eq!(reading("commits_per_second", 4100.0).text(|v| format!("{v:.0}")), "4100 commits/s");
        assert!(lower_is_better("p99_ns") && !lower_is_better("new-file"));
    }
}
