//! What `writebench trace` learned of how a program writes (docs/trace.md): per file it
//! wrote, how the file was made, written, synced and saved, as plain data; and what was
//! left out. Counted from the program's system calls, never timed for an Answer: a traced
//! call is slowed by the tracer.

use serde::{Deserialize, Serialize};

use plan::replay_changes::Change;

use super::{Summary, Tool};

pub const TRACE_SCHEMA: &str = "writebench.trace.v1";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TraceReport {
    pub schema: String,
    pub tool: Tool,
    /// The program and its arguments, as given (empty for `--from-log`).
    pub command: Vec<String>,
    /// The directory it ran in.
    pub directory: String,
    /// Where the calls came from: "strace 6.1", or "the strace log FILE".
    pub tracer: String,
    /// How the program ended ("exit status 0", "killed by SIGINT"), where it was run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<String>,
    /// From the first traced call to the last, under the tracer.
    pub seconds: f64,
    /// Calls read from the tracer's log (every call traced, not only writes).
    pub calls: u64,
    /// Every file the program wrote, most bytes first.
    pub files: Vec<FilePattern>,
    pub left_out: LeftOut,
    /// The program submitted I/O through io_uring, whose reads and writes no system-call
    /// tracer sees: what it wrote that way is not in `files`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_uring: Option<IoUringUse>,
    /// Files mapped shared and writable: stores through a mapping are no system call,
    /// so only their msync calls are seen.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mapped: Vec<Mapped>,
    /// sync(2) and syncfs(2) calls: they sync every file, so they are counted here and
    /// as a sync of each file that had unsynced writes.
    pub whole_syncs: u64,
    /// False when a signal stopped the trace: the files hold what was traced until then.
    pub complete: bool,
    /// "Your way": the traced calls made again on a path, timed (absent with --no-replay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayFigures>,
    /// The program's way and the others under simulated power loss (`--crash-check`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crash: Option<TraceCrash>,
}

/// The crash check of the program's way and of each other way (docs/trace.md, "Crash
/// check"): each judged by the program's own promises, what was durable after each of
/// its syncs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TraceCrash {
    /// The filesystem and mount options ("" for the defaults).
    pub fs: String,
    pub mount_options: String,
    /// The program's promises in the calls checked, and in all of its calls: a long
    /// program is checked on a prefix.
    pub promises: usize,
    pub promises_in_all: usize,
    /// The calls read were a prefix (`--size`): the program made more promises after.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub more: bool,
    /// The program's way first (`change` None), then the others as raced.
    pub ways: Vec<CrashedWay>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrashedWay {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<Change>,
    pub check: super::crash::CrashCheck,
}

/// The program's calls replayed at full speed in a scratch directory (docs/trace.md,
/// "Replay"): the program's own work between its calls left out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayFigures {
    /// The directory the scratch directory was made in, and its filesystem.
    pub on: String,
    pub fs_type: String,
    /// Timed runs (after one untimed warm-up).
    pub runs: usize,
    /// Files, threads and calls of one run, and what they write and commit.
    pub files: usize,
    pub threads: usize,
    pub calls: usize,
    pub bytes: u64,
    pub commits: u64,
    /// Only a prefix of the program's calls was replayed (`--size`).
    pub cut: bool,
    /// A run's time, and its bytes over it.
    pub seconds: Summary,
    pub bytes_per_second: Summary,
    /// Commits (durable syncs, O_SYNC/O_DSYNC writes) a second, where there were any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commits_per_second: Option<Summary>,
    /// One commit's time over every run: median and 99th percentile, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_p50: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_p99: Option<f64>,
    /// The calls kept the program's recorded pauses between them (`--with-gaps`); else
    /// they ran at full speed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub with_gaps: bool,
    /// The other ways raced against the program's, in alternating rounds, each against
    /// it by the Answer's test (docs/answer.md): same promise first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alternatives: Vec<Alternative>,
}

/// One other way to make the program's writes, raced against its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Alternative {
    pub change: Change,
    /// Keeps the program's promise (else: what it risks is said with it).
    pub same_promise: bool,
    /// Commits (durable syncs, O_SYNC/O_DSYNC writes) of one run: fewer for a different
    /// promise.
    pub commits: u64,
    /// A run's time.
    pub seconds: Summary,
    /// How many times faster than the program's way (its mean time over this one's),
    /// with the 95 % interval.
    pub factor: f64,
    pub low: f64,
    pub high: f64,
    pub shown: Shown,
}

/// What the race showed of an alternative against the program's way, at 95 % and the
/// equivalence margin (5 %).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shown {
    Faster,
    Slower,
    /// Within the margin either way.
    AsFast,
    /// Neither: more runs would tell.
    NotSettled,
}

/// How a file came to be, from its first open for writing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Made {
    /// Created: O_CREAT|O_EXCL, or O_CREAT and then seen empty (its size read as 0).
    New,
    /// O_TRUNC: whatever it held is gone.
    Truncated,
    /// Opened as it was, its size read (`size_at_open`).
    Existing,
    /// O_TMPFILE: a file without a name until it is linked.
    Unnamed,
    /// O_CREAT without O_EXCL and no size seen: new or existing, a tracer cannot tell.
    #[default]
    Unknown,
}

/// The write calls, by the system call that made them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteCall {
    Write,
    Pwrite,
    Writev,
    Pwritev,
    Pwritev2,
    CopyFileRange,
    Sendfile,
    Splice,
}

/// The sync calls that touched a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncCall {
    Fsync,
    Fdatasync,
    SyncFileRange,
    Msync,
    /// A write through a descriptor opened with O_SYNC, or pwritev2 with RWF_SYNC: the
    /// call returns once the data and metadata are durable.
    OSync,
    /// O_DSYNC, or RWF_DSYNC: the data and what reading it needs.
    ODsync,
    /// sync(2) or syncfs(2), with writes of this file not yet synced.
    Whole,
}

/// A spread of sizes (bytes, or calls): exact order statistics of every value.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub count: u64,
    pub min: u64,
    pub p10: u64,
    pub median: u64,
    pub p90: u64,
    pub max: u64,
}

/// One kind of write call to a file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WriteCalls {
    pub call: WriteCall,
    pub calls: u64,
    pub bytes: u64,
    /// Bytes a call wrote.
    pub sizes: Spread,
    /// For vectored calls: buffers a call (iovec entries).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffers: Option<Spread>,
    /// Calls with RWF_* flags (pwritev2), by flag.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<(String, u64)>,
}

/// Where the writes went, each write counted once, in this order of precedence.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Offsets {
    /// At the offset the previous write to this file started: the same bytes again.
    pub same_place: u64,
    /// At the file's end (or through O_APPEND): the file grows.
    pub append: u64,
    /// Where an earlier write ended, inside the file: a stream of overwrites.
    pub sequential: u64,
    /// Anywhere else.
    pub random: u64,
    /// Offset or size not known (a descriptor opened before the trace, say).
    pub unknown: u64,
}

/// One sync call's kind, how often it touched the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SyncCalls {
    pub call: SyncCall,
    pub calls: u64,
}

/// The bytes and write calls between two syncs of a file (and before its first): how
/// much a crash may lose, in the program's own terms.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cadence {
    pub bytes: Spread,
    pub writes: Spread,
    /// Written after the last sync and never synced.
    pub unsynced_bytes: u64,
}

/// fallocate(2) and a growing ftruncate(2) on a file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Preallocation {
    pub fallocate: u64,
    /// fallocate calls with FALLOC_FL_KEEP_SIZE: the size a reader sees does not grow.
    pub keep_size: u64,
    /// The largest range one call reserved, in bytes.
    pub largest: u64,
    /// ftruncate calls that made the file larger.
    pub grown_by_truncate: u64,
}

/// A save by rename: the file was written under another name, then renamed over this one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Rename {
    /// The name it was written under.
    pub from: String,
    /// Its data was synced before the rename (else a crash may leave the new name with
    /// nothing in it).
    pub synced_before: bool,
    /// Its directory was fsynced after the rename (else a crash may bring back the old
    /// file).
    pub directory_synced_after: bool,
    /// How many times it was saved this way.
    pub times: u64,
}

/// One file the program wrote.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FilePattern {
    /// Its last name (absolute).
    pub path: String,
    pub made: Made,
    /// Its size when first opened for writing, where read (fstat, a seek to its end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_at_open: Option<u64>,
    /// Flags of its opens for writing that shape how it is written: O_CREAT, O_EXCL,
    /// O_TRUNC, O_APPEND, O_DIRECT, O_SYNC, O_DSYNC, O_TMPFILE.
    pub open_flags: Vec<String>,
    /// Opens for writing.
    pub opens: u64,
    /// Bytes written, by every call.
    pub bytes: u64,
    /// Its size after the last write or truncate, as far as the calls show it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_size: Option<u64>,
    /// Every write call (all kinds): bytes a call.
    pub sizes: Spread,
    /// The calls by kind, the most used first.
    pub calls: Vec<WriteCalls>,
    pub offsets: Offsets,
    pub syncs: Vec<SyncCalls>,
    /// fsync calls of its directory after it was made or renamed into it.
    pub directory_syncs: u64,
    /// Absent when the file was never synced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cadence: Option<Cadence>,
    pub preallocation: Preallocation,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rename: Option<Rename>,
    /// Threads that wrote it, and the processes they belong to.
    pub threads: u64,
    pub processes: u64,
    /// Seconds from the trace's start to its first and last write.
    pub first_write: f64,
    pub last_write: f64,
    /// Seconds inside its write and sync calls, under the tracer (slower than without).
    pub seconds_writing: f64,
    pub seconds_syncing: f64,
    /// The file was removed by the program before it ended.
    pub removed: bool,
}

/// What the trace saw and left out of `files`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LeftOut {
    /// Regular files opened and never written (read, or opened for writing only).
    pub unwritten_files: u64,
    /// Pipes, sockets, terminals, /dev, /proc and /sys written to, and the standard
    /// output and error the program inherited from writebench.
    pub pseudo_files: u64,
    pub pseudo_bytes: u64,
    /// Writes to a descriptor the trace never saw opened or named.
    pub unnamed_writes: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IoUringUse {
    /// io_uring_setup calls (rings made).
    pub rings: u64,
    /// io_uring_enter calls: submissions and waits, whose I/O is not seen.
    pub enters: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Mapped {
    pub path: String,
    /// The largest mapping, in bytes.
    pub bytes: u64,
    pub msyncs: u64,
}
