//! What the trace knows of one file while it is read: its size as far as the calls
//! show it, where the last writes went, what is not yet synced, and the counts that
//! become its pattern (`result::trace::FilePattern`) at the end.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use result::trace::{
    Cadence, FilePattern, Made, Offsets, Preallocation, Rename, SyncCall, SyncCalls, WriteCall, WriteCalls,
};

use crate::spread::Counts;

/// The ends of this many streams are remembered: a write that starts where one ends
/// continues it (two threads each writing their half sequentially are two), however
/// many writes of the others came between; the stream used least recently is forgotten.
const STREAMS: usize = 64;

#[derive(Debug, Default)]
struct Kind {
    calls: u64,
    bytes: u64,
    sizes: Counts,
    buffers: Counts,
    vectored: bool,
    flags: BTreeMap<String, u64>,
}

/// One write call, as the fold saw it.
#[derive(Debug, Clone)]
pub struct Write {
    pub call: WriteCall,
    pub bytes: u64,
    /// Where it went, when known; None for an append whose file size is not known.
    pub offset: Option<u64>,
    /// Through O_APPEND (or RWF_APPEND): at the end, whatever the size.
    pub append: bool,
    /// Buffers of a vectored call.
    pub buffers: Option<u64>,
    pub flags: Vec<String>,
    pub tid: u32,
    pub time: f64,
    pub seconds: f64,
}

#[derive(Debug, Default)]
pub struct FileState {
    pub made: Made,
    pub size_at_open: Option<u64>,
    pub open_flags: BTreeSet<String>,
    pub opens: u64,
    /// Its size as far as the calls show it.
    pub size: Option<u64>,
    bytes: u64,
    sizes: Counts,
    kinds: BTreeMap<WriteCall, Kind>,
    offsets: Offsets,
    last_offset: Option<u64>,
    ends: VecDeque<u64>,
    syncs: BTreeMap<SyncCall, u64>,
    /// Bytes and write calls since its last durable sync.
    pub unsynced_bytes: u64,
    unsynced_writes: u64,
    cadence_bytes: Counts,
    cadence_writes: Counts,
    pub synced_once: bool,
    pub preallocation: Preallocation,
    pub rename: Option<Rename>,
    /// Made or renamed into its directory and that directory not fsynced since.
    pub awaiting_directory_sync: bool,
    pub directory_syncs: u64,
    pub tids: BTreeSet<u32>,
    first_write: Option<f64>,
    last_write: f64,
    seconds_writing: f64,
    seconds_syncing: f64,
    pub removed: bool,
}

impl FileState {
    /// A file first opened for writing with `flags`.
    pub fn opened(flags: &BTreeSet<String>) -> FileState {
        let has = |flag: &str| flags.contains(flag);
        let (made, size) = if has("O_TMPFILE") {
            (Made::Unnamed, Some(0))
        } else if has("O_TRUNC") {
            (Made::Truncated, Some(0))
        } else if has("O_CREAT") && has("O_EXCL") {
            (Made::New, Some(0))
        } else if has("O_CREAT") {
            (Made::Unknown, None)
        } else {
            (Made::Existing, None)
        };
        let size_at_open = size;
        FileState {
            made,
            size,
            size_at_open,
            open_flags: flags.clone(),
            opens: 1,
            awaiting_directory_sync: made != Made::Existing,
            ..FileState::default()
        }
    }

    /// A file written through a descriptor the program had before the trace began (a
    /// redirected output): never opened here, its size and offsets unknown.
    pub fn open_before() -> FileState {
        FileState { made: Made::Existing, ..FileState::default() }
    }

    /// Another open for writing of a file already known.
    pub fn reopened(&mut self, flags: &BTreeSet<String>) {
        self.opens += 1;
        self.open_flags.extend(flags.iter().cloned());
        if flags.contains("O_TRUNC") {
            self.size = Some(0);
        }
    }

    /// Its size read by the program (fstat, a seek to its end): what was unknown is
    /// known from here, and how it was made, if that was open.
    pub fn size_seen(&mut self, size: u64) {
        if self.size.is_none() {
            self.size = Some(size);
            if self.bytes == 0 {
                self.size_at_open = Some(size);
                if self.made == Made::Unknown {
                    self.made = if size == 0 { Made::New } else { Made::Existing };
                }
            }
        }
    }

    pub fn write(&mut self, write: Write) {
        let Write { call, bytes, offset, append, buffers, flags, tid, time, seconds } = write;
        let offset = if append { self.size } else { offset };
        let counted = &mut self.offsets;
        match offset {
            Some(at) if self.last_offset == Some(at) && bytes > 0 => counted.same_place += 1,
            _ if append => counted.append += 1,
            Some(at) if self.size.is_some_and(|size| at == size) => counted.append += 1,
            Some(at) if self.ends.contains(&at) => counted.sequential += 1,
            Some(_) if self.size.is_some() => counted.random += 1,
            _ => counted.unknown += 1,
        }
        if let Some(at) = offset {
            self.last_offset = Some(at);
            if let Some(continued) = self.ends.iter().position(|&end| end == at) {
                self.ends.remove(continued);
            } else if self.ends.len() == STREAMS {
                self.ends.pop_front();
            }
            self.ends.push_back(at + bytes);
            self.size = self.size.map(|size| size.max(at + bytes));
        } else {
            self.last_offset = None;
        }
        self.bytes += bytes;
        self.sizes.add(bytes);
        let kind = self.kinds.entry(call).or_default();
        kind.calls += 1;
        kind.bytes += bytes;
        kind.sizes.add(bytes);
        if let Some(buffers) = buffers {
            kind.vectored = true;
            kind.buffers.add(buffers);
        }
        for flag in flags {
            *kind.flags.entry(flag).or_default() += 1;
        }
        self.unsynced_bytes += bytes;
        self.unsynced_writes += 1;
        self.tids.insert(tid);
        self.first_write.get_or_insert(time);
        self.last_write = time;
        self.seconds_writing += seconds;
    }

    /// A sync call that made what was written durable (`durable`) or only started its
    /// writeback (sync_file_range).
    pub fn sync(&mut self, call: SyncCall, durable: bool, seconds: f64) {
        *self.syncs.entry(call).or_default() += 1;
        self.seconds_syncing += seconds;
        if !durable {
            return;
        }
        if self.unsynced_writes > 0 {
            self.cadence_bytes.add(self.unsynced_bytes);
            self.cadence_writes.add(self.unsynced_writes);
        }
        self.unsynced_bytes = 0;
        self.unsynced_writes = 0;
        self.synced_once = true;
    }

    /// Renamed from `from` over this name (or linked there, for an unnamed file).
    pub fn renamed(&mut self, from: &str) {
        let synced_before = self.synced_once && self.unsynced_writes == 0;
        let times = self.rename.as_ref().map_or(0, |r| r.times) + 1;
        self.rename = Some(Rename { from: from.to_string(), synced_before, directory_synced_after: false, times });
        self.awaiting_directory_sync = true;
    }

    /// Its directory was fsynced.
    pub fn directory_synced(&mut self) {
        if self.awaiting_directory_sync {
            self.awaiting_directory_sync = false;
            self.directory_syncs += 1;
            if let Some(rename) = &mut self.rename {
                rename.directory_synced_after = true;
            }
        }
    }

    pub fn written(&self) -> bool {
        self.bytes > 0 || self.kinds.values().any(|k| k.calls > 0) || self.preallocation.fallocate > 0
    }

    /// A file saved over this one by rename takes its place: the counts of both are
    /// the program's writes of this file's contents.
    pub fn absorb(&mut self, other: FileState) {
        let earlier = std::mem::take(self);
        *self = other;
        self.made = earlier.made;
        self.size_at_open = earlier.size_at_open;
        self.open_flags.extend(earlier.open_flags);
        self.opens += earlier.opens;
        self.bytes += earlier.bytes;
        self.sizes.absorb(earlier.sizes);
        for (call, kind) in earlier.kinds {
            let mine = self.kinds.entry(call).or_default();
            mine.calls += kind.calls;
            mine.bytes += kind.bytes;
            mine.sizes.absorb(kind.sizes);
            mine.buffers.absorb(kind.buffers);
            mine.vectored |= kind.vectored;
            for (flag, n) in kind.flags {
                *mine.flags.entry(flag).or_default() += n;
            }
        }
        let (mine, theirs) = (&mut self.offsets, earlier.offsets);
        mine.same_place += theirs.same_place;
        mine.append += theirs.append;
        mine.sequential += theirs.sequential;
        mine.random += theirs.random;
        mine.unknown += theirs.unknown;
        for (call, n) in earlier.syncs {
            *self.syncs.entry(call).or_default() += n;
        }
        self.cadence_bytes.absorb(earlier.cadence_bytes);
        self.cadence_writes.absorb(earlier.cadence_writes);
        let (mine, theirs) = (&mut self.preallocation, earlier.preallocation);
        mine.fallocate += theirs.fallocate;
        mine.keep_size += theirs.keep_size;
        mine.largest = mine.largest.max(theirs.largest);
        mine.grown_by_truncate += theirs.grown_by_truncate;
        if let (Some(mine), Some(theirs)) = (&mut self.rename, &earlier.rename) {
            mine.times += theirs.times;
        }
        self.directory_syncs += earlier.directory_syncs;
        self.tids.extend(earlier.tids);
        self.first_write = earlier.first_write.or(self.first_write);
        self.seconds_writing += earlier.seconds_writing;
        self.seconds_syncing += earlier.seconds_syncing;
    }

    /// The pattern, with times from `start` and threads grouped into processes by
    /// `process_of`.
    pub fn pattern(self, path: String, start: f64, process_of: impl Fn(u32) -> u32) -> FilePattern {
        let mut calls: Vec<WriteCalls> = self
            .kinds
            .into_iter()
            .map(|(call, kind)| WriteCalls {
                call,
                calls: kind.calls,
                bytes: kind.bytes,
                sizes: kind.sizes.spread(),
                buffers: kind.vectored.then(|| kind.buffers.spread()),
                flags: kind.flags.into_iter().collect(),
            })
            .collect();
        calls.sort_by(|a, b| b.calls.cmp(&a.calls).then(a.call.cmp(&b.call)));
        let syncs: Vec<SyncCalls> = self.syncs.into_iter().map(|(call, calls)| SyncCalls { call, calls }).collect();
        let cadence = self.synced_once.then(|| Cadence {
            bytes: self.cadence_bytes.spread(),
            writes: self.cadence_writes.spread(),
            unsynced_bytes: self.unsynced_bytes,
        });
        let processes: BTreeSet<u32> = self.tids.iter().map(|&tid| process_of(tid)).collect();
        FilePattern {
            path,
            made: self.made,
            size_at_open: self.size_at_open,
            open_flags: self.open_flags.into_iter().collect(),
            opens: self.opens,
            bytes: self.bytes,
            final_size: self.size,
            sizes: self.sizes.spread(),
            calls,
            offsets: self.offsets,
            syncs,
            directory_syncs: self.directory_syncs,
            cadence,
            preallocation: self.preallocation,
            rename: self.rename,
            threads: self.tids.len() as u64,
            processes: processes.len() as u64,
            first_write: self.first_write.map_or(0.0, |t| t - start),
            last_write: if self.first_write.is_some() { self.last_write - start } else { 0.0 },
            seconds_writing: self.seconds_writing,
            seconds_syncing: self.seconds_syncing,
            removed: self.removed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(list: &[&str]) -> BTreeSet<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn write(bytes: u64, offset: Option<u64>, append: bool) -> Write {
        Write {
            call: WriteCall::Pwrite,
            bytes,
            offset,
            append,
            buffers: None,
            flags: Vec::new(),
            tid: 1,
            time: 0.0,
            seconds: 0.0,
        }
    }

    #[test]
    fn offsets_are_told_apart() {
        let mut file = FileState::opened(&flags(&["O_CREAT", "O_TRUNC"]));
        assert_eq!(file.made, Made::Truncated);
        file.write(write(10, Some(0), false)); // at the end of an empty file
        file.write(write(10, Some(10), false)); // at the end again
        file.write(write(5, Some(10), false)); // where the last started: the same place
        file.write(write(5, Some(15), false)); // where one ended, inside: sequential
        file.write(write(1, Some(3), false)); // elsewhere
        for i in 0..100 {
            file.write(write(1, Some(1000 + i), false)); // another stream, long
        }
        file.write(write(1, Some(4), false)); // the stream of the write at 3, after all that
        file.write(write(7, None, true)); // O_APPEND
        let o = &file.offsets;
        assert_eq!((o.append, o.same_place, o.sequential, o.random, o.unknown), (102, 1, 2, 2, 0));
        assert_eq!(file.size, Some(1107));
        let mut unknown = FileState::opened(&flags(&["O_CREAT"]));
        unknown.write(write(4, Some(100), false));
        assert_eq!(unknown.offsets.unknown, 1, "no size known: an offset alone says nothing");
        unknown.size_seen(0);
        assert_eq!(unknown.made, Made::Unknown, "a size read after the first write is not the size at open");
    }

    #[test]
    fn the_cadence_counts_what_lay_between_durable_syncs() {
        let mut file = FileState::opened(&flags(&["O_CREAT", "O_APPEND"]));
        file.size_seen(0);
        assert_eq!(file.made, Made::New);
        for _ in 0..3 {
            file.write(write(300, None, true));
            file.sync(SyncCall::Fsync, true, 0.0);
        }
        file.sync(SyncCall::Fsync, true, 0.0); // a sync of nothing
        file.write(write(300, None, true));
        file.write(write(300, None, true));
        file.sync(SyncCall::SyncFileRange, false, 0.0);
        let pattern = file.pattern("/f".into(), 0.0, |tid| tid);
        let cadence = pattern.cadence.unwrap();
        assert_eq!((cadence.bytes.count, cadence.bytes.median, cadence.writes.max), (3, 300, 1));
        assert_eq!(cadence.unsynced_bytes, 600, "sync_file_range makes nothing durable");
        assert_eq!(
            pattern.syncs,
            [SyncCalls { call: SyncCall::Fsync, calls: 4 }, SyncCalls { call: SyncCall::SyncFileRange, calls: 1 }]
        );
        assert_eq!((pattern.offsets.append, pattern.bytes), (5, 1500));
    }

    #[test]
    fn a_save_by_rename_keeps_both_names_counts() {
        let mut target = FileState::opened(&flags(&["O_CREAT", "O_TRUNC"]));
        target.write(write(100, Some(0), false));
        let mut temporary = FileState::opened(&flags(&["O_CREAT", "O_EXCL"]));
        temporary.write(write(50, Some(0), false));
        temporary.sync(SyncCall::Fdatasync, true, 0.0);
        temporary.renamed("/d/f.tmp");
        target.absorb(temporary);
        assert_eq!(target.made, Made::Truncated, "how the file was first made stays");
        let rename = target.rename.clone().unwrap();
        assert!(rename.synced_before && !rename.directory_synced_after);
        target.directory_synced();
        assert!(target.rename.as_ref().unwrap().directory_synced_after);
        let pattern = target.pattern("/d/f".into(), 0.0, |tid| tid);
        assert_eq!((pattern.bytes, pattern.calls[0].calls, pattern.opens), (150, 2, 2));
    }
}
