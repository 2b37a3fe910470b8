//! The names a figure's `metric` carries (docs/results.md) and how each is read: its
//! unit, and whether less is better. Every renderer of a figure, and the comparison
//! that ranks picks across files, reads them here so that a new metric is one line. The
//! figure a goal ranks by is a [`Metric`]; analysis draws it from a case's runs.

/// Which time a figure divides the bytes by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Metric {
    /// The write time (docs/design.md §2.2): `runs[i].write_time()`, figure `stats`.
    Buffered,
    /// Write and sync: `runs[i].durable_time()`, figure `durable_stats`.
    Durable,
    /// What a program making a new file pays before its data is in the page cache: one
    /// span from `open(O_CREAT)` through the preparation, the method's set-up and the
    /// writes (`Run::new_file_seconds`, docs/answer.md).
    NewFile,
    /// What a program making a new file pays until it is durable: the same span on
    /// through the sync and the directory's fsync (`Run::new_file_durable_seconds`).
    /// Only for cases with a durable figure.
    NewFileDurable,
    /// A latency case (docs/measurement.md): each loop's time over its operations, the
    /// figure in operations per second.
    Operations,
    /// A latency case whose writes are durable: each loop's time over its commits (a
    /// commit is every write under O_SYNC or O_DSYNC, every N writes under every:N).
    Commits,
    /// A latency case of saves: as [`Metric::Operations`], a save being one operation.
    Saves,
}

impl Metric {
    pub const ALL: [Metric; 7] = [
        Metric::Buffered,
        Metric::Durable,
        Metric::NewFile,
        Metric::NewFileDurable,
        Metric::Operations,
        Metric::Commits,
        Metric::Saves,
    ];

    /// The name `Figure::metric` carries.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Buffered => "throughput",
            Metric::Durable => "durable",
            Metric::NewFile => "new-file",
            Metric::NewFileDurable => "new-file-durable",
            Metric::Operations => "ops_per_second",
            Metric::Commits => "commits_per_second",
            Metric::Saves => "saves_per_second",
        }
    }

    /// The figure without preparation that this metric adds it to (a latency metric
    /// adds none).
    pub fn without_preparation(self) -> Metric {
        match self {
            Metric::Buffered | Metric::NewFile => Metric::Buffered,
            Metric::Durable | Metric::NewFileDurable => Metric::Durable,
            Metric::Operations | Metric::Commits | Metric::Saves => self,
        }
    }

    /// Whether the times are per operation (a latency case's), rather than per run of
    /// the case's bytes: two such figures compare whatever each loop's count.
    pub fn per_operation(self) -> bool {
        matches!(self, Metric::Operations | Metric::Commits | Metric::Saves)
    }
}

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
