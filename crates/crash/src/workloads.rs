//! The workloads `writebench crash` records (docs/crash.md): each makes the calls of one
//! durability mode of `run`, one save pattern of `latency` or one kind of small commit,
//! on stamped data, and notes the recorder's position when each call that makes a
//! promise returns. The run modes are driven by the same `Durability` as `run` (its open
//! flags, `RWF_*` flags, sync every N calls and write-behind through `measure`'s
//! `Pacing`), and the saves by `measure`'s `Saver`: what is checked is what is measured.
//!
//! Every file a workload writes to exists, with its name made durable, before recording
//! begins: a run mode's promise is about its data (a new file's name needs a directory
//! fsync, which the save patterns make and are checked on).

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::promise::{Ack, NEW, OLD, OTHER, Piece, Promise, SAVED, Version};
use error::CallError;
use measure::durability::{Pacing, sync_fd};
use measure::save::Saver;
use plan::durability::{Durability, SyncCall, parse_mode};
use plan::latency::Pattern;

/// Where a workload's writes go in its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// One after the other from offset 0, as `run` writes a file and a log appends.
    Append,
    /// Every write over the same first bytes, as `latency`'s `overwrite0` commits.
    Offset0,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `count` writes of `chunk` bytes under a durability mode of `run`.
    Writes { mode: Durability, chunk: u64, count: u32, place: Place, io_uring: bool, atomic: bool },
    /// Saves of a whole file, then an fsync of another file of the same filesystem (the
    /// next durable write a program makes, which commits the filesystem's journal).
    Saves { pattern: Pattern },
}

/// A workload: its name, as `run` and `latency` name the mode or pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workload {
    pub name: String,
    pub kind: Kind,
}

const RUN_MODES: [&str; 9] =
    ["end", "end-fdatasync", "every:4", "osync", "odsync", "rwf-sync", "rwf-dsync", "direct+end", "writebehind:64KiB"];
const COMMITS: [&str; 4] =
    ["append+odsync", "append+every-fdatasync:1", "overwrite0+odsync", "overwrite0+every-fdatasync:1"];
const ATOMIC: &str = "pwritev2-atomic";
/// Run modes write 256 KiB in 16 writes; commits are 24 records of 4 KiB.
const RUN_CHUNK: u64 = 16 << 10;
const RUN_WRITES: u32 = 16;
const RECORD: u64 = 4 << 10;
const RECORDS: u32 = 24;
const SAVES: u32 = 3;
const SAVE_BYTES: u64 = 12 << 10;
const OLD_BYTES: u64 = 8 << 10;

/// Every workload, in the order the table shows them.
pub fn all() -> Vec<Workload> {
    let mut names: Vec<&str> = RUN_MODES.to_vec();
    names.push("io_uring+every:4");
    names.extend(["replace", "replace-tmpfile", "replace-unsafe"]);
    names.extend(COMMITS);
    names.push(ATOMIC);
    names.into_iter().map(|name| by_name(name).expect("a workload of the default list")).collect()
}

/// The workload of `name`: a durable mode of `run` (`end`, `every:16`, `direct+odsync`,
/// `writebehind:1MiB`), `io_uring+every:N`, a save pattern of `latency`, a commit
/// `append+MODE` or `overwrite0+MODE` (the names `plan::crash::workload_of` gives a
/// case), or `pwritev2-atomic`.
pub fn by_name(name: &str) -> Option<Workload> {
    let durable = |mode: Durability| mode.syncs() && mode.every().is_none_or(|(n, _)| n > 0);
    // At least two syncs of every:N: one along the way, one of the last calls.
    let count = |mode: Durability, least: u32| mode.every().map_or(least, |(n, _)| (2 * n).clamp(least, 256));
    let kind = if let Some((pattern, mode)) = name.split_once('+').filter(|(p, _)| ["append", "overwrite0"].contains(p))
    {
        let mode = parse_mode(mode).ok().filter(|m| durable(*m))?;
        let place = if pattern == "append" { Place::Append } else { Place::Offset0 };
        Kind::Writes { mode, chunk: RECORD, count: count(mode, RECORDS), place, io_uring: false, atomic: false }
    } else if let Some(mode) = name.strip_prefix("io_uring+") {
        let mode = parse_mode(mode).ok().filter(|m| m.every().is_some() && !m.direct)?;
        let count = count(mode, RUN_WRITES);
        Kind::Writes { mode, chunk: RUN_CHUNK, count, place: Place::Append, io_uring: true, atomic: false }
    } else if let Some(pattern) = name.parse::<Pattern>().ok().filter(|p| p.is_save()) {
        Kind::Saves { pattern }
    } else if name == ATOMIC {
        let mode = parse_mode("direct+rwf-dsync").expect("a mode of run");
        Kind::Writes { mode, chunk: RECORD, count: 8, place: Place::Append, io_uring: false, atomic: true }
    } else {
        let mode = parse_mode(name).ok().filter(|m| durable(*m))?;
        let count = count(mode, RUN_WRITES);
        Kind::Writes { mode, chunk: RUN_CHUNK, count, place: Place::Append, io_uring: false, atomic: false }
    };
    Some(Workload { name: name.to_string(), kind })
}

pub fn names() -> Vec<String> {
    all().into_iter().map(|w| w.name).collect()
}

/// The file a workload's promises are about.
pub fn file_of(workload: &Workload) -> &'static str {
    match workload.kind {
        Kind::Writes { place: Place::Append, chunk: RUN_CHUNK, atomic: false, .. } => "data",
        Kind::Writes { .. } => "log",
        Kind::Saves { .. } => "settings.json",
    }
}

fn io_error(what: &str, error: io::Error) -> String {
    format!("{what}: {}", error::plain(&error))
}

fn call_error(error: CallError) -> String {
    error.to_string()
}

fn open_dir(dir: &Path) -> Result<File, String> {
    File::open(dir).map_err(|e| io_error(&format!("open {}", dir.display()), e))
}

/// Writes `data` to a new file `name` in `dir` and makes it and its name durable.
fn durable_file(dir: &Path, name: &str, data: &[u8]) -> Result<(), String> {
    let path = dir.join(name);
    std::fs::write(&path, data).map_err(|e| io_error(&format!("write {}", path.display()), e))?;
    File::open(&path).and_then(|f| f.sync_all()).map_err(|e| io_error(&format!("fsync {}", path.display()), e))?;
    open_dir(dir)?.sync_all().map_err(|e| io_error("fsync of the directory", e))
}

/// Why `workload` cannot run in `dir`, if it cannot (atomic writes the filesystem does
/// not offer there).
pub fn refusal(workload: &Workload, dir: &Path) -> Option<String> {
    let Kind::Writes { atomic: true, chunk, .. } = workload.kind else { return None };
    let probe = dir.join("atomic-probe");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(&probe)
        .ok();
    let answer = file.as_ref().and_then(|f| context::features::atomic_write(f.as_raw_fd()));
    let _ = std::fs::remove_file(&probe);
    match answer {
        Some(units) if units.supported && u64::from(units.unit_max) >= chunk && u64::from(units.unit_min) <= chunk => {
            None
        }
        Some(units) if units.supported => Some(format!(
            "atomic writes of {} bytes are outside the filesystem's units ({}–{} bytes)",
            chunk, units.unit_min, units.unit_max
        )),
        _ => Some("not offered here (statx reports no atomic write unit for this filesystem on this device)".into()),
    }
}

/// What exists before recording begins: the files the workload writes to, with their
/// names durable.
pub fn setup(workload: &Workload, dir: &Path) -> Result<(), String> {
    match workload.kind {
        Kind::Writes { place: Place::Offset0, chunk, .. } => {
            durable_file(dir, file_of(workload), &Piece { tag: OLD, write: 1, offset: 0, len: chunk }.bytes())
        }
        Kind::Writes { .. } => durable_file(dir, file_of(workload), &[]),
        Kind::Saves { .. } => {
            let old = Piece { tag: OLD, write: 1, offset: 0, len: OLD_BYTES };
            durable_file(dir, file_of(workload), &old.bytes())?;
            durable_file(dir, "other", &[])
        }
    }
}

/// Runs `workload` in `dir`; `position` reads the recorder's position. The promises, each
/// with the position at which the call that made it returned.
pub fn run(workload: &Workload, dir: &Path, position: &dyn Fn() -> usize) -> Result<Vec<Ack>, String> {
    match workload.kind {
        Kind::Writes { mode, chunk, count, place, io_uring, atomic } => {
            let spec = Writes { mode, chunk, count, place, file: file_of(workload) };
            if io_uring { spec.run_io_uring(dir, position) } else { spec.run(dir, position, atomic) }
        }
        Kind::Saves { pattern } => saves(pattern, dir, position),
    }
}

struct Writes {
    mode: Durability,
    chunk: u64,
    count: u32,
    place: Place,
    file: &'static str,
}

impl Writes {
    fn offset(&self, write: u32) -> u64 {
        match self.place {
            Place::Append => u64::from(write - 1) * self.chunk,
            Place::Offset0 => 0,
        }
    }

    fn piece(&self, write: u32) -> Piece {
        Piece { tag: NEW, write, offset: self.offset(write), len: self.chunk }
    }

    /// What is promised once write `done` is durable: every write so far is there (an
    /// append), or the record is write `done`'s or a later one's (an overwrite).
    fn promise(&self, done: u32) -> Promise {
        let file = self.file.to_string();
        match self.place {
            Place::Append => Promise::Holds { file, pieces: (1..=done).map(|n| self.piece(n)).collect() },
            Place::Offset0 => {
                let record = |n: u32| Version { name: format!("write {n}'s record"), pieces: vec![self.piece(n)] };
                let old = Version {
                    name: "the record from before".into(),
                    pieces: vec![Piece { tag: OLD, write: 1, offset: 0, len: self.chunk }],
                };
                let older = std::iter::once(old).chain((1..done).map(record)).collect();
                Promise::OneOf { file, versions: (done..=self.count).map(record).collect(), older }
            }
        }
    }

    fn open(&self, dir: &Path, flags: libc::c_int) -> Result<File, String> {
        let path = dir.join(self.file);
        std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(flags)
            .open(&path)
            .map_err(|e| io_error(&format!("open {} ({})", path.display(), self.mode.name()), e))
    }

    /// The data of write `n` in memory aligned for O_DIRECT.
    fn buffer(&self, n: u32, memory: &mut Vec<u8>) -> std::ops::Range<usize> {
        let bytes = self.piece(n).bytes();
        memory.clear();
        memory.resize(bytes.len() + 4096, 0);
        let start = memory.as_ptr().align_offset(4096);
        memory[start..start + bytes.len()].copy_from_slice(&bytes);
        start..start + bytes.len()
    }

    fn run(&self, dir: &Path, position: &dyn Fn() -> usize, atomic: bool) -> Result<Vec<Ack>, String> {
        let file = self.open(dir, self.mode.open_flags())?;
        let fd = file.as_raw_fd();
        let rwf = self.mode.rwf_flags() | if atomic { libc::RWF_ATOMIC } else { 0 };
        let per_write = self.mode.open_flags() & (libc::O_SYNC | libc::O_DSYNC) != 0 || rwf != 0;
        let pacing = Pacing::of(self.mode, 1, 1);
        let mut pacer = pacing.pacer();
        let mut acks = Vec::new();
        let mut memory = Vec::new();
        for n in 1..=self.count {
            let range = self.buffer(n, &mut memory);
            pwritev2(fd, &memory[range], self.offset(n), rwf)
                .map_err(|e| io_error(&format!("write {n} ({})", self.mode.name()), e))?;
            if per_write {
                let what = format!("write {n} of {} ({}) returned", self.count, self.mode.name());
                acks.push(Ack { position: position(), what, promise: self.promise(n) });
            }
            pacer.after_write(fd, self.offset(n) + self.chunk).map_err(call_error)?;
            if let Some((_, call)) = self.mode.every().filter(|(every, _)| n % every == 0) {
                let what = format!("the {} after write {n} returned", call.name());
                acks.push(Ack { position: position(), what, promise: self.promise(n) });
            }
        }
        if self.mode.every().is_some_and(|(every, _)| self.count % every != 0) {
            pacer.finish(fd).map_err(call_error)?;
            acks.push(Ack {
                position: position(),
                what: "the last sync returned".into(),
                promise: self.promise(self.count),
            });
        }
        if let Some(call) = self.mode.end_sync() {
            sync_fd(call, fd).map_err(call_error)?;
            let what = format!("the {} at the end returned", call.name());
            acks.push(Ack { position: position(), what, promise: self.promise(self.count) });
        }
        Ok(acks)
    }

    /// Writes through io_uring, every N-th linked (`IOSQE_IO_LINK`) to an
    /// `IORING_OP_FSYNC`, as `run`'s io_uring methods sync under `every:N`.
    fn run_io_uring(&self, dir: &Path, position: &dyn Fn() -> usize) -> Result<Vec<Ack>, String> {
        use io_uring::{IoUring, opcode, squeue, types};
        let (every, _) = self.mode.every().ok_or("io_uring's workload syncs every N writes")?;
        let file = self.open(dir, 0)?;
        let fd = types::Fd(file.as_raw_fd());
        let mut ring = IoUring::new(4).map_err(|e| io_error("io_uring_setup", e))?;
        let mut acks = Vec::new();
        let mut memory = Vec::new();
        for n in 1..=self.count {
            let range = self.buffer(n, &mut memory);
            let data = &memory[range];
            let linked = n % every == 0;
            let write = opcode::Write::new(fd, data.as_ptr(), data.len() as u32)
                .offset(self.offset(n))
                .build()
                .flags(if linked { squeue::Flags::IO_LINK } else { squeue::Flags::empty() })
                .user_data(u64::from(n));
            let fsync = opcode::Fsync::new(fd).build().user_data(0);
            // SAFETY: `data` and the ring outlive the requests: each is waited for below.
            unsafe {
                ring.submission().push(&write).map_err(|_| "io_uring: submission queue full".to_string())?;
                if linked {
                    ring.submission().push(&fsync).map_err(|_| "io_uring: submission queue full".to_string())?;
                }
            }
            let wanted = if linked { 2 } else { 1 };
            ring.submit_and_wait(wanted).map_err(|e| io_error("io_uring_enter", e))?;
            for cqe in ring.completion() {
                let what = if cqe.user_data() == 0 { "the linked fsync".to_string() } else { format!("write {n}") };
                if cqe.result() < 0 {
                    return Err(io_error(&what, io::Error::from_raw_os_error(-cqe.result())));
                }
                if cqe.user_data() != 0 && cqe.result() as u64 != self.chunk {
                    return Err(format!("{what} wrote {} of {} bytes", cqe.result(), self.chunk));
                }
            }
            if linked {
                let what = format!("the fsync linked to write {n} completed");
                acks.push(Ack { position: position(), what, promise: self.promise(n) });
            }
        }
        Ok(acks)
    }
}

fn pwritev2(fd: RawFd, data: &[u8], offset: u64, flags: libc::c_int) -> io::Result<()> {
    let iov = libc::iovec { iov_base: data.as_ptr() as *mut libc::c_void, iov_len: data.len() };
    // SAFETY: one iovec over `data`, on a descriptor the caller keeps open.
    let written = error::retry_eintr(|| unsafe { libc::pwritev2(fd, &iov, 1, offset as i64, flags) as isize })?;
    if written != data.len() {
        return Err(io::Error::other(format!("wrote {written} of {} bytes", data.len())));
    }
    Ok(())
}

/// `SAVES` saves of `settings.json` with `pattern`, then an fsync of `other`.
fn saves(pattern: Pattern, dir: &Path, position: &dyn Fn() -> usize) -> Result<Vec<Ack>, String> {
    let file = "settings.json";
    let directory = open_dir(dir)?;
    let saver = Saver::new(directory.as_raw_fd(), pattern, file, "settings.json.tmp")
        .map_err(|e| io_error("the save's names", e))?;
    if let Some(why) = (pattern == Pattern::ReplaceTmpfile).then(|| saver.tmpfile_refusal()).flatten() {
        return Err(why);
    }
    let version = |n: u32| {
        let (name, tag, len) = if n == 0 {
            ("the old content".to_string(), OLD, OLD_BYTES)
        } else {
            (format!("save {n}'s content"), SAVED, SAVE_BYTES)
        };
        Version { name, pieces: vec![Piece { tag, write: n.max(1), offset: 0, len }] }
    };
    // What a save promises at all times: the file is one of its versions, whole.
    let mut acks = vec![Ack {
        position: 0,
        what: format!("the save pattern {} promises the old or a new content, whole", pattern.name()),
        promise: Promise::OneOf { file: file.into(), versions: (0..=SAVES).map(version).collect(), older: Vec::new() },
    }];
    for n in 1..=SAVES {
        saver.save(&version(n).pieces[0].bytes()).map_err(call_error)?;
        if pattern != Pattern::ReplaceUnsafe {
            acks.push(Ack {
                position: position(),
                what: format!("save {n} returned (its directory fsync)"),
                promise: Promise::OneOf {
                    file: file.into(),
                    versions: (n..=SAVES).map(version).collect(),
                    older: (0..n).map(version).collect(),
                },
            });
        }
    }
    let other = dir.join("other");
    let handle = std::fs::OpenOptions::new().write(true).open(&other).map_err(|e| io_error("open other", e))?;
    let data = Piece { tag: OTHER, write: 1, offset: 0, len: 4096 }.bytes();
    std::os::unix::fs::FileExt::write_all_at(&handle, &data, 0).map_err(|e| io_error("write other", e))?;
    sync_fd(SyncCall::Fsync, handle.as_raw_fd()).map_err(call_error)?;
    Ok(acks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_workload_has_a_unique_name_as_run_or_latency_spell_it() {
        let names = names();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
        for name in ["end", "end-fdatasync", "every:4", "osync", "odsync", "rwf-sync", "rwf-dsync", "direct+end"] {
            assert!(names.contains(&name.to_string()), "{name}");
        }
        assert!(names.contains(&"writebehind:64KiB".to_string()), "{names:?}");
        for name in ["replace", "replace-tmpfile", "replace-unsafe", "append+odsync", "pwritev2-atomic"] {
            assert!(by_name(name).is_some(), "{name}");
        }
        // Any durable mode, as a case names it.
        for name in ["every:16", "every-fdatasync:2", "direct+odsync", "writebehind:1MiB", "io_uring+every-fdatasync:8"]
        {
            assert_eq!(by_name(name).map(|w| w.name), Some(name.to_string()));
        }
        let Some(Workload { kind: Kind::Writes { count, .. }, .. }) = by_name("every:64") else { panic!() };
        assert_eq!(count, 128, "two syncs of every:64");
        let Some(Workload { kind: Kind::Writes { count, chunk, .. }, .. }) = by_name("append+every-fdatasync:2") else {
            panic!()
        };
        assert_eq!((count, chunk), (RECORDS, RECORD), "a commit named by a case has the default commits' records");
        for not in ["none", "direct", "every:0", "io_uring+end", "append+none", "fsync-file+dir", "sometimes"] {
            assert!(by_name(not).is_none(), "{not}");
        }
    }

    #[test]
    fn an_overwrite_promises_the_record_acknowledged_or_a_later_one() {
        let spec = Writes { mode: Durability::End, chunk: RECORD, count: 3, place: Place::Offset0, file: "log" };
        let Promise::OneOf { versions, older, .. } = spec.promise(2) else {
            panic!("an overwrite is one of its records")
        };
        assert_eq!(versions.len(), 2);
        assert_eq!(older.len(), 2, "the record from before and write 1's");
        assert!(versions.iter().all(|v| v.pieces[0].offset == 0 && v.pieces[0].write >= 2));
        let append = Writes { place: Place::Append, ..spec };
        assert_eq!(
            append.promise(2),
            Promise::Holds { file: "log".into(), pieces: vec![append.piece(1), append.piece(2)] }
        );
    }
}
