//! The Answer's goals that latency cases answer (docs/answer.md): small durable commits
//! and crash-safe saves of a whole file. The best is the most commits (or saves) per
//! second; its margin over the runner-up is tested as every goal's is, on the loops'
//! times per commit (or save), unless the cases come from a result saved before
//! latency cases ran in loops.

use super::figures::Figures;
use std::collections::BTreeMap;

use super::figures::{Metric, Side, equivalence_margin, pooled_test, test, writes_per_commit};
use super::glance;
use super::raced::finalists;
use super::small_writes::{self, p99_ns};
use super::words::{certainty_words, micros, mode, per_second};
use plan::latency::{Pattern, is_not_durable_save, pattern_of};
use result::goals;
use result::{CaseResult, Recommendation, ResultFile};
use stats::significance::pooled_cv2;

/// Small durable commits, from the latency cases whose every write (or every N) is
/// durable, one answer per write size (a commit of 8 B and one of 4 KiB are different
/// questions) and per place (docs/answer.md): rewriting a record in place (a counter,
/// a header) and appending one (a log) are different programs, and an overwrite's
/// figure answers no log. For each, the most commits per second, and how sure.
pub fn commits(result: &ResultFile) -> Vec<Recommendation> {
    let mut sizes: BTreeMap<(u64, bool), Vec<&CaseResult>> = BTreeMap::new();
    for case in small_writes::cases(result).into_iter().filter(|&c| Metric::Commits.summary(c).is_some()) {
        sizes.entry((case.case.chunk_bytes, appends(case))).or_default().push(case);
    }
    let describe = |best: &CaseResult| {
        let every = writes_per_commit(best).filter(|&n| n > 1.0).map(|n| format!(", {n} writes per commit"));
        let action = format!(
            "{} with {}{} (p99 {})",
            small_writes::pattern(best),
            mode(best.case.durability),
            every.clone().unwrap_or_default(),
            micros(p99_ns(best).unwrap_or(0.0)),
        );
        let text = format!(
            "{} with {}{}: {} commits/s, p99 {} per write{} ({})",
            small_writes::pattern(best),
            mode(best.case.durability),
            every.unwrap_or_default(),
            per_second(Side::new(best, Metric::Commits).mean()),
            micros(p99_ns(best).unwrap_or(0.0)),
            sync_words(best),
            best.case.id
        );
        (text, action)
    };
    let mut answers = Vec::new();
    for ((size, appended), ranked) in sizes {
        let goal = goals::of_commits(appended).key;
        answers.extend(latency_answer(result, ranked, Metric::Commits, &describe, (goal, size)));
    }
    // Every size's in-place answer first, then the appends: the order of the titles.
    answers.sort_by_key(|r| r.goal == goals::of_commits(true).key);
    answers
}

/// A commit case that appends (a log), rather than rewriting in place.
pub fn appends(case: &CaseResult) -> bool {
    pattern_of(&case.case) == Some(Pattern::Append)
}

/// Whether the p99 per write holds the sync: with O_SYNC, O_DSYNC, RWF_*SYNC or a sync
/// after every write it does; under every:N (N > 1) only one write in N waits for it,
/// so the p99 may not, and the sync's own p99 is said beside it.
fn sync_words(case: &CaseResult) -> String {
    match writes_per_commit(case) {
        Some(n) if n > 1.0 => {
            let sync = case.sync_latency_ns.as_ref().and_then(|s| s.get("p99")?.as_f64());
            match sync {
                Some(p99) => format!(" (one write in {n} waits for the sync too: the sync alone, p99 {})", micros(p99)),
                None => format!(" (one write in {n} waits for the sync too)"),
            }
        }
        _ => ", its sync included".to_string(),
    }
}

/// The recommendation of a goal answered by latency cases (`goal` for write size
/// `size`), `ranked` its candidates under `metric`, `describe` making the pick's
/// sentence and action: the fastest, and how sure, by the Answer's one rule against
/// every other candidate (docs/answer.md): the ratio of the mean times per operation (or
/// commit) over the loops, with its interval. A raced result picks among the candidates
/// still in the goal's race, with the noise pooled over all of them (docs/racing.md),
/// and holds the pick against the dropped ones too. A case from before latency cases
/// ran in loops has one loop: untested, and the goal is not settled.
fn latency_answer(
    result: &ResultFile,
    mut ranked: Vec<&CaseResult>,
    metric: Metric,
    describe: &dyn Fn(&CaseResult) -> (String, String),
    (goal, size): (&str, u64),
) -> Option<Recommendation> {
    let margin = equivalence_margin(result);
    let side = |case| Side::new(case, metric);
    let finalists = finalists(result, goal, Some(size));
    let every = ranked.clone();
    let times: Vec<Vec<f64>> = ranked.iter().filter_map(|&c| metric.times(c)).collect();
    let pool = finalists.as_ref().and_then(|_| pooled_cv2(times.iter().map(Vec::as_slice)));
    let test = |from, to| match pool {
        Some(pool) => pooled_test(from, to, pool),
        None => test(from, to),
    };
    ranked.retain(|c| finalists.as_ref().is_none_or(|left| left.contains(&c.case.id.as_str())));
    ranked.sort_by(|a, b| side(b).mean().total_cmp(&side(a).mean()));
    let best = *ranked.first()?;
    let (mut text, action) = describe(best);
    // Beside the pick, what differs: the mode, and where the writes go.
    let name = |c: &CaseResult| {
        let place = match pattern_of(&c.case) {
            Some(Pattern::Append) => ", appended".to_string(),
            Some(Pattern::Overwrite0) => ", at offset 0".to_string(),
            Some(pattern) => format!(", {}", pattern.name()),
            None => String::new(),
        };
        format!("{}{place}", mode(c.case.durability))
    };
    // How sure: against every candidate of this size, finalists, resting and dropped
    // alike, by the Answer's one rule (docs/answer.md).
    let certainty = glance::judged(&every, best, (|c| test(side(c), side(best)), pool), name, metric, margin);
    text += &certainty_words(&certainty, metric, side(best).mean());
    let runner_up = glance::named(&certainty).map(|other| glance::comparison(&best.case.id, other));
    let (tied, verdict) = (certainty.either_will_do(), certainty.name().to_string());
    let glance = glance::glance(action, glance::shown_pooled(best, metric, pool)?, certainty);
    Some(Recommendation {
        goal: goal.to_string(),
        text,
        best: side(best).figure()?,
        runner_up,
        naive: None,
        tied,
        verdict: Some(verdict),
        fastest: None,
        crash_checked: None,
        glance: Some(glance),
    })
}

/// Crash-safe saves of a whole file (latency's `replace` patterns), one answer per
/// size: the durable save pattern with the most saves per second, and its margin over
/// the runner-up as for the commits. `replace-unsafe` is never a candidate: it is not
/// durable.
pub fn saves(result: &ResultFile) -> Vec<Recommendation> {
    let mut sizes: BTreeMap<u64, Vec<&CaseResult>> = BTreeMap::new();
    let durable_saves = small_writes::cases(result).into_iter().filter(|c| {
        pattern_of(&c.case).is_some_and(|p| p.is_save()) && c.case.durability.syncs() && !is_not_durable_save(&c.case)
    });
    for case in durable_saves {
        sizes.entry(case.case.chunk_bytes).or_default().push(case);
    }
    let describe = |best: &CaseResult| {
        let calls = match pattern_of(&best.case) {
            Some(Pattern::ReplaceTmpfile) => "O_TMPFILE, write, fsync, linkat, rename, fsync of the directory",
            _ => "temp file, write, fsync, rename, fsync of the directory",
        };
        let action = format!(
            "{} with {} ({calls}; p99 {} per save)",
            small_writes::pattern(best),
            pattern_of(&best.case).map_or("", |p| p.name()),
            micros(p99_ns(best).unwrap_or(0.0)),
        );
        let text = format!(
            "{} with {} ({calls}): {} saves/s, p99 {} per save ({})",
            small_writes::pattern(best),
            pattern_of(&best.case).map_or("", |p| p.name()),
            per_second(Side::new(best, Metric::Saves).mean()),
            micros(p99_ns(best).unwrap_or(0.0)),
            best.case.id
        );
        (text, action)
    };
    let mut answers = Vec::new();
    for (size, ranked) in sizes {
        answers.extend(latency_answer(result, ranked, Metric::Saves, &describe, (goals::of_saves().key, size)));
    }
    answers
}

#[cfg(test)]
mod tests {
    use super::*;
    const IN_PLACE: &str = "small-durable-commits";
    const APPENDS: &str = "small-durable-appends";
    use crate::advice::recommendations;
    use crate::advice::testkit::{Build, around, goal, latency_case};
    use result::glance::Certainty;

    /// A latency case as the version before loops saved it (from `writebench latency
    /// --export-json`): one run, `ops_per_second`, no `ops_stats`, no figures per run.
    fn saved_before_loops(id: &str, durability: &str, seconds: f64) -> CaseResult {
        let (pattern, method, state) =
            if id.contains("append") { ("append", "write", "empty") } else { ("overwrite0", "pwrite", "overwrite") };
        assert!(id.contains(pattern));
        let text = format!(
            r#"{{"id": "{id}", "runtime": "native", "method": "{method}", "state": "{state}", "chunk_bytes": 8,
            "iov": 1, "queue_depth": null, "threads": 1, "files": 1, "durability": "{durability}", "bytes": 80000,
            "status": "ok", "error": null, "runs": [{{"write_seconds": {seconds}, "sync_seconds": 0.0,
            "setup_seconds": 0.0, "thread_seconds": [{seconds}], "user_seconds": 0.0, "sys_seconds": 0.0026,
            "cpu_share": 1.0, "round": 0, "sequence": 0}}], "stats": null, "durable_stats": null,
            "latency_ns": {{"count": 10000, "max": 57695, "mean": 237.9, "p50": 226, "p90": 233, "p99": 274,
            "p999": 1630}}, "ops_per_second": {ops}, "outliers": [], "first_run_outlier": false, "target_ci": null,
            "cpu_bound": true}}"#,
            ops = 10_000.0 / seconds
        );
        serde_json::from_str(&text).expect("a case saved before loops still loads")
    }

    #[test]
    fn a_result_saved_before_loops_loads_and_its_margin_stays_untested() {
        let result = Build::new()
            .saved(saved_before_loops("latency overwrite0 8B osync", "osync", 0.0025))
            .saved(saved_before_loops("latency overwrite0 8B odsync", "odsync", 0.0050))
            .done();
        assert!(result.cases.iter().all(|c| c.ops_stats.is_none() && c.runs[0].latency_ns.is_none()));
        let answer = recommendations(&result);
        let commits = goal(&answer, "small-durable-commits");
        assert!(
            commits.text.ends_with(
                "; not settled among 2 candidates: latency overwrite0 8B odsync may be faster, untested: one timed \
                 loop each (its time 2.00x the pick's; 2.00 M → 4.00 M commits/s)"
            ),
            "{}",
            commits.text
        );
        assert!((commits.best.mean - 4e6).abs() < 1.0, "{:?}", commits.best);
        // One loop each: nothing tested, so nothing settled; the ratio said as it is.
        assert_eq!(commits.verdict.as_deref(), Some("not-settled"));
        assert!(!commits.tied);
        let Some(Certainty::NotSettled { up_to, settle, .. }) = commits.glance.as_ref().map(|g| &g.certainty) else {
            panic!("{:?}", commits.glance)
        };
        assert_eq!((*up_to, settle.as_deref()), (None, Some("untested: one timed loop each")));
    }

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
             120 saves/s, p99 20.0 ms per save (latency replace 8B); not settled among 2 candidates: latency \
             replace-tmpfile 8B may be faster, untested: one timed loop each (its time 1.09x the pick's; 110 → 120 \
             saves/s)"
        );
        assert!(!saves.text.contains("unsafe"));
        let only_unsafe = Build::new().latency(latency_case("replace-unsafe", "none"), 15_000.0, 130_000).done();
        assert!(recommendations(&only_unsafe).is_empty(), "not durable: never an answer");
    }

    /// In loops, the pick is judged as the other goals' are: clear, as fast, or not
    /// settled, with the interval in the text and the JSON.
    #[test]
    fn small_durable_commits_in_loops_are_clear_as_fast_or_not_settled() {
        let commits = |best: &[f64], second: &[f64]| {
            let result = Build::new()
                .loops(latency_case("overwrite0", "odsync"), best, 410_000)
                .loops(latency_case("overwrite0", "every-fdatasync:1"), second, 520_000)
                .done();
            goal(&recommendations(&result), "small-durable-commits").clone()
        };
        let faster = commits(&around(4100.0), &around(3000.0));
        assert_eq!(faster.verdict.as_deref(), Some("clear"));
        assert!(
            faster.text.starts_with(
                "pwrite of 8 B at offset 0 with O_DSYNC: 4100 commits/s, p99 410 µs per write, its sync included \
                 (latency overwrite0 8B odsync); clearly the fastest of 2 candidates, each shown slower: the closest, \
                 latency overwrite0 8B every-fdatasync:1, 1.37x its time (1.35–1.38x; 3000 → 4100 commits/s)"
            ),
            "{}",
            faster.text
        );
        let against = faster.runner_up.as_ref().expect("a tested comparison");
        assert_eq!(
            (against.better.as_str(), against.baseline.as_str()),
            (faster.best.case.as_str(), "latency overwrite0 8B every-fdatasync:1")
        );
        assert!(
            against.significant && 1.0 < against.low && against.low < against.factor && against.factor < against.high
        );
        assert_eq!(faster.best.metric, "commits_per_second");
        assert!(faster.best.ci95_low.is_some(), "the best's figure has its interval over the loops");

        let tied = commits(&[4000.0, 4040.0, 3960.0, 4020.0, 3980.0], &[4020.0, 3980.0, 4040.0, 3960.0, 4000.0]);
        assert_eq!(tied.verdict.as_deref(), Some("as-fast"));
        assert!(
            tied.tied && tied.text.contains("; the other candidate may not be more than 5 % faster"),
            "{}",
            tied.text
        );

        // 10 % apart at about 8 % noise, the faster one noisier: not settled.
        let undecided = commits(&[4400.0, 3300.0, 4900.0, 3500.0, 4100.0], &[4000.0, 3400.0, 4100.0, 3450.0, 3700.0]);
        assert_eq!(undecided.verdict.as_deref(), Some("not-settled"), "{}", undecided.text);
        assert!(!undecided.tied && undecided.text.contains("; not settled among 2 candidates"), "{}", undecided.text);
        assert!(!undecided.text.contains("untested"), "{}", undecided.text);
    }

    /// Under every:N a commit is N writes: cases compare on their time per commit.
    #[test]
    fn commits_of_several_writes_compare_per_commit() {
        let result = Build::new()
            .loops(latency_case("overwrite0", "every:2"), &around(8200.0), 300_000)
            .loops(latency_case("overwrite0", "odsync"), &around(3000.0), 410_000)
            .done();
        let commits = goal(&recommendations(&result), "small-durable-commits").clone();
        assert_eq!(commits.best.case, "latency overwrite0 8B every:2");
        assert!((commits.best.mean - 4100.0).abs() < 1.0, "{:?}", commits.best);
        let factor = commits.runner_up.as_ref().unwrap().factor;
        assert!((factor - 4100.0 / 3000.0).abs() < 0.01, "commits/s against commits/s: {factor}");
        assert!(commits.text.contains("; 3000 → 4100 commits/s)"), "{}", commits.text);
    }

    /// A commit of 8 B and one of 4 KiB answer apart; under every:N the p99 per write
    /// says that one write in N holds the sync, and gives the sync's own.
    #[test]
    fn commits_answer_per_write_size_and_every_n_says_what_its_p99_holds() {
        let mut big = latency_case("overwrite0", "every:4");
        big.chunk_bytes = 4096;
        big.id = "latency overwrite0 4KiB every:4".into();
        let result = Build::new()
            .loops(latency_case("overwrite0", "odsync"), &around(3000.0), 410_000)
            .loops(big, &around(8000.0), 300_000)
            .done();
        let answer = recommendations(&result);
        let commits: Vec<&Recommendation> = answer.iter().filter(|r| r.goal == "small-durable-commits").collect();
        assert_eq!(commits.len(), 2, "{answer:?}");
        assert_eq!(commits[0].best.case, "latency overwrite0 8B odsync", "the smaller size first");
        assert!(commits[0].text.contains("per write, its sync included"), "{}", commits[0].text);
        assert!(commits[1].text.contains("(one write in 4 waits for the sync too"), "{}", commits[1].text);
        assert!(commits[1].text.ends_with("; the only candidate measured"), "{}", commits[1].text);
    }

    /// A log appends its records, a counter rewrites one in place: two goals, each
    /// with its own pick and certainty, the faster overwrite no answer for the log.
    #[test]
    fn appending_and_rewriting_in_place_answer_apart() {
        let result = Build::new()
            .loops(latency_case("overwrite0", "odsync"), &around(8000.0), 200_000)
            .loops(latency_case("overwrite0", "every-fdatasync:1"), &around(6000.0), 250_000)
            .loops(latency_case("append", "odsync"), &around(5000.0), 300_000)
            .loops(latency_case("append", "every-fdatasync:1"), &around(4000.0), 350_000)
            .done();
        let answer = recommendations(&result);
        let goals: Vec<&str> = answer.iter().map(|r| r.goal.as_str()).collect();
        assert_eq!(goals, [IN_PLACE, APPENDS], "{answer:?}");
        assert_eq!(goal(&answer, IN_PLACE).best.case, "latency overwrite0 8B odsync");
        let log = goal(&answer, APPENDS);
        assert_eq!(log.best.case, "latency append 8B odsync", "the log's own pick, not the faster overwrite");
        assert_eq!(log.verdict.as_deref(), Some("clear"), "{}", log.text);
        assert!(log.text.contains("latency append 8B every-fdatasync:1") && !log.text.contains("overwrite0"));
    }

    #[test]
    fn crash_safe_saves_in_loops_are_tested_too() {
        let result = Build::new()
            .loops(latency_case("replace", "fsync-file+dir"), &around(120.0), 20_000_000)
            .loops(latency_case("replace-tmpfile", "fsync-file+dir"), &around(100.0), 16_000_000)
            .done();
        let saves = goal(&recommendations(&result), "crash-safe-saves").clone();
        assert_eq!(saves.verdict.as_deref(), Some("clear"));
        assert!(
            saves
                .text
                .contains("the closest, latency replace-tmpfile 8B, 1.20x its time (1.19–1.21x; 100 → 120 saves/s)"),
            "{}",
            saves.text
        );
        assert_eq!(saves.best.metric, "saves_per_second");
    }
}
