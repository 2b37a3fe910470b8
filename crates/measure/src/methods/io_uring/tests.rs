//! The driver over a scripted kernel: out-of-order, short and failed completions,
//! and every:N's linked fsyncs.

use std::io;

use super::drive::{Every, Ledger, Queue, Request, SYNC, Slots, Tally, drive, settle};
use crate::durability::Pacing;
use crate::methods::CallError;
use crate::source::Writer;
use crate::source::{BLOCK, PERIOD, Source, Stream};
use plan::durability::SyncCall;

/// The stream the tests' parts write, with a period of `period` bytes.
fn stream(period: usize) -> Stream {
    Stream::timed(5, "part", period)
}

/// One queued request of the scripted kernel.
#[derive(Clone, Copy)]
enum Sqe<'a> {
    Write { slot: u64, request: Request<'a>, link: bool },
    Sync,
}

/// A scripted kernel: per wait, completes the newest two queued requests (so out of
/// order) with results from `script`, into `file`, counting writes of every byte. A
/// fsync linked to a write completes after it, or -ECANCELED when the write was not
/// complete; each fsync that succeeds records how many bytes were written by then.
struct Kernel<'a, F: FnMut(&Request) -> i32> {
    queued: Vec<Sqe<'a>>,
    file: Vec<u8>,
    writes: Vec<u32>,
    most_in_flight: usize,
    duplicate_first: bool,
    script: F,
    /// Bytes written when each fsync completed.
    synced_at: Vec<usize>,
    /// The result of fsyncs (0, or a negative errno).
    sync_result: i32,
}

impl<'a, F: FnMut(&Request) -> i32> Kernel<'a, F> {
    fn write(&mut self, slot: u64, request: Request<'a>, reaped: &mut Vec<(u64, i32)>) -> i32 {
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
        res
    }

    fn sync(&mut self, reaped: &mut Vec<(u64, i32)>) {
        if self.sync_result == 0 {
            self.synced_at.push(self.writes.iter().map(|&n| n as usize).sum());
        }
        reaped.push((SYNC, self.sync_result));
    }
}

impl<'a, F: FnMut(&Request) -> i32> Queue<'a> for Kernel<'a, F> {
    fn push(&mut self, slot: usize, request: Request<'a>, link: bool) -> io::Result<()> {
        self.queued.push(Sqe::Write { slot: slot as u64, request, link });
        Ok(())
    }

    fn push_sync(&mut self, _call: SyncCall) -> io::Result<()> {
        self.queued.push(Sqe::Sync);
        Ok(())
    }

    fn submit_and_reap(&mut self, reaped: &mut Vec<(u64, i32)>) -> io::Result<()> {
        assert!(!self.queued.is_empty(), "waiting with nothing in flight would block forever");
        let writes = self.queued.iter().filter(|sqe| matches!(sqe, Sqe::Write { .. })).count();
        self.most_in_flight = self.most_in_flight.max(writes);
        for _ in 0..2 {
            match self.queued.pop() {
                None => break,
                Some(Sqe::Write { slot, request, link }) => {
                    assert!(!link, "a linked write is queued right before its fsync");
                    self.write(slot, request, reaped);
                }
                Some(Sqe::Sync) => match self.queued.last().copied() {
                    Some(Sqe::Write { slot, request, link: true }) => {
                        self.queued.pop();
                        let res = self.write(slot, request, reaped);
                        if res == request.bytes.len() as i32 {
                            self.sync(reaped);
                        } else {
                            reaped.push((SYNC, -libc::ECANCELED));
                        }
                    }
                    _ => self.sync(reaped),
                },
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
    let (outcome, _) = drive_over(&writer, depth, offset, len, duplicate, None, script);
    outcome
}

/// Drives a part over a scripted kernel, with `every` = (N, fsync result) for every:N;
/// returns the outcome, and the bytes written at each fsync and the tally.
fn drive_over(
    writer: &Writer,
    depth: usize,
    offset: u64,
    len: u64,
    duplicate: bool,
    every: Option<(u32, i32)>,
    script: impl FnMut(&Request) -> i32,
) -> (Outcome, (Vec<usize>, Tally)) {
    let size = (offset + len) as usize;
    let (file, writes, queued) = (vec![0; size], vec![0; size], Vec::new());
    let sync_result = every.map_or(0, |(_, res)| res);
    let mut kernel = Kernel {
        queued,
        file,
        writes,
        most_in_flight: 0,
        duplicate_first: duplicate,
        script,
        synced_at: Vec::new(),
        sync_result,
    };
    let pacing = Pacing::new(every.map(|(n, _)| (n, SyncCall::Fdatasync)), 1, 1);
    let ledger = Ledger::new(1, true);
    let every = every.map(|_| Every { pacer: pacing.pacer(), ledger: &ledger, part: 0, call: SyncCall::Fdatasync });
    let mut tally = Tally::default();
    let result = drive(&mut kernel, &mut Slots::new(depth), writer, offset, len, 1000, every, &mut tally, &|_| false);
    assert!(kernel.queued.is_empty(), "no request outlives drive");
    ((kernel.file, kernel.writes, kernel.most_in_flight, result), (kernel.synced_at, tally))
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

#[test]
fn every_n_links_a_fsync_to_the_write_that_ends_each_batch_after_the_writes_before_it() {
    // 10,500 bytes in 1000-byte requests: 11 writes; every:4 makes 2 linked fsyncs,
    // each after exactly 4 and 8 writes in full, and one for the 3 left at the end.
    let source = Source::new(5);
    let writer = Writer::new(&source, stream(PERIOD), PERIOD, 1000).unwrap();
    for depth in [1, 3, 8, 32] {
        let ((file, writes, _, result), (synced_at, tally)) =
            drive_over(&writer, depth, 0, 10_500, false, Some((4, 0)), full);
        result.unwrap();
        assert!(writes.iter().all(|&n| n == 1), "depth {depth}: every byte once");
        assert_eq!(stream(PERIOD).first_mismatch(&source, 0, &file), None, "depth {depth}");
        assert_eq!(synced_at, [4000, 8000, 10_500], "depth {depth}: each fsync after all of its batch");
        let expected = Tally { linked_writes: 2, linked_fsyncs: 2, fsyncs: 1, cancelled_fsyncs: 0 };
        assert_eq!(tally, expected, "depth {depth}");
    }
}

#[test]
fn a_short_linked_write_cancels_its_fsync_and_the_rest_goes_again_linked_to_a_new_one() {
    // The 4th write (offset 3000, linked) completes short the first time: the kernel
    // cancels its fsync, the driver issues the remainder linked to a fresh fsync.
    let source = Source::new(5);
    let writer = Writer::new(&source, stream(PERIOD), PERIOD, 1000).unwrap();
    for depth in [1, 8] {
        let mut shortened = false;
        let script = |request: &Request| {
            if request.offset == 3000 && !shortened {
                shortened = true;
                300
            } else {
                full(request)
            }
        };
        let ((file, writes, _, result), (synced_at, tally)) =
            drive_over(&writer, depth, 0, 8000, false, Some((4, 0)), script);
        result.unwrap();
        assert!(writes.iter().all(|&n| n == 1), "depth {depth}: every byte once");
        assert_eq!(stream(PERIOD).first_mismatch(&source, 0, &file), None, "depth {depth}");
        assert_eq!(synced_at, [4000, 8000], "depth {depth}: the sync still follows the whole batch");
        let expected = Tally { linked_writes: 3, linked_fsyncs: 3, fsyncs: 0, cancelled_fsyncs: 1 };
        assert_eq!(tally, expected, "depth {depth}");
    }
}

#[test]
fn a_failed_linked_write_ends_the_part_and_a_failed_fsync_is_an_error() {
    let source = Source::new(5);
    let writer = Writer::new(&source, stream(PERIOD), PERIOD, 1000).unwrap();
    let script = |request: &Request| if request.offset == 3000 { -libc::EIO } else { full(request) };
    let ((_, writes, _, result), (synced_at, tally)) = drive_over(&writer, 4, 0, 8000, false, Some((4, 0)), script);
    let error = result.unwrap_err().to_string();
    assert!(error.contains("offset 3000") && error.contains("os error 5"), "{error}");
    assert!(synced_at.is_empty() && tally.cancelled_fsyncs == 1, "{synced_at:?} {tally:?}");
    assert!(writes[4000..].iter().all(|&n| n == 0), "nothing issued after the failed batch");
    let ((_, _, _, result), _) = drive_over(&writer, 4, 0, 8000, false, Some((4, -libc::EIO)), full);
    let error = result.unwrap_err().to_string();
    assert!(error.starts_with("io_uring fdatasync") && error.contains("os error 5"), "{error}");
}

#[test]
fn at_the_wall_no_new_request_goes_in_and_those_in_flight_complete_whole() {
    let source = Source::new(5);
    let writer = Writer::new(&source, stream(PERIOD), PERIOD, 1000).unwrap();
    for depth in [1, 4] {
        let (offset, len) = (5000u64, 20_000u64);
        let size = (offset + len) as usize;
        // Half of every request completes first, so the rests go in after the wall.
        let half = |request: &Request| (full(request) / 2).max(1);
        let mut kernel = Kernel {
            queued: Vec::new(),
            file: vec![0; size],
            writes: vec![0; size],
            most_in_flight: 0,
            duplicate_first: false,
            script: half,
            synced_at: Vec::new(),
            sync_result: 0,
        };
        let mut tally = Tally::default();
        // The wall: no request may start at 14000 or later (9 requests of 1000 go in).
        let at_wall = |next: u64| next >= 14_000;
        drive(&mut kernel, &mut Slots::new(depth), &writer, offset, len, 1000, None, &mut tally, &at_wall).unwrap();
        assert!(kernel.queued.is_empty(), "depth {depth}: nothing outlives the part");
        assert!(kernel.writes[5000..14_000].iter().all(|&n| n == 1), "depth {depth}: issued, then completed whole");
        assert!(kernel.writes[14_000..].iter().all(|&n| n == 0), "depth {depth}: nothing past the wall");
        assert_eq!(stream(PERIOD).first_mismatch(&source, 5000, &kernel.file[5000..14_000]), None);
    }
}
