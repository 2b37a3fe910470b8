//! The files side by side (the lab's filesystems): for each case, one bar per file with
//! its median rate, durable where the case syncs (what a program that keeps its data
//! gets), buffered where it never syncs. Absolute GB/s, so that a reader sees which
//! filesystem is fastest without doing the baseline's arithmetic the ratio chart needs.

use super::bars::{BarChart, Group};
use super::{Chart, Estimate};
use plan::CaseKind;
use result::compare::CompareResult;

/// None when no case has a figure in any file.
pub fn chart(compared: &CompareResult) -> Option<Chart> {
    let mut groups = Vec::new();
    for case in &compared.cases {
        // Not a rate to set beside the others: latency cases (operations per second,
        // with percentiles) and file creation (size over the time of one call: an
        // ftruncate "writes" terabytes per second, and would flatten every other bar).
        if case.kind != CaseKind::Throughput {
            continue;
        }
        let durable = case.files.iter().flatten().any(|side| side.durable_median.is_some());
        let bars: Vec<Option<Estimate>> = case
            .files
            .iter()
            .map(|side| {
                let side = side.as_ref()?;
                let median = if durable { side.durable_median? } else { side.median? };
                Some(Estimate { value: median / 1e9, low: None, high: None })
            })
            .collect();
        if bars.iter().any(Option::is_some) {
            let label = if durable { format!("{} (durable)", case.id) } else { case.id.clone() };
            groups.push(Group { label, bars });
        }
    }
    if groups.is_empty() {
        return None;
    }
    let chart = BarChart {
        value_desc: "median throughput, GB/s (durable where the case syncs)".into(),
        row_desc: "case".into(),
        keys: compared.files.iter().map(|file| file.label.clone()).collect(),
        groups,
        log: false,
    };
    let id = "chart-side-by-side".to_string();
    let title = "Each case on each file".to_string();
    let caption = "The median rate of each case on each file, side by side: write + sync where the case's \
                   mode syncs, the write alone where it never does. No bar: the case failed or was not run \
                   there. The ratio chart below has the intervals and the significance."
        .to_string();
    let svg = chart.render(&id, &title);
    Some(Chart::drawn(id, title, caption, svg))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::tests::{measured, result};
    use plan::{FileState, Layout};

    #[test]
    fn file_creation_is_no_bar_beside_the_writes() {
        let cases = |slower: f64| {
            vec![
                measured("pwrite", FileState::Empty, 1 << 20, "end", 1, Layout::OneFile, &[1.0 * slower, 1.1 * slower]),
                // 1 GiB "written" in 10 µs: 100 TB/s.
                measured("ftruncate", FileState::Empty, 1 << 30, "end", 1, Layout::OneFile, &[1e-5, 1.1e-5]),
            ]
        };
        let files = vec![("ext4".to_string(), result(cases(1.0))), ("xfs".to_string(), result(cases(2.0)))];
        let chart = chart(&analysis::compare::across::compare_filesystems(&files)).expect("a chart");
        assert!(chart.svg.contains("pwrite empty 1MiB"), "the write case is drawn");
        assert!(!chart.svg.contains("ftruncate"), "file creation is not drawn");
    }
}
