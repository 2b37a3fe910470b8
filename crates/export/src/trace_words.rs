//! The names and small forms `writebench trace`'s words share (`export::trace`, its
//! pattern; `export::trace_answer`, its Answer and race).

use result::Summary;
use result::trace::{SyncCall, WriteCall};

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
