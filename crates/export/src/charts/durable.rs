//! Durable against buffered: for each case, the throughput of its write calls alone and
//! with the sync that makes the data durable. A mode that never syncs has no durable
//! bar (nothing was made durable, so there is no figure to draw).

use super::bars::{BarChart, Group};
use super::{Chart, ERROR_BARS, Estimate, Naming, throughput_cases};
use plan::Case;
use result::Summary;
use result::{CaseResult, ResultFile};

/// Most rows when the chart falls back to each method's fastest durable case.
const FALLBACK_ROWS: usize = 12;

/// Everything that makes a strategy but its durability mode.
fn strategy(case: &Case) -> (&str, &str, plan::FileState, u64, u32, Option<u32>, u32, u32, u64) {
    let Case { runtime, method, state, chunk_bytes, iov, queue_depth, threads, files, bytes, .. } = case;
    (runtime, method, *state, *chunk_bytes, *iov, *queue_depth, *threads, *files, *bytes)
}

pub fn chart(result: &ResultFile) -> Option<Chart> {
    let cases: Vec<(&CaseResult, Summary)> = throughput_cases(result).collect();
    let modes_of = |case: &Case| {
        let mut modes: Vec<String> = cases
            .iter()
            .filter(|(other, _)| strategy(&other.case) == strategy(case))
            .map(|(other, _)| other.case.durability.name())
            .collect();
        modes.sort();
        modes.dedup();
        modes.len()
    };
    let mut rows: Vec<&(&CaseResult, Summary)> = cases.iter().filter(|(case, _)| modes_of(&case.case) > 1).collect();
    let compared = !rows.is_empty();
    if !compared {
        // No strategy measured in several modes: each method's fastest durable case.
        let mut best: Vec<&(&CaseResult, Summary)> = Vec::new();
        for entry in cases.iter().filter(|(case, _)| case.durable_stats.is_some()) {
            let durable = |e: &(&CaseResult, Summary)| e.0.durable_stats.map_or(0.0, |s| s.mean);
            match best.iter_mut().find(|b| b.0.case.method == entry.0.case.method) {
                Some(b) if durable(b) < durable(entry) => *b = entry,
                Some(_) => {}
                None => best.push(entry),
            }
        }
        best.truncate(FALLBACK_ROWS);
        rows = best;
    }
    if rows.is_empty() {
        return None;
    }
    rows.sort_by_key(|(case, _)| strategy(&case.case));
    let naming = Naming { state: true, chunk: true, threads: true, durability: true };
    let groups = rows
        .iter()
        .map(|(case, stats)| Group {
            label: naming.name(&case.case),
            bars: vec![Some(Estimate::gbps(stats)), case.durable_stats.as_ref().map(Estimate::gbps)],
        })
        .collect();
    let chart = BarChart {
        value_desc: "throughput (GB/s)".into(),
        row_desc: "case".into(),
        keys: vec!["buffered (write calls)".into(), "durable (write + sync)".into()],
        groups,
        log: false,
    };
    let id = "chart-durability".to_string();
    let title = "Durable vs buffered".to_string();
    let which = if compared {
        "every strategy measured in more than one durability mode"
    } else {
        "each method's case with the highest durable throughput"
    };
    let caption = format!(
        "Buffered throughput (the write calls) and durable throughput (write calls and the sync that \
         makes the data durable), mean with its 95 % confidence interval, for {which}. A mode that \
         never syncs has no durable bar: nothing was made durable."
    );
    let caption = format!("{caption} {ERROR_BARS}");
    let svg = chart.render(&id, &title);
    Some(Chart::drawn(id, title, caption, svg))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{elements_in, measured, result, texts_in};
    use super::*;
    use plan::{FileState, Layout};

    #[test]
    fn strategies_in_several_modes_and_no_durable_bar_without_a_sync() {
        let t = &[1.0, 1.1, 0.9];
        let result = result(vec![
            measured("write", FileState::Empty, 4096, "end", 1, Layout::OneFile, t),
            measured("write", FileState::Empty, 4096, "none", 1, Layout::OneFile, t),
            measured("write", FileState::Empty, 4096, "odsync", 1, Layout::OneFile, t),
            measured("pwrite", FileState::Empty, 4096, "end", 1, Layout::OneFile, t),
        ]);
        let chart = chart(&result).unwrap();
        let axes = texts_in(&chart.svg, "wb-axes");
        let rows: Vec<&String> = axes.iter().filter(|t| t.starts_with("write") || t.starts_with("pwrite")).collect();
        assert_eq!(rows.len(), 3, "{axes:?}");
        assert!(!rows.iter().any(|row| row.starts_with("pwrite")), "pwrite has one mode: {rows:?}");
        // 3 buffered bars and 2 durable ones (none never syncs).
        assert_eq!(elements_in(&chart.svg, "wb-series"), 5);
        assert!(chart.caption.contains("more than one durability mode"));
    }

    #[test]
    fn one_mode_only_shows_each_methods_fastest_durable_case() {
        let result = result(vec![
            measured("write", FileState::Empty, 4096, "end", 1, Layout::OneFile, &[2.0, 2.1]),
            measured("write", FileState::Empty, 1 << 20, "end", 1, Layout::OneFile, &[1.0, 1.1]),
            measured("pwrite", FileState::Empty, 4096, "end", 1, Layout::OneFile, &[1.0, 1.1]),
        ]);
        let chart = chart(&result).unwrap();
        let axes = texts_in(&chart.svg, "wb-axes");
        assert!(axes.contains(&"write empty 1 MiB 1 thread sync end".to_string()), "{axes:?}");
        assert!(!axes.contains(&"write empty 4 KiB 1 thread sync end".to_string()), "{axes:?}");
        assert!(chart.caption.contains("highest durable throughput"));
        let none = result_without_syncs();
        assert!(super::chart(&none).is_none());
    }

    fn result_without_syncs() -> ResultFile {
        result(vec![measured("write", FileState::Empty, 4096, "none", 1, Layout::OneFile, &[1.0, 1.1])])
    }
}
