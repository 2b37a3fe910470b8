//! io_uring writes (the IO Playground): `IORING_OP_WRITE` at explicit offsets with up to `--qd`
//! requests in flight, one ring per thread, and its variants:
//! - `io_uring-fixed`: the source buffer and the file registered once
//!   (`IORING_OP_WRITE_FIXED` from a registered buffer, on a registered file);
//! - `io_uring-regfile`: only the file registered (`IORING_REGISTER_FILES`, SQEs with
//!   IOSQE_FIXED_FILE), so no request looks the descriptor up;
//! - `io_uring-sqpoll`: a kernel thread polls the submission queue
//!   (`IORING_SETUP_SQPOLL`), so submitting needs no system call while it is awake. Its
//!   CPU time is no writer's: it is read from its task's stat and recorded apart.
//!
//! Every request in flight owns a slot, and the slot's index is its `user_data`. A slot
//! holds exactly the bytes still owed, so a short completion resubmits the remainder
//! and a completed request is never submitted again (the IO Playground's program resubmitted
//! stale entries of its last, partial batch). The loop is `drive`; the rings, `ring`.
//!
//! Each part has a buffer of its own (`io_uring-fixed` registers it with the part's
//! ring). Its blocks are re-stamped as the part goes round the buffer's period, so a
//! request is only issued when that re-stamps nothing a request in flight still reads
//! (`Cursor::take_in_flight`); the period is sized so that this rarely waits.
//!
//! Durability: `every:N` links an `IORING_OP_FSYNC` to the write that completes each
//! batch, after the writes before it have completed (why, in `drive`); the time is in
//! the write span, as for the other methods. `end` keeps its separate sync span, issued
//! as one `IORING_OP_FSYNC` per file through a small ring of the file's own.

mod drive;
mod refusal;
mod ring;
#[cfg(test)]
mod tests;

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use ::io_uring::{IoUring, Probe, opcode};

use super::{CallError, Engine, Job, Prepared};
use crate::durability::sync_fd;
use drive::{Every, Ledger, Slots, Tally, drive};
use result::RingRecord;
use ring::{RingQueue, io_wq_cpu_seconds, new_ring, ring_sync, task_cpu_seconds};

/// What a variant sets up besides a plain ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Kind {
    pub fixed_buffer: bool,
    pub fixed_file: bool,
    pub sqpoll: bool,
}

pub struct Uring {
    name: &'static str,
    kind: Kind,
}

const fn uring(name: &'static str, fixed_buffer: bool, fixed_file: bool, sqpoll: bool) -> Uring {
    Uring { name, kind: Kind { fixed_buffer, fixed_file, sqpoll } }
}

pub const PLAIN: Uring = uring("io_uring", false, false, false);
pub const FIXED: Uring = uring("io_uring-fixed", true, true, false);
pub const REGFILE: Uring = uring("io_uring-regfile", false, true, false);
pub const SQPOLL: Uring = uring("io_uring-sqpoll", false, false, true);

impl Engine for Uring {
    fn name(&self) -> &'static str {
        self.name
    }

    fn unsupported_reason(&self) -> Option<String> {
        availability().clone().or_else(|| if self.kind.sqpoll { sqpoll_availability().clone() } else { None })
    }

    /// The loop asks before each new request; those in flight then complete.
    fn wall_refusal(&self) -> Option<&'static str> {
        None
    }

    fn prepare<'a>(&'a self, job: &'a Job<'a>) -> Result<Box<dyn Prepared + 'a>, CallError> {
        let depth = job.queue_depth.max(1);
        // every:N queues a fsync beside a write: room for both even at depth 1.
        let room = if job.durability.every().is_some() { depth.max(2) } else { depth };
        let entries = u32::try_from(room).map_err(|_| {
            CallError::new(format!("io_uring setup with {room} entries"), io::Error::from_raw_os_error(libc::EINVAL))
        })?;
        let mut rings = Vec::with_capacity(job.parts.len());
        for index in 0..job.parts.len() {
            let queue = RingQueue::new(entries, job.span(index).fd, self.kind, job.source.writer(index))?;
            rings.push(Mutex::new((queue, Slots::new(depth))));
        }
        // end's sync span: a ring per file, plain, so the thread that syncs may be any.
        let mut sync_rings = Vec::new();
        if job.durability.end_sync().is_some() {
            for _ in job.files {
                let ring = IoUring::new(2).map_err(|error| CallError::new("io_uring setup of the sync ring", error))?;
                sync_rings.push(Mutex::new(ring));
            }
        }
        Ok(Box::new(UringRun {
            job,
            kind: self.kind,
            rings,
            sync_rings,
            ledger: Ledger::new(job.parts.len(), job.files.len() == 1),
            counts: Counts::default(),
            io_wq_before: job.parts.iter().map(|_| AtomicU64::new(0)).collect(),
        }))
    }
}

/// Whether this process may create rings that write, asked once: io_uring can be
/// missing (ENOSYS), forbidden (EPERM: by `kernel.io_uring_disabled`, or for this
/// process alone, which `refusal` tells apart) or too old.
fn availability() -> &'static Option<String> {
    static REASON: OnceLock<Option<String>> = OnceLock::new();
    REASON.get_or_init(|| {
        let ring = match IoUring::new(2) {
            Ok(ring) => ring,
            Err(error) => return Some(refusal::setup_refusal(&error, refusal::Facts::read())),
        };
        let mut probe = Probe::new();
        // IORING_REGISTER_PROBE came in Linux 5.6, with IORING_OP_WRITE.
        if let Err(error) = ring.submitter().register_probe(&mut probe) {
            return Some(format!(
                "io_uring cannot list its operations (register_probe: {error}); writes need Linux 5.6"
            ));
        }
        [
            (opcode::Write::CODE, "IORING_OP_WRITE"),
            (opcode::WriteFixed::CODE, "IORING_OP_WRITE_FIXED"),
            (opcode::Fsync::CODE, "IORING_OP_FSYNC"),
        ]
        .into_iter()
        .find(|(code, _)| !probe.is_supported(*code))
        .map(|(_, name)| format!("io_uring lacks {name}"))
    })
}

/// Whether this process may create an SQPOLL ring (before Linux 5.11 it needed
/// CAP_SYS_ADMIN; a container may forbid it), asked once, with the kernel's answer.
fn sqpoll_availability() -> &'static Option<String> {
    static REASON: OnceLock<Option<String>> = OnceLock::new();
    REASON.get_or_init(|| match new_ring(2, true) {
        Ok(_) => None,
        Err(error) => Some(format!("io_uring SQPOLL is not available: {error}")),
    })
}

/// What the run's rings submitted, summed over the writers.
#[derive(Default)]
struct Counts {
    linked_writes: AtomicU64,
    linked_fsyncs: AtomicU64,
    fsyncs: AtomicU64,
    cancelled_fsyncs: AtomicU64,
    /// SQPOLL threads' CPU over the writers' parts, in microseconds, and how many
    /// parts it was read for (none: the thread was not found, so no figure).
    sqpoll_micros: AtomicU64,
    sqpoll_read: AtomicU64,
    /// io-wq workers' CPU over the writers' parts, in microseconds, and how many parts
    /// it was read for.
    io_wq_micros: AtomicU64,
    io_wq_read: AtomicU64,
}

impl Counts {
    fn add(&self, tally: &Tally) {
        self.linked_writes.fetch_add(tally.linked_writes, Ordering::Relaxed);
        self.linked_fsyncs.fetch_add(tally.linked_fsyncs, Ordering::Relaxed);
        self.fsyncs.fetch_add(tally.fsyncs, Ordering::Relaxed);
        self.cancelled_fsyncs.fetch_add(tally.cancelled_fsyncs, Ordering::Relaxed);
    }
}

/// A prepared run: one ring per part, each locked by the one thread that writes it.
struct UringRun<'a> {
    job: &'a Job<'a>,
    kind: Kind,
    rings: Vec<Mutex<(RingQueue<'a>, Slots<'a>)>>,
    /// `end`: one ring per file for the sync span.
    sync_rings: Vec<Mutex<IoUring>>,
    ledger: Ledger,
    counts: Counts,
    /// Per part: its io-wq workers' CPU in microseconds, plus one, as its span opened
    /// (0: not read).
    io_wq_before: Vec<AtomicU64>,
}

impl UringRun<'_> {
    /// `end`'s sync of file `file`, as an IORING_OP_FSYNC through the file's sync ring.
    fn sync_file(&self, file: usize) -> Result<(), CallError> {
        let call = self.job.end_call();
        let Some(ring) = self.sync_rings.get(file) else {
            return sync_fd(call, self.job.files[file]);
        };
        let mut ring = ring.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        ring_sync(&mut ring, self.job.files[file], call)
            .map_err(|error| CallError::new(format!("io_uring {}", call.name()), error))?;
        self.counts.fsyncs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

impl Prepared for UringRun<'_> {
    fn write_part(&self, index: usize) -> Result<(), CallError> {
        let (Some(part), Some(ring)) = (self.job.parts.get(index), self.rings.get(index)) else {
            return Err(CallError::new(format!("io_uring part {index}"), io::Error::from(io::ErrorKind::NotFound)));
        };
        // Uncontended: part `index` is written by one thread only.
        let mut ring = ring.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (queue, slots) = &mut *ring;
        queue.enable().map_err(|error| CallError::new("io_uring enable the ring in its writer thread", error))?;
        let every = self.job.pacing.call().map(|call| Every {
            pacer: self.job.pacing.pacer(),
            ledger: &self.ledger,
            part: index,
            call,
        });
        let sq_before = queue.sq_thread.and_then(task_cpu_seconds);
        let mut tally = Tally::default();
        let source = self.job.source.writer(index);
        let span = self.job.span(index);
        let at_wall = |next: u64| span.at_wall(next);
        let result = drive(queue, slots, source, part.offset, part.len, self.job.chunk, every, &mut tally, &at_wall);
        if let (Some(before), Some(after)) = (sq_before, queue.sq_thread.and_then(task_cpu_seconds)) {
            let micros = ((after - before).max(0.0) * 1e6).round() as u64;
            self.counts.sqpoll_micros.fetch_add(micros, Ordering::Relaxed);
            self.counts.sqpoll_read.fetch_add(1, Ordering::Relaxed);
        }
        self.counts.add(&tally);
        result
    }

    /// The io-wq workers' CPU over the part, read from its writer's thread outside the
    /// timed span (a scan of /proc/self/task): before it, and after it while the thread,
    /// and so its workers, still live.
    fn around_part(&self, index: usize, after: bool) {
        // SAFETY: gettid has no preconditions.
        let writer = unsafe { libc::gettid() };
        let Some(now) = io_wq_cpu_seconds(writer) else { return };
        let micros = (now * 1e6).round() as u64;
        let Some(before) = self.io_wq_before.get(index) else { return };
        if !after {
            // One more than the reading, so that 0 says "not read".
            before.store(micros + 1, Ordering::Relaxed);
            return;
        }
        let started = before.load(Ordering::Relaxed);
        if started > 0 {
            self.counts.io_wq_micros.fetch_add(micros.saturating_sub(started - 1), Ordering::Relaxed);
            self.counts.io_wq_read.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn sync(&self) -> Result<(), CallError> {
        (0..self.job.files.len()).try_for_each(|file| self.sync_file(file))
    }

    fn sync_part(&self, index: usize) -> Result<(), CallError> {
        self.sync_file(self.job.parts[index].file)
    }

    fn ring_record(&self) -> Option<RingRecord> {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let counts = &self.counts;
        let linked_writes = load(&counts.linked_writes);
        let flags = [
            (linked_writes > 0, "IOSQE_IO_LINK"),
            (self.kind.fixed_file, "IOSQE_FIXED_FILE"),
            (self.kind.fixed_buffer, "IORING_OP_WRITE_FIXED"),
            (self.kind.sqpoll, "IORING_SETUP_SQPOLL"),
            (
                self.job.durability.every().is_some_and(|(_, call)| call.name() == "fdatasync")
                    || self.job.durability.end_sync().is_some_and(|call| call.name() == "fdatasync"),
                "IORING_FSYNC_DATASYNC",
            ),
        ];
        Some(RingRecord {
            sqe_flags: flags.iter().filter(|(used, _)| *used).map(|(_, name)| name.to_string()).collect(),
            linked_writes,
            linked_fsyncs: load(&counts.linked_fsyncs),
            fsyncs: load(&counts.fsyncs),
            cancelled_fsyncs: load(&counts.cancelled_fsyncs),
            sqpoll_cpu_seconds: (self.kind.sqpoll && load(&counts.sqpoll_read) > 0)
                .then(|| load(&counts.sqpoll_micros) as f64 * 1e-6),
            io_wq_cpu_seconds: (load(&counts.io_wq_read) > 0).then(|| load(&counts.io_wq_micros) as f64 * 1e-6),
        })
    }
}
