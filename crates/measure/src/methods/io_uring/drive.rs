//! The loop that keeps one ring busy: requests by slot, short completions resubmitted,
//! and `every:N` as an `IORING_OP_FSYNC` linked (`IOSQE_IO_LINK`) to the write that
//! completes a batch. It knows the ring only through [`Queue`], so the tests put a
//! scripted kernel behind it.
//!
//! Why the writes in flight are drained before the linked pair rather than the whole
//! batch linked: IO_LINK orders only the requests of one chain, so a fsync linked to the
//! Nth write says nothing of the N-1 before it that are still in flight, and would not
//! make them durable. Linking all N writes would, but a chain runs one request at a
//! time, so the queue depth would fall to 1 for every batch (and the threads of a case,
//! each with its own ring, cannot share a chain). So the Nth write waits until every
//! write counted before it has completed (this ring's and, through [`Ledger`], the other
//! threads' of the case), then goes in linked to the fsync, and no new write is issued
//! until that fsync completes: the loop cannot go on until the sync returns, as with
//! the other methods' `every:N`.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering, fence};

use super::super::{CallError, no_progress};
use crate::durability::Pacer;
use crate::source::{Cursor, Writer};
use plan::durability::SyncCall;

/// The `user_data` of a fsync request: no slot has it.
pub(super) const SYNC: u64 = u64::MAX;

/// One write still owed: where it goes and exactly the bytes that go there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Request<'a> {
    pub offset: u64,
    pub bytes: &'a [u8],
}

/// The requests of one ring by slot, plus room for one batch of completions; allocated
/// in `prepare` so the timed loop allocates nothing.
pub(super) struct Slots<'a> {
    owed: Vec<Option<Request<'a>>>,
    /// Per slot: the request's place in the case's `every:N` count, and whether it is
    /// linked to a fsync (its remainder must be too).
    counted: Vec<(u64, bool)>,
    free: Vec<usize>,
    reaped: Vec<(u64, i32)>,
}

impl Slots<'_> {
    pub fn new(depth: usize) -> Self {
        Slots {
            owed: vec![None; depth],
            counted: vec![(0, false); depth],
            free: (0..depth).rev().collect(),
            reaped: Vec::with_capacity(depth + 2),
        }
    }

    fn in_flight(&self) -> usize {
        self.owed.len() - self.free.len()
    }

    /// Ends the request in `slot`.
    fn release(&mut self, slot: usize) {
        self.owed[slot] = None;
        self.free.push(slot);
    }

    /// The first count still owed by this ring, and `held` (counted, not issued).
    fn oldest_count(&self, held: Option<u64>) -> u64 {
        let owed = self.owed.iter().zip(&self.counted).filter(|(owed, _)| owed.is_some());
        owed.map(|(_, (count, _))| *count).chain(held).min().unwrap_or(u64::MAX)
    }
}

/// What [`drive`] needs from a ring.
pub(super) trait Queue<'a> {
    /// Queues one write whose completion carries `slot` as its user data; with `link`,
    /// the next request queued (a fsync) starts only after it completes in full.
    fn push(&mut self, slot: usize, request: Request<'a>, link: bool) -> io::Result<()>;
    /// Queues a fsync (or fdatasync) of the file, with user data [`SYNC`].
    fn push_sync(&mut self, call: SyncCall) -> io::Result<()>;
    /// Submits what is queued, waits for at least one completion, and appends every
    /// available completion as (user data, result).
    fn submit_and_reap(&mut self, reaped: &mut Vec<(u64, i32)>) -> io::Result<()>;
}

/// What one ring submitted besides plain writes, for the run's record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Tally {
    /// Writes with IOSQE_IO_LINK (a remainder resubmitted linked counts again).
    pub linked_writes: u64,
    /// IORING_OP_FSYNC requests linked to a write.
    pub linked_fsyncs: u64,
    /// IORING_OP_FSYNC requests on their own (the calls left at the end of every:N).
    pub fsyncs: u64,
    /// Fsyncs the kernel cancelled (-ECANCELED) because their linked write was short or
    /// failed; each was issued again after the rest of the write.
    pub cancelled_fsyncs: u64,
}

/// Where each writer of a case stands in the `every:N` count: the first count it has
/// taken and not yet seen written ([`u64::MAX`]: none). The writer whose count
/// completes a batch waits until every other writer is past it, so that its fsync
/// follows every write of the batch, whichever ring it went through.
pub(super) struct Ledger {
    /// One per writer into a shared file; empty with a file per writer, where a fsync
    /// covers only its own writer's file and waits for no one.
    oldest: Vec<AtomicU64>,
    failed: AtomicBool,
}

impl Ledger {
    pub fn new(writers: usize, shared_file: bool) -> Ledger {
        let writers = if shared_file { writers } else { 0 };
        Ledger { oldest: (0..writers).map(|_| AtomicU64::new(u64::MAX)).collect(), failed: AtomicBool::new(false) }
    }

    /// Before a writer takes a count: it may be about to hold any count, so others
    /// wait for it (the count it takes comes after this store in the SeqCst order).
    fn counting(&self, part: usize) {
        self.set(part, 0);
        fence(Ordering::SeqCst);
    }

    fn set(&self, part: usize, oldest: u64) {
        if let Some(slot) = self.oldest.get(part) {
            slot.store(oldest, Ordering::SeqCst);
        }
    }

    /// Waits until every other writer has written every count before `count`; an
    /// error when one of them failed (it will write nothing more).
    fn wait_before(&self, part: usize, count: u64) -> io::Result<()> {
        fence(Ordering::SeqCst);
        loop {
            if self.failed.load(Ordering::SeqCst) {
                return Err(io::Error::other("another writer of the case failed before this batch's sync"));
            }
            let mut others = self.oldest.iter().enumerate().filter(|(other, _)| *other != part);
            if !others.any(|(_, oldest)| oldest.load(Ordering::SeqCst) < count) {
                return Ok(());
            }
            std::thread::yield_now();
        }
    }

    fn fail(&self) {
        self.failed.store(true, Ordering::SeqCst);
    }
}

/// `every:N` for one ring: the writer's pacer (the case's count), the case's ledger,
/// this writer's place in it, and the call.
pub(super) struct Every<'p> {
    pub pacer: Pacer<'p>,
    pub ledger: &'p Ledger,
    pub part: usize,
    pub call: SyncCall,
}

/// Writes `len` bytes at `offset` in requests of `chunk` bytes (the last one shorter),
/// keeping every free slot busy, unless the next request's bytes would re-stamp some
/// that a request in flight still reads: then it waits for completions first. With
/// `every`, the request that completes a batch waits for the writes before it and goes
/// in linked to a fsync (see the module's notes), and the calls left at the end are
/// synced by a fsync request. After a failure it issues nothing new but still reaps
/// what is in flight, so no request outlives the call; the first error is returned.
///
/// Past 120 lines on purpose: one submit-and-reap loop whose state (the next request,
/// the free slots, a batch waiting for its linked fsync, the first error, the requests in
/// flight) every step reads and changes; in pieces, each would take all of it.
#[allow(clippy::too_many_arguments)] // one call site per caller; a struct would only rename them
pub(super) fn drive<'a>(
    queue: &mut impl Queue<'a>,
    slots: &mut Slots<'a>,
    source: &'a Writer,
    offset: u64,
    len: u64,
    chunk: usize,
    mut every: Option<Every<'_>>,
    tally: &mut Tally,
    at_wall: &dyn Fn(u64) -> bool,
) -> Result<(), CallError> {
    // The part's cursor, borrowing its buffer for 'a, as long as the slots hold slices.
    let mut cursor = source.cursor(offset);
    // At or before the first file offset still in flight: the requests in flight only
    // ever move forward (a remainder lies after its request, new ones after all).
    let mut oldest = offset;
    let chunk = chunk.max(1);
    let (mut next, mut end) = (offset, offset + len);
    let mut failure: Option<CallError> = None;
    // The request that completes a batch, counted, waiting for the writes before it.
    let mut held: Option<(Request<'a>, u64)> = None;
    // Fsync requests in flight (a cancelled one is replaced before it is reaped).
    let mut syncing = 0usize;
    let mut ended = false;
    let describe =
        |request: &Request| format!("io_uring write of {} bytes at offset {}", request.bytes.len(), request.offset);
    loop {
        while failure.is_none() && held.is_none() && syncing == 0 && next < end {
            // --stonewall: no new request past the wall; what is in flight completes,
            // as a part that ended here would.
            if at_wall(next) {
                end = next;
                break;
            }
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
            let mut count = 0;
            if let Some(every) = every.as_mut() {
                every.ledger.counting(every.part);
                let (at, due) = every.pacer.due_at().unwrap_or((0, false));
                count = at;
                every.ledger.set(every.part, slots.oldest_count(Some(at)));
                if due {
                    slots.free.push(slot);
                    held = Some((request, at));
                    break;
                }
            }
            match queue.push(slot, request, false) {
                Ok(()) => {
                    slots.owed[slot] = Some(request);
                    slots.counted[slot] = (count, false);
                }
                Err(error) => {
                    slots.free.push(slot);
                    failure = Some(CallError::new(describe(&request), error));
                }
            }
        }
        if let (Some((request, count)), Some(every), true) =
            (held, every.as_ref(), failure.is_none() && slots.in_flight() == 0)
        {
            held = None;
            let slot = slots.free.pop().expect("a free slot with nothing in flight");
            // Into one file, the sync covers every ring's writes counted before it; with
            // a file each, only this ring's (`Pacing`), which are all completed here.
            let waited = if every.pacer.shared_file() { every.ledger.wait_before(every.part, count) } else { Ok(()) };
            let linked =
                waited.and_then(|()| queue.push(slot, request, true)).and_then(|()| queue.push_sync(every.call));
            match linked {
                Ok(()) => {
                    slots.owed[slot] = Some(request);
                    slots.counted[slot] = (count, true);
                    syncing += 1;
                    tally.linked_writes += 1;
                    tally.linked_fsyncs += 1;
                }
                Err(error) => {
                    slots.free.push(slot);
                    let what = format!("{} linked to {}", describe(&request), every.call.name());
                    failure = Some(CallError::new(what, error));
                }
            }
        }
        if failure.is_some() {
            // Never issued: nothing to reap, nothing written.
            held = None;
        }
        if slots.in_flight() == 0 && syncing == 0 {
            // Every write is in (or the part failed). The calls left at the end of
            // every:N: one fsync request, when the pacer says this writer owes it.
            let Some(every) = every.as_mut().filter(|_| failure.is_none() && !ended) else { break };
            ended = true;
            every.ledger.set(every.part, u64::MAX);
            if !every.pacer.at_end() {
                break;
            }
            if let Err(error) = queue.push_sync(every.call) {
                failure = Some(CallError::new(format!("io_uring {}", every.call.name()), error));
                break;
            }
            syncing += 1;
            tally.fsyncs += 1;
        }
        if let Err(error) = queue.submit_and_reap(&mut slots.reaped) {
            // The ring itself failed, so nothing more can be reaped; dropping the ring
            // cancels what is left.
            if let Some(every) = &every {
                every.ledger.fail();
            }
            return Err(failure.unwrap_or(CallError::new("io_uring_enter", error)));
        }
        for index in 0..slots.reaped.len() {
            let (user_data, res) = slots.reaped[index];
            if user_data == SYNC {
                syncing = syncing.saturating_sub(1);
                let call = every.as_ref().map_or(SyncCall::Fsync, |every| every.call);
                match -res {
                    0 => {}
                    // The linked write was short or failed: its completion (reaped in
                    // this batch or the next) issues the rest and a new fsync, or ends
                    // the part.
                    libc::ECANCELED => tally.cancelled_fsyncs += 1,
                    libc::EINTR | libc::EAGAIN => match queue.push_sync(call) {
                        Ok(()) => syncing += 1,
                        Err(error) => failure = Some(CallError::new(format!("io_uring {}", call.name()), error)),
                    },
                    errno if errno > 0 => {
                        let error = io::Error::from_raw_os_error(errno);
                        failure.get_or_insert(CallError::new(format!("io_uring {}", call.name()), error));
                    }
                    _ => {}
                }
                continue;
            }
            let slot = user_data as usize;
            let Some(request) = slots.owed.get(slot).copied().flatten() else {
                let error = io::Error::other(format!("user_data {user_data} names no request in flight"));
                failure.get_or_insert(CallError::new("io_uring completion", error));
                continue;
            };
            let linked = slots.counted[slot].1;
            match settle(request, res) {
                Ok(Some(rest)) if failure.is_none() => {
                    // A linked request goes again linked, with a fsync after it: the
                    // kernel cancelled the first one.
                    let pushed = queue.push(slot, rest, linked);
                    let pushed = match (pushed, &every) {
                        (Ok(()), Some(every)) if linked => queue.push_sync(every.call).map(|()| {
                            syncing += 1;
                            tally.linked_writes += 1;
                            tally.linked_fsyncs += 1;
                        }),
                        (pushed, _) => pushed,
                    };
                    if let Err(error) = pushed {
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
        if let Some(every) = &every {
            if failure.is_some() {
                every.ledger.fail();
            }
            every.ledger.set(every.part, slots.oldest_count(held.map(|(_, count)| count)));
        }
    }
    if let (Some(every), Some(_)) = (&every, &failure) {
        every.ledger.fail();
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
pub(super) fn settle(request: Request<'_>, res: i32) -> io::Result<Option<Request<'_>>> {
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
