//! Throughput against the number of writer threads, one line per strategy and layout
//! (threads into one file, or a file each), one chart per file state. The one-thread
//! case of the same strategy starts both of its lines, since with one thread the two
//! layouts are the same thing.

use super::lines::{LineChart, Series};
use super::{Chart, ERROR_BARS, Estimate, Naming, throughput_cases};
use plan::{Case, FileState};
use result::ResultFile;

/// The strategy of a case apart from its threads and layout.
fn strategy(case: &Case) -> (&str, &str, u64, u32, Option<u32>, String, u64) {
    (&case.runtime, &case.method, case.chunk_bytes, case.iov, case.queue_depth, case.durability.name(), case.bytes)
}

pub fn charts(result: &ResultFile) -> Vec<Chart> {
    let cases: Vec<_> = throughput_cases(result).collect();
    let mut charts = Vec::new();
    for state in FileState::ALL {
        let in_state: Vec<_> = cases.iter().filter(|(case, _)| case.case.state == state).collect();
        let mut series: Vec<(String, Series)> = Vec::new();
        for (case, stats) in in_state.iter().filter(|(case, _)| case.case.threads > 1) {
            let layout = if case.case.files > 1 { "a file per thread" } else { "one file" };
            let naming = Naming { chunk: true, durability: true, ..Naming::default() };
            let label = format!("{}, {layout}", naming.name(&case.case));
            let point = (case.case.threads as f64, Estimate::gbps(stats));
            match series.iter_mut().find(|(name, _)| *name == label) {
                Some((_, line)) => line.points.push(point),
                None => {
                    let mut points = vec![point];
                    let single = in_state
                        .iter()
                        .find(|(one, _)| one.case.threads == 1 && strategy(&one.case) == strategy(&case.case));
                    if let Some((_, stats)) = single {
                        points.push((1.0, Estimate::gbps(stats)));
                    }
                    series.push((label.clone(), Series { label, points }));
                }
            }
        }
        if series.is_empty() {
            continue;
        }
        let mut ticks: Vec<f64> = series.iter().flat_map(|(_, s)| s.points.iter().map(|(x, _)| *x)).collect();
        ticks.sort_by(f64::total_cmp);
        ticks.dedup();
        let chart = LineChart {
            x_desc: "writer threads (count, log scale)".into(),
            y_desc: "buffered throughput (GB/s)".into(),
            x_ticks: ticks,
            x_label: |x| format!("{}", x.round()),
            series: series.into_iter().map(|(_, line)| line).collect(),
        };
        let id = format!("chart-threads-{}", state.name());
        let title = format!("Threads and layouts, writing into {}", state.description());
        let caption = "Buffered throughput of the whole file (all threads' bytes over the time from the start \
                       to the last thread's last call), mean with its 95 % confidence interval; each line \
                       is one strategy with its threads writing disjoint ranges of one file, or a file \
                       each, starting from the same strategy with one thread."
            .to_string();
        let caption = format!("{caption} {ERROR_BARS}");
        let svg = chart.render(&id, &title);
        charts.push(Chart::drawn(id, title, caption, svg));
    }
    charts
}

#[cfg(test)]
mod tests {
    use super::super::tests::{measured, result, texts_in};
    use super::*;
    use plan::Layout;

    #[test]
    fn each_layout_a_line_that_starts_at_the_one_thread_case() {
        let t = &[1.0, 1.1, 0.9];
        let result = result(vec![
            measured("pwrite", FileState::Prealloc, 1 << 20, "end", 1, Layout::OneFile, t),
            measured("pwrite", FileState::Prealloc, 1 << 20, "end", 2, Layout::OneFile, t),
            measured("pwrite", FileState::Prealloc, 1 << 20, "end", 4, Layout::OneFile, t),
            measured("pwrite", FileState::Prealloc, 1 << 20, "end", 2, Layout::FilePerThread, t),
            // Another chunk: not the start of the 1 MiB lines.
            measured("pwrite", FileState::Prealloc, 4096, "end", 1, Layout::OneFile, &[9.0, 9.0]),
            measured("write", FileState::Empty, 4096, "end", 1, Layout::OneFile, t),
        ]);
        let charts = charts(&result);
        assert_eq!(charts.len(), 1, "only prealloc has several threads");
        assert_eq!(charts[0].id, "chart-threads-prealloc");
        let legend = texts_in(&charts[0].svg, "wb-legend");
        assert_eq!(legend, vec!["pwrite 1 MiB sync end, one file", "pwrite 1 MiB sync end, a file per thread"]);
        // 3 + 2 points, each with an interval.
        assert_eq!(super::super::tests::elements_in(&charts[0].svg, "wb-error-bars"), 5 * 4);
    }
}
