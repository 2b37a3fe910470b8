//! A traced program's calls made again (`plan::replay`, docs/trace.md "Replay"): in a
//! scratch directory, each file as `f<id>` brought to the size it had before the program
//! opened it, then every writing thread's calls on a thread of its own, from one start
//! line, at full speed (the program's own work between its calls is left out). Calls
//! that change what a descriptor or a name means keep the trace's order across threads;
//! writes and syncs of different threads run side by side (`plan::replay`'s rule).
//!
//! The data is the seed's incompressible pattern (`measure::source`), at the file
//! offset's place in it. Times: the whole, from the start line to the last thread's
//! last call, and each commit (a durable sync, or a write through O_SYNC/O_DSYNC).

use std::ffi::CString;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::Instant;

use error::CallError;
use measure::huge;
use measure::source::{PERIOD, Pages, Source};
use measure::target::Scratch;
use plan::replay::{Op, Replay, SyncKind, WriteKind};

/// One replay's figures.
#[derive(Debug, Clone, Default)]
pub struct ReplayRun {
    pub seconds: f64,
    pub bytes: u64,
    /// Commits made: durable syncs and writes through O_SYNC or O_DSYNC.
    pub commits: u64,
    /// Seconds each commit took.
    pub commit_seconds: Vec<f64>,
}

/// The name of a file of the replay in its directory.
fn name(file: u32) -> String {
    format!("f{file}")
}

fn failed(call: &str) -> CallError {
    CallError::new(call.to_string(), std::io::Error::last_os_error())
}

/// Data to write: the pattern, then again as far as the largest call reaches past it,
/// in ordinary pages or huge ones (`Replay::pages`), page-aligned for a program's
/// O_DIRECT calls at aligned offsets.
struct Data {
    base: *mut u8,
    /// The mapping's length, to unmap it.
    mapped: usize,
}

// SAFETY: the buffer is written once before the threads start, then only read.
unsafe impl Sync for Data {}

impl Data {
    fn new(seed: u64, largest: u64, pages: Pages) -> Data {
        let length = PERIOD + largest.max(1) as usize;
        let mapped = length.div_ceil(huge::granule(pages)) * huge::granule(pages);
        let base = huge::map_in(mapped, pages).expect("memory for the replay's data").as_ptr();
        let source = Source::new(seed);
        let pattern = source.pattern(PERIOD);
        // SAFETY: `base` holds `length` bytes; the copies stay inside it.
        unsafe {
            let mut at = 0;
            while at < length {
                let n = (length - at).min(pattern.len());
                std::ptr::copy_nonoverlapping(pattern.as_ptr(), base.add(at), n);
                at += n;
            }
        }
        Data { base, mapped }
    }

    fn at(&self, offset: u64) -> *const u8 {
        // SAFETY: offset % PERIOD plus any call's length stays inside the buffer.
        unsafe { self.base.add((offset % PERIOD as u64) as usize) }
    }
}

impl Drop for Data {
    fn drop(&mut self) {
        // SAFETY: the mapping `huge::map_in` made in `new`, of this length.
        unsafe { libc::munmap(self.base.cast(), self.mapped) };
    }
}

/// Brings each file to its size before the program (untimed): absent, or written with
/// the replay's own data (the pattern at each offset's place, so that every byte of a
/// file is what the crash check reads back: `replay_check`) and synced; the directory
/// synced.
pub fn prepare(replay: &Replay, scratch: &Scratch, seed: u64) -> Result<(), CallError> {
    const PIECE: u64 = 1 << 20;
    let data = Data::new(seed, PIECE, Pages::Ordinary);
    for (id, file) in replay.files.iter().enumerate() {
        let name = name(id as u32);
        scratch.remove(&name).map_err(|e| CallError::new(format!("unlink {name}"), e))?;
        if file.before == 0 {
            continue;
        }
        let made = scratch.create_empty(&name).map_err(|e| CallError::new(format!("create {name}"), e))?;
        let mut at = 0;
        while at < file.before {
            let n = (file.before - at).min(PIECE);
            // SAFETY: `n` bytes from `at`'s place lie inside the data; the descriptor is ours.
            let done = unsafe { libc::pwrite(made.as_raw_fd(), data.at(at).cast(), n as usize, at as i64) };
            if done <= 0 {
                return Err(failed(&format!("write {name}")));
            }
            at += done as u64;
        }
        measure::fd::fsync(made.as_raw_fd()).map_err(|e| CallError::new(format!("fsync {name}"), e))?;
    }
    scratch.sync_dir().map_err(|e| CallError::new("fsync of the scratch directory".to_string(), e))
}

/// What each call waits for, from the trace's order (see the module's words).
struct Waits {
    /// For a call that orders: its place among them. For the others: how many came before.
    structural: Vec<Vec<u64>>,
    /// For a call that orders: the writes and syncs on its descriptor before it.
    slot_before: Vec<Vec<u64>>,
}

fn waits(replay: &Replay, slots: usize) -> Waits {
    let mut structural: Vec<Vec<u64>> = replay.threads.iter().map(|c| vec![0; c.len()]).collect();
    let mut slot_before: Vec<Vec<u64>> = structural.clone();
    let (mut ordering, mut per_slot) = (0u64, vec![0u64; slots]);
    for (t, i) in replay.in_order() {
        let op = &replay.threads[t][i].op;
        structural[t][i] = ordering;
        if op.orders() {
            slot_before[t][i] = op.slot().map_or(0, |s| per_slot[s as usize]);
            ordering += 1;
        } else if let Some(slot) = op.slot() {
            per_slot[slot as usize] += 1;
        }
    }
    Waits { structural, slot_before }
}

/// The shared state of one replay's threads.
struct Shared<'a> {
    replay: &'a Replay,
    directory: RawFd,
    data: Data,
    fds: Vec<AtomicI32>,
    positions: Vec<AtomicU64>,
    appends: Vec<AtomicBool>,
    synced: Vec<AtomicBool>,
    slot_done: Vec<AtomicU64>,
    ordered: AtomicU64,
    stop: AtomicBool,
    error: Mutex<Option<CallError>>,
    /// Each append writes the data of the place it lands (see [`run_with`]).
    exact_appends: bool,
}

/// Makes the calls of `replay` in `scratch` (prepared by [`prepare`]); the files are left
/// for the caller to remove or check. With `gaps`, each call waits until as long after
/// the start line as it came after the trace's first (the program's pauses kept).
pub fn run(replay: &Replay, scratch: &Scratch, seed: u64, gaps: bool) -> Result<ReplayRun, CallError> {
    run_with(replay, scratch, seed, gaps, None)
}

/// Called before each call with its place in the trace's order (`Call::order`).
pub type BeforeCall<'a> = &'a (dyn Fn(u64) + Sync);

/// [`run`], calling `before` before each call (the crash check's replay, `replay_check`,
/// which also needs each append's bytes to be the data of the place it lands: each
/// append then asks the file's end first, a call more than the program made).
pub(crate) fn run_with(
    replay: &Replay,
    scratch: &Scratch,
    seed: u64,
    gaps: bool,
    before: Option<BeforeCall>,
) -> Result<ReplayRun, CallError> {
    let origin = replay.threads.iter().flatten().map(|c| c.at).fold(f64::INFINITY, f64::min);
    let slots = replay.threads.iter().flatten().filter_map(|c| c.op.slot()).max().map_or(0, |s| s as usize + 1);
    let largest = replay
        .threads
        .iter()
        .flatten()
        .map(|c| if let Op::Write { bytes, .. } = c.op { bytes } else { 0 })
        .max()
        .unwrap_or(0);
    let shared = Shared {
        replay,
        directory: scratch.dir_fd(),
        data: Data::new(seed, largest, replay.pages),
        fds: (0..slots).map(|_| AtomicI32::new(-1)).collect(),
        positions: (0..slots).map(|_| AtomicU64::new(0)).collect(),
        appends: (0..slots).map(|_| AtomicBool::new(false)).collect(),
        synced: (0..slots).map(|_| AtomicBool::new(false)).collect(),
        slot_done: (0..slots).map(|_| AtomicU64::new(0)).collect(),
        ordered: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        error: Mutex::new(None),
        exact_appends: before.is_some(),
    };
    let waits = waits(replay, slots);
    let start_line = Barrier::new(replay.threads.len() + 1);
    let runs = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..replay.threads.len())
            .map(|t| {
                let (shared, waits, start_line) = (&shared, &waits, &start_line);
                scope.spawn(move || {
                    start_line.wait();
                    let begun = Instant::now();
                    let mut run = ReplayRun::default();
                    for (i, call) in shared.replay.threads[t].iter().enumerate() {
                        if gaps {
                            let due = begun + std::time::Duration::from_secs_f64((call.at - origin).max(0.0));
                            std::thread::sleep(due.saturating_duration_since(Instant::now()));
                        }
                        if let Some(before) = before {
                            before(call.order);
                        }
                        if let Err(error) =
                            shared.call(&call.op, waits.structural[t][i], waits.slot_before[t][i], &mut run)
                        {
                            shared.fail(error);
                            break;
                        }
                    }
                    (begun, Instant::now(), run)
                })
            })
            .collect();
        start_line.wait();
        handles.into_iter().map(|h| h.join().expect("a replay thread")).collect::<Vec<_>>()
    });
    for fd in &shared.fds {
        let fd = fd.swap(-1, Ordering::SeqCst);
        if fd >= 0 {
            // SAFETY: a descriptor the replay opened and nothing uses any more.
            unsafe { libc::close(fd) };
        }
    }
    if let Some(error) = shared.error.into_inner().unwrap() {
        return Err(error);
    }
    // From the first thread past the start line to the last one done: each thread reads
    // the clock itself, since this thread may be descheduled past a short replay's end.
    let Some(started) = runs.iter().map(|(begun, _, _)| *begun).min() else { return Ok(ReplayRun::default()) };
    let mut total = ReplayRun::default();
    for (_, ended, run) in runs {
        total.seconds = total.seconds.max(ended.duration_since(started).as_secs_f64());
        total.bytes += run.bytes;
        total.commits += run.commits;
        total.commit_seconds.extend(run.commit_seconds);
    }
    Ok(total)
}

impl Shared<'_> {
    /// Stops every thread; the first failure is the one reported.
    fn fail(&self, error: CallError) {
        self.error.lock().unwrap().get_or_insert(error);
        self.stop.store(true, Ordering::SeqCst);
    }

    /// Waits until `ready`; an error once another thread failed.
    fn wait(&self, ready: impl Fn() -> bool) -> Result<(), CallError> {
        let mut spins = 0u32;
        loop {
            if self.stop.load(Ordering::SeqCst) {
                return Err(CallError::new("replay".to_string(), std::io::Error::other("another thread failed")));
            }
            if ready() {
                return Ok(());
            }
            spins += 1;
            if spins < 64 { std::hint::spin_loop() } else { std::thread::yield_now() }
        }
    }

    fn fd(&self, slot: u32) -> RawFd {
        self.fds[slot as usize].load(Ordering::SeqCst)
    }

    fn call(&self, op: &Op, structural: u64, slot_before: u64, run: &mut ReplayRun) -> Result<(), CallError> {
        if op.orders() {
            self.wait(|| {
                self.ordered.load(Ordering::SeqCst) == structural
                    && op.slot().is_none_or(|s| self.slot_done[s as usize].load(Ordering::SeqCst) >= slot_before)
            })?;
            let done = self.ordering(op);
            if let Err(error) = &done {
                // Before the calls waiting for this one go on (to a descriptor never opened).
                self.fail(error.copy());
            }
            self.ordered.store(structural + 1, Ordering::SeqCst);
            return done;
        }
        self.wait(|| self.ordered.load(Ordering::SeqCst) >= structural)?;
        let done = match *op {
            Op::Write { slot, kind, bytes, offset, buffers, rwf } => {
                self.write(slot, kind, bytes, offset, buffers, rwf, run)
            }
            Op::Sync { slot, kind } => self.sync(slot, kind, run),
            _ => Ok(()),
        };
        if let Some(slot) = op.slot() {
            self.slot_done[slot as usize].fetch_add(1, Ordering::SeqCst);
        }
        done
    }

    fn ordering(&self, op: &Op) -> Result<(), CallError> {
        let path = |file: u32| CString::new(name(file)).expect("no NUL in a name");
        let checked = |result: i32, call: &str| if result < 0 { Err(failed(call)) } else { Ok(()) };
        // SAFETY (every call below): plain system calls on the replay's own directory
        // descriptor and names, or on descriptors the replay opened.
        match *op {
            Op::Open { file, slot, flags } => {
                let fd = unsafe {
                    libc::openat(self.directory, path(file).as_ptr(), libc::O_RDWR | libc::O_CLOEXEC | flags, 0o644)
                };
                checked(fd, &format!("open {}", name(file)))?;
                self.fds[slot as usize].store(fd, Ordering::SeqCst);
                self.positions[slot as usize].store(0, Ordering::SeqCst);
                self.appends[slot as usize].store(flags & libc::O_APPEND != 0, Ordering::SeqCst);
                self.synced[slot as usize].store(flags & (libc::O_SYNC | libc::O_DSYNC) != 0, Ordering::SeqCst);
                Ok(())
            }
            Op::SyncDirectory => checked(unsafe { libc::fsync(self.directory) }, "fsync of the directory"),
            Op::Allocate { slot, keep_size, offset, length } => {
                let mode = if keep_size { libc::FALLOC_FL_KEEP_SIZE } else { 0 };
                let result = unsafe { libc::fallocate(self.fd(slot), mode, offset as i64, length as i64) };
                checked(result, "fallocate")
            }
            Op::Truncate { slot, length } => {
                checked(unsafe { libc::ftruncate(self.fd(slot), length as i64) }, "ftruncate")
            }
            Op::Rename { from, to } => {
                let result =
                    unsafe { libc::renameat(self.directory, path(from).as_ptr(), self.directory, path(to).as_ptr()) };
                checked(result, "rename")
            }
            Op::Unlink { file } => checked(unsafe { libc::unlinkat(self.directory, path(file).as_ptr(), 0) }, "unlink"),
            Op::Close { slot } => {
                let fd = self.fds[slot as usize].swap(-1, Ordering::SeqCst);
                checked(if fd >= 0 { unsafe { libc::close(fd) } } else { 0 }, "close")
            }
            Op::Write { .. } | Op::Sync { .. } => Ok(()),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &self,
        slot: u32,
        kind: WriteKind,
        bytes: u64,
        offset: Option<u64>,
        buffers: u32,
        rwf: i32,
        run: &mut ReplayRun,
    ) -> Result<(), CallError> {
        let fd = self.fd(slot);
        let append = self.appends[slot as usize].load(Ordering::SeqCst);
        let position = &self.positions[slot as usize];
        let mut at = offset.unwrap_or_else(|| position.load(Ordering::SeqCst));
        if append && self.exact_appends {
            // SAFETY: lseek on the replay's own descriptor.
            let end = unsafe { libc::lseek(fd, 0, libc::SEEK_END) };
            if end < 0 {
                return Err(failed("lseek"));
            }
            at = end as u64;
        }
        let positional = matches!(kind, WriteKind::Pwrite | WriteKind::Pwritev | WriteKind::Pwritev2);
        // The program's write at a place its descriptor was not: it had seeked there.
        if !positional && !append && offset.is_some_and(|o| o != position.load(Ordering::SeqCst)) {
            // SAFETY: lseek on the replay's own descriptor.
            if unsafe { libc::lseek(fd, at as i64, libc::SEEK_SET) } < 0 {
                return Err(failed("lseek"));
            }
        }
        let vectored = matches!(kind, WriteKind::Writev | WriteKind::Pwritev | WriteKind::Pwritev2);
        let pieces = if vectored { buffers.max(1) as u64 } else { 0 };
        let iov: Vec<libc::iovec> = (0..pieces)
            .map(|i| {
                let (start, end) = (bytes * i / pieces, bytes * (i + 1) / pieces);
                libc::iovec { iov_base: self.data.at(at + start) as *mut libc::c_void, iov_len: (end - start) as usize }
            })
            .collect();
        let timed = Instant::now();
        // SAFETY: every buffer lies inside the data buffer; the descriptor is ours.
        let done = unsafe {
            match kind {
                WriteKind::Write => libc::write(fd, self.data.at(at).cast(), bytes as usize),
                WriteKind::Pwrite => libc::pwrite(fd, self.data.at(at).cast(), bytes as usize, at as i64),
                WriteKind::Writev => libc::writev(fd, iov.as_ptr(), iov.len() as i32),
                WriteKind::Pwritev => libc::pwritev(fd, iov.as_ptr(), iov.len() as i32, at as i64),
                WriteKind::Pwritev2 => libc::pwritev2(fd, iov.as_ptr(), iov.len() as i32, at as i64, rwf),
            }
        };
        let seconds = timed.elapsed().as_secs_f64();
        if done < 0 {
            return Err(failed("write"));
        }
        if !positional {
            position.store(at + done as u64, Ordering::SeqCst);
        }
        run.bytes += done as u64;
        if self.synced[slot as usize].load(Ordering::SeqCst) || rwf & (libc::RWF_SYNC | libc::RWF_DSYNC) != 0 {
            run.commits += 1;
            run.commit_seconds.push(seconds);
        }
        Ok(())
    }

    fn sync(&self, slot: u32, kind: SyncKind, run: &mut ReplayRun) -> Result<(), CallError> {
        let fd = self.fd(slot);
        let timed = Instant::now();
        // SAFETY: sync calls on the replay's own descriptor.
        let result = unsafe {
            match kind {
                SyncKind::Fsync => libc::fsync(fd),
                SyncKind::Fdatasync => libc::fdatasync(fd),
                SyncKind::SyncFileRange => libc::sync_file_range(fd, 0, 0, libc::SYNC_FILE_RANGE_WRITE),
            }
        };
        if result < 0 {
            return Err(failed("sync"));
        }
        if kind != SyncKind::SyncFileRange {
            run.commits += 1;
            run.commit_seconds.push(timed.elapsed().as_secs_f64());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use plan::replay::{Call, ReplayFile};

    use super::*;

    fn calls(ops: Vec<(u64, Op)>) -> Vec<Call> {
        ops.into_iter().map(|(order, op)| Call { order, at: 0.0, op }).collect()
    }

    fn write(slot: u32, kind: WriteKind, bytes: u64, offset: Option<u64>) -> Op {
        Op::Write { slot, kind, bytes, offset, buffers: if matches!(kind, WriteKind::Writev) { 4 } else { 1 }, rwf: 0 }
    }

    #[test]
    fn a_save_by_rename_is_made_again_with_its_bytes_and_commits() {
        let dir = tempfile::tempdir().unwrap();
        let scratch = Scratch::create(dir.path()).unwrap();
        let creat = libc::O_CREAT | libc::O_TRUNC;
        let replay = Replay {
            files: vec![
                ReplayFile { name: "/app/cfg.tmp".into(), before: 0 },
                ReplayFile { name: "/app/cfg".into(), before: 100 },
            ],
            threads: vec![calls(vec![
                (1, Op::Open { file: 0, slot: 0, flags: creat }),
                (2, write(0, WriteKind::Write, 300, Some(0))),
                (3, write(0, WriteKind::Writev, 200, Some(300))),
                (4, write(0, WriteKind::Pwrite, 10, Some(1000))),
                (5, Op::Sync { slot: 0, kind: SyncKind::Fdatasync }),
                (6, Op::Close { slot: 0 }),
                (7, Op::Rename { from: 0, to: 1 }),
                (8, Op::SyncDirectory),
            ])],
            bytes: 510,
            syncs: 1,
            cut: false,
            pages: plan::Pages::Ordinary,
        };
        for _ in 0..2 {
            prepare(&replay, &scratch, 7).unwrap();
            assert_eq!(std::fs::metadata(scratch.path().join("f1")).unwrap().len(), 100, "as it stood before");
            let run = run(&replay, &scratch, 7, false).unwrap();
            assert_eq!((run.bytes, run.commits, run.commit_seconds.len()), (510, 1, 1));
            assert!(run.seconds > 0.0);
            assert!(!scratch.path().join("f0").exists(), "renamed");
            assert_eq!(std::fs::metadata(scratch.path().join("f1")).unwrap().len(), 1010, "the pwrite past the end");
        }
    }

    #[test]
    fn threads_write_one_file_between_the_opening_and_the_closing_thread() {
        let dir = tempfile::tempdir().unwrap();
        let scratch = Scratch::create(dir.path()).unwrap();
        let chunk = 64 << 10;
        let mut writers = Vec::new();
        for w in 0..2u64 {
            writers.push(calls(
                (0..16u64)
                    .map(|i| (10 + i * 2 + w, write(0, WriteKind::Pwrite, chunk, Some(w * 16 * chunk + i * chunk))))
                    .collect(),
            ));
        }
        // The opening thread's close comes after every write in the trace's order: the
        // replay must not close before the writers are done, whatever the scheduling.
        let opener = calls(vec![
            (1, Op::Open { file: 0, slot: 0, flags: libc::O_CREAT | libc::O_TRUNC }),
            (100, Op::Sync { slot: 0, kind: SyncKind::Fsync }),
            (101, Op::Close { slot: 0 }),
        ]);
        let replay = Replay {
            files: vec![ReplayFile { name: "/out".into(), before: 0 }],
            threads: vec![writers[0].clone(), opener, writers[1].clone()],
            bytes: 32 * chunk,
            syncs: 1,
            cut: false,
            pages: plan::Pages::Ordinary,
        };
        for _ in 0..20 {
            prepare(&replay, &scratch, 1).unwrap();
            let run = run(&replay, &scratch, 1, false).unwrap();
            assert_eq!((run.bytes, run.commits), (32 * chunk, 1));
            assert_eq!(std::fs::metadata(scratch.path().join("f0")).unwrap().len(), 32 * chunk);
        }
    }

    #[test]
    fn a_failed_call_fails_the_replay_with_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let scratch = Scratch::create(dir.path()).unwrap();
        let replay = Replay {
            files: vec![ReplayFile { name: "/x".into(), before: 0 }],
            // No O_CREAT, and the file is absent before.
            threads: vec![
                calls(vec![(1, Op::Open { file: 0, slot: 0, flags: 0 })]),
                calls(vec![(2, write(0, WriteKind::Write, 1, None))]),
            ],
            bytes: 1,
            syncs: 0,
            cut: false,
            pages: plan::Pages::Ordinary,
        };
        prepare(&replay, &scratch, 1).unwrap();
        let error = run(&replay, &scratch, 1, false).unwrap_err().to_string();
        assert!(error.contains("open f0"), "{error}");
    }
}
