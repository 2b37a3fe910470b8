//! Small-write latency: the percentiles of each latency case (a write pattern under a
//! durability mode), on a logarithmic axis since a commit to a disk can take a thousand
//! times as long as a write into the page cache.

use super::bars::{BarChart, Group};
use super::{Chart, Estimate};
use crate::latency_table::is_latency_case;
use result::{ResultFile, Status};

const PERCENTILES: [(&str, &str); 4] = [("p50", "p50 (median)"), ("p90", "p90"), ("p99", "p99"), ("p999", "p99.9")];

pub fn chart(result: &ResultFile) -> Option<Chart> {
    let mut groups = Vec::new();
    let mut counts = Vec::new();
    for case in result.cases.iter().filter(|c| is_latency_case(&c.case) && c.status == Status::Ok) {
        let Some(latency) = &case.latency_ns else { continue };
        let micros = |key: &str| latency.get(key).and_then(|v| v.as_f64()).map(|ns| Estimate::exact(ns / 1000.0));
        let bars: Vec<Option<Estimate>> = PERCENTILES.iter().map(|(key, _)| micros(key)).collect();
        // A zero cannot sit on a logarithmic axis; a percentile of 0 ns is not a
        // measurement anyway (the clock's resolution is far coarser).
        if bars.iter().flatten().all(|bar| bar.value <= 0.0) {
            continue;
        }
        let bars = bars.into_iter().map(|bar| bar.filter(|bar| bar.value > 0.0)).collect();
        if let Some(count) = latency.get("count").and_then(|v| v.as_u64()) {
            counts.push(count);
        }
        groups.push(Group { label: case.case.id.trim_start_matches("latency ").to_string(), bars });
    }
    if groups.is_empty() {
        return None;
    }
    counts.sort_unstable();
    counts.dedup();
    let counts: Vec<String> = counts.iter().map(u64::to_string).collect();
    let chart = BarChart {
        value_desc: "time per operation (µs, log scale)".into(),
        row_desc: "pattern, write size and durability mode".into(),
        keys: PERCENTILES.iter().map(|(_, name)| name.to_string()).collect(),
        groups,
        log: true,
    };
    let id = "chart-latency".to_string();
    let title = "Small-write latency per durability mode".to_string();
    let caption = format!(
        "Percentiles of the time of each operation (the write, and the sync call when the mode makes one \
         after it), from one run of {} operations per case: percentiles of one run have no confidence \
         interval, so no error bars here.",
        if counts.is_empty() { "several".to_string() } else { counts.join(" or ") }
    );
    let svg = chart.render(&id, &title);
    Some(Chart::drawn(id, title, caption, svg))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{elements_in, result, texts_in};
    use super::*;
    use plan::catalog;
    use plan::{Case, FileState};
    use result::CaseResult;

    fn latency_case(mode: &str, p50: f64) -> CaseResult {
        let mut case =
            Case::new(catalog::by_name("pwrite").unwrap(), FileState::Overwrite, 8, 1, mode.parse().unwrap(), 8);
        case.id = format!("latency overwrite0 8B {mode}");
        case.kind = plan::CaseKind::Latency(plan::pattern::Pattern::Overwrite0);
        let mut result = analysis::advice::testkit::measured(
            case,
            vec![result::Run { write_seconds: 1.0, ..Default::default() }],
            1,
        );
        result.latency_ns = Some(serde_json::json!({"count": 1000, "mean": p50, "p50": p50, "p90": p50 * 2.0,
            "p99": p50 * 10.0, "p999": p50 * 100.0, "max": p50 * 1000.0}));
        result
    }

    #[test]
    fn four_percentiles_per_case_in_microseconds_without_error_bars() {
        let chart = chart(&result(vec![latency_case("none", 340.0), latency_case("odsync", 250_000.0)])).unwrap();
        assert_eq!(texts_in(&chart.svg, "wb-legend"), vec!["p50 (median)", "p90", "p99", "p99.9"]);
        let axes = texts_in(&chart.svg, "wb-axes");
        assert!(axes.contains(&"overwrite0 8B odsync".to_string()), "{axes:?}");
        assert_eq!(elements_in(&chart.svg, "wb-series"), 8);
        assert_eq!(elements_in(&chart.svg, "wb-error-bars"), 0);
        assert!(texts_in(&chart.svg, "wb-axis-title").iter().any(|t| t.contains("(µs")));
        assert!(chart.caption.contains("1000 operations"));
    }

    #[test]
    fn no_latency_case_no_chart() {
        assert!(chart(&result(Vec::new())).is_none());
    }
}
