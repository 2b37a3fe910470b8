//! Series of points joined by lines over a logarithmic x axis (chunk sizes, thread
//! counts), each point with its 95 % CI as a vertical error bar.

use plotters::coord::combinators::{LogCoord, WithKeyPoints};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::{Area, Estimate, Layers, Marker, axis_end, color, draw_legend, failed, label_font, legend_width};

pub(super) struct Series {
    pub label: String,
    /// (x, figure), in any order.
    pub points: Vec<(f64, Estimate)>,
}

pub(super) struct LineChart {
    /// Axis titles, with their units.
    pub x_desc: String,
    pub y_desc: String,
    /// The x values measured: the ticks, labelled by `x_label`.
    pub x_ticks: Vec<f64>,
    pub x_label: fn(f64) -> String,
    pub series: Vec<Series>,
}

const PLOT_WIDTH: u32 = 620;
const HEIGHT: u32 = 400;

/// Sideways spread between the series' points at one x, as a factor on the log axis,
/// so that their error bars do not hide each other.
const DODGE: f64 = 1.035;

impl LineChart {
    pub fn render(&self, id: &str, title: &str) -> Result<String, String> {
        let labels: Vec<String> = self.series.iter().map(|series| series.label.clone()).collect();
        let legend = legend_width(&labels);
        let height = HEIGHT.max(40 + 20 * labels.len() as u32);
        let mut layers = Layers::new((PLOT_WIDTH + legend, height));
        let low = self.x_ticks.iter().copied().fold(f64::INFINITY, f64::min);
        let high = self.x_ticks.iter().copied().fold(0.0, f64::max);
        // Room for the spread of the points either side of the extreme ticks.
        let spread = DODGE.powf(self.series.len() as f64 / 2.0 + 1.0);
        let x_range = (low / spread.max(1.25))..(high * spread.max(1.25));
        let estimates: Vec<Estimate> = self.series.iter().flat_map(|s| s.points.iter().map(|(_, e)| *e)).collect();
        let y_max = axis_end(&estimates);
        let count = self.series.len();
        let dodge = |index: usize, x: f64| x * DODGE.powf(index as f64 - (count as f64 - 1.0) / 2.0);
        let ticks = self.x_ticks.clone();
        layers.layer("wb-axes", |area| {
            let plot = area.split_horizontally(PLOT_WIDTH).0;
            let mut chart = frame(&plot, x_range.clone(), &ticks, y_max)?;
            let x_label = |x: &f64| (self.x_label)(*x);
            chart
                .configure_mesh()
                .x_label_formatter(&x_label)
                .y_label_formatter(&|y: &f64| format!("{y:.3}").trim_end_matches('0').trim_end_matches('.').to_string())
                .label_style(label_font())
                .max_light_lines(0)
                .disable_x_mesh()
                .draw()
                .map_err(failed)
        })?;
        layers.layer("wb-axis-title", |area| {
            let plot = area.split_horizontally(PLOT_WIDTH).0;
            let mut chart = frame(&plot, x_range.clone(), &ticks, y_max)?;
            chart
                .configure_mesh()
                .disable_mesh()
                .disable_axes()
                .x_desc(self.x_desc.clone())
                .y_desc(self.y_desc.clone())
                .axis_desc_style(label_font())
                .draw()
                .map_err(failed)
        })?;
        layers.layer("wb-series", |area| {
            let plot = area.split_horizontally(PLOT_WIDTH).0;
            let mut chart = frame(&plot, x_range.clone(), &ticks, y_max)?;
            for (index, series) in self.series.iter().enumerate() {
                let mut points: Vec<(f64, f64)> =
                    series.points.iter().map(|(x, estimate)| (dodge(index, *x), estimate.value)).collect();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                let style = color(index).stroke_width(2);
                chart.draw_series(LineSeries::new(points.clone(), style)).map_err(failed)?;
                chart
                    .draw_series(points.iter().map(|&point| Circle::new(point, 4, color(index).filled())))
                    .map_err(failed)?;
            }
            Ok(())
        })?;
        layers.layer("wb-error-bars", |area| {
            let plot = area.split_horizontally(PLOT_WIDTH).0;
            let mut chart = frame(&plot, x_range.clone(), &ticks, y_max)?;
            for (index, series) in self.series.iter().enumerate() {
                let bars = series.points.iter().filter_map(|(x, estimate)| {
                    let low = estimate.low?;
                    // No upper bound, or beyond the axis: the bar runs to its end.
                    let high = estimate.high.unwrap_or(y_max).min(y_max);
                    Some(ErrorBar::new_vertical(dodge(index, *x), low, estimate.value, high, color(index), 8))
                });
                chart.draw_series(bars).map_err(failed)?;
            }
            Ok(())
        })?;
        layers.layer("wb-legend", |area| draw_legend(&area.split_horizontally(PLOT_WIDTH).1, &labels, Marker::Line))?;
        Ok(layers.finish(id, title))
    }
}

type Frame<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<WithKeyPoints<LogCoord<f64>>, RangedCoordf64>>;

/// The plot on the left of the legend: the same frame in every layer.
fn frame<'a, 'b>(
    plot: &'a Area<'b>,
    x_range: std::ops::Range<f64>,
    ticks: &[f64],
    y_max: f64,
) -> Result<Frame<'a, 'b>, String> {
    ChartBuilder::on(plot)
        .margin(12)
        .x_label_area_size(52)
        .y_label_area_size(68)
        .build_cartesian_2d(x_range.log_scale().with_key_points(ticks.to_vec()), 0.0..y_max)
        .map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{elements_in, texts_in};
    use super::*;

    fn chart() -> LineChart {
        let ci = |value: f64| Estimate { value, low: Some(value * 0.9), high: Some(value * 1.1) };
        LineChart {
            x_desc: "chunk size (bytes per call, log scale)".into(),
            y_desc: "throughput (GB/s)".into(),
            x_ticks: vec![4096.0, 65536.0, 1048576.0],
            x_label: |x| plan::units::format_size(x as u64),
            series: vec![
                Series { label: "write".into(), points: vec![(4096.0, ci(1.0)), (65536.0, ci(2.0))] },
                Series {
                    label: "pwrite".into(),
                    points: vec![(1048576.0, Estimate { value: 3.0, low: Some(2.0), high: None })],
                },
                Series { label: "one run".into(), points: vec![(4096.0, Estimate::exact(0.5))] },
            ],
        }
    }

    #[test]
    fn axes_titles_legend_and_one_error_bar_per_interval() {
        let svg = chart().render("chunks", "Throughput").unwrap();
        assert_eq!(
            texts_in(&svg, "wb-axis-title"),
            vec!["throughput (GB/s)", "chunk size (bytes per call, log scale)"]
        );
        assert_eq!(texts_in(&svg, "wb-legend"), vec!["write", "pwrite", "one run"]);
        let ticks = texts_in(&svg, "wb-axes");
        for size in ["4 KiB", "64 KiB", "1 MiB"] {
            assert!(ticks.iter().any(|tick| tick == size), "{size} in {ticks:?}");
        }
        // Three intervals (the unbounded one too), none for the single run; plotters
        // draws each as its line, two caps and a ring at the mean.
        assert_eq!(elements_in(&svg, "wb-error-bars"), 3 * 4);
        assert!(elements_in(&svg, "wb-series") >= 4, "lines and points");
    }
}
