//! Throughput against chunk size, one line per method, one chart per file state: where
//! each method reaches its plateau (the knee), and which methods share it.

use std::collections::BTreeMap;

use super::lines::{LineChart, Series};
use super::{Chart, ERROR_BARS, Estimate, Naming, throughput_cases, usual_durability};
use plan::FileState;
use plan::units::format_size;
use result::ResultFile;

pub fn charts(result: &ResultFile) -> Vec<Chart> {
    let single: Vec<_> = throughput_cases(result).filter(|(case, _)| case.case.threads == 1).collect();
    let mut charts = Vec::new();
    for state in FileState::ALL {
        let in_state: Vec<_> = single.iter().filter(|(case, _)| case.case.state == state).collect();
        // One durability mode per chart, the usual one: the others are in the
        // durability chart, and mixing them here would draw unlike things as one line.
        let Some(mode) = usual_durability(in_state.iter().map(|(case, _)| &case.case)) else { continue };
        let mut series: BTreeMap<String, Vec<(f64, Estimate)>> = BTreeMap::new();
        let mut order: Vec<String> = Vec::new();
        let mut sizes: Vec<u64> = Vec::new();
        for (case, stats) in in_state.iter().filter(|(case, _)| case.case.durability == mode) {
            let name = Naming::default().name(&case.case);
            if !order.contains(&name) {
                order.push(name.clone());
            }
            if !sizes.contains(&case.case.bytes) {
                sizes.push(case.case.bytes);
            }
            series.entry(name).or_default().push((case.case.chunk_bytes as f64, Estimate::gbps(stats)));
        }
        let mut ticks: Vec<f64> = series.values().flatten().map(|(chunk, _)| *chunk).collect();
        ticks.sort_by(f64::total_cmp);
        ticks.dedup();
        let chart = LineChart {
            x_desc: "chunk size (bytes per call; per iovec for writev/pwritev; log scale)".into(),
            y_desc: "buffered throughput (GB/s)".into(),
            x_ticks: ticks,
            x_label: |x| format_size(x.round() as u64),
            series: order
                .into_iter()
                .map(|label| Series { points: series.remove(&label).unwrap_or_default(), label })
                .collect(),
        };
        let id = format!("chart-chunks-{}", state.name());
        let title = format!("Throughput by chunk size, writing into {}", state.description());
        let sizes: Vec<String> = sizes.into_iter().map(format_size).collect();
        let caption = format!(
            "Buffered throughput (bytes over the time of the write calls, before any sync), mean of the runs \
             with its 95 % confidence interval as an error bar; one thread, sync mode {mode}, {} per run \
             (the other modes are in the durability chart). Points of one chunk size are spread a little \
             sideways so that their bars do not hide each other.",
            sizes.join(" or ")
        );
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
    fn one_chart_per_state_one_line_per_method_in_the_usual_mode() {
        let t = &[1.0, 1.1, 0.9];
        let result = result(vec![
            measured("write", FileState::Empty, 4096, "end", 1, Layout::OneFile, t),
            measured("write", FileState::Empty, 1 << 20, "end", 1, Layout::OneFile, t),
            measured("pwrite", FileState::Empty, 4096, "end", 1, Layout::OneFile, t),
            measured("pwrite", FileState::Empty, 1 << 20, "odsync", 1, Layout::OneFile, t),
            measured("pwrite", FileState::Empty, 1 << 20, "end", 2, Layout::OneFile, t),
            measured("pwrite", FileState::Prealloc, 1 << 20, "end", 1, Layout::OneFile, t),
        ]);
        let charts = charts(&result);
        let ids: Vec<&str> = charts.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, vec!["chart-chunks-empty", "chart-chunks-prealloc"]);
        assert_eq!(texts_in(&charts[0].svg, "wb-legend"), vec!["write", "pwrite"]);
        assert!(charts[0].caption.contains("sync mode end"), "{}", charts[0].caption);
        let ticks = texts_in(&charts[0].svg, "wb-axes");
        assert!(ticks.contains(&"4 KiB".to_string()) && ticks.contains(&"1 MiB".to_string()), "{ticks:?}");
        assert!(charts[0].svg.contains("id=\"chart-chunks-empty\""));
    }

    #[test]
    fn no_measured_case_no_chart() {
        assert!(charts(&result(Vec::new())).is_empty());
    }
}
