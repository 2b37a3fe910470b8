//! Durability at run time: the sync calls themselves, the per-call hook that syncs
//! every N calls, and the O_DIRECT alignment a case must meet (found by `context::dio`,
//! which the result file records too). The modes themselves are `plan::durability`.

use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

pub use context::dio::{DioAlignment, dio_alignment};
use error::{CallError, retry_eintr};
use plan::durability::{Durability, SyncCall};

/// `call` (fsync or fdatasync) on `fd`, checked, retried on EINTR; its error names it.
pub fn sync_fd(call: SyncCall, fd: RawFd) -> Result<(), CallError> {
    // SAFETY: fsync/fdatasync on a descriptor the caller keeps open.
    retry_eintr(|| unsafe {
        match call {
            SyncCall::Fsync => libc::fsync(fd),
            SyncCall::Fdatasync => libc::fdatasync(fd),
        }
    } as isize)
    .map(drop)
    .map_err(|error| CallError::new(call.name(), error))
}

/// The `every:N` rule of one run, shared by all its writers: a sync every N calls *of
/// the file*. Into one file, the calls are counted across its threads, so that T
/// threads make as many syncs as one thread would (one pacer per thread made each
/// thread sync its own leftover calls at the end: T syncs where the label says one);
/// the thread whose call makes the count a multiple of N syncs, and the last writer to
/// end syncs the calls not yet synced (a sync of the file covers every writer's
/// calls). With a file per thread, each writer counts and syncs its own file, as a
/// program writing several files would: a count across files made a writer sync its
/// file after one of its calls and N-1 of the others', whose files then went unsynced.
pub struct Pacing {
    every: Option<(u32, SyncCall)>,
    /// `writebehind:SIZE`: the window, per writer (see [`Pacer::after_write`]).
    behind: Option<u64>,
    calls: AtomicU64,
    ended: AtomicUsize,
    writers: usize,
    shared_file: bool,
}

impl Pacing {
    /// The rule for a run of `writers` parts into `files` files (one file: shared).
    pub fn new(every: Option<(u32, SyncCall)>, writers: usize, files: usize) -> Pacing {
        Pacing {
            every,
            behind: None,
            calls: AtomicU64::new(0),
            ended: AtomicUsize::new(0),
            writers,
            shared_file: files == 1,
        }
    }

    /// The per-call rules of `durability` for a run of `writers` parts into `files`
    /// files: its `every:N`, and its write-behind window.
    pub fn of(durability: Durability, writers: usize, files: usize) -> Pacing {
        Pacing { behind: durability.write_behind(), ..Pacing::new(durability.every(), writers, files) }
    }

    /// The sync call of `every:N`, if the mode has one.
    pub fn call(&self) -> Option<SyncCall> {
        self.every.map(|(_, call)| call)
    }

    /// One writer's view of the rule; each part makes its own.
    pub fn pacer(&self) -> Pacer<'_> {
        self.pacer_at(0)
    }

    /// One writer's view, for a part that starts at file offset `start` (write-behind
    /// windows are counted from there).
    pub fn pacer_at(&self, start: u64) -> Pacer<'_> {
        Pacer { pacing: self, since: 0, own: 0, window_start: start, waiting: None }
    }
}

/// The hook of `every:N` in one writer: a method asks it after each call (each chunk, or
/// each vectored call), and once more as its part ends ([`Pacer::at_end`]).
pub struct Pacer<'a> {
    pacing: &'a Pacing,
    /// This writer's calls since it last synced, and in all.
    since: u64,
    own: u64,
    /// Write-behind: where the window being written starts, and the window whose
    /// writeback was started and not yet waited for.
    window_start: u64,
    waiting: Option<u64>,
}

impl Pacer<'_> {
    /// Counts one call of the case; true when the caller must now make the file durable
    /// (methods with their own way to sync, e.g. stdio's fflush or msync, use this).
    #[inline]
    pub fn due(&mut self) -> bool {
        self.due_at().is_some_and(|(_, due)| due)
    }

    /// As [`Pacer::due`], with the call's place in the case's count (from 1); `None`
    /// without `every:N`. io_uring counts a request as it issues it, and its sync must
    /// wait for every count before its own (see `methods::io_uring::drive`).
    #[inline]
    pub fn due_at(&mut self) -> Option<(u64, bool)> {
        let (n, _) = self.pacing.every?;
        self.since += 1;
        self.own += 1;
        let count = if self.pacing.shared_file {
            // AcqRel: a writer that sees the count its call made also sees every call
            // counted before, so its sync starts after those calls returned.
            self.pacing.calls.fetch_add(1, Ordering::AcqRel) + 1
        } else {
            self.own
        };
        let due = count % u64::from(n) == 0;
        if due {
            self.since = 0;
        }
        Some((count, due))
    }

    /// Whether the case's calls are counted across writers into one file.
    pub fn shared_file(&self) -> bool {
        self.pacing.shared_file
    }

    /// Counts one call on `fd` and syncs it when due.
    #[inline]
    pub fn after_call(&mut self, fd: RawFd) -> Result<(), CallError> {
        if self.due() { self.sync_now(fd) } else { Ok(()) }
    }

    /// Counts one call on `fd` that has written up to file offset `reached`, syncs it
    /// when `every:N` says so, and with write-behind: every window of the part now
    /// complete gets its writeback started (`SYNC_FILE_RANGE_WRITE`, which returns once
    /// the I/O is queued), and the window before it is waited for (`WAIT_BEFORE | WRITE
    /// | WAIT_AFTER`), so at most about two windows of this writer are dirty or in
    /// flight while it writes the next.
    #[inline]
    pub fn after_write(&mut self, fd: RawFd, reached: u64) -> Result<(), CallError> {
        self.after_call(fd)?;
        let Some(window) = self.pacing.behind else { return Ok(()) };
        while reached >= self.window_start + window {
            let start = self.window_start;
            sync_range(fd, start, window, libc::SYNC_FILE_RANGE_WRITE)?;
            if let Some(previous) = self.waiting.replace(start) {
                let all =
                    libc::SYNC_FILE_RANGE_WAIT_BEFORE | libc::SYNC_FILE_RANGE_WRITE | libc::SYNC_FILE_RANGE_WAIT_AFTER;
                sync_range(fd, previous, window, all)?;
            }
            self.window_start += window;
        }
        Ok(())
    }

    /// Asked once, as the part ends: true when this writer must now sync the calls not
    /// yet synced (see [`Pacing`]), so that every byte of the run is durable when its
    /// last part returns.
    pub fn at_end(&mut self) -> bool {
        let Some((n, _)) = self.pacing.every else { return false };
        if !self.pacing.shared_file {
            return self.since > 0;
        }
        let last = self.pacing.ended.fetch_add(1, Ordering::AcqRel) + 1 == self.pacing.writers;
        last && self.pacing.calls.load(Ordering::Acquire) % u64::from(n) != 0
    }

    /// [`Pacer::at_end`], and the sync of `fd` when it says so.
    pub fn finish(&mut self, fd: RawFd) -> Result<(), CallError> {
        if self.at_end() { self.sync_now(fd) } else { Ok(()) }
    }

    /// Syncs `fd` now (the caller saw [`Pacer::due`] or [`Pacer::at_end`]).
    pub fn sync_now(&mut self, fd: RawFd) -> Result<(), CallError> {
        self.since = 0;
        match self.pacing.every {
            Some((_, call)) => sync_fd(call, fd),
            None => Ok(()),
        }
    }
}

/// `sync_file_range(fd, offset, len, flags)`, checked, retried on EINTR.
fn sync_range(fd: RawFd, offset: u64, len: u64, flags: libc::c_uint) -> Result<(), CallError> {
    // SAFETY: sync_file_range on a descriptor the run keeps open.
    error::retry_eintr(|| unsafe {
        libc::sync_file_range(fd, offset as libc::off64_t, len as libc::off64_t, flags) as isize
    })
    .map(drop)
    .map_err(|error| {
        CallError::new(format!("sync_file_range of {len} bytes at offset {offset} (flags {flags})"), error)
    })
}

/// Why O_DIRECT cannot run calls of `chunk` bytes into files of `lens` from writers'
/// source buffers of `period` bytes, if it cannot. Every call must start and end on the
/// offset alignment (the last, short call included: rounding it up would write bytes
/// the case does not own, so such a size is refused rather than padded). Every call's
/// memory must be aligned too: a call at file offset `o` reads its writer's buffer at
/// `base + o mod period`, the buffers are page-aligned mappings, and the calls start at
/// multiples of the chunk, so the page, the period and the chunk must all be multiples
/// of the memory alignment.
pub fn direct_refusal(alignment: &DioAlignment, chunk: u64, lens: &[u64], period: usize) -> Option<String> {
    let align = u64::from(alignment.offset.max(1));
    let mem = u64::from(alignment.mem.max(1));
    let source = &alignment.source;
    if chunk % align != 0 {
        return Some(format!(
            "O_DIRECT needs offsets and lengths in multiples of {align} bytes here ({source}); a chunk of {} is not",
            plan::units::format_size(chunk)
        ));
    }
    if let Some(len) = lens.iter().find(|&&len| len % align != 0) {
        return Some(format!(
            "O_DIRECT needs offsets and lengths in multiples of {align} bytes here ({source}); the last call of a {len}-byte file is not"
        ));
    }
    let page = crate::source::page_size() as u64;
    if page % mem != 0 || period as u64 % mem != 0 {
        return Some(format!(
            "O_DIRECT needs memory aligned to {mem} bytes here ({source}); the source buffers (page-aligned, a period of {period} bytes) are not"
        ));
    }
    if chunk % mem != 0 {
        return Some(format!(
            "O_DIRECT needs memory aligned to {mem} bytes here ({source}); calls of {} start at source addresses that are not",
            plan::units::format_size(chunk)
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pacer_syncs_every_n_calls_and_the_rest_at_the_end() {
        let pacing = Pacing::new(Some((3, SyncCall::Fdatasync)), 1, 1);
        let mut pacer = pacing.pacer();
        let due: Vec<bool> = (0..7).map(|_| pacer.due()).collect();
        assert_eq!(due, [false, false, true, false, false, true, false]);
        assert!(pacer.at_end());
        let none = Pacing::new(None, 1, 1);
        let mut pacer = none.pacer();
        assert!(!pacer.due() && !pacer.at_end());
    }

    /// Syncs `threads` writers make with `calls` calls each under every:`n`, into one
    /// file or a file each: the count of due syncs plus those at the end.
    fn syncs(n: u32, threads: usize, calls: usize, files: usize) -> usize {
        let pacing = Pacing::new(Some((n, SyncCall::Fsync)), threads, files);
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    scope.spawn(|| {
                        let mut pacer = pacing.pacer();
                        (0..calls).filter(|_| pacer.due()).count() + usize::from(pacer.at_end())
                    })
                })
                .collect();
            workers.into_iter().map(|worker| worker.join().unwrap()).sum()
        })
    }

    #[test]
    fn every_n_counts_the_calls_of_the_case_not_of_each_thread() {
        // 2 threads x 32 calls, every:4: 16 syncs, as one thread would make.
        assert_eq!(syncs(4, 2, 32, 1), 16);
        // every:64 over 64 calls is one sync, not one per thread at its end.
        assert_eq!(syncs(64, 2, 32, 1), 1);
        assert_eq!(syncs(64, 4, 16, 1), 1);
        // 2 x 17 calls, every:4: 8 due, and the 2 calls left synced once.
        assert_eq!(syncs(4, 2, 17, 1), 9);
        assert_eq!(syncs(4, 1, 16, 1), 4, "nothing left at the end");
        // A file each: a file with calls not yet synced is synced by its own writer.
        assert_eq!(syncs(64, 2, 32, 2), 2);
        // A file each counts per file: every:4 over 2 x 16 calls is 4 syncs of each
        // file, at each file's 4th, 8th … call, and nothing left at the end.
        assert_eq!(syncs(4, 2, 16, 2), 8);
        assert_eq!(syncs(4, 2, 17, 2), 10, "each file's 17th call synced at its end");
        // Two writers taking turns: each syncs its own file at its own 4th call. Counted
        // across files, every 4th call of the case fell to the second writer alone.
        let pacing = Pacing::new(Some((4, SyncCall::Fsync)), 2, 2);
        let (mut a, mut b) = (pacing.pacer(), pacing.pacer());
        let turns: Vec<(bool, bool)> = (0..8).map(|_| (a.due(), b.due())).collect();
        let expected: Vec<(bool, bool)> = (1..=8).map(|i| (i % 4 == 0, i % 4 == 0)).collect();
        assert_eq!(turns, expected);
    }

    #[test]
    fn direct_refuses_unaligned_chunks_and_sizes() {
        let alignment = DioAlignment { mem: 512, offset: 512, source: "test".into() };
        let period = 1 << 20;
        assert_eq!(direct_refusal(&alignment, 4096, &[1 << 20], period), None);
        assert_eq!(direct_refusal(&alignment, 512, &[1 << 20], period), None);
        let chunk = direct_refusal(&alignment, 100, &[1 << 20], period).unwrap();
        assert!(chunk.contains("multiples of 512 bytes") && chunk.contains("a chunk of 100 B"), "{chunk}");
        assert!(direct_refusal(&alignment, 4096, &[1000], period).unwrap().contains("1000-byte file"));
    }

    #[test]
    fn direct_refuses_memory_the_device_cannot_take() {
        // Defect 1.14: only an alignment above a page was checked; the buffer's address
        // and a memory alignment above the offset alignment were taken on trust.
        let alignment = DioAlignment { mem: 512, offset: 512, source: "test".into() };
        // A period that is not a multiple of the memory alignment (the buffers are
        // page-aligned, so the period decides where a later lap's calls start).
        let refused = direct_refusal(&alignment, 4096, &[1 << 20], (1 << 20) + 8).unwrap();
        assert!(refused.contains("memory aligned to 512 bytes") && refused.contains("1048584 bytes"), "{refused}");
        let wide = DioAlignment { mem: 1024, offset: 512, source: "test".into() };
        let refused = direct_refusal(&wide, 512, &[1 << 20], 1 << 20).unwrap();
        assert!(refused.contains("memory aligned to 1024 bytes") && refused.contains("calls of 512 B"), "{refused}");
        assert_eq!(direct_refusal(&wide, 1024, &[1 << 20], 1 << 20), None);
        // More than a page-aligned buffer can give.
        let huge = DioAlignment { mem: 1 << 24, offset: 512, source: "test".into() };
        assert!(direct_refusal(&huge, 1 << 24, &[1 << 24], 1 << 24).is_some());
    }
}
