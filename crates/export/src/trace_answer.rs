//! `writebench trace`'s Answer and race in words (docs/trace.md, "Alternatives"): the
//! program's way in a phrase with its replayed rate, each other way with its promise
//! (or what it risks) and what the race showed of it.

use plan::numbers::{factor, thousands, three_digits};
use plan::replay_changes::Change;
use plan::units::format_size;
use result::trace::{Alternative, FilePattern, Made, Shown, SyncCall, TraceReport};

use crate::trace_words::{call_name, change_words, plural, rate, sync_name};

/// The Answer in the program's terms (docs/trace.md): its way and its rate here; the
/// best way shown that keeps its promise (or why none is); the best that does not, with
/// what it risks. Nothing without a replay.
pub fn answer(report: &TraceReport) -> Vec<String> {
    let (Some(replay), Some(main)) = (&report.replay, report.files.first()) else { return Vec::new() };
    let more = match report.files.len() {
        1 => String::new(),
        n => format!(" (and {} more file{})", thousands(n as u64 - 1), plural(n as u64 - 1)),
    };
    let mut lines = vec![format!(
        "Your way: {}{more}: {}, on {} ({}).",
        what(main),
        rate(replay, false),
        replay.on,
        replay.fs_type
    )];
    let same: Vec<&Alternative> = replay.alternatives.iter().filter(|a| a.same_promise).collect();
    let faster = same.iter().filter(|a| a.shown == Shown::Faster).max_by(|a, b| a.low.total_cmp(&b.low));
    let open = same.iter().filter(|a| a.shown == Shown::NotSettled).max_by(|a, b| a.high.total_cmp(&b.high));
    let runs = replay.runs;
    lines.push(match (faster, open) {
        (Some(best), _) => format!("The same promise, faster: {}: {}.", change_words(best.change), shown(best, runs)),
        (None, Some(open)) => {
            format!("The same promise: none shown faster yet; {}: {}.", change_words(open.change), shown(open, runs))
        }
        (None, None) if same.is_empty() => "The same promise: no other way applies to these calls.".to_string(),
        (None, None) => {
            let names: Vec<String> = same.iter().map(|a| change_words(a.change)).collect();
            format!("The same promise: your way is as fast as any other tried ({}).", names.join("; "))
        }
    });
    // The least risky different promise shown faster: the grouped syncs before one at the end.
    if let Some(other) = replay.alternatives.iter().find(|a| !a.same_promise && a.shown == Shown::Faster) {
        let risk = risk(other.change).unwrap_or_default();
        lines.push(format!("A different promise: {}: {}; but {risk}.", change_words(other.change), shown(other, runs)));
    }
    lines.extend(report.crash.as_ref().and_then(crate::trace_crash::answer_line));
    lines
}

/// What the program does to its main file, in a phrase: "300 B appends to app.log, an
/// fsync after each".
fn what(file: &FilePattern) -> String {
    let name = file.path.rsplit('/').next().unwrap_or(&file.path);
    let size = if file.sizes.min == file.sizes.max {
        format_size(file.sizes.median)
    } else {
        format!("{} (median)", format_size(file.sizes.median))
    };
    let o = &file.offsets;
    let most = [o.append, o.sequential, o.same_place, o.random, o.unknown].into_iter().max().unwrap_or(0);
    let place = if most == o.append {
        format!("appends to {name}")
    } else if most == o.sequential {
        format!("writes in order into {name}")
    } else if most == o.same_place {
        format!("rewrites of one place of {name}")
    } else {
        format!("writes at scattered places of {name}")
    };
    let new = if matches!(file.made, Made::New | Made::Truncated) && o.append == most { ", a new file" } else { "" };
    let call = file.calls.first().map(|c| call_name(c.call)).unwrap_or("write");
    let sync = match (&file.cadence, file.syncs.iter().find(|s| s.call != SyncCall::SyncFileRange)) {
        (Some(_), Some(sync)) if sync.call == SyncCall::OSync => "each write durable (O_SYNC)".to_string(),
        (Some(_), Some(sync)) if sync.call == SyncCall::ODsync => "each write durable (O_DSYNC)".to_string(),
        (Some(cadence), Some(sync)) if cadence.writes.max == 1 => format!("an {} after each", sync_name(sync.call)),
        (Some(cadence), Some(sync)) if cadence.bytes.count == 1 && cadence.unsynced_bytes == 0 => {
            format!("one {} at the end", sync_name(sync.call))
        }
        (Some(cadence), Some(sync)) => {
            format!("an {} every {} writes (median)", sync_name(sync.call), thousands(cadence.writes.median))
        }
        _ => "never synced".to_string(),
    };
    let threads = if file.threads > 1 { format!(" by {} threads", file.threads) } else { String::new() };
    format!("{size} {place} ({call}){threads}{new}, {sync}")
}

/// What a change of promise risks, in words.
fn risk(change: Change) -> Option<String> {
    match change {
        Change::Group(n) => Some(format!("a crash may lose the last {} commits the program had made durable", n - 1)),
        Change::SyncAtEnd => Some("a crash before the end may lose everything it wrote".to_string()),
        _ => None,
    }
}

/// One alternative against the program's way.
pub fn alternative_line(alternative: &Alternative, runs: usize) -> String {
    let promise = match risk(alternative.change) {
        None => "the same promise".to_string(),
        Some(risk) => format!("a different promise: {risk}"),
    };
    format!("{} ({promise}): {}", change_words(alternative.change), shown(alternative, runs))
}

/// What the race showed of an alternative: "1.50x faster (1.40–1.60x)".
fn shown(alternative: &Alternative, runs: usize) -> String {
    let range = format!("{}–{}x", three_digits(alternative.low), three_digits(alternative.high));
    match alternative.shown {
        Shown::Faster => format!("{} faster ({range})", factor(alternative.factor)),
        Shown::Slower => format!("slower: {} ({range})", factor(alternative.factor)),
        Shown::AsFast => format!("as fast, within 5 % ({range})"),
        Shown::NotSettled => {
            format!("not settled: {range} (more runs would tell: --runs {})", (runs * 4).min(1000))
        }
    }
}
