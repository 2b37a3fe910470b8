//! `writebench trace`'s replay (docs/trace.md, "Replay", "Alternatives"): the traced
//! calls made again in a scratch directory on the path asked for (or the directory that
//! received most of the program's bytes), with every other way of making them that
//! applies (`plan::replay_changes`), in alternating rounds after an untimed warm-up, each
//! file brought back to how it stood before the program between runs; the program's way
//! summarized as `run` summarizes a case's runs, each other way against it by the
//! Answer's test.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::cli::UsageError;
use crate::executors::replay;
use crate::measure::target::Scratch;
use crate::plan::replay::Replay;
use crate::plan::replay_changes::{Change, changes};
use crate::result::Summary;
use crate::result::trace::{Alternative, FilePattern, ReplayFigures, Shown};
use crate::stats::Summarize;
use crate::stats::significance::Verdict;

/// The directory that received most of the program's bytes.
pub(super) fn busiest_directory(files: &[FilePattern]) -> Option<PathBuf> {
    let mut bytes: BTreeMap<PathBuf, u64> = BTreeMap::new();
    for file in files {
        if let Some(parent) = Path::new(&file.path).parent() {
            *bytes.entry(parent.to_path_buf()).or_default() += file.bytes;
        }
    }
    bytes.into_iter().filter(|(dir, _)| dir.is_dir()).max_by_key(|(_, bytes)| *bytes).map(|(dir, _)| dir)
}

/// One way of making the calls, and its runs.
struct Candidate {
    change: Option<Change>,
    calls: Replay,
    seconds: Vec<f64>,
    commit_seconds: Vec<f64>,
    commits: u64,
    bytes: u64,
}

/// Replays `calls` (the program's way) and every change that applies, in alternating
/// rounds: one untimed warm-up round, then `runs` timed ones, each candidate once a
/// round, the order turned by one each round, so that drift falls on all alike.
pub(super) fn replay_on(
    calls: &Replay,
    on: &Path,
    runs: usize,
    seed: u64,
    gaps: bool,
) -> Result<ReplayFigures, UsageError> {
    crate::measure::signals::install()
        .map_err(|e| UsageError(format!("cannot install signal handlers: {}", crate::error::plain(&e))))?;
    let scratch = crate::measure::signals::create_scratch(|| Scratch::create(on), Scratch::path).map_err(|e| {
        UsageError(format!("cannot make a scratch directory in {}: {}", on.display(), crate::error::plain(&e)))
    })?;
    let mut candidates: Vec<Candidate> = std::iter::once((None, calls.clone()))
        .chain(changes(calls).into_iter().map(|(change, calls)| (Some(change), calls)))
        .map(|(change, calls)| Candidate {
            change,
            calls,
            seconds: Vec::new(),
            commit_seconds: Vec::new(),
            commits: 0,
            bytes: 0,
        })
        .collect();
    let n = candidates.len();
    // A bar over every run, the warm-up's included, with its ETA: silent without a
    // terminal, as `run`'s is.
    let progress = super::progress::progress_bar(((runs + 1) * n) as u64);
    for round in 0..=runs {
        progress.set_message(format!(
            "replaying on {}: round {round} of {runs}{}, {n} ways",
            on.display(),
            if round == 0 { " (warm-up)" } else { "" }
        ));
        for k in 0..n {
            let candidate = &mut candidates[(round + k) % n];
            // The bar is cleared before a failure's own line.
            let failed = |what: &str, e: crate::error::CallError| {
                progress.finish_and_clear();
                UsageError(format!("{what}: {e}"))
            };
            replay::prepare(&candidate.calls, &scratch, seed).map_err(|e| failed("the replay's files", e))?;
            let done =
                replay::run(&candidate.calls, &scratch, seed, gaps).map_err(|e| failed("the replay failed", e))?;
            if round > 0 {
                candidate.seconds.push(done.seconds);
                candidate.commit_seconds.extend(done.commit_seconds);
                (candidate.commits, candidate.bytes) = (done.commits, done.bytes);
            }
            progress.inc(1);
        }
    }
    progress.finish_and_clear();
    let yours = candidates.remove(0);
    let mut alternatives: Vec<Alternative> = candidates.iter().filter_map(|c| against(&yours, c)).collect();
    alternatives.sort_by_key(|a| !a.same_promise);
    Ok(ReplayFigures { with_gaps: gaps, ..figures(yours, calls, on, runs, alternatives) })
}

/// An alternative against the program's way, by the Answer's test.
fn against(yours: &Candidate, other: &Candidate) -> Option<Alternative> {
    let change = other.change?;
    let factor = crate::stats::significance::factor(&yours.seconds, &other.seconds)?;
    let shown = match factor.verdict(crate::stats::significance::EQUIVALENCE) {
        Verdict::Faster => Shown::Faster,
        Verdict::Slower => Shown::Slower,
        Verdict::Tied => Shown::AsFast,
        Verdict::Undecided => Shown::NotSettled,
    };
    Some(Alternative {
        change,
        same_promise: change.same_promise(),
        commits: other.commits,
        seconds: Summary::of(&other.seconds)?,
        factor: factor.factor,
        low: factor.low,
        high: factor.high,
        shown,
    })
}

fn figures(
    mut yours: Candidate,
    calls: &Replay,
    on: &Path,
    runs: usize,
    alternatives: Vec<Alternative>,
) -> ReplayFigures {
    let seconds = &yours.seconds;
    let summary = |values: &[f64]| Summary::of(values).expect("finite run times");
    yours.commit_seconds.sort_by(f64::total_cmp);
    let commit_seconds = &yours.commit_seconds;
    let quantile = |q: f64| -> Option<f64> {
        (!commit_seconds.is_empty()).then(|| commit_seconds[((commit_seconds.len() - 1) as f64 * q).round() as usize])
    };
    ReplayFigures {
        on: on.display().to_string(),
        fs_type: crate::context::fstype::resolve(crate::context::fstype::magic_of(on), None),
        runs,
        files: calls.files.len(),
        threads: calls.threads.len(),
        calls: calls.threads.iter().map(Vec::len).sum(),
        bytes: yours.bytes,
        commits: yours.commits,
        cut: calls.cut,
        seconds: summary(seconds),
        bytes_per_second: Summary::throughput(yours.bytes as f64, seconds).unwrap_or_else(|| summary(seconds)),
        // Commits over the mean run time, as bytes are (`Summarize::throughput`).
        commits_per_second: (yours.commits > 0).then(|| Summary::throughput(yours.commits as f64, seconds)).flatten(),
        commit_p50: quantile(0.5),
        commit_p99: quantile(0.99),
        alternatives,
        with_gaps: false,
    }
}
