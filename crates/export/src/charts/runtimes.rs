//! Runtimes side by side: the same strategy written by the native core and by each
//! child runtime (C, Python, Go, Zig, Java, Node.js), each method of a runtime against
//! the native method that makes the same system calls (`catalog::counterpart`: Java's
//! `channel` beside native `write`). No chart when every case is native.

use super::bars::{BarChart, Group};
use super::{Chart, ERROR_BARS, Estimate, Naming, throughput_cases};
use plan::Case;
use plan::catalog::NATIVE;
use result::Summary;
use result::{CaseResult, ResultFile};

/// The strategy a case is a bar of: everything of the case as native writes it
/// (`Case::as_native`) but the runtime.
fn strategy(case: &Case) -> (String, plan::FileState, u64, u32, Option<u32>, u32, u32, String, u64) {
    let Case { method, state, chunk_bytes, iov, queue_depth, threads, files, durability, bytes, .. } = case.as_native();
    (method, state, chunk_bytes, iov, queue_depth, threads, files, durability.name(), bytes)
}

/// A bar's series: the runtime, with its method where that is no twin of native's
/// ("java channel", "node write-callback qd4").
fn series(case: &Case) -> String {
    let native = case.as_native();
    if native.method == case.method {
        return case.runtime.clone();
    }
    let depth = if native.queue_depth != case.queue_depth {
        case.queue_depth.map(|depth| format!(" qd{depth}")).unwrap_or_default()
    } else {
        String::new()
    };
    format!("{} {}{depth}", case.runtime, case.method)
}

pub fn chart(result: &ResultFile) -> Option<Chart> {
    let cases: Vec<(&CaseResult, Summary)> = throughput_cases(result).collect();
    let mut keys: Vec<String> = Vec::new();
    for (case, _) in &cases {
        let key = series(&case.case);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    if keys.len() < 2 {
        return None;
    }
    // Native first: the others are read against it.
    keys.sort_by(|a, b| (a != NATIVE, a).cmp(&(b != NATIVE, b)));
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
        .map(|row| Group {
            label: naming.name(&row.as_native()),
            bars: keys
                .iter()
                .map(|key| {
                    cases
                        .iter()
                        .find(|(c, _)| series(&c.case) == *key && strategy(&c.case) == strategy(row))
                        .map(|(_, stats)| Estimate::gbps(stats))
                })
                .collect(),
        })
        .collect();
    let chart = BarChart::buffered_by_strategy(keys, groups);
    let id = "chart-runtimes".to_string();
    let title = "Runtimes side by side".to_string();
    let caption = "Buffered throughput of the same strategy written by each runtime, mean with its 95 % \
                   confidence interval; a runtime's method that is no native method's twin stands beside \
                   the native call it makes (Java's channel beside write); only strategies measured by \
                   more than one runtime."
        .to_string();
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

    #[test]
    fn a_method_without_a_twin_stands_beside_the_native_call_it_makes() {
        let t = &[1.0, 1.1];
        let native = measured("write", FileState::Empty, 4096, "end", 1, Layout::OneFile, t);
        let mut channel = measured("channel", FileState::Empty, 4096, "end", 1, Layout::OneFile, &[2.0, 2.1]);
        channel.case.runtime = "java".into();
        let mut write_sync = measured("writeSync", FileState::Empty, 4096, "end", 1, Layout::OneFile, &[3.0, 3.1]);
        write_sync.case.runtime = "node".into();
        let chart = chart(&result(vec![write_sync, channel, native])).unwrap();
        assert_eq!(texts_in(&chart.svg, "wb-legend"), vec!["native", "java channel", "node writeSync"]);
        assert_eq!(elements_in(&chart.svg, "wb-series"), 3);
        assert!(texts_in(&chart.svg, "wb-axes").contains(&"write empty 4 KiB 1 thread sync end".to_string()));
    }
}
