//! The names and small forms `writebench trace`'s words share (`export::trace`, its
//! pattern; `export::trace_answer`, its Answer and race).

use plan::numbers::{gbps, per_second, seconds, three_digits};
use plan::replay_changes::{Change, LARGER};
use plan::units::format_size;
use result::Summary;
use result::trace::{ReplayFigures, SyncCall, WriteCall};

pub(crate) fn call_name(call: WriteCall) -> &'static str {
    match call {
        WriteCall::Write => "write",
        WriteCall::Pwrite => "pwrite",
        WriteCall::Writev => "writev",
        WriteCall::Pwritev => "pwritev",
        WriteCall::Pwritev2 => "pwritev2",
        WriteCall::CopyFileRange => "copy_file_range",
        WriteCall::Sendfile => "sendfile",
        WriteCall::Splice => "splice",
    }
}

pub(crate) fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

pub(crate) fn sync_name(call: SyncCall) -> &'static str {
    match call {
        SyncCall::Fsync => "fsync",
        SyncCall::Fdatasync => "fdatasync",
        SyncCall::SyncFileRange => "sync_file_range",
        SyncCall::Msync => "msync",
        SyncCall::OSync => "writes through O_SYNC (or RWF_SYNC)",
        SyncCall::ODsync => "writes through O_DSYNC (or RWF_DSYNC)",
        SyncCall::Whole => "sync or syncfs",
    }
}

/// "2,210 (2,150–2,270)": a summary's mean and its 95 % interval, in `unit`.
pub(crate) fn with_range(summary: &Summary, unit: fn(f64) -> String) -> String {
    match (summary.ci95_low, summary.ci95_high) {
        (Some(low), Some(high)) => format!("{} ({}–{})", unit(summary.mean), unit(low), unit(high)),
        _ => unit(summary.mean),
    }
}

/// From this many commits a run, a replay's figure is its commits a second.
pub(crate) const COMMITS: u64 = 10;

/// The replay's figure: a program that commits often (10 times a run or more) is read in
/// commits a second with its p99 (and, `detail`, the median commit and the bytes); one
/// that syncs once or a few times in bytes a second, the syncs inside its time (with its
/// interval, `detail`).
pub(crate) fn rate(replay: &ReplayFigures, detail: bool) -> String {
    match replay.commits_per_second.as_ref().filter(|_| replay.commits >= COMMITS) {
        Some(commits) => {
            let p99 = replay.commit_p99.map(|p| format!(", p99 {}", seconds(p))).unwrap_or_default();
            match (detail, replay.commit_p50) {
                (true, Some(p50)) => format!(
                    "{} commits/s, a commit {}{p99}; {}",
                    with_range(commits, per_second),
                    seconds(p50),
                    gbps(replay.bytes_per_second.mean)
                ),
                _ => format!("{} commits/s{p99}", with_range(commits, per_second)),
            }
        }
        None => {
            let bytes = &replay.bytes_per_second;
            match (detail, bytes.ci95_low, bytes.ci95_high) {
                (true, Some(low), Some(high)) => {
                    format!("{} ({}–{})", gbps(bytes.mean), three_digits(low / 1e9), three_digits(high / 1e9))
                }
                _ => gbps(bytes.mean),
            }
        }
    }
}

/// What a change does, in words.
pub fn change_words(change: Change) -> String {
    match change {
        Change::Fdatasync => "fdatasync instead of fsync".to_string(),
        Change::Odsync => "the file opened with O_DSYNC, no sync call after each write".to_string(),
        Change::LargerCalls => format!("the writes between two syncs in calls of up to {}", format_size(LARGER)),
        Change::Preallocate => "the bytes it appends reserved first (fallocate, FALLOC_FL_KEEP_SIZE)".to_string(),
        Change::HugePages => {
            "its O_DIRECT writes from a buffer in huge pages (2 MiB-aligned, MADV_HUGEPAGE), if its own is not"
                .to_string()
        }
        Change::Group(n) => format!("a sync after every {n}th of its syncs only"),
        Change::SyncAtEnd => "one sync at the end only".to_string(),
    }
}
