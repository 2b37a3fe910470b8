//! One entry of the crash table (docs/crash.md): record a workload on a filesystem with
//! its mount options, choose the crash states its log allows within the budget, check
//! each on the real filesystem, and count what was found.

use std::time::Instant;

use super::filesystems::CrashFs;
use super::record::{self, Recording};
use super::replay::Replayer;
use super::states;
use super::workloads::Workload;
use crate::lab::names::Names;
use crate::result::crash::CrashCheck;

/// How many broken promises an entry tells in words.
const EXAMPLES: usize = 3;

/// What a check needs besides the workload.
pub struct Budget {
    /// The most states checked for one entry.
    pub states: usize,
    pub seed: u64,
    /// Keep the log in words in the entry.
    pub show_log: bool,
}

/// Records and checks `workload` on `fs` mounted with `options`. `stop` is asked
/// between states (a signal came: Err).
pub fn check(
    fs: &CrashFs,
    options: &str,
    workload: &Workload,
    budget: &Budget,
    names: Names,
    stop: &dyn Fn() -> Option<String>,
) -> Result<CrashCheck, String> {
    let started = Instant::now();
    let mut entry = CrashCheck {
        fs: fs.name.to_string(),
        mount_options: options.to_string(),
        workload: workload.name.clone(),
        refused: None,
        writes: 0,
        flushes: 0,
        promises: 0,
        states: 0,
        repairs: 0,
        broken: 0,
        examples: Vec::new(),
        repair_example: None,
        seconds: 0.0,
        log: Vec::new(),
    };
    let recorded = match record::record(fs, options, workload, names)? {
        Recording::Refused(why) => {
            entry.refused = Some(why);
            return Ok(entry);
        }
        Recording::Done(recorded) => recorded,
    };
    let entries = &recorded.entries;
    entry.flushes = entries.iter().filter(|e| **e == super::recorder::Entry::Flush).count();
    entry.writes = entries.len() - entry.flushes;
    entry.promises = recorded.acks.iter().filter(|a| a.position > 0).count();
    if budget.show_log {
        entry.log = super::log_text::log_lines(entries, &recorded.acks);
    }
    let chosen = states::choose(entries, budget.states, budget.seed);
    let replayer = Replayer::new(fs, options, names);
    for state in &chosen {
        if let Some(why) = stop() {
            return Err(why);
        }
        let image = states::build(&recorded.base, entries, state);
        let outcome = replayer.check(&image, &recorded.acks, state.end)?;
        entry.states += 1;
        if let Some(repair) = outcome.repair {
            entry.repairs += 1;
            entry.repair_example.get_or_insert(repair);
        }
        if let Some(broken) = outcome.broken {
            entry.broken += 1;
            let example = format!("power lost {}: {broken}", states::describe(state, entries));
            if entry.examples.len() < EXAMPLES && !entry.examples.iter().any(|e| e.ends_with(&broken)) {
                entry.examples.push(example);
            }
        }
    }
    entry.seconds = started.elapsed().as_secs_f64();
    Ok(entry)
}
