//! A program's calls, in the order strace logged them, folded into how it wrote each
//! file (docs/trace.md). The fold keeps what the kernel keeps: each process's
//! descriptors (what file, its offset, O_APPEND and O_SYNC/O_DSYNC), working directory
//! and threads; each file's size as far as the calls show it. strace's -yy names the
//! file behind every descriptor at each call, so a descriptor opened before the trace
//! began (a redirected stdout) is still named, its offset unknown.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use plan::replay::{Replay, SyncKind};
use result::trace::{FilePattern, IoUringUse, LeftOut, Made, Mapped, SyncCall, WriteCall};

mod names;

use crate::file_state::{FileState, Write};
use crate::paths::{at_fdcwd, normal, parent, plain_path, pseudo};
use crate::sequence::{Sequence, rwf};
use crate::strace::{Call, Event, descriptor, number, string};

/// Open flags that shape how a file is written: kept in its pattern.
const SHAPING: [&str; 8] = ["O_CREAT", "O_EXCL", "O_TRUNC", "O_APPEND", "O_DIRECT", "O_SYNC", "O_DSYNC", "O_TMPFILE"];

/// An open descriptor of a process.
#[derive(Debug, Clone)]
struct Fd {
    path: String,
    append: bool,
    /// Every write through it is synced (O_SYNC, O_DSYNC).
    sync: Option<SyncCall>,
    directory: bool,
    /// Its offset, where known.
    position: Option<u64>,
}

/// What a whole trace adds up to.
#[derive(Debug, Default)]
pub struct Folded {
    pub files: Vec<FilePattern>,
    pub left_out: LeftOut,
    pub io_uring: Option<IoUringUse>,
    pub mapped: Vec<Mapped>,
    pub whole_syncs: u64,
    pub seconds: f64,
    pub calls: u64,
    /// How the first process traced ended.
    pub exit: Option<String>,
    /// The calls in order, where they were kept (`Fold::recording`).
    pub replay: Option<Replay>,
}

#[derive(Debug, Default)]
pub struct Fold {
    first: Option<(f64, u32)>,
    last: f64,
    calls: u64,
    process: HashMap<u32, u32>,
    cwd: HashMap<u32, String>,
    start_cwd: Option<String>,
    fds: HashMap<(u32, i64), Fd>,
    files: HashMap<String, FileState>,
    only_read: BTreeSet<String>,
    pseudo: BTreeSet<String>,
    pseudo_bytes: u64,
    unnamed_writes: u64,
    io_uring: Option<IoUringUse>,
    maps: Vec<(u64, u64, String)>,
    mapped: BTreeMap<String, Mapped>,
    whole_syncs: u64,
    exit: Option<String>,
    /// Where writebench's own standard output and error go: the program inherits them.
    outputs: Vec<String>,
    /// The directories of the files written, under every name they had.
    directories: BTreeSet<String>,
    sequence: Option<Sequence>,
}

impl Fold {
    /// A fold of a program started in `cwd` (None: learnt from the log's AT_FDCWD).
    pub fn new(cwd: Option<&str>) -> Fold {
        Fold { start_cwd: cwd.map(str::to_string), ..Fold::default() }
    }

    /// Writes through a descriptor the program inherited that names one of `outputs`
    /// (writebench's own standard output and error) are no file of the program's: they
    /// are counted with the pipes and terminals.
    pub fn inheriting(mut self, outputs: Vec<String>) -> Fold {
        self.outputs = outputs;
        self
    }

    /// Also keeps the calls in order for a replay, up to `limit` bytes written.
    pub fn recording(mut self, limit: Option<u64>) -> Fold {
        self.sequence = Some(Sequence::new(limit));
        self
    }

    pub fn event(&mut self, event: Event) {
        match event {
            Event::Exit { tid, status } => {
                if self.first.is_some_and(|(_, first)| first == tid) {
                    self.exit = Some(status);
                }
            }
            Event::Call(call) => self.call(&call),
        }
    }

    fn call(&mut self, call: &Call) {
        let time = call.time.unwrap_or(0.0);
        let (start, _) = *self.first.get_or_insert((time, call.tid));
        if let Some(sequence) = &mut self.sequence {
            sequence.now = time - start;
        }
        self.last = self.last.max(time + call.seconds.unwrap_or(0.0));
        self.calls += 1;
        // Every AT_FDCWD strace names is the process's working directory at that call.
        if let Some(cwd) = call.args.iter().find_map(|a| at_fdcwd(a)) {
            let process = self.process_of(call.tid);
            self.cwd.insert(process, cwd);
        }
        let write = |kind| Some(kind);
        let kind = match call.name.as_str() {
            "write" => write(WriteCall::Write),
            "pwrite64" | "pwrite" => write(WriteCall::Pwrite),
            "writev" => write(WriteCall::Writev),
            "pwritev" => write(WriteCall::Pwritev),
            "pwritev2" => write(WriteCall::Pwritev2),
            "copy_file_range" => write(WriteCall::CopyFileRange),
            "sendfile" | "sendfile64" => write(WriteCall::Sendfile),
            "splice" => write(WriteCall::Splice),
            _ => None,
        };
        if let Some(kind) = kind {
            return self.write(call, kind);
        }
        match call.name.as_str() {
            "open" | "openat" | "openat2" | "creat" => self.open(call),
            "close" => {
                let key = self.key(call, 0);
                self.fds.remove(&key);
                if let Some(sequence) = &mut self.sequence {
                    sequence.close(call.tid, key);
                }
            }
            "dup" | "dup2" | "dup3" => self.dup(call),
            "fcntl" | "fcntl64" if call.args.get(1).is_some_and(|a| a.starts_with("F_DUPFD")) => self.dup(call),
            "lseek" | "llseek" | "_llseek" => self.seek(call),
            "fstat" | "newfstatat" | "statx" | "fstat64" => self.stat(call),
            "fsync" => self.sync(call, SyncCall::Fsync, true),
            "fdatasync" => self.sync(call, SyncCall::Fdatasync, true),
            "sync_file_range" | "sync_file_range2" => self.sync(call, SyncCall::SyncFileRange, false),
            "sync" | "syncfs" if call.outcome.ok().is_some() => self.whole_sync(call),
            "msync" => self.msync(call),
            "mmap" | "mmap2" => self.mmap(call),
            "fallocate" => self.fallocate(call),
            "ftruncate" | "ftruncate64" | "truncate" | "truncate64" => self.truncate(call),
            "rename" | "renameat" | "renameat2" => self.rename(call),
            "link" | "linkat" => self.link(call),
            "unlink" | "unlinkat" => self.unlink(call),
            "clone" | "clone3" | "fork" | "vfork" => self.clone(call),
            "chdir" | "fchdir" => self.chdir(call),
            "io_uring_setup" => self.io_uring.get_or_insert_with(IoUringUse::default).rings += 1,
            "io_uring_enter" => self.io_uring.get_or_insert_with(IoUringUse::default).enters += 1,
            _ => {}
        }
    }

    fn process_of(&self, tid: u32) -> u32 {
        self.process.get(&tid).copied().unwrap_or(tid)
    }

    /// The key of the descriptor in argument `at`.
    fn key(&self, call: &Call, at: usize) -> (u32, i64) {
        let fd = call.args.get(at).and_then(|a| number(descriptor(a).0)).unwrap_or(-1);
        (self.process_of(call.tid), fd)
    }

    /// The path behind the descriptor in argument `at`: as strace named it at the call
    /// (-yy reads the kernel's name for it, renames and removals included), else as the
    /// fold knows it. A descriptor the fold knows under another name than strace gives
    /// was replaced in ways not followed (a dup2 of an unknown one): it is forgotten.
    fn path_of(&mut self, call: &Call, at: usize) -> Option<String> {
        let key = self.key(call, at);
        let named = call.args.get(at).and_then(|a| descriptor(a).1).map(|p| plain_path(&p));
        match (named, self.fds.get(&key)) {
            (Some(named), Some(fd)) if fd.path != named => {
                self.fds.remove(&key);
                Some(named)
            }
            (Some(named), _) => Some(named),
            (None, fd) => fd.map(|fd| fd.path.clone()),
        }
    }

    /// A path argument made absolute against the directory descriptor in `dir_at` (or
    /// the working directory).
    fn resolve(&self, call: &Call, dir_at: Option<usize>, path_at: usize) -> Option<String> {
        let path = string(call.args.get(path_at)?)?;
        if path.starts_with('/') {
            return Some(normal(&path));
        }
        let base = dir_at
            .and_then(|at| call.args.get(at))
            .and_then(|a| descriptor(a).1)
            .or_else(|| self.cwd.get(&self.process_of(call.tid)).cloned())
            .or_else(|| self.start_cwd.clone())?;
        Some(normal(&format!("{base}/{path}")))
    }

    fn open(&mut self, call: &Call) {
        let Some(fd) = call.outcome.ok() else { return };
        let flag_text = match call.name.as_str() {
            "creat" => "O_CREAT|O_WRONLY|O_TRUNC".to_string(),
            "open" => call.args.get(1).cloned().unwrap_or_default(),
            "openat2" => call
                .args
                .get(2)
                .and_then(|a| a.split("flags=").nth(1))
                .unwrap_or("")
                .split([',', '}'])
                .next()
                .unwrap_or("")
                .to_string(),
            _ => call.args.get(2).cloned().unwrap_or_default(),
        };
        let flags: BTreeSet<String> = flag_text.split('|').map(|f| f.trim().to_string()).collect();
        let returned = match &call.outcome {
            crate::strace::Outcome::Value(_, Some(path)) => Some(plain_path(path)),
            _ => None,
        };
        let dir_at = if call.name == "openat" || call.name == "openat2" { Some(0) } else { None };
        let path_at = if dir_at.is_some() { 1 } else { 0 };
        let Some(path) = returned.or_else(|| self.resolve(call, dir_at, path_at)) else { return };
        let writable = flags.contains("O_WRONLY") || flags.contains("O_RDWR");
        let directory = flags.contains("O_DIRECTORY") || std::path::Path::new(&path).is_dir();
        let sync = if flags.contains("O_SYNC") {
            Some(SyncCall::OSync)
        } else if flags.contains("O_DSYNC") {
            Some(SyncCall::ODsync)
        } else {
            None
        };
        let key = (self.process_of(call.tid), fd);
        let append = flags.contains("O_APPEND");
        self.fds.insert(key, Fd { path: path.clone(), append, sync, directory, position: Some(0) });
        if directory || pseudo(&path) {
            return;
        }
        if !writable {
            if !self.files.contains_key(&path) {
                self.only_read.insert(path);
            }
            return;
        }
        let shaping: BTreeSet<String> = flags.into_iter().filter(|f| SHAPING.contains(&f.as_str())).collect();
        self.only_read.remove(&path);
        self.directories.insert(parent(&path).to_string());
        if let Some(sequence) = &mut self.sequence {
            sequence.open(call.tid, key, &path, &shaping);
        }
        match self.files.get_mut(&path) {
            Some(file) if !file.removed => file.reopened(&shaping),
            _ => {
                self.files.insert(path, FileState::opened(&shaping));
            }
        }
    }

    fn dup(&mut self, call: &Call) {
        let Some(new) = call.outcome.ok() else { return };
        let target = (self.process_of(call.tid), new);
        let source = self.key(call, 0);
        if let Some(sequence) = &mut self.sequence {
            sequence.dup(source, target);
        }
        match self.fds.get(&self.key(call, 0)).cloned() {
            Some(fd) => self.fds.insert(target, fd),
            // A copy of a descriptor the fold does not know: what it named is gone.
            None => self.fds.remove(&target),
        };
    }

    fn seek(&mut self, call: &Call) {
        let Some(position) = call.outcome.ok() else { return };
        let key = self.key(call, 0);
        let Some(fd) = self.fds.get_mut(&key) else { return };
        fd.position = Some(position as u64);
        let whence = call.args.last().map(String::as_str).unwrap_or("");
        if whence == "SEEK_END" && call.args.get(1).and_then(|a| number(a)) == Some(0) {
            let path = fd.path.clone();
            if let Some(file) = self.files.get_mut(&path) {
                file.size_seen(position as u64);
            }
        }
    }

    fn stat(&mut self, call: &Call) {
        if call.outcome.ok() != Some(0) {
            return;
        }
        // fstat(fd, …), newfstatat(fd, "", …, AT_EMPTY_PATH), statx(fd, "", AT_EMPTY_PATH, …).
        if call.name != "fstat" && call.name != "fstat64" && call.args.get(1).map(String::as_str) != Some("\"\"") {
            return;
        }
        let text = call.args.join(",");
        let Some(size) = ["st_size=", "stx_size="]
            .iter()
            .find_map(|key| text.split(key).nth(1))
            .and_then(|rest| number(rest.split([',', '}']).next().unwrap_or("")))
        else {
            return;
        };
        if let Some(path) = self.path_of(call, 0) {
            if let Some(file) = self.files.get_mut(&path) {
                file.size_seen(size as u64);
            }
        }
    }

    fn write(&mut self, call: &Call, kind: WriteCall) {
        let Some(bytes) = call.outcome.ok().filter(|&n| n >= 0) else { return };
        let args = &call.args;
        let (fd_at, offset_at) = match kind {
            WriteCall::Write | WriteCall::Writev | WriteCall::Sendfile => (0, None),
            WriteCall::Pwrite | WriteCall::Pwritev | WriteCall::Pwritev2 => (0, Some(3)),
            WriteCall::CopyFileRange | WriteCall::Splice => (2, Some(3)),
        };
        let Some(path) = self.path_of(call, fd_at) else {
            self.unnamed_writes += 1;
            return;
        };
        let key = self.key(call, fd_at);
        if pseudo(&path) || !self.fds.contains_key(&key) && self.outputs.contains(&path) {
            self.pseudo.insert(path);
            self.pseudo_bytes += bytes as u64;
            return;
        }
        let flags: Vec<String> = match kind {
            WriteCall::Pwritev2 => args
                .get(4)
                .map_or(Vec::new(), |f| f.split('|').filter(|f| f.starts_with("RWF_")).map(str::to_string).collect()),
            _ => Vec::new(),
        };
        // An offset of -1 (pwritev2) or NULL (copy_file_range, splice) is the
        // descriptor's own.
        let explicit = offset_at
            .and_then(|at| args.get(at))
            .and_then(|a| number(a.trim_start_matches('[').split([']', ' ']).next().unwrap_or("")))
            .filter(|&offset| offset >= 0)
            .map(|offset| offset as u64);
        let fd = self.fds.get(&key).cloned();
        let append = fd.as_ref().is_some_and(|fd| fd.append) || flags.iter().any(|f| f == "RWF_APPEND");
        let offset = explicit.or_else(|| fd.as_ref().and_then(|fd| fd.position));
        let buffers = matches!(kind, WriteCall::Writev | WriteCall::Pwritev | WriteCall::Pwritev2)
            .then(|| args.get(2).and_then(|a| number(a)).unwrap_or(0) as u64);
        let sync = if flags.iter().any(|f| f == "RWF_SYNC") {
            Some(SyncCall::OSync)
        } else if flags.iter().any(|f| f == "RWF_DSYNC") {
            Some(SyncCall::ODsync)
        } else {
            fd.as_ref().and_then(|fd| fd.sync)
        };
        if let Some(sequence) = &mut self.sequence {
            sequence.write(call.tid, key, &path, kind, bytes as u64, offset, buffers, rwf(&flags));
            if sync.is_some() {
                sequence.synced_write();
            }
        }
        if !self.directories.contains(parent(&path)) {
            self.directories.insert(parent(&path).to_string());
        }
        // A descriptor the program had before the trace began: never opened here.
        let file = self.files.entry(path).or_insert_with(FileState::open_before);
        file.write(Write {
            call: kind,
            bytes: bytes as u64,
            offset,
            append,
            buffers,
            flags,
            tid: call.tid,
            time: call.time.unwrap_or(0.0),
            seconds: call.seconds.unwrap_or(0.0),
        });
        if let Some(sync) = sync {
            file.sync(sync, true, 0.0);
        }
        let size = file.size;
        if explicit.is_none() {
            if let Some(fd) = self.fds.get_mut(&key) {
                fd.position = if append { size } else { fd.position.map(|p| p + bytes as u64) };
            }
        }
    }

    fn sync(&mut self, call: &Call, kind: SyncCall, durable: bool) {
        if call.outcome.ok().is_none() {
            return;
        }
        let Some(path) = self.path_of(call, 0) else { return };
        // Known from its open where it was opened in the trace; a directory a written file
        // is in, even one gone since (a log read elsewhere).
        let directory = match self.fds.get(&self.key(call, 0)) {
            Some(fd) => fd.directory,
            None => std::path::Path::new(&path).is_dir(),
        } || self.directories.contains(&path);
        let key = self.key(call, 0);
        let known = self.files.contains_key(&path);
        if let Some(sequence) = self.sequence.as_mut().filter(|_| directory || known) {
            match kind {
                _ if directory => sequence.sync_directory(call.tid),
                SyncCall::Fsync => sequence.sync(call.tid, key, &path, SyncKind::Fsync),
                SyncCall::Fdatasync => sequence.sync(call.tid, key, &path, SyncKind::Fdatasync),
                SyncCall::SyncFileRange => sequence.sync(call.tid, key, &path, SyncKind::SyncFileRange),
                _ => {}
            }
        }
        if directory {
            if kind == SyncCall::Fsync || kind == SyncCall::Fdatasync {
                for file in self.files.iter_mut().filter(|(file, _)| parent(file) == path).map(|(_, f)| f) {
                    file.directory_synced();
                }
            }
            return;
        }
        if let Some(file) = self.files.get_mut(&path) {
            file.sync(kind, durable, call.seconds.unwrap_or(0.0));
        }
    }

    fn whole_sync(&mut self, call: &Call) {
        self.whole_syncs += 1;
        for file in self.files.values_mut().filter(|f| f.unsynced_bytes > 0) {
            file.sync(SyncCall::Whole, true, call.seconds.unwrap_or(0.0));
        }
    }

    fn mmap(&mut self, call: &Call) {
        let (Some(address), Some(length)) = (call.outcome.ok(), call.args.get(1).and_then(|a| number(a))) else {
            return;
        };
        let shared_write = call.args.get(2).is_some_and(|p| p.contains("PROT_WRITE"))
            && call.args.get(3).is_some_and(|f| f.contains("MAP_SHARED"));
        let Some(path) = call.args.get(4).and_then(|a| descriptor(a).1).map(|p| plain_path(&p)) else { return };
        if !shared_write || pseudo(&path) {
            return;
        }
        self.maps.push((address as u64, length as u64, path.clone()));
        let mapped = self.mapped.entry(path.clone()).or_insert_with(|| Mapped { path, ..Mapped::default() });
        mapped.bytes = mapped.bytes.max(length as u64);
    }

    fn msync(&mut self, call: &Call) {
        let Some(address) = call.args.first().and_then(|a| number(a)) else { return };
        let address = address as u64;
        let Some(path) = self
            .maps
            .iter()
            .rev()
            .find(|(start, len, _)| (*start..start + len).contains(&address))
            .map(|m| m.2.clone())
        else {
            return;
        };
        if let Some(mapped) = self.mapped.get_mut(&path) {
            mapped.msyncs += 1;
        }
        let durable = call.args.get(2).is_some_and(|f| f.contains("MS_SYNC"));
        if let Some(file) = self.files.get_mut(&path) {
            file.sync(SyncCall::Msync, durable, call.seconds.unwrap_or(0.0));
        }
    }

    fn fallocate(&mut self, call: &Call) {
        if call.outcome.ok().is_none() {
            return;
        }
        let mode = call.args.get(1).cloned().unwrap_or_default();
        // Punching, zeroing, collapsing or inserting a range is not a reservation.
        if ["PUNCH_HOLE", "ZERO_RANGE", "COLLAPSE_RANGE", "INSERT_RANGE"].iter().any(|m| mode.contains(m)) {
            return;
        }
        let offset = call.args.get(2).and_then(|a| number(a)).unwrap_or(0) as u64;
        let length = call.args.get(3).and_then(|a| number(a)).unwrap_or(0) as u64;
        let Some(path) = self.path_of(call, 0) else { return };
        let key = self.key(call, 0);
        if let Some(sequence) = &mut self.sequence {
            sequence.allocate(call.tid, key, &path, mode.contains("KEEP_SIZE"), offset, length);
        }
        let Some(file) = self.files.get_mut(&path) else { return };
        file.preallocation.fallocate += 1;
        file.preallocation.largest = file.preallocation.largest.max(length);
        if mode.contains("KEEP_SIZE") {
            file.preallocation.keep_size += 1;
        } else {
            file.size = file.size.map(|size| size.max(offset + length));
        }
    }

    fn truncate(&mut self, call: &Call) {
        if call.outcome.ok() != Some(0) {
            return;
        }
        let path = if call.name.starts_with('f') { self.path_of(call, 0) } else { self.resolve(call, None, 0) };
        let length = call.args.get(1).and_then(|a| number(a)).unwrap_or(0) as u64;
        let key = self.key(call, 0);
        if let (Some(sequence), Some(path), true) = (&mut self.sequence, &path, call.name.starts_with('f')) {
            sequence.truncate(call.tid, key, path, length);
        }
        let Some(file) = path.and_then(|path| self.files.get_mut(&path)) else { return };
        if file.size.is_some_and(|size| length > size) {
            file.preallocation.grown_by_truncate += 1;
        }
        file.size = Some(length);
    }

    /// A new thread joins its process; a new process gets a copy of the descriptors and
    /// the working directory.
    fn clone(&mut self, call: &Call) {
        let Some(child) = call.outcome.ok().filter(|&c| c > 0).map(|c| c as u32) else { return };
        let parent = self.process_of(call.tid);
        if call.args.iter().any(|a| a.contains("CLONE_THREAD")) {
            self.process.insert(child, parent);
            return;
        }
        let copied: Vec<((u32, i64), Fd)> =
            self.fds.iter().filter(|((p, _), _)| *p == parent).map(|((_, fd), f)| ((child, *fd), f.clone())).collect();
        self.fds.extend(copied);
        if let Some(cwd) = self.cwd.get(&parent).cloned() {
            self.cwd.insert(child, cwd);
        }
    }

    fn chdir(&mut self, call: &Call) {
        if call.outcome.ok() != Some(0) {
            return;
        }
        let path = if call.name == "fchdir" { self.path_of(call, 0) } else { self.resolve(call, None, 0) };
        if let Some(path) = path {
            self.cwd.insert(self.process_of(call.tid), path);
        }
    }

    pub fn finish(self) -> Folded {
        let (start, _) = self.first.unwrap_or((0.0, 0));
        let process = self.process;
        let process_of = |tid: u32| process.get(&tid).copied().unwrap_or(tid);
        let files_before = &self.files;
        let replay = self.sequence.map(|sequence| {
            sequence
                .finish(|name| files_before.get(name).filter(|f| f.made == Made::Existing).and_then(|f| f.size_at_open))
        });
        let mut unwritten = self.only_read.len() as u64;
        let mut files = Vec::new();
        for (path, file) in self.files {
            if file.written() {
                files.push(file.pattern(path, start, process_of));
            } else {
                unwritten += 1;
            }
        }
        files.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.path.cmp(&b.path)));
        Folded {
            files,
            left_out: LeftOut {
                unwritten_files: unwritten,
                pseudo_files: self.pseudo.len() as u64,
                pseudo_bytes: self.pseudo_bytes,
                unnamed_writes: self.unnamed_writes,
            },
            io_uring: self.io_uring,
            mapped: self.mapped.into_values().collect(),
            whole_syncs: self.whole_syncs,
            seconds: (self.last - start).max(0.0),
            calls: self.calls,
            exit: self.exit,
            replay,
        }
    }
}
