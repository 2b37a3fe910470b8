//! The HTML report's charts: inline SVG drawn by plotters' SVG backend, one file per
//! kind of chart, each a pure function of the result that returns no chart when the
//! result has nothing to show in it (an empty chart would be a figure for something
//! not measured).
//!
//! plotters writes bare SVG elements with no ids or classes. So that the page (its
//! dark-mode style) and the tests can tell an axis from an error bar, every chart is
//! drawn in layers — the same frame drawn once per layer, each layer holding one part
//! (axes, axis titles, series, error bars, legend) — and the layers become the groups
//! `wb-axes`, `wb-axis-title`, `wb-series`, `wb-error-bars` and `wb-legend` of one
//! `<svg class="wb-chart">`. Drawing the frame again is cheap; the layout is the same
//! each time because it depends on nothing but the data.

mod bars;
mod chunks;
mod durable;
mod lines;
mod percentiles;
pub mod ratio;
mod runtimes;
pub mod side_by_side;
mod states;
mod threads;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::latency_table::is_latency_case;
use plan::catalog;
use plan::units::format_size;
use plan::{Case, CaseKind};
use result::Summary;
use result::{CaseResult, ResultFile, Status};

/// One chart of the report: an SVG element, and the words around it.
#[derive(Debug, Clone)]
pub struct Chart {
    /// Unique in the page; also the SVG element's id.
    pub id: String,
    pub title: String,
    /// What is drawn, in which unit, and what was left out of this chart.
    pub caption: String,
    /// `<svg class="wb-chart" …>…</svg>`, or a one-line note when plotters failed.
    pub svg: String,
}

impl Chart {
    /// A chart as drawn (`render`'s SVG), or with the one-line note of why it was not.
    pub(crate) fn drawn(id: String, title: String, caption: String, svg: Result<String, String>) -> Chart {
        let svg = svg.unwrap_or_else(|error| format!("<p>chart not drawn: {error}</p>"));
        Chart { id, title, caption, svg }
    }
}

/// Every chart the result has data for, in the report's order.
pub fn all(result: &ResultFile) -> Vec<Chart> {
    let mut charts = chunks::charts(result);
    charts.extend(threads::charts(result));
    charts.extend(states::chart(result));
    charts.extend(durable::chart(result));
    charts.extend(percentiles::chart(result));
    charts.extend(runtimes::chart(result));
    charts
}

/// A figure and its 95 % confidence interval, in the unit of the chart. `high` is None
/// when the interval has no upper bound (a time interval reaching 0), and both are
/// None without an interval (one run, or a percentile).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Estimate {
    pub value: f64,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

impl Estimate {
    /// The mean of a throughput summary and its CI, in decimal GB/s.
    pub fn gbps(summary: &Summary) -> Estimate {
        Estimate {
            value: summary.mean / 1e9,
            low: summary.ci95_low.map(|low| low / 1e9),
            high: summary.ci95_high.map(|high| high / 1e9),
        }
    }

    pub fn exact(value: f64) -> Estimate {
        Estimate { value, low: None, high: None }
    }

    /// The largest value the chart must show for this figure.
    fn top(&self) -> f64 {
        self.high.unwrap_or(self.value).max(self.value)
    }
}

/// Where a linear value axis ends: past every interval, unless an interval reaches far
/// beyond every figure (a noisy case whose shortest run was near zero): then at half as
/// much again as the largest figure, so the figures stay readable, and those error bars
/// run off the end of the axis (the captions say so).
fn axis_end(estimates: &[Estimate]) -> f64 {
    let largest = estimates.iter().map(|e| e.value).fold(0.0, f64::max);
    let top = estimates.iter().map(Estimate::top).fold(0.0, f64::max);
    let end = top.min(largest * 1.5) * 1.05;
    if end > 0.0 { end } else { 1.0 }
}

/// What every throughput chart's caption says about its error bars.
const ERROR_BARS: &str = "An error bar that reaches the end of the axis goes beyond it (or has no upper bound: \
                          too few or too scattered runs).";

/// Tableau 10: told apart by most readers, including the common colour-blindnesses,
/// and legible on a white and on a dark page alike.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0xba, 0xb0, 0xac),
];

fn color(index: usize) -> RGBColor {
    PALETTE[index % PALETTE.len()]
}

/// Cases with a buffered throughput to draw: measured, not latency (they have
/// percentiles instead) and not file creation (its "throughput" is size over the time
/// of one call that writes nothing, on another scale altogether).
fn throughput_cases(result: &ResultFile) -> impl Iterator<Item = (&CaseResult, Summary)> {
    result.cases.iter().filter_map(|case| {
        let stats = case.stats?;
        let creates = case.case.kind == CaseKind::Creation;
        (case.status == Status::Ok && !creates && !is_latency_case(&case.case)).then_some((case, stats))
    })
}

/// A short name of a case from the dimensions a chart does not already show.
#[derive(Debug, Clone, Copy, Default)]
struct Naming {
    state: bool,
    chunk: bool,
    threads: bool,
    durability: bool,
}

impl Naming {
    fn name(self, case: &Case) -> String {
        let mut parts = Vec::new();
        if case.runtime != catalog::NATIVE {
            parts.push(case.runtime.clone());
        }
        parts.push(case.method.clone());
        if self.state {
            parts.push(case.state.name().to_string());
        }
        if self.chunk {
            parts.push(format_size(case.chunk_bytes));
        }
        if catalog::by_name(&case.method).is_some_and(|m| m.vectored) {
            parts.push(format!("x{}", case.iov));
        }
        if let Some(depth) = case.queue_depth {
            parts.push(format!("qd{depth}"));
        }
        if self.threads {
            parts.push(match (case.threads, case.files) {
                (1, _) => "1 thread".to_string(),
                (threads, 1) => format!("{threads} threads, one file"),
                (threads, _) => format!("{threads} threads, a file each"),
            });
        }
        if self.durability {
            parts.push(format!("sync {}", case.durability));
        }
        parts.join(" ")
    }
}

/// The durability mode most of `cases` have (the first met on a tie), so that a chart
/// of one dimension compares like with like.
fn usual_durability<'a>(cases: impl Iterator<Item = &'a Case>) -> Option<plan::Durability> {
    let mut counts: Vec<(plan::Durability, usize)> = Vec::new();
    for case in cases {
        match counts.iter_mut().find(|(mode, _)| *mode == case.durability) {
            Some((_, count)) => *count += 1,
            None => counts.push((case.durability, 1)),
        }
    }
    let most = counts.iter().map(|(_, count)| *count).max()?;
    counts.into_iter().find(|(_, count)| *count == most).map(|(mode, _)| mode)
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type DrawResult = Result<(), String>;

fn failed(error: impl std::fmt::Display) -> String {
    error.to_string()
}

/// The layers of one chart, drawn one after the other on SVG backends of one size.
struct Layers {
    size: (u32, u32),
    groups: Vec<(&'static str, String)>,
}

impl Layers {
    fn new(size: (u32, u32)) -> Layers {
        Layers { size, groups: Vec::new() }
    }

    /// Draws one layer; its elements become the group of class `class`.
    fn layer(&mut self, class: &'static str, draw: impl FnOnce(&Area<'_>) -> DrawResult) -> DrawResult {
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, self.size).into_drawing_area();
            draw(&root)?;
            root.present().map_err(failed)?;
        }
        self.groups.push((class, inner_elements(&svg).to_string()));
        Ok(())
    }

    /// The chart as one SVG element; `title` is its accessible name.
    fn finish(self, id: &str, title: &str) -> String {
        let (width, height) = self.size;
        let mut svg = format!(
            "<svg class=\"wb-chart\" id=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} {height}\" \
             width=\"{width}\" height=\"{height}\" role=\"img\" aria-label=\"{}\">\n<title>{}</title>\n",
            html_escape::encode_double_quoted_attribute(id),
            html_escape::encode_double_quoted_attribute(title),
            html_escape::encode_text(title)
        );
        for (class, elements) in self.groups {
            svg += &format!("<g class=\"{class}\">\n{elements}</g>\n");
        }
        svg + "</svg>"
    }
}

/// What plotters wrote between its `<svg …>` line and its `</svg>`.
fn inner_elements(svg: &str) -> &str {
    let body = svg.split_once(">\n").map_or("", |(_, rest)| rest);
    body.strip_suffix("</svg>\n").unwrap_or(body)
}

/// Text style of labels and legends: the page's sans-serif (no font is embedded or
/// fetched), at a size that stays legible when the chart is scaled to a phone.
fn label_font() -> TextStyle<'static> {
    ("sans-serif", 14).into_font().color(&BLACK)
}

/// The legend beside a chart: one swatch and label per entry, top to bottom.
fn draw_legend(area: &Area<'_>, entries: &[String], marker: Marker) -> DrawResult {
    for (index, entry) in entries.iter().enumerate() {
        let y = 16 + 20 * index as i32;
        let color = color(index);
        match marker {
            Marker::Line => {
                area.draw(&PathElement::new(vec![(6, y), (30, y)], color.stroke_width(2))).map_err(failed)?;
                area.draw(&Circle::new((18, y), 4, color.filled())).map_err(failed)?;
            }
            Marker::Box => {
                area.draw(&Rectangle::new([(8, y - 6), (28, y + 6)], color.filled())).map_err(failed)?;
            }
        }
        area.draw(&Text::new(entry.clone(), (38, y), label_font().pos(Pos::new(HPos::Left, VPos::Center))))
            .map_err(failed)?;
    }
    Ok(())
}

#[derive(Debug, Clone, Copy)]
enum Marker {
    Line,
    Box,
}

/// Room the legend needs beside the plot, from its longest entry.
fn legend_width(entries: &[String]) -> u32 {
    let longest = entries.iter().map(|entry| entry.chars().count()).max().unwrap_or(0) as u32;
    (48 + 8 * longest).clamp(120, 320)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use context::{Host, TargetInfo};
    use plan::{Durability, FileState, Layout};
    use result::{Run, Tool};

    /// A measured case whose runs took `seconds` each, writing `bytes`.
    pub fn measured(
        method: &str,
        state: FileState,
        chunk: u64,
        mode: &str,
        threads: u32,
        layout: Layout,
        seconds: &[f64],
    ) -> CaseResult {
        let durability: Durability = mode.parse().unwrap();
        let case = Case::new(catalog::by_name(method).unwrap(), state, chunk, 1, durability, 1 << 30)
            .with_threads(threads, layout);
        let runs =
            seconds.iter().map(|&t| Run { write_seconds: t, sync_seconds: t / 10.0, ..Run::default() }).collect();
        analysis::advice::testkit::measured(case, runs, 1)
    }

    pub fn result(cases: Vec<CaseResult>) -> ResultFile {
        ResultFile {
            schema: result::SCHEMA.to_string(),
            tool: Tool::this(),
            host: Host {
                kernel: "Linux 6.1".into(),
                cpu_model: "CPU".into(),
                cpus: 2,
                memory_bytes: 1 << 34,
                ..Host::default()
            },
            target: TargetInfo {
                path: "/data".into(),
                fs_type: "ext4".into(),
                device: "/dev/nvme0n1p2".into(),
                mount_point: "/data".into(),
                mount_options: "rw,relatime".into(),
                dio_mem_align: Some(4),
                dio_offset_align: Some(512),
                dio_align_source: Some("statx".into()),
                ..TargetInfo::default()
            },
            options: result::options::RunOptions::from_json(
                serde_json::json!({"command": "run", "argv": ["writebench", "run", "/data"]}),
            ),
            cases,
            observations: Vec::new(),
            observation_tests: None,
            answer: Vec::new(),
            calibration: None,
            crash: Vec::new(),
            race: None,
            complete: true,
        }
    }

    /// The text of every `<text>` element inside the group of class `class`.
    pub fn texts_in(svg: &str, class: &str) -> Vec<String> {
        let Some((_, group)) = svg.split_once(&format!("<g class=\"{class}\">")) else { return Vec::new() };
        let group = group.split("</g>").next().unwrap();
        group
            .split("<text")
            .skip(1)
            .map(|text| text.split_once('>').unwrap().1.split("</text>").next().unwrap().trim().to_string())
            .collect()
    }

    /// Elements inside the group of class `class`.
    pub fn elements_in(svg: &str, class: &str) -> usize {
        let Some((_, group)) = svg.split_once(&format!("<g class=\"{class}\">")) else { return 0 };
        group.split("</g>").next().unwrap().matches('<').count()
    }

    #[test]
    fn layers_become_groups_of_one_svg() {
        let mut layers = Layers::new((200, 100));
        layers.layer("wb-a", |area| area.fill(&WHITE).map_err(failed)).unwrap();
        layers.layer("wb-b", |area| area.draw(&Text::new("<b> & c", (5, 5), label_font())).map_err(failed)).unwrap();
        let svg = layers.finish("chart-1", "A \"title\"");
        assert!(svg.starts_with("<svg class=\"wb-chart\" id=\"chart-1\""), "{svg}");
        assert_eq!(svg.matches("<svg").count(), 1, "{svg}");
        assert_eq!(svg.matches("</svg>").count(), 1, "{svg}");
        assert!(svg.contains("aria-label=\"A &quot;title&quot;\""), "{svg}");
        assert_eq!(elements_in(&svg, "wb-a"), 1);
        assert_eq!(texts_in(&svg, "wb-b"), vec!["&lt;b&gt; &amp; c"]);
    }

    #[test]
    fn a_chart_compares_like_with_like_durability() {
        let cases = [
            measured("write", FileState::Empty, 4096, "end", 1, Layout::OneFile, &[1.0]),
            measured("write", FileState::Empty, 8192, "end", 1, Layout::OneFile, &[1.0]),
            measured("write", FileState::Empty, 4096, "odsync", 1, Layout::OneFile, &[1.0]),
        ];
        assert_eq!(usual_durability(cases.iter().map(|c| &c.case)), Some("end".parse().unwrap()));
        assert_eq!(usual_durability(std::iter::empty()), None);
    }

    #[test]
    fn creation_latency_and_failed_cases_have_no_throughput_to_draw() {
        let mut failed = measured("write", FileState::Empty, 4096, "end", 1, Layout::OneFile, &[1.0, 1.1]);
        failed.status = Status::Failed;
        let kept = measured("pwrite", FileState::Empty, 4096, "end", 1, Layout::OneFile, &[1.0, 1.1]);
        let creation = measured("fallocate", FileState::Empty, 1 << 30, "end", 1, Layout::OneFile, &[1.0, 1.1]);
        let result = result(vec![failed, kept, creation]);
        let ids: Vec<&str> = throughput_cases(&result).map(|(c, _)| c.case.id.as_str()).collect();
        assert_eq!(ids, vec!["pwrite empty 4KiB t1 end"]);
    }
}
