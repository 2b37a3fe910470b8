//! The best strategy for each goal the result can answer, as a sentence to act on,
//! with its margin over the runner-up and over the naive way.
//!
//! "Best" is the highest mean (bytes / mean time). The highest of several means is
//! biased upward by noise, so the best is tested against every other candidate: where
//! the runner-up cannot be told from it (Welch p ≥ 0.05) the sentence says "tied with",
//! and counts the others that are within noise too.
//!
//! "Durable at the end" is any mode after which the whole file is durable: one sync at
//! the end, or syncs along the way (O_SYNC, O_DSYNC, every:N) should they be faster.
//!
//! The naive way is `write` (else `fwrite`) in 4 KiB calls into an empty file, with the
//! best's threads and durability where the run measured them, else one thread and a
//! mode whose figure means the same (page cache or one fsync at the end).

use super::figures::{Measured, Metric, Side, Test, test};
use super::latency::{self, p99_ns};
use super::words::{direction, factor, gbps, micros, mode, p_value, per_second, strategy, tested};
use std::collections::BTreeMap;

use crate::plan::durability::{Commit, SyncCall};
use crate::plan::latency::{Pattern, is_not_durable_save, pattern_of};
use crate::plan::{Durability, FileState};
use crate::result::{CaseResult, Recommendation, ResultFile};

/// The goals answered from throughput cases.
struct Goal {
    key: &'static str,
    metric: Metric,
    /// Which cases answer it.
    answers: fn(&CaseResult) -> bool,
}

/// Every thread of every MPI rank: one rank's single thread into a shared file is one
/// writer of many, not a program writing its file alone.
fn writers(case: &CaseResult) -> u32 {
    case.case.threads * case.case.ranks.unwrap_or(1)
}

/// Modes whose buffered figure is the write alone: the page cache, or one sync after.
fn buffered_alone(durability: Durability) -> bool {
    matches!(durability.commit, Commit::None | Commit::End(_))
}

const GOALS: [Goal; 3] = [
    Goal {
        key: "fastest",
        metric: Metric::Buffered,
        answers: |c| writers(c) == 1 && c.case.files == 1 && buffered_alone(c.case.durability),
    },
    Goal { key: "durable-at-end", metric: Metric::Durable, answers: |c| writers(c) == 1 && c.case.files == 1 },
    Goal {
        key: "threads-one-file",
        metric: Metric::Buffered,
        answers: |c| writers(c) > 1 && c.case.files == 1 && buffered_alone(c.case.durability),
    },
];

/// Goals in the order the issue asks them: fastest, durable at the end, small durable
/// commits, many threads into one file; a goal the result has no case for is left out.
pub fn recommendations(result: &ResultFile) -> Vec<Recommendation> {
    let measured = Measured::of(result);
    let mut answer = Vec::new();
    for goal in &GOALS[..2] {
        answer.extend(throughput(&measured, goal));
    }
    answer.extend(commits(result));
    answer.extend(saves(result));
    answer.extend(throughput(&measured, &GOALS[2]));
    answer
}

fn throughput(measured: &Measured, goal: &Goal) -> Option<Recommendation> {
    let side = |case| Side::new(case, goal.metric);
    let mut ranked: Vec<&CaseResult> = measured
        .cases
        .iter()
        .copied()
        .filter(|&c| (goal.answers)(c) && goal.metric.summary(c).is_some())
        // A buffered figure of an `end` case is its page-cache twin's strategy: once.
        .filter(|&c| {
            goal.metric == Metric::Durable
                || !matches!(c.case.durability.commit, Commit::End(_))
                || measured.twin(c, |d| d.durability.commit = Commit::None).is_none()
        })
        .collect();
    ranked.sort_by(|a, b| side(b).mean().total_cmp(&side(a).mean()));
    let best = *ranked.first()?;
    let durable = goal.metric == Metric::Durable;
    let mut text = format!(
        "{}: {} {} ({})",
        strategy(&best.case, durable),
        gbps(side(best).median()),
        if durable { "durable" } else { "buffered" },
        best.case.id
    );
    let against: Vec<Option<Test>> = ranked[1..].iter().map(|&c| test(side(c), side(best))).collect();
    let runner_up = ranked.get(1).map(|&r| (r, against[0]));
    let tied = runner_up.is_some_and(|(_, t)| t.is_some_and(|t| !t.significant()));
    let runner_up_margin = runner_up.map(|(r, t)| (r.case.id.as_str(), t, side(r).mean() / side(best).mean()));
    text += &margin(runner_up_margin, &against, "fewer than two runs");
    let naive = naive(measured, best, goal.metric);
    let naive_test = naive.filter(|&n| !std::ptr::eq(n, best)).and_then(|n| test(side(n), side(best)));
    match (naive, naive_test) {
        (Some(n), _) if std::ptr::eq(n, best) => text += "; the naive way itself",
        (Some(n), Some(t)) if t.significant() => {
            text += &format!("; {} {} than the naive way, {}", tested(&t), direction(&t), strategy(&n.case, durable));
        }
        (Some(n), Some(t)) => {
            text += &format!("; no faster than the naive way, {} ({})", n.case.id, p_value(t.factor.p))
        }
        _ => {}
    }
    Some(Recommendation {
        goal: goal.key.to_string(),
        text,
        best: side(best).figure()?,
        runner_up: runner_up.and_then(|(_, t)| t).map(|t| t.comparison(t.significant())),
        naive: naive_test.map(|t| t.comparison(t.significant())),
        tied,
    })
}

/// "; tied with X (p = 0.40) and 2 more within noise", "; 1.08x (…) faster than the
/// runner-up X", or, without a test, the ratio of the means and why it is untested.
/// `runner_up` is (id, its test against the best, its mean over the best's).
fn margin(runner_up: Option<(&str, Option<Test>, f64)>, against: &[Option<Test>], untested: &str) -> String {
    let Some((id, test, ratio)) = runner_up else { return "; the only candidate measured".to_string() };
    match test {
        Some(t) if !t.significant() => {
            let others = against[1..].iter().filter(|t| t.is_some_and(|t| !t.significant())).count();
            let more = if others > 0 { format!(" and {others} more within noise") } else { String::new() };
            format!("; tied with {id} ({}){more}", p_value(t.factor.p))
        }
        Some(t) => format!("; {} faster than the runner-up, {id}", tested(&t)),
        None => format!("; {} the runner-up, {id}, untested ({untested})", factor(1.0 / ratio)),
    }
}

/// The naive way for `best` (see the module doc), if the run measured it.
fn naive<'a>(measured: &Measured<'a>, best: &CaseResult, metric: Metric) -> Option<&'a CaseResult> {
    let own = Durability { direct: false, ..best.case.durability };
    let fallbacks: &[Durability] = match metric {
        Metric::Buffered => &[Durability::None, Durability::End],
        Metric::Durable => &[Durability::End, Durability::of(Commit::End(SyncCall::Fdatasync))],
    };
    let shapes = [(best.case.threads, best.case.files), (1, 1)];
    for method in ["write", "fwrite"] {
        for (threads, files) in shapes {
            for &durability in std::iter::once(&own).chain(fallbacks) {
                let found = measured.twin(best, |d| {
                    (d.method, d.state, d.chunk, d.iov, d.queue_depth) =
                        (method.into(), FileState::Empty, 4096, 1, None);
                    (d.threads, d.files, d.durability) = (threads, files, durability);
                });
                if let Some(found) = found.filter(|c| metric.summary(c).is_some()) {
                    return Some(found);
                }
            }
        }
    }
    None
}

/// Small durable commits, from the latency cases whose every write (or every N) is
/// durable: the most commits per second. One timed loop per case gives no spread to
/// test, so the margin over the runner-up is a plain ratio, said to be untested.
fn commits(result: &ResultFile) -> Option<Recommendation> {
    let per_commit = |case: &CaseResult| match case.case.durability.commit {
        Commit::Every(n, _) => Some(f64::from(n)),
        Commit::OSync | Commit::ODsync | Commit::RwfSync | Commit::RwfDsync => Some(1.0),
        // A save is a whole file, not a small commit; its own lines are in the observations.
        Commit::None | Commit::End(_) | Commit::WriteBehind(_) | Commit::Save => None,
    };
    let rate = |case: &CaseResult| case.ops_per_second.unwrap_or(0.0) / per_commit(case).unwrap_or(1.0);
    let mut ranked: Vec<&CaseResult> = latency::cases(result).into_iter().filter(|c| per_commit(c).is_some()).collect();
    ranked.sort_by(|a, b| rate(b).total_cmp(&rate(a)));
    let best = *ranked.first()?;
    let every = per_commit(best).filter(|&n| n > 1.0).map(|n| format!(", {n} writes per commit")).unwrap_or_default();
    let text = format!(
        "{} with {}{every}: {} commits/s, p99 {} per write ({})",
        latency::pattern(best),
        mode(best.case.durability),
        per_second(rate(best)),
        micros(p99_ns(best).unwrap_or(0.0)),
        best.case.id
    );
    Some(one_loop_each(&ranked, &rate, text, "small-durable-commits", "commits_per_second"))
}

/// The recommendation of a goal answered by latency cases, `ranked` best first by
/// `rate`: `text` with the margin over the runner-up. One timed loop per case gives no
/// spread to test, so the margin is a plain ratio, said to be untested.
fn one_loop_each(
    ranked: &[&CaseResult],
    rate: &dyn Fn(&CaseResult) -> f64,
    mut text: String,
    goal: &str,
    figure: &str,
) -> Recommendation {
    let best = ranked[0];
    let side = |case| Side::new(case, Metric::Durable);
    let runner_up = ranked.get(1).map(|&r| (r, test(side(r), side(best))));
    let against: Vec<Option<Test>> = ranked[1..].iter().map(|&c| test(side(c), side(best))).collect();
    text +=
        &margin(runner_up.map(|(r, t)| (r.case.id.as_str(), t, rate(r) / rate(best))), &against, "one timed loop each");
    Recommendation {
        goal: goal.to_string(),
        text,
        best: latency::figure(best, figure, rate(best)),
        runner_up: runner_up.and_then(|(_, t)| t).map(|t| t.comparison(t.significant())),
        naive: None,
        tied: runner_up.is_some_and(|(_, t)| t.is_some_and(|t| !t.significant())),
    }
}

/// Crash-safe saves of a whole file (latency's `replace` patterns), one answer per
/// size: the durable save pattern with the most saves per second. `replace-unsafe` is
/// never a candidate: it is not durable. One timed loop each, as for the commits.
fn saves(result: &ResultFile) -> Vec<Recommendation> {
    let mut sizes: BTreeMap<u64, Vec<&CaseResult>> = BTreeMap::new();
    let durable_saves = latency::cases(result).into_iter().filter(|c| {
        pattern_of(&c.case).is_some_and(|p| p.is_save()) && c.case.durability.syncs() && !is_not_durable_save(&c.case)
    });
    for case in durable_saves {
        sizes.entry(case.case.chunk_bytes).or_default().push(case);
    }
    let rate = |case: &CaseResult| case.ops_per_second.unwrap_or(0.0);
    let mut answers = Vec::new();
    for (_, mut ranked) in sizes {
        ranked.sort_by(|a, b| rate(b).total_cmp(&rate(a)));
        let best = ranked[0];
        let calls = match pattern_of(&best.case) {
            Some(Pattern::ReplaceTmpfile) => "O_TMPFILE, write, fsync, linkat, rename, fsync of the directory",
            _ => "temp file, write, fsync, rename, fsync of the directory",
        };
        let text = format!(
            "{} with {} ({calls}): {} saves/s, p99 {} per save ({})",
            latency::pattern(best),
            pattern_of(&best.case).map_or("", |p| p.name()),
            per_second(rate(best)),
            micros(p99_ns(best).unwrap_or(0.0)),
            best.case.id
        );
        answers.push(one_loop_each(&ranked, &rate, text, "crash-safe-saves", "saves_per_second"));
    }
    answers
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::advice::testkit::{Build, around, case, latency_case};

    #[test]
    fn saves_answer_per_size_with_a_durable_pattern_never_the_unsafe_one() {
        let answer = recommendations(
            &Build::new()
                .latency(latency_case("replace", "fsync-file+dir"), 120.0, 20_000_000)
                .latency(latency_case("replace-tmpfile", "fsync-file+dir"), 110.0, 16_000_000)
                .latency(latency_case("replace-unsafe", "none"), 15_000.0, 130_000)
                .done(),
        );
        assert_eq!(answer.len(), 1, "{answer:?}");
        let saves = goal(&answer, "crash-safe-saves");
        assert_eq!(
            saves.text,
            "save of 8 B (whole file) with replace (temp file, write, fsync, rename, fsync of the directory): \
             120 saves/s, p99 20.0 ms per save (latency replace 8B); 1.09x the runner-up, latency replace-tmpfile 8B, \
             untested (one timed loop each)"
        );
        assert!(!saves.text.contains("unsafe"));
        let only_unsafe = Build::new().latency(latency_case("replace-unsafe", "none"), 15_000.0, 130_000).done();
        assert!(recommendations(&only_unsafe).is_empty(), "not durable: never an answer");
    }

    fn goal<'a>(answer: &'a [Recommendation], key: &str) -> &'a Recommendation {
        answer.iter().find(|r| r.goal == key).unwrap_or_else(|| panic!("no {key} in {answer:?}"))
    }

    #[test]
    fn a_runner_up_within_noise_is_tied() {
        let result = Build::new()
            .add(case("pwrite prealloc 1MiB t1 none"), &[0.50, 0.52, 0.48, 0.51, 0.49])
            .add(case("pwritev prealloc 1MiB x1 t1 none"), &[0.51, 0.53, 0.47, 0.50, 0.52])
            .add(case("write empty 4KiB t1 none"), &around(1.5))
            .done();
        let answer = recommendations(&result);
        let fastest = goal(&answer, "fastest");
        assert!(fastest.tied);
        assert_eq!(fastest.best.case, "pwrite prealloc 1MiB t1 none");
        assert!(
            fastest.text.starts_with("pwrite in 1 MiB calls into a preallocated file: 2.15 GB/s buffered (pwrite prealloc 1MiB t1 none); tied with pwritev prealloc 1MiB x1 t1 none (p = 0."),
            "{}",
            fastest.text
        );
        assert!(fastest.text.contains("; 3.0x ("), "{}", fastest.text);
        assert!(
            fastest.text.ends_with(") faster than the naive way, write in 4 KiB calls into an empty file"),
            "{}",
            fastest.text
        );
        let runner_up = fastest.runner_up.as_ref().unwrap();
        assert!(!runner_up.significant && runner_up.p_value >= 0.05);
        assert!(fastest.naive.as_ref().unwrap().significant);
    }

    #[test]
    fn a_clear_winner_gives_its_margins_and_durable_goals_need_durable_figures() {
        let result = Build::new()
            .synced(case("pwrite prealloc 1MiB t1 end-fdatasync"), &around(0.5), &around(0.1))
            .synced(case("pwritev prealloc 1MiB x1 t1 end"), &around(0.5), &around(0.5))
            .add(case("write empty 4KiB t1 none"), &around(1.5))
            .synced(case("write empty 4KiB t1 end"), &around(1.5), &around(0.5))
            .done();
        let answer = recommendations(&result);
        let durable = goal(&answer, "durable-at-end");
        assert!(!durable.tied);
        assert!(
            durable.text.starts_with("pwrite in 1 MiB calls into a preallocated file, then one fdatasync: 1.79 GB/s durable (pwrite prealloc 1MiB t1 end-fdatasync); 1.67x ("),
            "{}",
            durable.text
        );
        assert!(
            durable.text.contains(") faster than the runner-up, pwritev prealloc 1MiB x1 t1 end; 3.3x ("),
            "{}",
            durable.text
        );
        assert!(
            durable.text.ends_with("than the naive way, write in 4 KiB calls into an empty file, then one fsync"),
            "{}",
            durable.text
        );
        assert_eq!(durable.naive.as_ref().unwrap().baseline, "write empty 4KiB t1 end");
        assert_eq!(durable.best.metric, "durable");
        // The buffered goal sees the end cases' write times once: `write … none` stands for both.
        let fastest = goal(&answer, "fastest");
        assert_eq!(fastest.naive.as_ref().unwrap().baseline, "write empty 4KiB t1 none");
        assert!(answer.iter().all(|r| r.goal != "threads-one-file" && r.goal != "small-durable-commits"));
    }

    #[test]
    fn no_durable_goal_from_cases_that_never_synced() {
        let result = Build::new()
            .add(case("pwrite empty 1MiB t1 none"), &around(1.0))
            .add(case("pwrite empty 1MiB t1 direct"), &around(1.0))
            .done();
        let answer = recommendations(&result);
        assert_eq!(answer.iter().map(|r| r.goal.as_str()).collect::<Vec<_>>(), ["fastest"]);
    }

    #[test]
    fn one_thread_of_each_of_two_ranks_into_one_file_is_many_writers_not_one() {
        let mut shared = case("pwrite empty 1MiB t1 none");
        shared.ranks = Some(2);
        let result = Build::new().add(shared, &around(0.5)).done();
        let goals: Vec<String> = recommendations(&result).into_iter().map(|r| r.goal).collect();
        assert_eq!(goals, ["threads-one-file"]);
    }

    #[test]
    fn threads_into_one_file_and_small_commits() {
        let result = Build::new()
            .add(case("pwrite empty 1MiB t2 none"), &around(0.6))
            .add(case("write empty 4KiB t1 none"), &around(1.2))
            .latency(latency_case("overwrite0", "none"), 1_000_000.0, 1_000)
            .latency(latency_case("overwrite0", "odsync"), 4_100.0, 410_000)
            .latency(latency_case("append", "every-fdatasync:1"), 3_900.0, 520_000)
            .done();
        let answer = recommendations(&result);
        let goals: Vec<&str> = answer.iter().map(|r| r.goal.as_str()).collect();
        assert_eq!(goals, ["fastest", "small-durable-commits", "threads-one-file"]);
        let threads = goal(&answer, "threads-one-file");
        assert!(
            threads.text.starts_with("pwrite in 1 MiB calls from 2 threads into an empty file: 1.79 GB/s buffered"),
            "{}",
            threads.text
        );
        assert!(threads.text.contains("; the only candidate measured; 2.0x ("), "{}", threads.text);
        let commits = goal(&answer, "small-durable-commits");
        assert_eq!(
            commits.text,
            "pwrite of 8 B at offset 0 with O_DSYNC: 4100 commits/s, p99 410 µs per write (latency overwrite0 8B odsync); \
             1.05x the runner-up, latency append 8B every-fdatasync:1, untested (one timed loop each)"
        );
        assert_eq!((commits.best.metric.as_str(), commits.best.median), ("commits_per_second", 4100.0));
        assert!(commits.runner_up.is_none() && !commits.tied);
    }
}
