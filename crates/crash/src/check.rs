//! One entry of the crash table (docs/crash.md): record a workload (or the user's
//! program) on a filesystem with its mount options, choose the crash states its log
//! allows within the budget, check each on the real filesystem, and count what was found.

use std::collections::HashSet;
use std::time::Instant;

use super::filesystems::CrashFs;
use super::findings::Findings;
use super::program::Verdict;
use super::promise::{Ack, Promise};
use super::record::{self, Recording};
use super::replay::{self, Judged, Outcome, Replayer};
use super::states::{self, CrashState};
use super::subject::Subject;
use lab::names::Names;
use result::crash::{CrashCheck, FindingKind, Found, StateSeen};

/// How many broken promises an entry tells in words.
const EXAMPLES: usize = 3;

/// What a check needs besides the workload.
pub struct Budget {
    /// The most states checked for one entry.
    pub states: usize,
    pub seed: u64,
    /// Keep the log in words in the entry.
    pub show_log: bool,
    /// How long the recording goes on after the workload or program ended, for what the
    /// kernel writes by itself (journal commits, writeback): `--linger`.
    pub linger: std::time::Duration,
    /// How fast the recorder answers: `--device`.
    pub pace: super::recorder::Pace,
}

/// Records and checks `subject` on `fs` mounted with `options`. `stop` is asked
/// between states (a signal came: Err).
pub fn check(
    fs: &CrashFs,
    options: &str,
    subject: &Subject,
    budget: &Budget,
    names: Names,
    stop: &dyn Fn() -> Option<String>,
) -> Result<CrashCheck, String> {
    let started = Instant::now();
    let mut entry = CrashCheck {
        fs: fs.name.to_string(),
        mount_options: options.to_string(),
        workload: subject.name().to_string(),
        ..CrashCheck::default()
    };
    if let Subject::Program(program) = subject {
        entry.command = Some(program.run.clone());
        entry.check_command = Some(program.check.clone());
    }
    let mut recorded = match record::record(fs, options, subject, names, budget.pace, budget.linger, stop)? {
        Recording::Refused(why) => {
            entry.refused = Some(why);
            return Ok(entry);
        }
        Recording::Done(recorded) => recorded,
    };
    let entries = &recorded.entries;
    entry.flushes = entries.iter().filter(|e| **e == super::recorder::Entry::Flush).count();
    entry.writes = entries.len() - entry.flushes;
    // A workload's promises made before the recording (position 0) hold in every state
    // and are not counted; every line a program said is a promise, even before any write.
    entry.promises = match subject {
        Subject::Workload(_) => recorded.acks.iter().filter(|a| a.position > 0).count(),
        Subject::Program(_) => recorded.acks.len(),
    };
    entry.linger_seconds = budget.linger.as_secs_f64();
    entry.device = budget.pace.name().to_string();
    entry.last_write_after_end = recorded.last_write_after_end;
    if let Some(ended) = &recorded.ended {
        entry.program_exit = Some(ended.status.clone());
        entry.program_stderr = Some(ended.stderr.clone());
    }
    // The user's program's promises are also crash points of their own: right after each.
    let said: Vec<usize> = match subject {
        Subject::Program(_) => recorded.acks.iter().map(|a| a.position).collect(),
        Subject::Workload(_) => Vec::new(),
    };
    let chosen = states::choose(entries, &said, budget.states, budget.seed);
    let replayer = Replayer::new(fs, options, names);
    if budget.show_log {
        let scratch = names.mount_root().join("debugger-commands");
        entry.log = super::log_text::named_log(fs, &recorded, &replayer.image, &scratch);
    }
    // Only the log reads the device as the recording ended: not held through the checks.
    drop(std::mem::take(&mut recorded.last));
    let promises_file = names.mount_root().join("promises");
    let mut findings = Findings::default();
    let mut broken_promises: HashSet<String> = HashSet::new();
    for state in &chosen {
        if let Some(why) = stop() {
            return Err(why);
        }
        let image = states::build(&recorded.base, entries, state);
        let words = states::describe(state, entries);
        let judge = |root: &std::path::Path| match subject {
            Subject::Workload(_) => Ok(replay::judge(&recorded.acks, state.end, root)),
            Subject::Program(program) => {
                let made = made_before(&recorded.acks, state);
                let hide = || vec![replayer.image.clone()];
                let verdict = program.judge(root, hide(), &made, &words, &promises_file)?;
                let mut judged = judged(verdict, made.last().copied());
                if judged.broken.is_some() {
                    let judge_up_to = |n: usize| program.judge(root, hide(), &made[..n], &words, &promises_file);
                    judged.promises = broken_since(&made, &broken_promises, &judge_up_to)?;
                }
                Ok(judged)
            }
        };
        let outcome = replayer.check(&image, &judge)?;
        entry.states += 1;
        tally(&mut entry, &mut findings, &mut broken_promises, &words, outcome);
    }
    entry.findings = findings.sorted();
    // In the order they were made, each once.
    for ack in &recorded.acks {
        let name = match (&ack.promise, subject) {
            (Promise::Said(line), Subject::Program(_)) => line.clone(),
            _ => ack.what.clone(),
        };
        if broken_promises.remove(&name) {
            entry.promises_broken.push(name);
        }
    }
    // The first state of each of the first findings, lost promises before repairs (whose
    // own words are `repair_example`), as the tables show them.
    let lost_first = entry.findings.iter().filter(|f| !f.pattern.starts_with("needed repair: "));
    entry.examples = lost_first.take(EXAMPLES).map(|f| f.first.clone()).collect();
    entry.seconds = started.elapsed().as_secs_f64();
    Ok(entry)
}

/// Counts what one state showed into `entry`: its repairs, unjudged and broken states,
/// the finding it belongs to, the promises it broke, and the state itself.
fn tally(
    entry: &mut CrashCheck,
    findings: &mut Findings,
    broken_promises: &mut HashSet<String>,
    words: &str,
    outcome: Outcome,
) {
    let found = if outcome.repair.is_some() || (outcome.broken.is_some() && outcome.corrupt) {
        Found::Corrupt
    } else if outcome.broken.is_some() {
        Found::Lost
    } else if outcome.failed.is_some() {
        Found::Unjudged
    } else {
        Found::Kept
    };
    let seen = StateSeen {
        state: words.to_string(),
        found,
        words: outcome.broken.clone().or_else(|| outcome.failed.clone()),
        repair: outcome.repair.clone(),
    };
    if let Some(repair) = outcome.repair {
        entry.repairs += 1;
        entry.repair_example.get_or_insert(repair.clone());
        findings.add(FindingKind::Corrupt, &format!("needed repair: {repair}"), || {
            format!("power lost {words}: the filesystem's checker found it in need of repair: {repair}")
        });
    }
    if let Some(failed) = outcome.failed {
        entry.checker_failed += 1;
        entry.checker_failure.get_or_insert(format!("power lost {words}: {failed}"));
    }
    if let Some(broken) = outcome.broken {
        entry.broken += 1;
        let kind = if outcome.corrupt { FindingKind::Corrupt } else { FindingKind::Lost };
        let key = outcome.key.as_deref().unwrap_or(&broken);
        findings.add(kind, key, || format!("power lost {words}: {broken}"));
        broken_promises.extend(outcome.promises);
    }
    entry.all_states.push(seen);
}

/// The lines the program said before the power went in `state`, in order: every one
/// read at a position up to the flush that ends its epoch (docs/crash.md, the model).
fn made_before<'a>(acks: &'a [Ack], state: &CrashState) -> Vec<&'a str> {
    acks.iter()
        .filter(|a| a.position <= state.end)
        .filter_map(|a| match &a.promise {
            Promise::Said(line) => Some(line.as_str()),
            _ => None,
        })
        .collect()
}

/// A user checker's verdict as the table counts it; a broken state's words name the
/// last promise made.
fn judged(verdict: Verdict, last: Option<&str>) -> Judged {
    let (words, corrupt) = match verdict {
        Verdict::Kept => return Judged::default(),
        Verdict::Failed(why) => return Judged { failed: Some(why), ..Judged::default() },
        Verdict::Broken(words) => (words, false),
        Verdict::Corrupt(words) => (words, true),
    };
    let broken = match last {
        Some(line) => format!("after \"{line}\", the checker said: {words}"),
        None => format!("before any promise, the checker said: {words}"),
    };
    Judged {
        broken: Some(broken),
        failed: None,
        corrupt,
        key: Some(words),
        promises: last.map(str::to_string).into_iter().collect(),
    }
}

/// The promises a state broke, from the last one made (which its checker found broken)
/// back to the first it breaks, found by asking the checker again with fewer promises
/// (a binary search: a checker that counts judges each promise with the ones before
/// it). Only where it can name a promise not yet known broken in another state.
fn broken_since(
    made: &[&str],
    known: &HashSet<String>,
    judge_up_to: &dyn Fn(usize) -> Result<Verdict, String>,
) -> Result<Vec<String>, String> {
    let Some((last, before)) = made.split_last() else { return Ok(Vec::new()) };
    if before.iter().all(|p| known.contains(*p)) {
        return Ok(vec![last.to_string()]);
    }
    // `made[hi]` is broken; those before `lo` are kept.
    let (mut lo, mut hi) = (0, before.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        match judge_up_to(mid + 1)? {
            Verdict::Broken(_) | Verdict::Corrupt(_) => hi = mid,
            // Kept, or it could not say: not counted broken.
            Verdict::Kept | Verdict::Failed(_) => lo = mid + 1,
        }
    }
    Ok(made[hi..].iter().map(|p| p.to_string()).collect())
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn the_promises_a_state_broke_are_found_back_to_the_first() {
        let made = ["commit 1", "commit 2", "commit 3", "commit 4"];
        let asked = Cell::new(0);
        // The repository holds one commit: commits 2 to 4 are lost.
        let judge = |n: usize| {
            asked.set(asked.get() + 1);
            Ok(if n >= 2 { Verdict::Broken("1 commit".into()) } else { Verdict::Kept })
        };
        let none = HashSet::new();
        assert_eq!(broken_since(&made, &none, &judge).unwrap(), ["commit 2", "commit 3", "commit 4"]);
        assert!(asked.get() <= 2, "a binary search: {} questions", asked.get());
        asked.set(0);
        let known: HashSet<String> = ["commit 1", "commit 2", "commit 3"].map(String::from).into();
        assert_eq!(broken_since(&made, &known, &judge).unwrap(), ["commit 4"]);
        assert_eq!(asked.get(), 0, "nothing new to learn");
        assert_eq!(broken_since(&[], &none, &judge).unwrap(), Vec::<String>::new());
    }
}
