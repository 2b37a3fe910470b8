//! Per-rank figures of `--mpi` cases, after the table: each rank's own throughput, when
//! it started and ended within the job's span, the spread, and the slowest rank and its
//! host. Medians over the measured runs. Prints nothing for a result without ranks.

use std::io::{self, Write};

use super::text::{WIDTH, wrap};
use result::{CaseResult, ResultFile, Status};

/// `text` wrapped to the terminal's width, its first line indented by `indent` spaces
/// and the rest by two more.
fn wrapped(out: &mut dyn Write, indent: usize, text: &str) -> io::Result<()> {
    for (index, line) in wrap(text, WIDTH - indent - 2).iter().enumerate() {
        let pad = if index == 0 { indent } else { indent + 2 };
        writeln!(out, "{:pad$}{line}", "")?;
    }
    Ok(())
}

/// The per-rank section of `result` (nothing when no case has ranks).
pub fn render(result: &ResultFile, out: &mut dyn Write) -> io::Result<()> {
    let cases: Vec<&CaseResult> =
        result.cases.iter().filter(|c| c.status == Status::Ok && c.runs.iter().any(|r| !r.ranks.is_empty())).collect();
    if cases.is_empty() {
        return Ok(());
    }
    let host_of = |rank: u32| -> String {
        let hosts = result.host.mpi.as_ref().map(|mpi| &mpi.ranks[..]).unwrap_or(&[]);
        hosts.iter().find(|h| h.rank == rank).map_or_else(|| "?".to_string(), |h| h.hostname.clone())
    };
    writeln!(out)?;
    wrapped(
        out,
        0,
        "Per rank (medians of the runs; each case's figure spans the earliest rank's start to the latest rank's end):",
    )?;
    for case in cases {
        writeln!(out, "  {}", case.case.id)?;
        let figures = RankFigures::of(case);
        let stonewalled = case.runs.iter().any(|run| run.stonewall.is_some());
        for (rank, figure) in figures.ranks.iter().enumerate() {
            // Stonewalled ranks all end at the wall: what differs is what they wrote.
            let wrote = if stonewalled {
                format!(", wrote {} by the wall", plan::units::format_size(figure.bytes as u64))
            } else {
                String::new()
            };
            writeln!(
                out,
                "    rank {rank} on {}: {:.3} GB/s{wrote}, starts at +{}, ends at {}",
                host_of(rank as u32),
                figure.bytes_per_second / 1e9,
                seconds(figure.start),
                seconds(figure.end)
            )?;
        }
        let share = |value: f64| 100.0 * value / figures.span.max(f64::MIN_POSITIVE);
        // The start spread is in the span: at most that much of the figure is the
        // barrier's skew (docs/scale.md).
        let spread = format!(
            "spread: starts within {} ({:.2} % of the span), ends within {} ({:.1} %); slowest: rank {} on {}",
            seconds(figures.start_spread),
            share(figures.start_spread),
            seconds(figures.end_spread),
            share(figures.end_spread),
            figures.slowest,
            host_of(figures.slowest)
        );
        wrapped(out, 4, &spread)?;
    }
    Ok(())
}

/// One rank's medians.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankFigure {
    pub bytes_per_second: f64,
    /// The bytes it wrote (under `--stonewall`, what it wrote by the wall).
    pub bytes: f64,
    pub start: f64,
    pub end: f64,
}

/// A case's per-rank medians, and the medians of the spreads across ranks.
#[derive(Debug, Clone, PartialEq)]
pub struct RankFigures {
    pub ranks: Vec<RankFigure>,
    /// Latest start less earliest start: what the barrier's exit skew (and the ranks'
    /// wake-up) put in front of the slowest starter. It is inside the job's figure.
    pub start_spread: f64,
    pub end_spread: f64,
    /// The job's write span (earliest start to latest end).
    pub span: f64,
    /// The rank whose median end is latest; under `--stonewall`, where every rank ends
    /// at the wall, the one whose median rate is lowest.
    pub slowest: u32,
}

impl RankFigures {
    pub fn of(case: &CaseResult) -> RankFigures {
        let runs: Vec<_> = case.runs.iter().filter(|r| !r.ranks.is_empty()).collect();
        let count = runs.iter().map(|r| r.ranks.len()).max().unwrap_or(0);
        let ranks: Vec<RankFigure> = (0..count)
            .map(|rank| {
                let of = |f: &dyn Fn(&result::RankRun) -> f64| {
                    median(runs.iter().filter_map(|r| r.ranks.get(rank)).map(f).collect())
                };
                RankFigure {
                    bytes_per_second: of(&|r| r.bytes_per_second()),
                    bytes: of(&|r| r.bytes as f64),
                    start: of(&|r| r.start_seconds),
                    end: of(&|r| r.end_seconds),
                }
            })
            .collect();
        let spread = |f: &dyn Fn(&result::RankRun) -> f64| {
            median(
                runs.iter()
                    .map(|r| {
                        let values = r.ranks.iter().map(f);
                        values.clone().fold(f64::NEG_INFINITY, f64::max) - values.fold(f64::INFINITY, f64::min)
                    })
                    .collect(),
            )
        };
        let slowest = if runs.iter().any(|r| r.stonewall.is_some()) {
            ranks.iter().enumerate().min_by(|a, b| a.1.bytes_per_second.total_cmp(&b.1.bytes_per_second))
        } else {
            ranks.iter().enumerate().max_by(|a, b| a.1.end.total_cmp(&b.1.end))
        };
        let slowest = slowest.map_or(0, |(rank, _)| rank);
        RankFigures {
            start_spread: spread(&|r| r.start_seconds),
            end_spread: spread(&|r| r.end_seconds),
            span: median(runs.iter().map(|r| r.ranks.iter().map(|k| k.end_seconds).fold(0.0, f64::max)).collect()),
            slowest: slowest as u32,
            ranks,
        }
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len() % 2 == 1 { values[middle] } else { (values[middle - 1] + values[middle]) / 2.0 }
}

/// Seconds in the unit that reads best: µs, ms or s.
fn seconds(value: f64) -> String {
    if value < 1e-3 {
        format!("{:.0} µs", value * 1e6)
    } else if value < 1.0 {
        format!("{:.1} ms", value * 1e3)
    } else {
        format!("{value:.3} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plan::catalog;
    use plan::{Case, Durability, FileState, RankLayout};
    use result::{RankRun, Run};

    fn rank(rank: u32, start: f64, end: f64) -> RankRun {
        RankRun { rank, start_seconds: start, end_seconds: end, bytes: 1_000_000, ..RankRun::default() }
    }

    #[test]
    fn the_slowest_rank_and_the_spreads_are_the_medians_over_the_runs() {
        let case =
            Case::new(catalog::by_name("pwrite").unwrap(), FileState::Prealloc, 1 << 20, 1, Durability::None, 2 << 20)
                .with_ranks(2, RankLayout::FilePerRank);
        let runs = [(0.0, 0.001, 0.5, 1.0), (0.0, 0.002, 0.5, 0.75), (0.0, 0.003, 0.5, 2.0)]
            .map(|(s0, s1, e0, e1)| Run { ranks: vec![rank(0, s0, e0), rank(1, s1, e1)], ..Run::default() });
        let result = analysis::summarize::measured(case, runs.to_vec(), 1);
        let figures = RankFigures::of(&result);
        assert_eq!(figures.slowest, 1);
        assert_eq!(figures.start_spread, 0.002);
        assert_eq!(figures.end_spread, 0.5);
        assert_eq!(figures.span, 1.0);
        assert_eq!(figures.ranks[0].bytes_per_second, 2e6);
        assert_eq!(figures.ranks[1].end, 1.0);
        assert_eq!(seconds(0.0000214), "21 µs");
    }

    #[test]
    fn the_section_keeps_to_the_terminals_width() {
        let case =
            Case::new(catalog::by_name("pwrite").unwrap(), FileState::Prealloc, 1 << 20, 1, Durability::None, 2 << 20)
                .with_ranks(2, RankLayout::FilePerRank);
        let runs = vec![Run { ranks: vec![rank(0, 0.0, 0.0248), rank(1, 0.0, 0.0237)], ..Run::default() }];
        let result = crate::charts::tests::result(vec![analysis::summarize::measured(case, runs, 1)]);
        let mut out = Vec::new();
        render(&result, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("rank 1 on ?:") && text.contains("slowest: rank 0"), "{text}");
        for line in text.lines() {
            assert!(line.chars().count() <= WIDTH, "{} columns: {line}", line.chars().count());
        }
        assert!(text.lines().any(|line| line.starts_with("      ")), "the spread continues indented: {text}");
    }
}
