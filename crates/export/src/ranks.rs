//! Per-rank figures of `--mpi` cases, after the table: each rank's own throughput, when
//! it started and ended within the job's span, the spread, and the slowest rank and its
//! host. Medians over the measured runs. Prints nothing for a result without ranks.

use std::io::{self, Write};

use super::text::{WIDTH, wrap};
use plan::numbers::seconds_fixed as seconds;
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
        let Some(figures) = &case.facts.ranks else { continue };
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
    fn the_section_keeps_to_the_terminals_width() {
        let case =
            Case::new(catalog::by_name("pwrite").unwrap(), FileState::Prealloc, 1 << 20, 1, Durability::None, 2 << 20)
                .with_ranks(2, RankLayout::FilePerRank);
        let runs = vec![Run { ranks: vec![rank(0, 0.0, 0.0248), rank(1, 0.0, 0.0237)], ..Run::default() }];
        let result = crate::charts::tests::result(vec![analysis::advice::testkit::measured(case, runs, 1)]);
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
