//! `compare`'s one chart: for each case, each file's factor against the baseline with
//! its 95 % interval (computed in analysis::compare), so that drift and real differences can be
//! told apart at a glance: a bar whose interval crosses 1 is not a difference.

use super::bars::{BarChart, Group};
use super::{Chart, Estimate};
use result::compare::{BaselineTest, CompareResult};

/// None when no case was tested (every case has one run, or nothing matched).
pub fn chart(compared: &CompareResult) -> Option<Chart> {
    let others = &compared.files[1..];
    let estimate = |test: Option<&BaselineTest>| {
        test.and_then(|test| test.tested.as_ref()).map(|t| Estimate {
            value: t.factor,
            low: Some(t.low),
            high: Some(t.high),
        })
    };
    let mut groups = Vec::new();
    for case in &compared.cases {
        for (durable, label) in [(false, case.id.clone()), (true, format!("{} (durable)", case.id))] {
            let bars: Vec<Option<Estimate>> = case
                .versus
                .iter()
                .map(|versus| {
                    versus.as_ref().and_then(|v| estimate(if durable { v.durable.as_ref() } else { v.write.as_ref() }))
                })
                .collect();
            if bars.iter().any(Option::is_some) {
                groups.push(Group { label, bars });
            }
        }
    }
    if groups.is_empty() {
        return None;
    }
    let baseline = &compared.files[0].label;
    let chart = BarChart {
        value_desc: format!("throughput ratio to {baseline} (×, 1 = the same)"),
        row_desc: "case".into(),
        keys: others.iter().map(|file| format!("{} ({})", file.label, file.name)).collect(),
        groups,
        log: false,
    };
    let id = "chart-ratio".to_string();
    let title = format!("Each case against {baseline}");
    let caption = format!(
        "How many times the throughput of {baseline} each file reached, case by case: the ratio of mean run \
         times, with its 95 % interval (delta method on the log of the ratio). Buffered and, where the mode \
         syncs, durable. An interval that contains 1 is no difference; the table below marks with * the \
         differences that stay significant after Holm's correction (α = {}). {}",
        compared.alpha,
        super::ERROR_BARS
    );
    let svg = chart.render(&id, &title);
    Some(Chart::drawn(id, title, caption, svg))
}
