//! A traced program's writes as a workload (docs/trace.md, "Replay"): the files it wrote,
//! how each stood before, and each thread's calls in the order they were made, so that
//! the calls can be made again, at full speed, in a directory of the user's choosing.
//!
//! Threads keep their own order. Between threads, a call that changes what a descriptor
//! or a name means (an open, a close, a rename, a truncate, a preallocation, an unlink)
//! is made in the order the trace saw it, after every earlier call on its descriptor;
//! and a write or sync waits for the last such call before it on its descriptor.
//! Writes and syncs of different threads otherwise run as they come: two threads that
//! wrote at once write at once.

use serde::{Deserialize, Serialize};

use crate::Pages;

impl Replay {
    /// The durable syncs among the calls (fsync, fdatasync): what `syncs` holds.
    pub fn durable_syncs(&self) -> u64 {
        let durable = |c: &&Call| matches!(c.op, Op::Sync { kind: SyncKind::Fsync | SyncKind::Fdatasync, .. });
        self.threads.iter().flatten().filter(durable).count() as u64
    }

    /// Every call in the trace's order, as (thread, index in the thread).
    pub fn in_order(&self) -> Vec<(usize, usize)> {
        let mut all: Vec<(u64, usize, usize)> = Vec::new();
        for (t, calls) in self.threads.iter().enumerate() {
            for (i, call) in calls.iter().enumerate() {
                all.push((call.order, t, i));
            }
        }
        all.sort_unstable();
        all.into_iter().map(|(_, t, i)| (t, i)).collect()
    }
}

/// One file of the program's, by index.
pub type FileId = u32;
/// One open of a file (a descriptor), by index: every open is a slot of its own.
pub type Slot = u32;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Replay {
    pub files: Vec<ReplayFile>,
    /// Each writing thread's calls, in its order; `Call::order` is the trace's order.
    pub threads: Vec<Vec<Call>>,
    /// Bytes the calls write.
    pub bytes: u64,
    /// Durable syncs among the calls (the program's commits).
    pub syncs: u64,
    /// Calls past the prefix asked for were left out.
    pub cut: bool,
    /// The pages of the buffer the writes are made from: ordinary, as the replay of the
    /// program's own way (its buffer's pages are not in a trace), or huge for the
    /// alternative that asks for them (`replay_changes::Change::HugePages`).
    #[serde(default, skip_serializing_if = "Pages::is_ordinary")]
    pub pages: Pages,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayFile {
    /// The program's own path, for words only: the replay writes `f<id>` in its directory.
    pub name: String,
    /// Bytes it held before the program opened it (0: absent or empty).
    pub before: u64,
}

/// A call and its place in the trace's order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Call {
    pub order: u64,
    /// When it was made, in seconds from the trace's first call (`--with-gaps`).
    pub at: f64,
    pub op: Op,
}

/// The write calls a replay makes, as the program made them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WriteKind {
    Write,
    Pwrite,
    Writev,
    Pwritev,
    Pwritev2,
}

/// The sync calls a replay makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SyncKind {
    Fsync,
    Fdatasync,
    /// Starts writeback; durable nothing.
    SyncFileRange,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Op {
    /// Open `file` as `slot` with the flags that shape writing (`libc::O_*`: O_CREAT,
    /// O_EXCL, O_TRUNC, O_APPEND, O_SYNC, O_DSYNC, O_DIRECT).
    Open {
        file: FileId,
        slot: Slot,
        flags: i32,
    },
    /// `bytes` in `buffers` buffers at `offset` (None: the descriptor's own offset).
    Write {
        slot: Slot,
        kind: WriteKind,
        bytes: u64,
        offset: Option<u64>,
        buffers: u32,
        rwf: i32,
    },
    Sync {
        slot: Slot,
        kind: SyncKind,
    },
    /// fsync of the directory the files are in.
    SyncDirectory,
    Allocate {
        slot: Slot,
        keep_size: bool,
        offset: u64,
        length: u64,
    },
    Truncate {
        slot: Slot,
        length: u64,
    },
    Rename {
        from: FileId,
        to: FileId,
    },
    Unlink {
        file: FileId,
    },
    Close {
        slot: Slot,
    },
}

impl Op {
    /// The descriptor it acts on.
    pub fn slot(&self) -> Option<Slot> {
        match *self {
            Op::Open { slot, .. }
            | Op::Write { slot, .. }
            | Op::Sync { slot, .. }
            | Op::Allocate { slot, .. }
            | Op::Truncate { slot, .. }
            | Op::Close { slot } => Some(slot),
            Op::SyncDirectory | Op::Rename { .. } | Op::Unlink { .. } => None,
        }
    }

    /// A call other threads' calls are ordered around (see the module's words).
    pub fn orders(&self) -> bool {
        !matches!(self, Op::Write { .. } | Op::Sync { .. })
    }
}
