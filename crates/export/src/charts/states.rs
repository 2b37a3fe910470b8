//! The file's state side by side: for each strategy measured in more than one state,
//! one bar per state (empty, sparse, preallocated, overwritten).

use super::bars::{BarChart, Group};
use super::{Chart, ERROR_BARS, Estimate, Naming, throughput_cases};
use plan::{Case, FileState};
use result::Summary;
use result::{CaseResult, ResultFile};

/// Everything that makes a strategy but its state.
fn strategy(case: &Case) -> (&str, &str, u32, Option<u32>, u32, u32, String, u64) {
    let Case { runtime, method, iov, queue_depth, threads, files, durability, bytes, .. } = case;
    (runtime, method, *iov, *queue_depth, *threads, *files, durability.name(), *bytes)
}

pub fn chart(result: &ResultFile) -> Option<Chart> {
    let cases: Vec<(&CaseResult, Summary)> = throughput_cases(result).collect();
    // Rows: (representative case, its chunk), in the order the strategies first appear.
    let mut rows: Vec<&Case> = Vec::new();
    for (case, _) in &cases {
        let same = |other: &&(&CaseResult, Summary)| {
            strategy(&other.0.case) == strategy(&case.case) && other.0.case.chunk_bytes == case.case.chunk_bytes
        };
        let states = cases.iter().filter(same).map(|(c, _)| c.case.state).collect::<std::collections::BTreeSet<_>>();
        if states.len() < 2 {
            continue;
        }
        // One row per strategy: the largest chunk it has in several states.
        match rows.iter_mut().find(|row| strategy(row) == strategy(&case.case)) {
            Some(row) if row.chunk_bytes < case.case.chunk_bytes => *row = &case.case,
            Some(_) => {}
            None => rows.push(&case.case),
        }
    }
    if rows.is_empty() {
        return None;
    }
    let states: Vec<FileState> = FileState::ALL
        .into_iter()
        .filter(|state| {
            cases.iter().any(|(c, _)| {
                c.case.state == *state
                    && rows
                        .iter()
                        .any(|row| strategy(row) == strategy(&c.case) && row.chunk_bytes == c.case.chunk_bytes)
            })
        })
        .collect();
    let naming = Naming { chunk: true, threads: true, durability: true, ..Naming::default() };
    let groups = rows
        .iter()
        .map(|row| Group {
            label: naming.name(row),
            bars: states
                .iter()
                .map(|state| {
                    cases
                        .iter()
                        .find(|(c, _)| {
                            c.case.state == *state
                                && strategy(&c.case) == strategy(row)
                                && c.case.chunk_bytes == row.chunk_bytes
                        })
                        .map(|(_, stats)| Estimate::gbps(stats))
                })
                .collect(),
        })
        .collect();
    let chart =
        BarChart::buffered_by_strategy(states.iter().map(|state| state_name(*state).to_string()).collect(), groups);
    let id = "chart-states".to_string();
    let title = "File states side by side".to_string();
    let caption = "Buffered throughput of the same strategy by the state of the file before the run, mean \
                   with its 95 % confidence interval; each strategy at the largest chunk size it was measured \
                   at in more than one state. A missing bar: that state was not measured."
        .to_string();
    let caption = format!("{caption} {ERROR_BARS}");
    let svg = chart.render(&id, &title);
    Some(Chart::drawn(id, title, caption, svg))
}

fn state_name(state: FileState) -> &'static str {
    match state {
        FileState::Empty => "empty (new file)",
        FileState::Sparse => "sparse (ftruncate)",
        FileState::Prealloc => "preallocated (fallocate)",
        FileState::Overwrite => "overwrite (written before)",
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{elements_in, measured, result, texts_in};
    use super::*;
    use plan::Layout;

    #[test]
    fn a_row_per_strategy_in_several_states_at_its_largest_chunk() {
        let t = &[1.0, 1.1, 0.9];
        let result = result(vec![
            measured("write", FileState::Empty, 4096, "end", 1, Layout::OneFile, t),
            measured("write", FileState::Prealloc, 4096, "end", 1, Layout::OneFile, t),
            measured("write", FileState::Empty, 1 << 20, "end", 1, Layout::OneFile, t),
            measured("write", FileState::Sparse, 1 << 20, "end", 1, Layout::OneFile, t),
            // Only one state: no row.
            measured("pwrite", FileState::Empty, 4096, "end", 1, Layout::OneFile, t),
        ]);
        let chart = chart(&result).unwrap();
        assert_eq!(texts_in(&chart.svg, "wb-legend"), vec!["empty (new file)", "sparse (ftruncate)"]);
        let axes = texts_in(&chart.svg, "wb-axes");
        assert!(axes.contains(&"write 1 MiB 1 thread sync end".to_string()), "{axes:?}");
        assert!(!axes.iter().any(|t| t.starts_with("pwrite") || t.contains("4 KiB")), "{axes:?}");
        assert_eq!(elements_in(&chart.svg, "wb-series"), 2);
    }

    #[test]
    fn one_state_only_no_chart() {
        let t = &[1.0, 1.1];
        let result = result(vec![measured("write", FileState::Empty, 4096, "end", 1, Layout::OneFile, t)]);
        assert!(chart(&result).is_none());
    }
}
