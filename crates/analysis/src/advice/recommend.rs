//! The best strategy for each goal the result can answer, as a sentence to act on,
//! with its margin over the others and over the naive way (docs/answer.md).
//!
//! The fastest is the highest mean (bytes / mean time). The highest of several means is
//! biased upward by noise, and the fastest is often the most complex, so the one
//! recommended is the *simplest* of the candidates not shown slower than the fastest
//! (their factor's 95 % interval holds 1) and measured within the equivalence margin of
//! it, by one order ([`simplicity`]), and the fastest measured is named beside it with
//! the factor. Against another candidate a
//! margin is "faster" (the interval excludes 1), "tied" (the interval lies within the
//! equivalence margin, 5 % unless `--equivalence` says otherwise) or "undecided".
//!
//! A new file's goals ("fastest", "durable at the end", "many threads into one file")
//! rank what a program making the file pays: its preparation (an `ftruncate`, a
//! `fallocate`) with the writes, and the sync for the durable goal. An overwrite of a
//! fully written file answers none of them; it answers "rewriting a file in place".
//!
//! "Durable at the end" is any mode after which the whole file is durable: one sync at
//! the end, or syncs along the way (O_SYNC, O_DSYNC, every:N) should they be faster.
//!
//! The naive way is `write` (else `fwrite`) in 4 KiB calls into an empty file, with the
//! best's threads and durability where the run measured them, else one thread and a
//! mode whose figure means the same (page cache or one fsync at the end).

use super::commits::{commits, saves};
use super::figures::Figures;
use super::figures::{Measured, Metric, Side, Test, pooled_test, test};
use super::words::{
    certainty_words, gbps, gbps_change, interval, short, strategy, strategy_brief, tested, tested_flat,
};

use super::glance;
use super::raced::finalists;
use plan::catalog;
use plan::durability::{Commit, SyncCall};
use plan::{Case, Durability, FileState, Pages};
use result::goals::{self, AnsweredBy, Goal};
use result::{CaseResult, Recommendation, ResultFile};
use stats::significance::{Verdict, pooled_cv2};

/// Every thread of every MPI rank (`goals::writers`).
pub(super) fn writers(case: &CaseResult) -> u32 {
    goals::writers(&case.case)
}

/// Every goal of `goals` the result has a case for, in their order (for the Answer, the
/// rows of `result::goals::GOALS`); a goal the result has no case for is left out.
pub fn recommendations(result: &ResultFile, measured: &Measured, goals: &[Goal]) -> Vec<Recommendation> {
    // Without --drop-cache, a fully written file's pages are in memory when it is
    // rewritten: say so, since a program rewriting a cold file finds them on the device.
    let warm = result.options.drop_cache != Some(true);
    let (mut commits, mut saves) = (commits(result), saves(result));
    let mut answer = Vec::new();
    for goal in goals {
        match goal.answered_by {
            AnsweredBy::Throughput(_) => {
                answer.extend(throughput(measured, goal, finalists(result, goal.key, None).as_deref(), warm))
            }
            AnsweredBy::Commits { .. } => answer.extend(take(&mut commits, goal.key)),
            AnsweredBy::Saves => answer.extend(take(&mut saves, goal.key)),
        }
    }
    answer
}

/// The recommendations of `goal`, taken out of `all` (one per size of a latency goal).
fn take(all: &mut Vec<Recommendation>, goal: &str) -> Vec<Recommendation> {
    let (taken, rest) = std::mem::take(all).into_iter().partition(|r| r.goal == goal);
    *all = rest;
    taken
}

/// The order in which a programmer would rather write it, simplest first: native
/// before another runtime; fewer writers, then fewer files; an empty file before a
/// prepared one; `write`/`pwrite` before vectored calls, stdio, pwritev2's flags, a
/// mapping and io_uring; no O_DIRECT before O_DIRECT; one sync at the end before syncs
/// along the way, per-call flags and write-behind (docs/answer.md).
pub fn simplicity(case: &Case, writers: u32) -> (bool, u32, u32, u8, u8, bool, u8) {
    let state = match case.state {
        FileState::Empty => 0,
        FileState::Sparse => 1,
        FileState::Prealloc => 2,
        FileState::Overwrite => 3,
    };
    // The catalogue states each method's rank (`Method::simplicity`): a new method
    // ranks where its entry says, not behind every method named here.
    let method = catalog::find(&case.runtime, &case.method).or_else(|| catalog::by_name(&case.method));
    let method = method.map_or(u8::MAX, |m| m.simplicity);
    let commit = match case.durability.commit {
        Commit::None | Commit::End(_) => 0,
        Commit::Every(..) | Commit::OSync | Commit::ODsync => 1,
        Commit::RwfSync | Commit::RwfDsync => 2,
        Commit::WriteBehind(_) | Commit::Save => 3,
    };
    (case.runtime != plan::catalog::NATIVE, writers, case.files, state, method, case.durability.direct, commit)
}

/// The cases that compete for `goal`: those that answer it with a figure under its
/// metric; a buffered figure of an `end` case is its page-cache twin's strategy, once.
pub(super) fn candidates<'a>(measured: &Measured<'a>, goal: &Goal) -> Vec<&'a CaseResult> {
    let durable = goal.metric.without_preparation() == Metric::Durable;
    measured
        .cases
        .iter()
        .copied()
        .filter(|&c| goal.answers(&c.case) && goal.metric.summary(c).is_some())
        .filter(|&c| {
            durable
                || !matches!(c.case.durability.commit, Commit::End(_))
                || measured.twin(c, |d| d.durability.commit = Commit::None).is_none()
        })
        .collect()
}

fn throughput(measured: &Measured, goal: &Goal, finalists: Option<&[&str]>, warm: bool) -> Option<Recommendation> {
    let side = |case| Side::new(case, goal.metric);
    let durable = goal.metric.without_preparation() == Metric::Durable;
    let mut ranked = candidates(measured, goal);
    let every = ranked.clone();
    // A raced result's tests pool the noise over the goal's candidates, as the race did:
    // most of them stopped after two runs, where a case's own spread says almost
    // nothing (docs/racing.md).
    let times: Vec<Vec<f64>> = ranked.iter().filter_map(|&c| goal.metric.times(c)).collect();
    let pool = finalists.and_then(|_| pooled_cv2(times.iter().map(Vec::as_slice)));
    let test = |from, to| match pool {
        Some(pool) => pooled_test(from, to, pool),
        None => test(from, to),
    };
    ranked.retain(|c| finalists.is_none_or(|left| left.contains(&c.case.id.as_str())));
    ranked.sort_by(|a, b| side(b).mean().total_cmp(&side(a).mean()));
    let fastest = *ranked.first()?;
    let against: Vec<(&CaseResult, Option<Test>)> =
        ranked[1..].iter().map(|&c| (c, test(side(c), side(fastest)))).collect();
    // The contenders: the fastest itself, and every case shown at most the equivalence
    // margin slower than it (non-inferior: the upper end of its interval within 1 +
    // margin). Simplicity may cost at most the margin: a simpler case whose interval
    // reaches past it is not recommended, however close its mean, until more runs show
    // it within (docs/answer.md). Untested cases (one run) are no candidates.
    let margin = measured.margin;
    let contenders: Vec<&CaseResult> = std::iter::once(fastest)
        .chain(against.iter().filter(|(_, t)| t.is_some_and(|t| contends(&t, margin))).map(|(c, _)| *c))
        .collect();
    let chosen =
        *contenders.iter().min_by_key(|c| simplicity(&c.case, writers(c))).expect("the fastest is a contender");
    // A simpler case not shown slower that the rule kept out is named: the user sees why
    // it is not the one recommended, and that more runs could make it so.
    let passed_over = against
        .iter()
        .filter_map(|(c, t)| t.filter(|t| !t.significant() && !contends(t, margin)).map(|t| (*c, t)))
        .filter(|(c, _)| simplicity(&c.case, writers(c)) < simplicity(&chosen.case, writers(chosen)))
        .min_by_key(|(c, _)| simplicity(&c.case, writers(c)));
    let mut text = format!("{}: {}", strategy(&chosen.case, durable), figure_words(chosen, goal.metric));
    let action = |c: &CaseResult| short(&c.case);
    // How sure: the pick against every candidate of the goal, finalists, resting and
    // dropped alike, on their final runs, by the Answer's one rule (docs/answer.md).
    let certainty =
        glance::judged(&every, chosen, (|c| test(side(c), side(chosen)), pool), action, goal.metric, margin);
    if !std::ptr::eq(chosen, fastest) {
        text += &format!(
            "; the simplest of {} shown at most {:.0} % slower than the fastest measured, {} at {}",
            contenders.len(),
            margin * 100.0,
            fastest.case.id,
            gbps(side(fastest).mean()),
        );
    }
    text += &certainty_words(&certainty, goal.metric, side(chosen).mean());
    if let Some((simpler, t)) = passed_over {
        let percent = margin * 100.0;
        // The runner-up was just named, with its interval.
        let just_named = glance::named(&certainty).is_some_and(|other| other.case == simpler.case.id);
        text += &if just_named {
            format!("; it is simpler, but not shown within {percent:.0} % of the fastest")
        } else {
            format!(
                "; the simpler {} was not shown slower, nor within {percent:.0} % of the fastest (its time {:.2}x, \
                 {}): more runs would tell",
                simpler.case.id,
                t.factor.factor,
                interval(&t)
            )
        };
    }
    let naive = naive(measured, chosen, goal.metric);
    let naive_test = naive.filter(|&n| !std::ptr::eq(n, chosen)).and_then(|n| test(side(n), side(chosen)));
    let versus = |n: &CaseResult| gbps_change(Side::new(n, goal.metric).mean(), side(chosen).mean());
    text += &naive_words(naive.filter(|&n| !std::ptr::eq(n, chosen)).zip(naive_test), versus, measured.margin, durable);
    if naive.is_some_and(|n| std::ptr::eq(n, chosen)) {
        text += "; the naive way itself";
    }
    let mut caveats = Vec::new();
    if let Some(words) = writes_alone_words(chosen, goal.metric) {
        caveats.push(words);
    }
    if goal.key == "rewrite-in-place" && warm {
        let words = "pages still in memory (give --drop-cache to rewrite a file whose pages are not)";
        text += &format!("; {words}");
        caveats.push(words.to_string());
    }
    let runner_up = glance::named(&certainty).map(|other| glance::comparison(&chosen.case.id, other));
    let (tied, verdict) = (certainty.either_will_do(), certainty.name().to_string());
    // The first line has room for the action and the figure: "with O_DIRECT" says it. Its
    // figure is the one that ranked the pick, a new file's preparation counted (said
    // first, in the order a program makes the calls), with the goal's noise model.
    let said = match preparation(chosen, goal.metric) {
        Some(call) => format!("{call}, then {}", strategy_brief(&chosen.case, durable)),
        None => strategy_brief(&chosen.case, durable),
    };
    let mut glance = glance::glance(said, glance::shown_pooled(chosen, goal.metric, pool)?, certainty);
    glance.caveats = caveats;
    glance.naive_itself = naive.is_some_and(|n| std::ptr::eq(n, chosen));
    glance.gain = naive.zip(naive_test).map(|(n, t)| glance::alternative(&t, action(n)));
    Some(Recommendation {
        goal: goal.key.to_string(),
        text,
        best: side(chosen).figure()?,
        runner_up,
        naive: naive_test.map(|t| t.comparison()),
        tied,
        verdict: Some(verdict),
        fastest: (!std::ptr::eq(chosen, fastest)).then(|| side(fastest).figure()).flatten(),
        crash_checked: None,
        glance: Some(glance),
    })
}

/// The pick against the naive way, in its sentence: "; 3.73x faster than the naive way,
/// write in 4 KiB calls into an empty file (0.537 → 1.79 GB/s)"; nothing without one.
/// `rates` says the change from the naive way's figure to the pick's.
fn naive_words(
    naive: Option<(&CaseResult, Test)>,
    rates: impl Fn(&CaseResult) -> String,
    margin: f64,
    durable: bool,
) -> String {
    let Some((n, t)) = naive else { return String::new() };
    match t.verdict(margin) {
        Verdict::Faster => {
            format!("; {} faster than the naive way, {} ({})", tested(&t), strategy(&n.case, durable), rates(n))
        }
        Verdict::Slower => {
            format!("; {} slower than the naive way, {} ({})", tested(&t), strategy(&n.case, durable), rates(n))
        }
        Verdict::Tied => format!("; tied with the naive way, {} ({})", n.case.id, tested_flat(&t)),
        Verdict::Undecided => format!("; undecided against the naive way, {} ({})", n.case.id, tested_flat(&t)),
    }
}

/// The call that prepared a new file whose goal counts it ("fallocate the file to its
/// full size"), None where nothing is counted.
fn preparation(case: &CaseResult, metric: Metric) -> Option<&'static str> {
    if metric == metric.without_preparation() {
        return None;
    }
    match case.case.state {
        FileState::Sparse => Some("ftruncate the file to its full size"),
        FileState::Prealloc => Some("fallocate the file to its full size"),
        FileState::Empty | FileState::Overwrite => None,
    }
}

/// "the writes alone, without the fallocate: 9.93 GB/s": where a new file's goal counts
/// a prepared file's preparation in the figure, the writes' own figure beside it.
fn writes_alone_words(case: &CaseResult, metric: Metric) -> Option<String> {
    let call = preparation(case, metric)?.split(' ').next()?;
    let (counted, alone) =
        (gbps(Side::new(case, metric).mean()), gbps(Side::new(case, metric.without_preparation()).mean()));
    (counted != alone).then(|| format!("the writes alone, without the {call}: {alone}"))
}

/// "5.30 GB/s buffered (pwrite empty 1MiB t1 none)"; for a prepared file where the
/// metric counts its preparation, both figures: "4.10 GB/s buffered with its fallocate
/// (the writes alone: 6.00 GB/s) (pwrite prealloc 1MiB t1 none)". Means throughout:
/// the factors beside them are ratios of mean times.
fn figure_words(case: &CaseResult, metric: Metric) -> String {
    let kind = if metric.without_preparation() == Metric::Durable { "durable" } else { "buffered" };
    let counted = Side::new(case, metric).mean();
    let prepared = match case.case.state {
        FileState::Sparse => Some("ftruncate"),
        FileState::Prealloc => Some("fallocate"),
        FileState::Empty | FileState::Overwrite => None,
    };
    match prepared.filter(|_| metric != metric.without_preparation()) {
        Some(call) => format!(
            "{} {kind} with its {call} (the writes alone: {}) ({})",
            gbps(counted),
            gbps(Side::new(case, metric.without_preparation()).mean()),
            case.case.id
        ),
        None => format!("{} {kind} ({})", gbps(counted), case.case.id),
    }
}

/// A contender for the recommendation, from its test against the fastest (its mean time
/// over the fastest's): non-inferior, the upper end of that interval at most 1 + the
/// equivalence margin (docs/answer.md). The race drops by the same rule.
fn contends(test: &Test, margin: f64) -> bool {
    test.factor.non_inferior(margin)
}

/// The naive way for `best` (see the module doc), if the run measured it.
fn naive<'a>(measured: &Measured<'a>, best: &CaseResult, metric: Metric) -> Option<&'a CaseResult> {
    let own = Durability { direct: false, ..best.case.durability };
    let fallbacks: &[Durability] = match metric.without_preparation() {
        Metric::Buffered => &[Durability::None, Durability::End],
        _ => &[Durability::End, Durability::of(Commit::End(SyncCall::Fdatasync))],
    };
    let shapes = [(best.case.threads, best.case.files), (1, 1)];
    // A rewrite's naive way rewrites too.
    let state = if best.case.state == FileState::Overwrite { FileState::Overwrite } else { FileState::Empty };
    for method in ["write", "fwrite"] {
        for (threads, files) in shapes {
            for &durability in std::iter::once(&own).chain(fallbacks) {
                let found = measured.twin(best, |d| {
                    (d.method, d.state, d.chunk_bytes, d.iov, d.queue_depth) = (method.into(), state, 4096, 1, None);
                    (d.threads, d.files, d.durability) = (threads, files, durability);
                    // The naive way writes from an ordinary buffer, whatever the pick's.
                    d.pages = Pages::Ordinary;
                });
                if let Some(found) = found.filter(|c| metric.summary(c).is_some()) {
                    return Some(found);
                }
            }
        }
    }
    None
}

#[cfg(test)]
#[path = "recommend_tests.rs"]
mod tests;
