//! `--export-html`: one self-contained page — its style inline (html.css, beside this
//! file), its charts inline SVG, no script, nothing fetched (a Content-Security-Policy
//! forbids it, so that a mistake shows as a console error instead of a request).
//! Printable and readable in light and dark mode. In order: the answer, the charts,
//! the observations, the full table, the context. Every text from the result file is
//! escaped.

use std::io::{self, Write};

use html_escape::{encode_double_quoted_attribute as attribute, encode_text as text};

use crate::charts;
use crate::document;
use crate::latency_table::is_latency_case;
use crate::wording::{most_common_size, notes, runs_wording};
use plan::numbers::format_mean_sd;
use plan::units::format_size;
use result::{CaseResult, ResultFile, Status, Summary};

const STYLE: &str = include_str!("html.css");

/// Nothing may be loaded from anywhere: styles are inline, images are inline SVG.
const POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

/// The page up to `<main>`: the policy, the style, light and dark. Every page writebench
/// writes (a report, a comparison) starts with it.
pub(crate) fn page_start(title: &str, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{POLICY}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"color-scheme\" content=\"light dark\">\n\
         <link rel=\"icon\" href=\"data:,\">\n<title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<main>",
        text(title)
    )
}

pub fn render(result: &ResultFile, out: &mut dyn Write) -> io::Result<()> {
    let title = document::title(result);
    page_start(&title, out)?;
    writeln!(out, "<header>\n<h1>{}</h1>", text(&title))?;
    writeln!(
        out,
        "<p class=\"muted\">{} per run unless a row says otherwise; throughput in GB/s (10<sup>9</sup> bytes per \
         second) over {}. Buffered: the write calls; durable: the write calls and the sync that makes the data \
         durable.</p>",
        text(&format_size(most_common_size(result))),
        text(&runs_wording(&result.options))
    )?;
    if let Some(source) = document::data_source(result) {
        writeln!(out, "<p class=\"muted\">{}</p>", text(source))?;
    }
    if let Some(note) = document::target_note(result) {
        writeln!(out, "<p class=\"note\">Note: {}</p>", text(&note))?;
    }
    writeln!(out, "</header>")?;
    answer(result, out)?;
    if !result.crash.is_empty() {
        let facts = format!(
            "The durable modes measured, on a new {} with these mount options, against simulated power losses \
             (docs/crash.md).",
            result.target.fs_type
        );
        super::crash::html_section(&result.crash, &facts, out)?;
    }
    charts(result, out)?;
    observations(result, out)?;
    table(result, out)?;
    context(result, out)?;
    writeln!(out, "</main>\n</body>\n</html>")
}

fn answer(result: &ResultFile, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "<section id=\"answer\">\n<h2>Answer</h2>")?;
    if result.answer.is_empty() {
        writeln!(out, "<p class=\"none\">{}</p>", text(document::no_answer(result)))?;
    } else {
        writeln!(out, "<ul class=\"answer\">")?;
        for (title, recommendation) in document::shown_answers(result, false) {
            let tied = if recommendation.tied { "<span class=\"tied\">tied</span>" } else { "" };
            let goal = text(&title).into_owned();
            match crate::glance::lines(recommendation) {
                // The three lines head the goal; the rule behind the pick is folded below.
                Some(lines) => {
                    let lines: Vec<String> = lines.iter().map(|line| text(line).into_owned()).collect();
                    writeln!(
                        out,
                        "<li><span class=\"goal\">{goal}</span><br><span class=\"glance\">{}</span>\n\
                         <details><summary>Why</summary>{}\n<span class=\"numbers\">{}</span>",
                        lines.join("<br>"),
                        text(&recommendation.text),
                        text(&document::figure_text(&recommendation.best))
                    )?;
                }
                None => writeln!(
                    out,
                    "<li><span class=\"goal\">{goal}</span>{tied}<br>{}\n<span class=\"numbers\">{}</span>",
                    text(&recommendation.text),
                    text(&document::figure_text(&recommendation.best))
                )?,
            }
            for (against, comparison) in
                [("runner-up", &recommendation.runner_up), ("naive way", &recommendation.naive)]
            {
                if let Some(comparison) = comparison {
                    let line = format!("against the {against}: {}", document::comparison_text(comparison));
                    writeln!(out, "<span class=\"numbers\">{}</span>", text(&line))?;
                }
            }
            // What a reader should know beside the lines, as `--explain` says it.
            for caveat in recommendation.glance.iter().flat_map(|g| &g.caveats) {
                writeln!(out, "<br>{}", text(caveat))?;
            }
            if recommendation.glance.is_some() {
                writeln!(out, "</details>")?;
            }
            writeln!(out, "</li>")?;
        }
        writeln!(out, "</ul>")?;
    }
    writeln!(out, "</section>")
}

fn charts(result: &ResultFile, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "<section id=\"charts\">\n<h2>Charts</h2>")?;
    let charts = charts::all(result);
    if charts.is_empty() {
        writeln!(out, "<p class=\"none\">No chart: this result has no measured case to draw.</p>")?;
    }
    for chart in charts {
        // The SVG was made by plotters and charts::Layers, which escape what they write.
        writeln!(
            out,
            "<figure id=\"figure-{}\">\n<h3>{}</h3>\n{}\n<figcaption>{}</figcaption>\n</figure>",
            attribute(&chart.id),
            text(&chart.title),
            chart.svg,
            text(&chart.caption)
        )?;
    }
    writeln!(out, "</section>")
}

fn observations(result: &ResultFile, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "<section id=\"observations\">\n<h2>Observations</h2>")?;
    if result.observations.is_empty() {
        writeln!(out, "<p class=\"none\">{}</p>", text(document::no_observations(result)))?;
    } else {
        writeln!(out, "<ol>")?;
        for observation in &result.observations {
            write!(out, "<li>{}", text(&observation.text))?;
            if let Some(comparison) = &observation.comparison {
                writeln!(out, "\n<span class=\"numbers\">{}</span>", text(&document::comparison_text(comparison)))?;
            }
            for figure in &observation.figures {
                writeln!(out, "\n<span class=\"numbers\">{}</span>", text(&document::figure_text(figure)))?;
            }
            writeln!(out, "</li>")?;
        }
        writeln!(out, "</ol>")?;
    }
    writeln!(out, "</section>")
}

fn table(result: &ResultFile, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "<section id=\"table\">\n<h2>All cases</h2>\n<div class=\"table-wrap\">\n<table>")?;
    writeln!(
        out,
        "<thead><tr><th>case</th><th>status</th><th>runs</th><th>buffered GB/s ( min, mean ± sd, max )</th>\
         <th>buffered 95 % CI</th><th>durable GB/s</th><th>durable 95 % CI</th><th>notes</th></tr></thead>\n<tbody>"
    )?;
    for case in result.cases.iter().filter(|case| !is_latency_case(&case.case)) {
        writeln!(out, "{}", throughput_row(case))?;
    }
    writeln!(out, "</tbody>\n</table>\n</div>")?;
    let latency: Vec<&CaseResult> = result.cases.iter().filter(|case| is_latency_case(&case.case)).collect();
    if !latency.is_empty() {
        writeln!(
            out,
            "<h3>Small writes, one at a time</h3>\n<div class=\"table-wrap\">\n<table>\n<thead><tr><th>case</th>\
             <th>status</th><th>operations</th><th>mean µs</th><th>p50 µs</th><th>p90 µs</th><th>p99 µs</th>\
             <th>p99.9 µs</th><th>max µs</th><th>per second</th><th>notes</th></tr></thead>\n<tbody>"
        )?;
        for case in latency {
            writeln!(out, "{}", latency_row(case))?;
        }
        writeln!(out, "</tbody>\n</table>\n</div>")?;
    }
    writeln!(out, "</section>")
}

fn cell(content: &str) -> String {
    format!("<td>{}</td>", text(content))
}

fn figure_cell(content: &str) -> String {
    format!("<td class=\"figure\">{}</td>", text(content))
}

/// "a – b", in the unit the summary is in, or why there is no interval.
fn interval(summary: &Summary) -> String {
    match (summary.ci95_low, summary.ci95_high) {
        (Some(low), Some(high)) => format!("{low:.3} – {high:.3}"),
        (Some(low), None) => format!("{low:.3} – (no upper bound)"),
        _ => "— (one run)".to_string(),
    }
}

fn throughput_row(case: &CaseResult) -> String {
    let status = case.status.name();
    let mut row = format!("<tr class=\"{status}\">{}{}", cell(&document::one_line(&case.case.id)), cell(status));
    match (case.status, case.stats.or(case.call_us)) {
        (Status::Ok, Some(stats)) => {
            // A file creation in µs per call (`document::per_call`), said in the cell.
            let (stats, durable, unit) = match document::per_call(case) {
                Some((write, durable)) => (write, durable, " µs per call"),
                None => (stats.scaled(1e-9), case.durable_stats.map(|d| d.scaled(1e-9)), ""),
            };
            row += &cell(&stats.n.to_string());
            row += &figure_cell(&format!("{}{unit}", crate::document::seed_style(&stats)));
            row += &figure_cell(&interval(&stats));
            match durable {
                Some(durable) => {
                    row += &figure_cell(&format!("{}{unit}", format_mean_sd(durable.mean, durable.stddev)));
                    row += &figure_cell(&interval(&durable));
                }
                // Nothing was synced: no durable figure.
                None => row += &format!("{}{}", cell("— (never synced)"), cell("")),
            }
            row += &cell(&notes(case).join(", "));
        }
        _ => {
            let reason = case.error.as_deref().unwrap_or("no figure");
            row += &format!("<td></td><td colspan=\"5\">{}</td>", text(reason));
        }
    }
    row + "</tr>"
}

fn latency_row(case: &CaseResult) -> String {
    let label = case.case.id.trim_start_matches("latency ");
    let status = case.status.name();
    let mut row = format!("<tr class=\"{status}\">{}{}", cell(label), cell(status));
    match (&case.latency_ns, case.status) {
        (Some(latency), Status::Ok) => {
            let count = latency.get("count").and_then(|v| v.as_u64()).map(|n| n.to_string()).unwrap_or_default();
            row += &cell(&count);
            for key in ["mean", "p50", "p90", "p99", "p999", "max"] {
                let micros = latency.get(key).and_then(|v| v.as_f64()).map(|ns| format!("{:.2}", ns / 1000.0));
                row += &figure_cell(&micros.unwrap_or_default());
            }
            row += &figure_cell(&case.ops_per_second.map(|ops| format!("{ops:.0}")).unwrap_or_default());
            row += &cell(&crate::wording::race_note(case).unwrap_or_default());
        }
        _ => row += &format!("<td colspan=\"9\">{}</td>", text(case.error.as_deref().unwrap_or("no figure"))),
    }
    row + "</tr>"
}

fn context(result: &ResultFile, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "<section id=\"context\">\n<h2>Context</h2>\n<dl>")?;
    for (name, value) in document::context_facts(result) {
        writeln!(out, "<dt>{}</dt><dd>{}</dd>", text(name), text(&value))?;
    }
    writeln!(
        out,
        "</dl>\n<h3>Options as applied</h3>\n<pre>{}</pre>\n</section>",
        text(&document::options_json(result))
    )
}

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;
