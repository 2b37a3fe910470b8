//! Groups of horizontal bars: one group per row (a strategy, a case), one bar per key
//! of the legend (a file state, buffered and durable, a percentile, a runtime), each
//! with its 95 % CI as a horizontal error bar where it has one. Horizontal, so that the
//! rows' names are read without turning the head, however long.

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{Area, Estimate, Layers, Marker, axis_end, color, draw_legend, failed, label_font, legend_width};

pub(super) struct Group {
    pub label: String,
    /// One per key of the chart; None where that key has no figure for this row.
    pub bars: Vec<Option<Estimate>>,
}

pub(super) struct BarChart {
    /// The value axis' title, with its unit.
    pub value_desc: String,
    /// What the rows are.
    pub row_desc: String,
    pub keys: Vec<String>,
    pub groups: Vec<Group>,
    /// A logarithmic value axis (latencies spanning several orders of magnitude); bars
    /// then start at the axis' left end rather than at 0.
    pub log: bool,
}

const PLOT_WIDTH: u32 = 720;
const BAR: f64 = 0.8;

impl BarChart {
    /// Strategies' buffered throughput side by side, one bar per key (a runtime, a
    /// file state) in each strategy's group, on a linear axis.
    pub fn buffered_by_strategy(keys: Vec<String>, groups: Vec<Group>) -> BarChart {
        BarChart {
            value_desc: "buffered throughput (GB/s)".into(),
            row_desc: "strategy".into(),
            keys,
            groups,
            log: false,
        }
    }

    pub fn render(&self, id: &str, title: &str) -> Result<String, String> {
        let top = self.groups.iter().flat_map(|g| g.bars.iter().flatten().map(|e| e.top())).fold(0.0, f64::max);
        if self.log {
            let low = self.groups.iter().flat_map(|g| g.bars.iter().flatten().map(|e| e.value)).fold(top, f64::min);
            let low = 10f64.powf(low.max(f64::MIN_POSITIVE).log10().floor());
            let high = 10f64.powf((top.max(low) * 1.01).log10().ceil());
            self.render_on((low..high).log_scale(), low, high, id, title)
        } else {
            let estimates: Vec<Estimate> = self.groups.iter().flat_map(|g| g.bars.iter().flatten().copied()).collect();
            let high = axis_end(&estimates);
            self.render_on(0.0..high, 0.0, high, id, title)
        }
    }

    fn render_on<X>(&self, range: X, low: f64, high: f64, id: &str, title: &str) -> Result<String, String>
    where
        X: AsRangedCoord<Value = f64> + Clone,
        X::CoordDescType: ValueFormatter<f64>,
    {
        let rows = self.groups.len();
        let keys = self.keys.len().max(1);
        let label_width = legend_width(&self.groups.iter().map(|g| g.label.clone()).collect::<Vec<_>>()) + 24;
        let legend = legend_width(&self.keys);
        let height = (70 + rows as u32 * (keys as u32 * 14 + 12)).max(40 + 20 * keys as u32).max(180);
        let mut layers = Layers::new((PLOT_WIDTH + legend, height));
        // Row r (from the top) spans [rows - r - 1, rows - r): the first row on top.
        let centre = |row: usize| rows as f64 - row as f64 - 0.5;
        let bar_y = |row: usize, key: usize| centre(row) + BAR / 2.0 - BAR * (key as f64 + 0.5) / keys as f64;
        layers.layer("wb-axes", |area| {
            let plot = area.split_horizontally(PLOT_WIDTH).0;
            let mut chart = frame(&plot, range.clone(), rows, label_width)?;
            chart
                .configure_mesh()
                .y_labels(0)
                .label_style(label_font())
                .max_light_lines(0)
                .disable_y_mesh()
                .draw()
                .map_err(failed)?;
            // The rows' names beside the axis, drawn here rather than as plotters' tick
            // labels: its f64 axis takes no ticks of our choosing with its formatter.
            for (row, group) in self.groups.iter().enumerate() {
                let (_, y) = chart.backend_coord(&(low, centre(row)));
                let (x, _) = chart.backend_coord(&(low, 0.0));
                let style = label_font().pos(Pos::new(HPos::Right, VPos::Center));
                area.draw(&Text::new(group.label.clone(), (x - 8, y), style)).map_err(failed)?;
            }
            Ok(())
        })?;
        layers.layer("wb-axis-title", |area| {
            let plot = area.split_horizontally(PLOT_WIDTH).0;
            let mut chart = frame(&plot, range.clone(), rows, label_width)?;
            chart
                .configure_mesh()
                .disable_mesh()
                .disable_axes()
                .x_desc(self.value_desc.clone())
                .y_desc(self.row_desc.clone())
                .axis_desc_style(label_font())
                .draw()
                .map_err(failed)
        })?;
        let thickness = BAR / keys as f64 * 0.85 / 2.0;
        layers.layer("wb-series", |area| {
            let plot = area.split_horizontally(PLOT_WIDTH).0;
            let mut chart = frame(&plot, range.clone(), rows, label_width)?;
            for (row, group) in self.groups.iter().enumerate() {
                for (key, estimate) in group.bars.iter().enumerate() {
                    let Some(estimate) = estimate else { continue };
                    let y = bar_y(row, key);
                    let corners = [(low, y - thickness), (estimate.value.clamp(low, high), y + thickness)];
                    chart.draw_series([Rectangle::new(corners, color(key).filled())]).map_err(failed)?;
                }
            }
            Ok(())
        })?;
        layers.layer("wb-error-bars", |area| {
            let plot = area.split_horizontally(PLOT_WIDTH).0;
            let mut chart = frame(&plot, range.clone(), rows, label_width)?;
            for (row, group) in self.groups.iter().enumerate() {
                let bars = group.bars.iter().enumerate().filter_map(|(key, estimate)| {
                    let estimate = (*estimate)?;
                    let low_end = estimate.low?.max(low);
                    // No upper bound: the bar runs to the end of the axis.
                    let high_end = estimate.high.unwrap_or(high).min(high);
                    Some(ErrorBar::new_horizontal(bar_y(row, key), low_end, estimate.value, high_end, BLACK, 6))
                });
                chart.draw_series(bars).map_err(failed)?;
            }
            Ok(())
        })?;
        layers
            .layer("wb-legend", |area| draw_legend(&area.split_horizontally(PLOT_WIDTH).1, &self.keys, Marker::Box))?;
        Ok(layers.finish(id, title))
    }
}

/// The plot on the left of the legend: the same frame in every layer.
fn frame<'a, 'b, X: AsRangedCoord<Value = f64>>(
    plot: &'a Area<'b>,
    range: X,
    rows: usize,
    label_width: u32,
) -> Result<ChartContext<'a, SVGBackend<'b>, Cartesian2d<X::CoordDescType, RangedCoordf64>>, String> {
    ChartBuilder::on(plot)
        .margin(12)
        .x_label_area_size(52)
        .y_label_area_size(label_width)
        .build_cartesian_2d(range, 0.0..rows as f64)
        .map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{elements_in, texts_in};
    use super::*;

    fn chart(log: bool) -> BarChart {
        let ci = |value: f64| Some(Estimate { value, low: Some(value * 0.9), high: Some(value * 1.1) });
        BarChart {
            value_desc: "throughput (GB/s)".into(),
            row_desc: "strategy".into(),
            keys: vec!["empty".into(), "prealloc".into()],
            groups: vec![
                Group { label: "pwrite 1 MiB".into(), bars: vec![ci(2.0), ci(3.0)] },
                Group { label: "write <4 KiB>".into(), bars: vec![ci(1.0), None] },
            ],
            log,
        }
    }

    #[test]
    fn rows_are_named_on_the_axis_and_keys_in_the_legend() {
        for log in [false, true] {
            let svg = chart(log).render("states", "States").unwrap();
            let axes = texts_in(&svg, "wb-axes");
            assert!(axes.iter().any(|t| t == "pwrite 1 MiB"), "{axes:?}");
            assert!(axes.iter().any(|t| t == "write &lt;4 KiB&gt;"), "escaped: {axes:?}");
            assert_eq!(texts_in(&svg, "wb-legend"), vec!["empty", "prealloc"]);
            assert_eq!(texts_in(&svg, "wb-axis-title"), vec!["strategy", "throughput (GB/s)"]);
            // Three bars, each with its interval (a line, two caps and a ring each).
            assert_eq!(elements_in(&svg, "wb-series"), 3, "{log}");
            assert_eq!(elements_in(&svg, "wb-error-bars"), 3 * 4, "{log}");
        }
    }

    #[test]
    fn a_figure_without_an_interval_has_a_bar_and_no_error_bar() {
        let mut chart = chart(true);
        chart.groups = vec![Group { label: "p99".into(), bars: vec![Some(Estimate::exact(12.5)), None] }];
        let svg = chart.render("latency", "Latency").unwrap();
        assert_eq!(elements_in(&svg, "wb-series"), 1);
        assert_eq!(elements_in(&svg, "wb-error-bars"), 0);
    }
}
