//! The real rings behind [`Queue`]: how a ring is set up (tuned flags, SQPOLL), what is
//! registered with it (the part's buffer, the file), and the CPU time of its SQPOLL
//! kernel thread, which no getrusage of the writer sees.

use std::io;
use std::marker::PhantomData;
use std::os::fd::RawFd;

use ::io_uring::{IoUring, opcode, squeue, types};

use super::super::CallError;
use super::Kind;
use super::drive::{Queue, Request, SYNC};
use crate::source::Writer;
use error::retry;
use plan::durability::SyncCall;

/// The most one write can report (the kernel's MAX_RW_COUNT, below `i32::MAX` since the
/// result is an `i32`); a longer request completes short and the rest is resubmitted.
const MAX_REQUEST: usize = 0x7fff_f000;

/// How long an SQPOLL thread polls an idle ring before it sleeps (and a submission
/// must wake it), in milliseconds: longer than any gap between a writer's submissions.
pub(super) const SQ_IDLE_MS: u32 = 100;

/// A real ring over one part's file. `'a` is the borrow of the part's buffer: the
/// requests point into it, so the ring must not outlive it.
pub(super) struct RingQueue<'a> {
    ring: IoUring,
    /// The descriptor the SQEs name: the file's own, or index 0 of the registered files
    /// (IOSQE_FIXED_FILE).
    fd: Target,
    /// Writes go as IORING_OP_WRITE_FIXED from registered buffer 0.
    fixed_buffer: bool,
    /// Created disabled; enabled by the writer thread on first use.
    disabled: bool,
    /// A kernel thread takes the submissions.
    sqpoll: bool,
    /// The ring's SQPOLL kernel thread (a task of this process), if it has one.
    pub sq_thread: Option<i32>,
    source: PhantomData<&'a Writer>,
}

#[derive(Clone, Copy)]
enum Target {
    Fd(RawFd),
    Registered,
}

impl<'a> RingQueue<'a> {
    /// A ring of `entries` (untimed) as `kind` says; the part's whole buffer and the
    /// file are registered with it once where the kind asks, so no write pins pages or
    /// looks up the fd.
    pub fn new(entries: u32, fd: RawFd, kind: Kind, source: &'a Writer) -> Result<Self, CallError> {
        let before = if kind.sqpoll { tasks() } else { Vec::new() };
        let (ring, disabled) = new_ring(entries, kind.sqpoll).map_err(|error| {
            let what = if kind.sqpoll { "io_uring setup with SQPOLL" } else { "io_uring setup" };
            CallError::new(format!("{what} with {entries} entries"), error)
        })?;
        let sq_thread = if kind.sqpoll { sq_thread_since(&before) } else { None };
        if kind.fixed_buffer {
            let (base, len) = source.region();
            let iovec = libc::iovec { iov_base: base as *mut libc::c_void, iov_len: len };
            // SAFETY: the buffer stays mapped for 'a, longer than the ring (a run holds
            // both borrows and drops the ring first). The kernel reads it only for
            // requests, whose bytes are not re-stamped while they are in flight.
            unsafe { ring.submitter().register_buffers(&[iovec]) }.map_err(|error| {
                let hint = match error.raw_os_error() {
                    Some(libc::ENOMEM) => " (pinned pages count against RLIMIT_MEMLOCK)",
                    Some(libc::EFAULT) if len > 1 << 30 => " (the kernel registers at most 1 GiB per buffer)",
                    _ => "",
                };
                CallError::new(format!("io_uring register_buffers of {len} bytes{hint}"), error)
            })?;
        }
        let target = if kind.fixed_file {
            ring.submitter().register_files(&[fd]).map_err(|error| CallError::new("io_uring register_files", error))?;
            Target::Registered
        } else {
            Target::Fd(fd)
        };
        let fixed_buffer = kind.fixed_buffer;
        Ok(RingQueue { ring, fd: target, fixed_buffer, disabled, sqpoll: kind.sqpoll, sq_thread, source: PhantomData })
    }

    /// Makes this thread the ring's single issuer; a no-op for a ring not set up disabled.
    pub fn enable(&mut self) -> io::Result<()> {
        if self.disabled {
            self.ring.submitter().register_enable_rings()?;
            self.disabled = false;
        }
        Ok(())
    }

    fn queue(&mut self, entry: &squeue::Entry) -> io::Result<()> {
        for _ in 0..2 {
            // SAFETY: the entry reads bytes of the part's buffer, alive for 'a, which
            // outlives the ring; for WriteFixed they lie inside registered buffer 0.
            if unsafe { self.ring.submission().push(entry) }.is_ok() {
                return Ok(());
            }
            // Full. Without SQPOLL it cannot be (one entry per slot), but be sure: make
            // room. With SQPOLL it can: the kernel thread posts completions while it
            // takes a batch and moves the queue's head only after the batch, so a slot
            // may be free before its entry is; wait for the thread to take them
            // (IORING_ENTER_SQ_WAIT).
            if self.sqpoll {
                retry(|| self.ring.submitter().squeue_wait().map(drop))?;
            } else {
                submit(&self.ring, 0)?;
            }
        }
        Err(io::Error::other("the io_uring submission queue stays full"))
    }

    fn flags(&self, link: bool) -> squeue::Flags {
        let mut flags = squeue::Flags::empty();
        if link {
            flags |= squeue::Flags::IO_LINK;
        }
        // The opcode builders set IOSQE_FIXED_FILE themselves for types::Fixed.
        flags
    }
}

impl<'a> Queue<'a> for RingQueue<'a> {
    fn push(&mut self, slot: usize, request: Request<'a>, link: bool) -> io::Result<()> {
        let (ptr, len) = (request.bytes.as_ptr(), request.bytes.len().min(MAX_REQUEST) as u32);
        let entry = match (self.fd, self.fixed_buffer) {
            (Target::Fd(fd), false) => opcode::Write::new(types::Fd(fd), ptr, len).offset(request.offset).build(),
            (Target::Fd(fd), true) => {
                opcode::WriteFixed::new(types::Fd(fd), ptr, len, 0).offset(request.offset).build()
            }
            (Target::Registered, false) => opcode::Write::new(types::Fixed(0), ptr, len).offset(request.offset).build(),
            (Target::Registered, true) => {
                opcode::WriteFixed::new(types::Fixed(0), ptr, len, 0).offset(request.offset).build()
            }
        };
        let entry = entry.user_data(slot as u64).flags(self.flags(link));
        self.queue(&entry)
    }

    fn push_sync(&mut self, call: SyncCall) -> io::Result<()> {
        let flags = match call {
            SyncCall::Fsync => types::FsyncFlags::empty(),
            SyncCall::Fdatasync => types::FsyncFlags::DATASYNC,
        };
        let entry = match self.fd {
            Target::Fd(fd) => opcode::Fsync::new(types::Fd(fd)).flags(flags).build(),
            Target::Registered => opcode::Fsync::new(types::Fixed(0)).flags(flags).build(),
        };
        self.queue(&entry.user_data(SYNC))
    }

    fn submit_and_reap(&mut self, reaped: &mut Vec<(u64, i32)>) -> io::Result<()> {
        submit(&self.ring, 1)?;
        reaped.extend(self.ring.completion().map(|cqe| (cqe.user_data(), cqe.result())));
        Ok(())
    }
}

/// A ring for one writer thread, set up as fio does where the kernel allows (6.1+):
/// SINGLE_ISSUER and DEFER_TASKRUN run completion work when the writer waits instead of
/// interrupting it, COOP_TASKRUN spares it an IPI. The ring is created disabled, by the
/// thread that prepares the run, and enabled by its writer thread (the single issuer)
/// on first use. Older kernels refuse the flags with EINVAL: a plain ring then. With
/// `sqpoll`, a kernel thread takes the submissions (DEFER_TASKRUN cannot go with it):
/// no fallback, the case is unsupported with the kernel's answer.
pub(super) fn new_ring(entries: u32, sqpoll: bool) -> io::Result<(IoUring, bool)> {
    if sqpoll {
        return Ok((IoUring::builder().setup_sqpoll(SQ_IDLE_MS).build(entries)?, false));
    }
    let tuned = IoUring::builder()
        .setup_r_disabled()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .setup_coop_taskrun()
        .build(entries);
    match tuned {
        Ok(ring) => Ok((ring, true)),
        Err(error) if error.raw_os_error() == Some(libc::EINVAL) => Ok((IoUring::new(entries)?, false)),
        Err(error) => Err(error),
    }
}

/// `io_uring_enter`, retried on EINTR: the kernel keeps the entries it has not taken in
/// the shared queue, so the retry submits exactly those. With SQPOLL the crate enters
/// the kernel only to wake the thread or to wait.
fn submit(ring: &IoUring, want: usize) -> io::Result<()> {
    retry(|| ring.submit_and_wait(want).map(drop))
}

/// Syncs a file through a ring of its own: `end`'s sync span as one IORING_OP_FSYNC
/// (the writers' rings have a single issuer, and the sync span may be another
/// thread's). Plain set-up, so any thread may use it.
pub(super) fn ring_sync(ring: &mut IoUring, fd: RawFd, call: SyncCall) -> io::Result<()> {
    let flags = match call {
        SyncCall::Fsync => types::FsyncFlags::empty(),
        SyncCall::Fdatasync => types::FsyncFlags::DATASYNC,
    };
    let entry = opcode::Fsync::new(types::Fd(fd)).flags(flags).build().user_data(SYNC);
    loop {
        // SAFETY: a fsync reads no memory of ours.
        unsafe { ring.submission().push(&entry) }.map_err(|_| io::Error::other("the sync ring is full"))?;
        submit(ring, 1)?;
        let Some(cqe) = ring.completion().next() else {
            return Err(io::Error::other("io_uring fsync: no completion"));
        };
        match -cqe.result() {
            0 => return Ok(()),
            libc::EINTR | libc::EAGAIN => continue,
            errno => return Err(io::Error::from_raw_os_error(errno)),
        }
    }
}

/// The SQPOLL thread a ring set-up just added: a task not in `before` that names
/// itself `iou-sqp-PID`, which it does only once it runs, so it is looked for a few
/// times (untimed, at most about 20 ms); an io-wq worker of an earlier ring may appear
/// meanwhile and is not it. `None`: not found, and the run has no SQPOLL figure.
fn sq_thread_since(before: &[i32]) -> Option<i32> {
    for _ in 0..200 {
        let found = tasks().into_iter().filter(|tid| !before.contains(tid)).find(|tid| {
            let comm = std::fs::read_to_string(format!("/proc/self/task/{tid}/comm")).unwrap_or_default();
            comm.starts_with("iou-sqp")
        });
        if found.is_some() {
            return found;
        }
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
    None
}

/// This process's tasks (threads, the kernel's io threads among them).
fn tasks() -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return Vec::new() };
    tasks.flatten().filter_map(|task| task.file_name().to_str()?.parse().ok()).collect()
}

/// CPU seconds task `tid` of this process has used so far: its CPU clock, else
/// `se.sum_exec_runtime` of its sched file (milliseconds, to the nanosecond), else user + system from its stat
/// (clock ticks, 10 ms each on most kernels); `None` once the task is gone.
/// The CPU seconds so far of the io_uring worker threads (io-wq) that serve writer
/// `writer`'s requests: the kernel names them `iou-wrk-WRITER`, threads of this process.
/// A request the filesystem cannot take without blocking (a buffered write to a
/// filesystem without non-blocking writes) is handed to them, and each then costs a
/// worker's wake-up: the figure that says why such a case is slow (docs/measurement.md).
/// Workers started during the span count from 0; None where /proc cannot be read.
pub(super) fn io_wq_cpu_seconds(writer: i32) -> Option<f64> {
    let name = format!("iou-wrk-{writer}");
    let mut total = 0.0;
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if comm.trim_end() != name {
            continue;
        }
        let tid = task.file_name().to_str().and_then(|t| t.parse::<i32>().ok());
        total += tid.and_then(task_cpu_seconds).unwrap_or(0.0);
    }
    Some(total)
}

pub(super) fn task_cpu_seconds(tid: i32) -> Option<f64> {
    // First the task's CPU clock (as pthread_getcpuclockid makes it, for any task of
    // this thread group, io threads included): the kernel brings a running task's time
    // up to date when it is read, where the sched file shows it as of the last tick or
    // switch, so a poller that ran through a 1 ms run without either read as 0 s.
    let clock = (!(tid as libc::clockid_t) << 3) | 6; // CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a valid timespec to write; an unknown clock is an error return.
    if unsafe { libc::clock_gettime(clock, &mut now) } == 0 {
        return Some(now.tv_sec as f64 + now.tv_nsec as f64 * 1e-9);
    }
    let task = format!("/proc/self/task/{tid}");
    let sched = std::fs::read_to_string(format!("{task}/sched")).unwrap_or_default();
    let runtime = sched.lines().find_map(|line| line.strip_prefix("se.sum_exec_runtime")?.split(':').nth(1));
    if let Some(Ok(millis)) = runtime.map(|value| value.trim().parse::<f64>()) {
        return Some(millis * 1e-3);
    }
    let stat = std::fs::read_to_string(format!("{task}/stat")).ok()?;
    // The command may hold spaces and parentheses: the fields start after the last ')'.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the command.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    Some(ticks as f64 / hz)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};

    /// Between two reads of a spinning thread's CPU time, within a tick (4 ms at HZ=250)
    /// of each other, the time must have grown wherever the thread ran. Whether it ran
    /// is its own count of spins, read inside the two reads: on a busy machine (another
    /// program on both CPUs) it may not have, and such a pair says nothing either way.
    #[test]
    fn a_running_tasks_cpu_time_is_current_between_ticks() {
        let (tid, stop, spins) = (AtomicI32::new(0), AtomicBool::new(false), AtomicU64::new(0));
        std::thread::scope(|scope| {
            scope.spawn(|| {
                // SAFETY: gettid has no preconditions.
                tid.store(unsafe { libc::gettid() }, Ordering::Release);
                while !stop.load(Ordering::Acquire) {
                    spins.fetch_add(1, Ordering::Relaxed);
                    std::hint::spin_loop();
                }
            });
            while tid.load(Ordering::Acquire) == 0 {
                std::thread::yield_now();
            }
            let tid = tid.load(Ordering::Acquire);
            let (mut ran, mut grew) = (0, 0);
            for _ in 0..2000 {
                let before = task_cpu_seconds(tid).expect("a task of this process");
                let first = spins.load(Ordering::Acquire);
                std::thread::sleep(std::time::Duration::from_micros(500));
                let second = spins.load(Ordering::Acquire);
                let after = task_cpu_seconds(tid).unwrap();
                if second > first {
                    ran += 1;
                    grew += usize::from(after > before);
                }
                if ran == 20 {
                    break;
                }
            }
            stop.store(true, Ordering::Release);
            assert!(ran >= 10, "the spinning thread ran between only {ran} pairs of reads");
            assert!(grew * 10 >= ran * 9, "its CPU time grew in only {grew} of the {ran} pairs it ran between");
        });
    }
}
