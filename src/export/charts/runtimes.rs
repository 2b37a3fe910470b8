//! Runtimes side by side: the same strategy written by the native core and by each
//! child runtime (C, Python, Go, Zig). No chart when every case is native.

use super::bars::{BarChart, Group};
use super::{Chart, ERROR_BARS, Estimate, Naming, throughput_cases};
use crate::plan::Case;
use crate::result::{CaseResult, ResultFile};
use crate::stats::Summary;

/// Everything that makes a strategy but its runtime.
fn strategy(case: &Case) -> (&str, crate::plan::FileState, u64, u32, Option<u32>, u32, u32, String, u64) {
    let Case { method, state, chunk_bytes, iov, queue_depth, threads, files, durability, bytes, .. } = case;
    (method, *state, *chunk_bytes, *iov, *queue_depth, *threads, *files, durability.name(), *bytes)
}

pub fn chart(result: &ResultFile) -> Option<Chart> {
    let cases: Vec<(&CaseResult, Summary)> = throughput_cases(result).collect();
    let mut runtimes: Vec<&str> = Vec::new();
    for (case, _) in &cases {
        if !runtimes.contains(&case.case.runtime.as_str()) {
            runtimes.push(&case.case.runtime);
        }
    }
    if runtimes.len() < 2 {
        return None;
    }
    // Native first: the others are read against it.
    runtimes.sort_by_key(|runtime| (*runtime != crate::plan::catalog::NATIVE, *runtime));
    let mut rows: Vec<&Case> = Vec::new();
    for (case, _) in &cases {
        let runs_in = cases.iter().filter(|(other, _)| strategy(&other.case) == strategy(&case.case)).count();
        if runs_in > 1 && !rows.iter().any(|row| strategy(row) == strategy(&case.case)) {
            rows.push(&case.case);
        }
    }
    if rows.is_empty() {
        return None;
    }
    let naming = Naming { state: true, chunk: true, threads: true, durability: true };
    let groups = rows
        .iter()
        .map(|row| {
            let mut native = (*row).clone();
            native.runtime = crate::plan::catalog::NATIVE.to_string();
            Group {
                label: naming.name(&native),
                bars: runtimes
                    .iter()
                    .map(|runtime| {
                        cases
                            .iter()
                            .find(|(c, _)| c.case.runtime == *runtime && strategy(&c.case) == strategy(row))
                            .map(|(_, stats)| Estimate::gbps(stats))
                    })
                    .collect(),
            }
        })
        .collect();
    let chart = BarChart {
        value_desc: "buffered throughput (GB/s)".into(),
        row_desc: "strategy".into(),
        keys: runtimes.iter().map(|runtime| runtime.to_string()).collect(),
        groups,
        log: false,
    };
    let id = "chart-runtimes".to_string();
    let title = "Runtimes side by side".to_string();
    let caption = "Buffered throughput of the same strategy written by each runtime, mean with its 95 % \
                   confidence interval; only strategies measured by more than one runtime."
        .to_string();
    let caption = format!("{caption} {ERROR_BARS}");
    let svg = chart.render(&id, &title).unwrap_or_else(|error| format!("<p>chart not drawn: {error}</p>"));
    Some(Chart { id, title, caption, svg })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{elements_in, measured, result, texts_in};
    use super::*;
    use crate::plan::{FileState, Layout};

    #[test]
    fn no_chart_when_every_case_is_native() {
        let t = &[1.0, 1.1];
        let result = result(vec![measured("write", FileState::Empty, 4096, "end", 1, Layout::OneFile, t)]);
        assert!(chart(&result).is_none());
    }

    #[test]
    fn native_first_then_each_runtime() {
        let t = &[1.0, 1.1];
        let mut python = measured("write", FileState::Empty, 4096, "end", 1, Layout::OneFile, &[2.0, 2.1]);
        python.case.runtime = "python".into();
        let mut c = measured("write", FileState::Empty, 4096, "end", 1, Layout::OneFile, t);
        c.case.runtime = "c".into();
        let native = measured("write", FileState::Empty, 4096, "end", 1, Layout::OneFile, t);
        let chart = chart(&result(vec![python, c, native])).unwrap();
        assert_eq!(texts_in(&chart.svg, "wb-legend"), vec!["native", "c", "python"]);
        assert_eq!(elements_in(&chart.svg, "wb-series"), 3);
        assert!(texts_in(&chart.svg, "wb-axes").contains(&"write empty 4 KiB 1 thread sync end".to_string()));
    }
}
