//! The facts beside a case's figures, drawn from its runs: how wide its interval is,
//! how a stonewalled case's writers fared, the median run's CPU share, device traffic
//! and residency, the runs that started on dirty pages or beside a busy neighbour, and
//! its figures as a new file. Statistics only: `export::case_notes` says them in words.

use crate::advice::Figures;
use crate::advice::Metric;
use crate::summarize::case_ci_relative;
use result::facts::{Apart, CaseFacts, NewFile, RankFigure, RankFigures, Stonewall};
use result::{CaseResult, ResultFile};

/// Draws every case's facts again: after the runs or the conclusions changed, and for
/// a result read back (the facts are not saved).
pub fn annotate(result: &mut ResultFile) {
    for case in &mut result.cases {
        case.facts = facts(case);
    }
}

/// What a case's runs say beside its figures.
pub fn facts(result: &CaseResult) -> CaseFacts {
    CaseFacts {
        ci_relative: case_ci_relative(result),
        new_file: new_file(result),
        thread_spread: thread_spread(result),
        stonewall: stonewall(result),
        cpu_share: median_of(result.runs.iter().filter_map(|run| run.cpu_share)),
        sqpoll_seconds: median_of(
            result.runs.iter().filter_map(|run| run.ring.as_ref().and_then(|ring| ring.sqpoll_cpu_seconds)),
        ),
        dirty_at_start: dirty_at_start(result),
        others_busy: others_busy(result),
        device: device(result),
        resident_share: resident_share(result),
        ranks: ranks(result),
    }
}

fn median_of(values: impl Iterator<Item = f64>) -> Option<f64> {
    let values: Vec<f64> = values.collect();
    (!values.is_empty()).then(|| stats::median(&values))
}

/// Mean over runs of (slowest thread - fastest thread) / slowest thread.
fn thread_spread(result: &CaseResult) -> Option<f64> {
    let spreads: Vec<f64> = result
        .runs
        .iter()
        .filter(|run| run.thread_seconds.len() > 1)
        .map(|run| {
            let slowest = run.thread_seconds.iter().cloned().fold(f64::MIN, f64::max);
            let fastest = run.thread_seconds.iter().cloned().fold(f64::MAX, f64::min);
            (slowest - fastest) / slowest
        })
        .collect();
    (!spreads.is_empty()).then(|| spreads.iter().sum::<f64>() / spreads.len() as f64)
}

/// How much of the size a stonewalled case wrote, and how uneven its writers were (its
/// ranks under `--mpi`, else its threads).
fn stonewall(result: &CaseResult) -> Option<Stonewall> {
    let walls: Vec<&result::Stonewalled> = result.runs.iter().filter_map(|run| run.stonewall.as_ref()).collect();
    let first = walls.first()?;
    let shares: Vec<f64> = walls.iter().map(|wall| wall.bytes as f64 / wall.of_bytes.max(1) as f64).collect();
    // Each run's writers (ranks when there are, else threads): most over least bytes.
    let by_run: Vec<Vec<u64>> = result
        .runs
        .iter()
        .filter(|run| run.stonewall.is_some())
        .map(|run| match run.ranks.is_empty() {
            true => run.stonewall.as_ref().map(|wall| wall.writer_bytes.clone()).unwrap_or_default(),
            false => run.ranks.iter().map(|rank| rank.bytes).collect(),
        })
        .filter(|bytes| bytes.len() > 1)
        .collect();
    let ratios: Vec<f64> = by_run
        .iter()
        .map(|bytes| *bytes.iter().max().unwrap() as f64 / (*bytes.iter().min().unwrap()).max(1) as f64)
        .collect();
    let apart = (!ratios.is_empty()).then(|| {
        let ratio = stats::median(&ratios);
        // The least writer of the run whose ratio is the median's (or nearest it).
        let run = ratios.iter().enumerate().min_by(|a, b| (a.1 - ratio).abs().total_cmp(&(b.1 - ratio).abs()));
        let least = run.and_then(|(index, _)| by_run[index].iter().enumerate().min_by_key(|(_, bytes)| **bytes));
        Apart { ratio, ranks: result.runs.iter().any(|run| !run.ranks.is_empty()), least: least.map(|(i, _)| i) }
    });
    let finished: u32 = walls.iter().map(|wall| wall.writer_bytes.len() as u32 - wall.stopped).max().unwrap_or(0);
    Some(Stonewall {
        written_share: stats::median(&shares),
        of_bytes: first.of_bytes,
        apart,
        finished,
        writers: first.writer_bytes.len(),
    })
}

/// The figures a program making this file gets (the Answer's new-file goals, docs/
/// answer.md, "One span a program pays") beside the writes' alone; None for an
/// overwrite, which makes no new file, or where the case has no such figure.
fn new_file(result: &CaseResult) -> Option<NewFile> {
    if result.case.state == plan::FileState::Overwrite {
        return None;
    }
    let rate = |metric: Metric| metric.summary(result).map(|s| s.mean);
    Some(NewFile {
        new_file: rate(Metric::NewFile)?,
        written: rate(Metric::Buffered)?,
        durable: rate(Metric::NewFileDurable).zip(rate(Metric::Durable)),
    })
}

/// Runs that shared the machine with a busy process, and the largest share seen.
fn others_busy(result: &CaseResult) -> Option<(usize, f64)> {
    let busy: Vec<f64> = result
        .runs
        .iter()
        .filter_map(|run| run.others_cpu_share)
        .filter(|&share| share >= result::OTHERS_BUSY)
        .collect();
    Some((busy.len(), busy.iter().copied().reduce(f64::max)?))
}

/// The median run's residency once durable, for the pwritev2 methods, where
/// RWF_DONTCACHE and the default policy sit side by side.
fn resident_share(result: &CaseResult) -> Option<f64> {
    if !result.case.method.starts_with("pwritev2") || result.case.bytes == 0 {
        return None;
    }
    let bytes = result.case.bytes as f64;
    median_of(result.runs.iter().filter_map(|run| run.resident_bytes).map(|b| b as f64 / bytes))
}

/// The median run by bytes written to the device.
fn device(result: &CaseResult) -> Option<context::device::DeviceIo> {
    let mut io: Vec<context::device::DeviceIo> = result.runs.iter().filter_map(|run| run.device).collect();
    io.sort_by_key(|io| io.bytes_written);
    io.get(io.len() / 2).copied()
}

/// How many of a case's runs started with dirty pages waiting, and the most any found.
fn dirty_at_start(result: &CaseResult) -> Option<(usize, u64)> {
    let bytes = result.case.bytes;
    let dirty: Vec<&result::Run> = result.runs.iter().filter(|run| run.started_dirty(bytes)).collect();
    let most =
        dirty.iter().map(|run| run.dirty_before_bytes.unwrap_or(0) + run.writeback_before_bytes.unwrap_or(0)).max()?;
    Some((dirty.len(), most))
}

/// Each rank's medians over the runs of an `--mpi` case, and the spreads across ranks.
fn ranks(case: &CaseResult) -> Option<RankFigures> {
    let runs: Vec<_> = case.runs.iter().filter(|r| !r.ranks.is_empty()).collect();
    if runs.is_empty() {
        return None;
    }
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
    Some(RankFigures {
        start_spread: spread(&|r| r.start_seconds),
        end_spread: spread(&|r| r.end_seconds),
        span: median(runs.iter().map(|r| r.ranks.iter().map(|k| k.end_seconds).fold(0.0, f64::max)).collect()),
        slowest: slowest as u32,
        ranks,
    })
}

/// The median, 0 of none (a rank no run had).
fn median(values: Vec<f64>) -> f64 {
    if values.is_empty() { 0.0 } else { stats::median(&values) }
}

#[cfg(test)]
mod tests {
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
        let result = crate::advice::testkit::measured(case, runs.to_vec(), 1);
        let figures = result.facts.ranks.expect("ranks");
        assert_eq!(figures.slowest, 1);
        assert_eq!(figures.start_spread, 0.002);
        assert_eq!(figures.end_spread, 0.5);
        assert_eq!(figures.span, 1.0);
        assert_eq!(figures.ranks[0].bytes_per_second, 2e6);
        assert_eq!(figures.ranks[1].end, 1.0);
    }
}
