//! `writebench trace --crash-check` in words (docs/trace.md, "Crash check"): each way of
//! making the program's calls, and what simulated power losses found of the program's
//! own promises.

use plan::numbers::thousands;
use result::trace::{CrashedWay, TraceCrash};

use crate::trace_words::{change_words, plural};

/// The check's lines: what was checked, then one line a way.
pub fn crash_lines(crash: &TraceCrash) -> Vec<String> {
    let options = if crash.mount_options.is_empty() { "defaults" } else { &crash.mount_options };
    let more = if crash.more { " or more" } else { "" };
    let of = if crash.promises < crash.promises_in_all || crash.more {
        let all = thousands(crash.promises_in_all as u64);
        format!("the program's first {} promises (of {all}{more})", crash.promises)
    } else {
        format!("the program's {} promise{}", crash.promises, plural(crash.promises as u64))
    };
    let mut lines = vec![format!(
        "Crash check on {} ({options}): {of}, what was durable after each of its syncs, read back after simulated \
         power losses in every way:",
        crash.fs
    )];
    for way in &crash.ways {
        let name = way.change.map_or("your way".to_string(), change_words);
        lines.push(format!("  {name}: {}.", found(way)));
    }
    lines
}

/// What the check found of one way: "32 states, every promise kept".
pub fn found(way: &CrashedWay) -> String {
    let check = &way.check;
    if let Some(why) = &check.refused {
        return format!("not checked: {why}");
    }
    let mut words = if check.broken == 0 {
        format!("{} states, every promise kept", check.states)
    } else {
        let example = check.examples.first().map(|e| format!(", e.g. {e}")).unwrap_or_default();
        format!("a promise broken in {} of {} states{example}", check.broken, check.states)
    };
    if check.repairs > 0 {
        words.push_str(&format!("; e2fsck found {} in need of repair", check.repairs));
    }
    if check.checker_failed > 0 {
        words.push_str(&format!("; {} states could not be judged", check.checker_failed));
    }
    words
}

/// The Answer's line of the check: whether the program's way keeps its own promises,
/// whether every way said to keep them did, and what the others lost.
pub fn answer_line(crash: &TraceCrash) -> Option<String> {
    let (yours, others) = crash.ways.split_first()?;
    let broke = |way: &CrashedWay| format!("{} of {} states", way.check.broken, way.check.states);
    let on = format!("Crash-checked on {}", crash.fs);
    if yours.check.broken > 0 {
        return Some(format!("{on}: your way broke its own promises in {}: {}.", broke(yours), found(yours)));
    }
    let same_promise = |way: &&CrashedWay| way.change.is_some_and(|c| c.same_promise());
    if let Some(way) = others.iter().filter(same_promise).find(|w| w.check.broken > 0) {
        let name = way.change.map(change_words).unwrap_or_default();
        return Some(format!(
            "Caution: {name} broke a promise your way kept, in {}: not the same promise on {} here.",
            broke(way),
            crash.fs
        ));
    }
    let same = others.iter().filter(same_promise).count();
    let mut line = match same {
        0 => format!("{on}: your way kept every promise ({} states)", yours.check.states),
        n => format!(
            "{on}: your way and the {n} other way{} of the same promise kept every promise ({} states each)",
            plural(n as u64),
            yours.check.states
        ),
    };
    let lost: Vec<String> = others
        .iter()
        .filter(|w| !same_promise(w) && w.check.broken > 0)
        .map(|w| format!("{} lost some in {}", w.change.map(change_words).unwrap_or_default(), broke(w)))
        .collect();
    if !lost.is_empty() {
        line.push_str(&format!("; {}", lost.join(", ")));
    }
    Some(line + ".")
}

#[cfg(test)]
mod tests {
    use plan::replay_changes::Change;
    use result::crash::CrashCheck;

    use super::*;

    fn way(change: Option<Change>, states: usize, broken: usize) -> CrashedWay {
        let examples =
            if broken > 0 { vec!["power lost before the first flush: app.log holds 0 of 900".into()] } else { vec![] };
        CrashedWay { change, check: CrashCheck { states, broken, examples, ..CrashCheck::default() } }
    }

    fn crash(ways: Vec<CrashedWay>) -> TraceCrash {
        TraceCrash {
            fs: "ext4".into(),
            mount_options: String::new(),
            promises: 64,
            promises_in_all: 500,
            more: false,
            ways,
        }
    }

    #[test]
    fn the_answer_says_what_kept_and_what_lost() {
        let kept = crash(vec![
            way(None, 32, 0),
            way(Some(Change::Fdatasync), 32, 0),
            way(Some(Change::Group(8)), 32, 31),
            way(Some(Change::SyncAtEnd), 7, 6),
        ]);
        assert_eq!(
            answer_line(&kept).unwrap(),
            "Crash-checked on ext4: your way and the 1 other way of the same promise kept every promise (32 states \
             each); a sync after every 8th of its syncs only lost some in 31 of 32 states, one sync at the end only \
             lost some in 6 of 7 states."
        );
        let lines = crash_lines(&kept);
        assert!(lines[0].contains("the program's first 64 promises (of 500)"), "{}", lines[0]);
        assert_eq!(lines[1], "  your way: 32 states, every promise kept.");
        assert!(lines[3].starts_with(
            "  a sync after every 8th of its syncs only: a promise broken in 31 of 32 states, e.g. power lost"
        ));
    }

    #[test]
    fn a_broken_promise_of_the_programs_own_or_of_a_same_promise_way_comes_first() {
        let own = crash(vec![way(None, 32, 3), way(Some(Change::Fdatasync), 32, 3)]);
        assert!(
            answer_line(&own)
                .unwrap()
                .starts_with("Crash-checked on ext4: your way broke its own promises in 3 of 32 states")
        );
        let other = crash(vec![way(None, 32, 0), way(Some(Change::Odsync), 32, 2)]);
        assert!(answer_line(&other).unwrap().starts_with("Caution: the file opened with O_DSYNC"));
        assert_eq!(
            answer_line(&crash(vec![way(None, 5, 0)])).unwrap(),
            "Crash-checked on ext4: your way kept every promise (5 states)."
        );
        assert_eq!(answer_line(&crash(vec![])), None);
    }
}
