//! The calls of a trace kept in order for a replay (`plan::replay`): what the fold
//! follows, written down as it goes, each file and each open given an index. Only the
//! regular files the program wrote are in it; a prefix of `limit` bytes is kept.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use plan::replay::{Call, FileId, Op, Replay, ReplayFile, Slot, SyncKind, WriteKind};
use result::trace::WriteCall;

/// The most calls a replay keeps, whatever `--size` allows: a program of 1-byte writes
/// would otherwise hold hundreds of millions (each call is about 48 bytes here).
pub const MAX_CALLS: u64 = 4_000_000;

#[derive(Debug, Default)]
pub struct Sequence {
    limit: Option<u64>,
    files: Vec<ReplayFile>,
    ids: HashMap<String, FileId>,
    slots: HashMap<(u32, i64), Slot>,
    next_slot: Slot,
    threads: BTreeMap<u32, Vec<Call>>,
    order: u64,
    bytes: u64,
    syncs: u64,
    cut: bool,
    /// When the call being read was made, from the trace's first (set by the fold).
    pub now: f64,
}

/// The open flags a replay makes again, from strace's names.
fn flags(names: &BTreeSet<String>) -> i32 {
    let table = [
        ("O_CREAT", libc::O_CREAT),
        ("O_EXCL", libc::O_EXCL),
        ("O_TRUNC", libc::O_TRUNC),
        ("O_APPEND", libc::O_APPEND),
        ("O_SYNC", libc::O_SYNC),
        ("O_DSYNC", libc::O_DSYNC),
        ("O_DIRECT", libc::O_DIRECT),
    ];
    table.iter().filter(|(name, _)| names.contains(*name)).fold(0, |all, (_, flag)| all | flag)
}

/// pwritev2's RWF_* flags a replay passes on.
pub fn rwf(names: &[String]) -> i32 {
    let table = [("RWF_DSYNC", libc::RWF_DSYNC), ("RWF_SYNC", libc::RWF_SYNC), ("RWF_APPEND", libc::RWF_APPEND)];
    table.iter().filter(|(name, _)| names.iter().any(|n| n == name)).fold(0, |all, (_, flag)| all | flag)
}

impl Sequence {
    /// A sequence that keeps the calls up to `limit` bytes written (all: None).
    pub fn new(limit: Option<u64>) -> Sequence {
        Sequence { limit, ..Sequence::default() }
    }

    fn push(&mut self, tid: u32, op: Op) {
        if self.order >= MAX_CALLS {
            self.cut = true;
        }
        if self.cut {
            return;
        }
        self.order += 1;
        let (order, at) = (self.order, self.now);
        self.threads.entry(tid).or_default().push(Call { order, at, op });
    }

    fn file(&mut self, path: &str) -> FileId {
        if let Some(&id) = self.ids.get(path) {
            return id;
        }
        let id = self.files.len() as FileId;
        self.files.push(ReplayFile { name: path.to_string(), before: 0 });
        self.ids.insert(path.to_string(), id);
        id
    }

    pub fn open(&mut self, tid: u32, key: (u32, i64), path: &str, names: &BTreeSet<String>) {
        let file = self.file(path);
        let slot = self.next_slot;
        self.next_slot += 1;
        self.slots.insert(key, slot);
        self.push(tid, Op::Open { file, slot, flags: flags(names) });
    }

    /// The slot of a descriptor, opened here if the program had it before the trace.
    fn slot(&mut self, tid: u32, key: (u32, i64), path: &str) -> Slot {
        match self.slots.get(&key) {
            Some(&slot) => slot,
            None => {
                self.open(tid, key, path, &BTreeSet::new());
                self.slots[&key]
            }
        }
    }

    /// A descriptor copied (dup): the copy is the same open.
    pub fn dup(&mut self, from: (u32, i64), to: (u32, i64)) {
        match self.slots.get(&from).copied() {
            Some(slot) => self.slots.insert(to, slot),
            None => self.slots.remove(&to),
        };
    }

    #[allow(clippy::too_many_arguments)]
    pub fn write(
        &mut self,
        tid: u32,
        key: (u32, i64),
        path: &str,
        call: WriteCall,
        bytes: u64,
        offset: Option<u64>,
        buffers: Option<u64>,
        rwf: i32,
    ) {
        if self.limit.is_some_and(|limit| self.bytes >= limit) {
            self.cut = true;
        }
        if self.cut {
            return;
        }
        // copy_file_range, sendfile and splice read another file: replayed as the write
        // of what they wrote.
        let kind = match call {
            WriteCall::Write | WriteCall::Sendfile | WriteCall::Splice => WriteKind::Write,
            WriteCall::Pwrite | WriteCall::CopyFileRange => WriteKind::Pwrite,
            WriteCall::Writev => WriteKind::Writev,
            WriteCall::Pwritev => WriteKind::Pwritev,
            WriteCall::Pwritev2 => WriteKind::Pwritev2,
        };
        let kind = match (kind, offset) {
            (WriteKind::Pwrite, None) => WriteKind::Write,
            (kind, _) => kind,
        };
        let slot = self.slot(tid, key, path);
        let buffers = buffers.unwrap_or(1).clamp(1, 1024) as u32;
        self.bytes += bytes;
        self.push(tid, Op::Write { slot, kind, bytes, offset, buffers, rwf });
    }

    pub fn sync(&mut self, tid: u32, key: (u32, i64), path: &str, kind: SyncKind) {
        let slot = self.slot(tid, key, path);
        if kind != SyncKind::SyncFileRange && !self.cut {
            self.syncs += 1;
        }
        self.push(tid, Op::Sync { slot, kind });
    }

    /// A write through O_SYNC or O_DSYNC: the write is the commit.
    pub fn synced_write(&mut self) {
        if !self.cut {
            self.syncs += 1;
        }
    }

    pub fn sync_directory(&mut self, tid: u32) {
        self.push(tid, Op::SyncDirectory);
    }

    pub fn allocate(&mut self, tid: u32, key: (u32, i64), path: &str, keep_size: bool, offset: u64, length: u64) {
        let slot = self.slot(tid, key, path);
        self.push(tid, Op::Allocate { slot, keep_size, offset, length });
    }

    pub fn truncate(&mut self, tid: u32, key: (u32, i64), path: &str, length: u64) {
        let slot = self.slot(tid, key, path);
        self.push(tid, Op::Truncate { slot, length });
    }

    /// `from` is now `to`; known only if the replay has `from`.
    pub fn rename(&mut self, tid: u32, from: &str, to: &str) {
        let Some(&from_id) = self.ids.get(from) else { return };
        let to_id = self.file(to);
        self.push(tid, Op::Rename { from: from_id, to: to_id });
    }

    pub fn unlink(&mut self, tid: u32, path: &str) {
        if let Some(&file) = self.ids.get(path) {
            self.push(tid, Op::Unlink { file });
        }
    }

    pub fn close(&mut self, tid: u32, key: (u32, i64)) {
        if let Some(slot) = self.slots.remove(&key) {
            // Another descriptor may share the open (a dup): it stays open until the
            // replay's end.
            if !self.slots.values().any(|&s| s == slot) {
                self.push(tid, Op::Close { slot });
            }
        }
    }

    /// The replay, each file's size before the program opened it from `before`.
    pub fn finish(mut self, before: impl Fn(&str) -> Option<u64>) -> Replay {
        for file in &mut self.files {
            file.before = before(&file.name).unwrap_or(0);
        }
        Replay {
            files: self.files,
            threads: self.threads.into_values().filter(|calls| !calls.is_empty()).collect(),
            bytes: self.bytes,
            syncs: self.syncs,
            cut: self.cut,
            pages: plan::Pages::Ordinary,
        }
    }
}
