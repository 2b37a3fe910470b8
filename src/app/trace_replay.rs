//! `writebench trace`'s replay (docs/trace.md, "Replay"): the traced calls made again in
//! a scratch directory on the path asked for (or the directory that received most of
//! the program's bytes), one untimed warm-up and then timed runs, each file brought back
//! to how it stood before the program between runs; the figures summarized as `run`
//! summarizes a case's runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::cli::UsageError;
use crate::executors::replay;
use crate::measure::target::Scratch;
use crate::plan::replay::Replay;
use crate::result::Summary;
use crate::result::trace::{FilePattern, ReplayFigures};
use crate::stats::Summarize;

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

/// Replays `calls` `runs` times (after a warm-up) in a scratch directory under `on`.
pub(super) fn replay_on(calls: &Replay, on: &Path, runs: usize, seed: u64) -> Result<ReplayFigures, UsageError> {
    crate::measure::signals::install()
        .map_err(|e| UsageError(format!("cannot install signal handlers: {}", crate::error::plain(&e))))?;
    let scratch = crate::measure::signals::create_scratch(|| Scratch::create(on), Scratch::path).map_err(|e| {
        UsageError(format!("cannot make a scratch directory in {}: {}", on.display(), crate::error::plain(&e)))
    })?;
    let mut seconds = Vec::new();
    let mut commit_seconds = Vec::new();
    let mut commits = 0;
    let mut bytes = 0;
    for run in 0..=runs {
        eprint!(
            "\rwritebench trace: replaying on {}: run {run} of {runs}{}",
            on.display(),
            if run == 0 { " (warm-up)" } else { "" }
        );
        replay::prepare(calls, &scratch, seed).map_err(|e| UsageError(format!("the replay's files: {e}")))?;
        let done = replay::run(calls, &scratch, seed).map_err(|e| UsageError(format!("the replay failed: {e}")))?;
        if run > 0 {
            seconds.push(done.seconds);
            commit_seconds.extend(done.commit_seconds);
            (commits, bytes) = (done.commits, done.bytes);
        }
    }
    eprintln!();
    let summary = |values: &[f64]| Summary::of(values).expect("finite run times");
    let per_second = |count: u64| -> Option<Summary> {
        let rates: Vec<f64> = seconds.iter().map(|s| count as f64 / s.max(1e-9)).collect();
        Summary::of(&rates)
    };
    commit_seconds.sort_by(f64::total_cmp);
    let quantile = |q: f64| -> Option<f64> {
        (!commit_seconds.is_empty()).then(|| commit_seconds[((commit_seconds.len() - 1) as f64 * q).round() as usize])
    };
    Ok(ReplayFigures {
        on: on.display().to_string(),
        fs_type: crate::context::fstype::resolve(crate::context::fstype::magic_of(on), None),
        runs,
        files: calls.files.len(),
        threads: calls.threads.len(),
        calls: calls.threads.iter().map(Vec::len).sum(),
        bytes,
        commits,
        cut: calls.cut,
        seconds: summary(&seconds),
        bytes_per_second: Summary::throughput(bytes as f64, &seconds).unwrap_or_else(|| summary(&seconds)),
        commits_per_second: (commits > 0).then(|| per_second(commits)).flatten(),
        commit_p50: quantile(0.5),
        commit_p99: quantile(0.99),
    })
}
