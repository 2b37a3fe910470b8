//! io_uring writes (seed 004): `IORING_OP_WRITE` at explicit offsets with up to `--qd`
//! requests in flight, one ring per thread; and `io_uring-fixed`, the same with the
//! source buffer and the file registered once (`IORING_OP_WRITE_FIXED`, a fixed file).
//!
//! Every request in flight owns a slot, and the slot's index is its `user_data`. A slot
//! holds exactly the bytes still owed, so a short completion resubmits the remainder
//! and a completed request is never submitted again (seed 004's program resubmitted
//! stale entries of its last, partial batch).
//!
//! Each part has a buffer of its own (`io_uring-fixed` registers it with the part's
//! ring). Its blocks are re-stamped as the part goes round the buffer's period, so a
//! request is only issued when that re-stamps nothing a request in flight still reads
//! (`Cursor::take_in_flight`); the period is sized so that this rarely waits.

use std::io;
use std::marker::PhantomData;
use std::os::fd::RawFd;
use std::sync::{Mutex, OnceLock};

use ::io_uring::{IoUring, Probe, opcode, types};

use super::{CallError, Family, Job, Method, Prepared, no_progress};
use crate::error::retry;
use crate::measure::source::{Cursor, Writer};
use crate::plan::durability::Durability;

pub struct Uring {
    fixed: bool,
}

pub const PLAIN: Uring = Uring { fixed: false };
pub const FIXED: Uring = Uring { fixed: true };

/// The most one write can report (the kernel's MAX_RW_COUNT, below `i32::MAX` since the
/// result is an `i32`); a longer request completes short and the rest is resubmitted.
const MAX_REQUEST: usize = 0x7fff_f000;

impl Method for Uring {
    fn name(&self) -> &'static str {
        if self.fixed { "io_uring-fixed" } else { "io_uring" }
    }

    fn family(&self) -> Family {
        Family::Asynchronous
    }

    fn queued(&self) -> bool {
        true
    }

    fn shares_file(&self) -> bool {
        true
    }

    fn unsupported_reason(&self) -> Option<String> {
        availability().clone()
    }

    /// A sync every N writes would have to be ordered after the writes in flight
    /// (IOSQE_IO_DRAIN or linked fsyncs), which changes what is measured; not built.
    fn durability_refusal(&self, durability: Durability) -> Option<String> {
        durability.every().map(|_| {
            "io_uring: every:N is not implemented (a sync must drain the writes in flight); use end, osync or odsync"
                .to_string()
        })
    }

    fn prepare<'a>(&'a self, job: &'a Job<'a>) -> Result<Box<dyn Prepared + 'a>, CallError> {
        let depth = job.queue_depth.max(1);
        let entries = u32::try_from(depth).map_err(|_| {
            CallError::new(format!("io_uring setup with {depth} entries"), io::Error::from_raw_os_error(libc::EINVAL))
        })?;
        let mut rings = Vec::with_capacity(job.parts.len());
        for index in 0..job.parts.len() {
            let registered = self.fixed.then(|| job.source.writer(index));
            let queue = RingQueue::new(entries, job.span(index).fd, registered)?;
            rings.push(Mutex::new((queue, Slots::new(depth))));
        }
        Ok(Box::new(UringRun { job, rings }))
    }
}

/// Whether this process may create rings that write, asked once: io_uring can be
/// missing (ENOSYS), forbidden (EPERM under `kernel.io_uring_disabled`) or too old.
fn availability() -> &'static Option<String> {
    static REASON: OnceLock<Option<String>> = OnceLock::new();
    REASON.get_or_init(|| {
        let ring = match IoUring::new(2) {
            Ok(ring) => ring,
            Err(error) => return Some(format!("io_uring is not available: {error}{}", sysctl_note())),
        };
        let mut probe = Probe::new();
        // IORING_REGISTER_PROBE came in Linux 5.6, with IORING_OP_WRITE.
        if let Err(error) = ring.submitter().register_probe(&mut probe) {
            return Some(format!(
                "io_uring cannot list its operations (register_probe: {error}); writes need Linux 5.6"
            ));
        }
        [(opcode::Write::CODE, "IORING_OP_WRITE"), (opcode::WriteFixed::CODE, "IORING_OP_WRITE_FIXED")]
            .into_iter()
            .find(|(code, _)| !probe.is_supported(*code))
            .map(|(_, name)| format!("io_uring lacks {name}"))
    })
}

/// "; kernel.io_uring_disabled = N" where the kernel has that switch, so the reason
/// says which knob refused.
fn sysctl_note() -> String {
    match std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled") {
        Ok(value) => format!("; kernel.io_uring_disabled = {}", value.trim()),
        Err(_) => String::new(),
    }
}

/// A prepared run: one ring per part, each locked by the one thread that writes it.
struct UringRun<'a> {
    job: &'a Job<'a>,
    rings: Vec<Mutex<(RingQueue<'a>, Slots<'a>)>>,
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
        drive(queue, slots, self.job.source.writer(index), part.offset, part.len, self.job.chunk)
    }

    fn sync(&self) -> Result<(), CallError> {
        self.job.sync_files()
    }

    fn sync_part(&self, index: usize) -> Result<(), CallError> {
        self.job.sync_part_file(index)
    }
}

/// One write still owed: where it goes and exactly the bytes that go there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Request<'a> {
    offset: u64,
    bytes: &'a [u8],
}

/// The requests of one ring by slot, plus room for one batch of completions; allocated
/// in `prepare` so the timed loop allocates nothing.
struct Slots<'a> {
    owed: Vec<Option<Request<'a>>>,
    free: Vec<usize>,
    reaped: Vec<(u64, i32)>,
}

impl Slots<'_> {
    fn new(depth: usize) -> Self {
        Slots { owed: vec![None; depth], free: (0..depth).rev().collect(), reaped: Vec::with_capacity(depth) }
    }

    fn in_flight(&self) -> usize {
        self.owed.len() - self.free.len()
    }

    /// Ends the request in `slot`.
    fn release(&mut self, slot: usize) {
        self.owed[slot] = None;
        self.free.push(slot);
    }
}

/// What [`drive`] needs from a ring; the tests put a scripted kernel behind it.
trait Queue<'a> {
    /// Queues one write whose completion carries `slot` as its user data.
    fn push(&mut self, slot: usize, request: Request<'a>) -> io::Result<()>;
    /// Submits what is queued, waits for at least one completion, and appends every
    /// available completion as (user data, result).
    fn submit_and_reap(&mut self, reaped: &mut Vec<(u64, i32)>) -> io::Result<()>;
}

/// Writes `len` bytes at `offset` in requests of `chunk` bytes (the last one shorter),
/// keeping every free slot busy, unless the next request's bytes would re-stamp some
/// that a request in flight still reads: then it waits for completions first. After a
/// failure it issues nothing new but still reaps what is in flight, so no request
/// outlives the call; the first error is returned.
fn drive<'a>(
    queue: &mut impl Queue<'a>,
    slots: &mut Slots<'a>,
    source: &'a Writer,
    offset: u64,
    len: u64,
    chunk: usize,
) -> Result<(), CallError> {
    // The part's cursor, borrowing its buffer for 'a, as long as the slots hold slices.
    let mut cursor = source.cursor(offset);
    // At or before the first file offset still in flight: the requests in flight only
    // ever move forward (a remainder lies after its request, new ones after all).
    let mut oldest = offset;
    let chunk = chunk.max(1);
    let (mut next, end) = (offset, offset + len);
    let mut failure: Option<CallError> = None;
    let describe =
        |request: &Request| format!("io_uring write of {} bytes at offset {}", request.bytes.len(), request.offset);
    loop {
        while failure.is_none() && next < end {
            let Some(slot) = slots.free.pop() else { break };
            let want = chunk.min((end - next) as usize);
            let Some(bytes) = take_for_request(&mut cursor, want, &mut oldest, &slots.owed) else {
                // Wait for a completion. With nothing in flight a take always succeeds;
                // were it not so, stop here rather than leave the part short unsaid.
                slots.free.push(slot);
                if slots.in_flight() == 0 {
                    let error = io::Error::other("the part's source buffer refused a request with none in flight");
                    failure = Some(CallError::new("io_uring", error));
                }
                break;
            };
            let request = Request { offset: next, bytes };
            next += want as u64;
            match queue.push(slot, request) {
                Ok(()) => slots.owed[slot] = Some(request),
                Err(error) => {
                    slots.free.push(slot);
                    failure = Some(CallError::new(describe(&request), error));
                }
            }
        }
        if slots.in_flight() == 0 {
            break;
        }
        if let Err(error) = queue.submit_and_reap(&mut slots.reaped) {
            // The ring itself failed, so nothing more can be reaped; dropping the ring
            // cancels what is left.
            return Err(failure.unwrap_or(CallError::new("io_uring_enter", error)));
        }
        for index in 0..slots.reaped.len() {
            let (user_data, res) = slots.reaped[index];
            let slot = user_data as usize;
            let Some(request) = slots.owed.get(slot).copied().flatten() else {
                let error = io::Error::other(format!("user_data {user_data} names no request in flight"));
                failure.get_or_insert(CallError::new("io_uring completion", error));
                continue;
            };
            match settle(request, res) {
                Ok(Some(rest)) if failure.is_none() => {
                    if let Err(error) = queue.push(slot, rest) {
                        slots.release(slot);
                        failure = Some(CallError::new(describe(&rest), error));
                    } else {
                        slots.owed[slot] = Some(rest);
                    }
                }
                Ok(_) => slots.release(slot),
                Err(error) => {
                    slots.release(slot);
                    failure.get_or_insert(CallError::new(describe(&request), error));
                }
            }
        }
        slots.reaped.clear();
    }
    failure.map_or(Ok(()), Err)
}

/// The bytes of the next request, if taking them re-stamps nothing a request in flight
/// reads; `oldest` is kept at or before the first offset in flight, and only brought
/// up to date (a scan of the slots) when it holds a take back.
fn take_for_request<'a>(
    cursor: &mut Cursor<'a>,
    want: usize,
    oldest: &mut u64,
    owed: &[Option<Request<'a>>],
) -> Option<&'a [u8]> {
    // SAFETY (both takes): every slice of this cursor still in use is a request in
    // `owed`, and every one of those lies at `*oldest` or later (see `drive`); the
    // cursor is never restarted.
    if let Some(bytes) = unsafe { cursor.take_in_flight(want, *oldest) } {
        return Some(bytes);
    }
    *oldest = owed.iter().flatten().map(|request| request.offset).min().unwrap_or(cursor.offset());
    unsafe { cursor.take_in_flight(want, *oldest) }
}

/// What completion result `res` means for `request`: done (`None`), the bytes still
/// owed (`Some`: the same request after EINTR or EAGAIN, the remainder after a short
/// write), or the error that ends the part.
fn settle(request: Request<'_>, res: i32) -> io::Result<Option<Request<'_>>> {
    if res < 0 {
        return match -res {
            libc::EINTR | libc::EAGAIN => Ok(Some(request)),
            errno => Err(io::Error::from_raw_os_error(errno)),
        };
    }
    let (written, len) = (res as usize, request.bytes.len());
    if written == 0 && len > 0 {
        Err(no_progress())
    } else if written > len {
        Err(io::Error::other(format!("the kernel reports {written} bytes written of {len}")))
    } else if written == len {
        Ok(None)
    } else {
        Ok(Some(Request { offset: request.offset + written as u64, bytes: &request.bytes[written..] }))
    }
}

/// A real ring over one part's file. `'a` is the borrow of the part's buffer: the
/// requests point into it, so the ring must not outlive it.
struct RingQueue<'a> {
    ring: IoUring,
    /// The descriptor for plain writes; `None` when the file and buffer are registered
    /// (both at index 0).
    fd: Option<RawFd>,
    /// Created disabled; enabled by the writer thread on first use.
    disabled: bool,
    source: PhantomData<&'a Writer>,
}

impl<'a> RingQueue<'a> {
    /// A ring of `entries` (untimed); with `registered`, the part's whole buffer and
    /// the file are registered with it once, so no write pins pages or looks up the fd.
    fn new(entries: u32, fd: RawFd, registered: Option<&'a Writer>) -> Result<Self, CallError> {
        let (ring, disabled) = new_ring(entries)
            .map_err(|error| CallError::new(format!("io_uring setup with {entries} entries"), error))?;
        let Some(source) = registered else {
            return Ok(RingQueue { ring, disabled, fd: Some(fd), source: PhantomData });
        };
        let (base, len) = source.region();
        let iovec = libc::iovec { iov_base: base as *mut libc::c_void, iov_len: len };
        // SAFETY: the buffer stays mapped for 'a, longer than the ring (a run holds both
        // borrows and drops the ring first). The kernel reads it only for requests,
        // whose bytes are not re-stamped while they are in flight.
        unsafe { ring.submitter().register_buffers(&[iovec]) }.map_err(|error| {
            let hint = match error.raw_os_error() {
                Some(libc::ENOMEM) => " (pinned pages count against RLIMIT_MEMLOCK)",
                Some(libc::EFAULT) if len > 1 << 30 => " (the kernel registers at most 1 GiB per buffer)",
                _ => "",
            };
            CallError::new(format!("io_uring register_buffers of {len} bytes{hint}"), error)
        })?;
        ring.submitter().register_files(&[fd]).map_err(|error| CallError::new("io_uring register_files", error))?;
        Ok(RingQueue { ring, disabled, fd: None, source: PhantomData })
    }
}

impl RingQueue<'_> {
    /// Makes this thread the ring's single issuer; a no-op for a ring not set up disabled.
    fn enable(&mut self) -> io::Result<()> {
        if self.disabled {
            self.ring.submitter().register_enable_rings()?;
            self.disabled = false;
        }
        Ok(())
    }
}

impl<'a> Queue<'a> for RingQueue<'a> {
    fn push(&mut self, slot: usize, request: Request<'a>) -> io::Result<()> {
        let (ptr, len) = (request.bytes.as_ptr(), request.bytes.len().min(MAX_REQUEST) as u32);
        let entry = match self.fd {
            Some(fd) => opcode::Write::new(types::Fd(fd), ptr, len).offset(request.offset).build(),
            None => opcode::WriteFixed::new(types::Fixed(0), ptr, len, 0).offset(request.offset).build(),
        }
        .user_data(slot as u64);
        for _ in 0..2 {
            // SAFETY: the entry reads `len` bytes of the part's buffer, alive for 'a, which
            // outlives the ring; for WriteFixed they lie inside registered buffer 0.
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                return Ok(());
            }
            // Full (it cannot be with one entry per slot, but be sure): make room.
            submit(&self.ring, 0)?;
        }
        Err(io::Error::other("the io_uring submission queue stays full"))
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
/// on first use. Older kernels refuse the flags with EINVAL: a plain ring then.
fn new_ring(entries: u32) -> io::Result<(IoUring, bool)> {
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
/// the shared queue, so the retry submits exactly those.
fn submit(ring: &IoUring, want: usize) -> io::Result<()> {
    retry(|| ring.submit_and_wait(want).map(drop))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::source::{BLOCK, PERIOD, Source, Stream};

    /// The stream the tests' parts write, with a period of `period` bytes.
    fn stream(period: usize) -> Stream {
        Stream::timed(5, "part", period)
    }

    /// A scripted kernel: per wait, completes the newest two queued writes (so out of
    /// order) with results from `script`, into `file`, counting writes of every byte.
    struct Kernel<'a, F: FnMut(&Request) -> i32> {
        queued: Vec<(u64, Request<'a>)>,
        file: Vec<u8>,
        writes: Vec<u32>,
        most_in_flight: usize,
        duplicate_first: bool,
        script: F,
    }

    impl<'a, F: FnMut(&Request) -> i32> Queue<'a> for Kernel<'a, F> {
        fn push(&mut self, slot: usize, request: Request<'a>) -> io::Result<()> {
            self.queued.push((slot as u64, request));
            Ok(())
        }

        fn submit_and_reap(&mut self, reaped: &mut Vec<(u64, i32)>) -> io::Result<()> {
            assert!(!self.queued.is_empty(), "waiting with nothing in flight would block forever");
            self.most_in_flight = self.most_in_flight.max(self.queued.len());
            for _ in 0..2 {
                let Some((slot, request)) = self.queued.pop() else { break };
                let res = (self.script)(&request);
                let at = request.offset as usize;
                for (index, &byte) in request.bytes[..res.max(0) as usize].iter().enumerate() {
                    self.file[at + index] = byte;
                    self.writes[at + index] += 1;
                }
                reaped.push((slot, res));
                if std::mem::take(&mut self.duplicate_first) {
                    reaped.push((slot, res));
                }
            }
            Ok(())
        }
    }

    /// Drives a part of `len` bytes at `offset` in 1000-byte requests over a kernel;
    /// returns the file, the writes of each byte, the most in flight, and the result.
    fn run(depth: usize, offset: u64, len: u64, duplicate: bool, script: impl FnMut(&Request) -> i32) -> Outcome {
        run_in(PERIOD, depth, offset, len, duplicate, script)
    }

    /// As `run`, from a part's buffer of `period` bytes.
    fn run_in(
        period: usize,
        depth: usize,
        offset: u64,
        len: u64,
        duplicate: bool,
        script: impl FnMut(&Request) -> i32,
    ) -> Outcome {
        let source = Source::new(5);
        let writer = Writer::new(&source, stream(period), period, 1000).unwrap();
        let size = (offset + len) as usize;
        let (file, writes, queued) = (vec![0; size], vec![0; size], Vec::new());
        let mut kernel = Kernel { queued, file, writes, most_in_flight: 0, duplicate_first: duplicate, script };
        let result = drive(&mut kernel, &mut Slots::new(depth), &writer, offset, len, 1000);
        assert!(kernel.queued.is_empty(), "no request outlives drive");
        (kernel.file, kernel.writes, kernel.most_in_flight, result)
    }

    type Outcome = (Vec<u8>, Vec<u32>, usize, Result<(), CallError>);

    fn full(request: &Request) -> i32 {
        request.bytes.len() as i32
    }

    #[test]
    fn short_and_retried_completions_out_of_order_write_every_byte_once() {
        let source = Source::new(5);
        for depth in [1, 3, 8] {
            // Every third completion EAGAIN, every other one short by half.
            let mut calls = 0;
            let script = |request: &Request| {
                calls += 1;
                let short = (full(request) / 2).max(1);
                if calls % 3 == 0 {
                    -libc::EAGAIN
                } else if calls % 2 == 0 {
                    short
                } else {
                    full(request)
                }
            };
            let (file, writes, most_in_flight, result) = run(depth, 5000, 10_500, false, script);
            result.unwrap();
            assert!(writes[..5000].iter().all(|&n| n == 0), "depth {depth}: nothing before the part");
            assert!(writes[5000..].iter().all(|&n| n == 1), "depth {depth}: every byte once");
            assert_eq!(stream(PERIOD).first_mismatch(&source, 5000, &file[5000..]), None, "depth {depth}");
            assert_eq!(most_in_flight, depth, "depth {depth}: the queue is kept full");
        }
    }

    #[test]
    fn requests_near_the_period_wait_rather_than_have_their_bytes_restamped() {
        // 16 requests of 1000 bytes, in a buffer of 16 KiB: more in flight than the
        // period holds. The kernel completes the newest first, so the oldest request
        // stays in flight while the part goes round the buffer; the driver must wait
        // for it rather than re-stamp the block it still reads.
        let source = Source::new(5);
        let period = 4 * BLOCK;
        for depth in [4, 12, 16] {
            let (file, writes, most_in_flight, result) = run_in(period, depth, 3000, 100_000, false, full);
            result.unwrap();
            assert!(writes[3000..].iter().all(|&n| n == 1), "depth {depth}: every byte once");
            assert_eq!(stream(period).first_mismatch(&source, 3000, &file[3000..]), None, "depth {depth}");
            // 16 requests span more than the buffer's blocks: some had to wait.
            assert!(depth < 16 || most_in_flight < depth, "depth {depth}: {most_in_flight} in flight");
        }
    }

    #[test]
    fn an_error_names_the_write_and_the_rest_in_flight_is_reaped() {
        let script = |request: &Request| if request.offset == 4000 { -libc::ENOSPC } else { full(request) };
        let (_, writes, _, result) = run(4, 0, 10_000, false, script);
        let error = result.unwrap_err().to_string();
        assert_eq!(error, "io_uring write of 1000 bytes at offset 4000: No space left on device (os error 28)");
        assert!(writes.iter().all(|&n| n <= 1));
        assert!(writes[4000..5000].iter().all(|&n| n == 0));
    }

    #[test]
    fn a_completion_for_a_finished_request_is_an_error_not_a_resubmission() {
        let (_, writes, _, result) = run(2, 0, 5000, true, full);
        let error = result.unwrap_err().to_string();
        assert!(error.contains("names no request in flight"), "{error}");
        assert!(writes.iter().all(|&n| n <= 1), "nothing written twice");
    }

    #[test]
    fn settle_tells_done_remainder_retry_and_error_apart() {
        let bytes = [1u8, 2, 3, 4, 5];
        let request = Request { offset: 100, bytes: &bytes };
        assert_eq!(settle(request, 5).unwrap(), None);
        assert_eq!(settle(request, 2).unwrap(), Some(Request { offset: 102, bytes: &bytes[2..] }));
        assert_eq!(settle(request, -libc::EAGAIN).unwrap(), Some(request));
        assert_eq!(settle(request, -libc::EINTR).unwrap(), Some(request));
        assert_eq!(settle(request, -libc::EIO).unwrap_err().raw_os_error(), Some(libc::EIO));
        assert_eq!(settle(request, 0).unwrap_err().kind(), io::ErrorKind::WriteZero);
        assert!(settle(request, 6).is_err());
    }
}
