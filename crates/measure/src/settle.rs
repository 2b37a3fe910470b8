//! Before each timed run, untimed (docs/measurement.md, "Between runs"): let the
//! previous run's work finish, so that no run pays for its neighbour. Removing a run's
//! files and committing the removal (`hygiene`) is not enough: on ext4, the blocks a
//! removed file held are free for new allocations only once the journal commits the
//! removal, and a run that starts before then allocates around them (seen: `write` in
//! 1 MiB calls at 0.87 GB/s right after a 4 KiB case, 5.06 GB/s after another 1 MiB
//! case). So: `syncfs` of the target's filesystem (its journal and any writeback,
//! ours or another program's), then wait until the machine's dirty and writeback pages
//! are back near their level before the previous run and the device has no request in
//! flight, within a time limit. How long it took, and whether it gave up, is recorded
//! with the run.
//!
//! On a virtual machine that gives freed memory back to its host (free page reporting,
//! `context::page_reporting`), a run's speed into the page cache also depends on how
//! long ago the run before it freed its memory: memory the host must supply again is
//! written at a fraction of the speed (5.8 against 1.2 GB/s on this project's VMs). So
//! there, the settle step also touches as much memory as the run will write, in huge
//! pages, and frees it: the run then finds memory the host has just supplied, whatever
//! ran before it. Recorded as `warm_seconds`.
//!
//! Some filesystems free a removed file's space late: a GlusterFS brick keeps a file
//! removed while the client still holds it (under `.glusterfs/unlink`) until the client's
//! release arrives, up to a second or more after the unlink returned, and a run of fast
//! cases piles up such files faster than they go (seen: 16 removed 8 MiB fragments, 117
//! of a 128 MiB brick, after 12 s of 16 MiB runs). So the settle step also waits until the
//! filesystem has room for the run's files (`space::needed_for` of the bytes it will
//! write), within [`ROOM_LIMIT`]: on a filesystem with room to spare it never waits, and
//! where the space does not come the run goes ahead and its writes say what is wrong
//! (docs/lab.md, "How big the bricks are").

use std::os::fd::AsRawFd;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use context::DirtyMemory;
use context::device::BlockDevice;
use context::statvfs::{At, free_bytes};
use plan::SETTLE_LIMIT;

use crate::huge::{self, HUGE};

/// How far above the previous run's level the dirty and writeback pages may stay: other
/// programs dirty pages too, and a few MiB of theirs are no run of ours.
pub const SLACK_BYTES: u64 = 16 << 20;

/// How long the settle step waits for removed files' space to come back before a run
/// that would not fit otherwise (see the module doc): longer than [`SETTLE_LIMIT`], since
/// the alternative is a run that fails for lack of space.
pub const ROOM_LIMIT: Duration = Duration::from_secs(10);

/// What the settle step did before one run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settled {
    pub seconds: f64,
    pub timed_out: bool,
    /// The memory warming's part of `seconds`, where it ran.
    pub warm_seconds: Option<f64>,
}

/// The settle state of one scratch directory: its block device, found once, and the
/// dirty + writeback level right before the previous run.
#[derive(Debug, Default)]
pub struct Settle {
    device: OnceLock<Option<BlockDevice>>,
    /// u64::MAX until a first run has settled.
    previous: AtomicU64,
}

impl Settle {
    pub fn new() -> Settle {
        Settle { device: OnceLock::new(), previous: AtomicU64::new(u64::MAX) }
    }

    /// Settles the filesystem of `dir` (a directory on it, `path` its path) for a run
    /// that puts `memory` bytes into the page cache or tmpfs (0: none, O_DIRECT) and
    /// `room` bytes in its files: see the module doc. Never fails: a filesystem without
    /// syncfs, or a /proc without the counters, settles on what it has.
    pub fn wait(&self, dir: &impl AsRawFd, path: &std::path::Path, memory: u64, room: u64) -> Settled {
        let started = Instant::now();
        // SAFETY: syncfs on a directory descriptor we hold; its result only tells
        // whether the filesystem supports it, and either way the wait below goes on.
        unsafe { libc::syncfs(dir.as_raw_fd()) };
        let device = self.device.get_or_init(|| BlockDevice::of(path));
        let previous = self.previous.load(Ordering::Relaxed);
        let mut pause = Duration::from_micros(200);
        let (level, timed_out) = loop {
            let level = DirtyMemory::now().map(|m| m.dirty + m.writeback);
            let in_flight = device.as_ref().and_then(BlockDevice::sample).map(|s| s.in_flight);
            let fits = fits(free_bytes(At::Fd(dir.as_raw_fd())).ok(), room);
            if quiet(level, previous, in_flight) && fits {
                break (level, false);
            }
            if started.elapsed() >= if fits { SETTLE_LIMIT } else { ROOM_LIMIT } {
                break (level, true);
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(10));
        };
        if let Some(level) = level {
            self.previous.store(next_reference(level, previous), Ordering::Relaxed);
        }
        let warm_seconds = (memory > 0 && context::page_reporting::free_page_reporting()).then(|| {
            let warming = Instant::now();
            warm(memory.min(available_bytes() / 4));
            warming.elapsed().as_secs_f64()
        });
        Settled { seconds: started.elapsed().as_secs_f64(), timed_out, warm_seconds }
    }
}

/// Touches `bytes` of anonymous memory in huge pages where the kernel gives them
/// (MADV_HUGEPAGE), then frees it: memory the host supplied just now, at the head of
/// the free lists for the run's allocations (the page cache's large folios are served
/// from blocks this large or larger, which freed small pages cannot give). In this
/// process and on this thread: done in a child process instead, it did not help
/// (bench/carry-over, disk: 0.63 against 1.03 together/alone), the child's freed pages
/// apparently not being where the run's allocations look first. Left out of
/// writebench's own peak memory (`measure::peak`).
pub fn warm(bytes: u64) {
    let len = (bytes as usize).div_ceil(HUGE) * HUGE;
    if len > 0 {
        crate::peak::left_out(|| touch(len));
    }
}

/// Maps `len` bytes (a multiple of [`HUGE`]) in huge pages, writes one byte in every
/// 4 KiB, and unmaps them.
fn touch(len: usize) {
    let Ok(start) = huge::map(len) else { return };
    // SAFETY: `len` bytes mapped read-write by `huge::map`, written only inside, then
    // unmapped whole.
    unsafe {
        for offset in (0..len).step_by(4096) {
            std::ptr::write_volatile(start.as_ptr().add(offset), 1);
        }
        libc::munmap(start.as_ptr().cast(), len);
    }
}

/// MemAvailable from /proc/meminfo, in bytes (0 where it cannot be read: no warming).
fn available_bytes() -> u64 {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    meminfo
        .lines()
        .find_map(|line| line.strip_prefix("MemAvailable:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}

/// Whether a run may start: the dirty + writeback `level` is within [`SLACK_BYTES`] of
/// the `previous` run's (u64::MAX: no previous run), and the device has nothing in
/// flight. What cannot be read does not hold a run back.
/// The next run's reference level: the lowest seen, an absolute floor. Taking the level
/// a wait ended at let the reference creep up by the slack at every run (16 MiB a run)
/// when it ended quiet, and ratchet up by timing out when it gave up.
fn next_reference(level: u64, previous: u64) -> u64 {
    level.min(previous)
}

/// Whether a run of `room` bytes fits in what is `free` (None: not known, no wait), as
/// the check before the cases counts it (`space::needed_for`).
fn fits(free: Option<u64>, room: u64) -> bool {
    room == 0 || free.is_none_or(|free| free >= crate::space::needed_for(room))
}

fn quiet(level: Option<u64>, previous: u64, in_flight: Option<u64>) -> bool {
    let memory = level.is_none_or(|level| previous == u64::MAX || level <= previous.saturating_add(SLACK_BYTES));
    memory && in_flight.is_none_or(|n| n == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_waits_for_writeback_above_the_previous_level_and_for_the_device() {
        let mib = 1 << 20;
        assert!(quiet(Some(100 * mib), u64::MAX, Some(0)), "the first run has no level to return to");
        assert!(quiet(Some(100 * mib), 90 * mib, Some(0)), "within the slack");
        assert!(!quiet(Some(200 * mib), 90 * mib, Some(0)), "the previous run's writeback still under way");
        assert!(!quiet(Some(10 * mib), 90 * mib, Some(3)), "requests in flight");
        assert!(quiet(None, 90 * mib, None), "nothing to read: no wait");
    }

    #[test]
    fn a_run_waits_for_the_room_its_files_need() {
        let mib = 1 << 20;
        assert!(fits(Some(100 * mib), 16 * mib));
        assert!(!fits(Some(16 * mib), 16 * mib), "the metadata margin too: 16 MiB of data needs 17.25 MiB");
        assert!(fits(Some(0), 0), "a run that writes nothing waits for no space");
        assert!(fits(None, 16 * mib), "what cannot be read does not hold a run back");
    }

    #[test]
    fn the_reference_is_a_floor_that_neither_creeps_nor_ratchets() {
        let mib = 1 << 20;
        assert_eq!(next_reference(40 * mib, u64::MAX), 40 * mib, "the first run's level");
        // Quiet within the slack at 12 MiB above: the reference stays.
        let mut reference = 40 * mib;
        for _ in 0..10 {
            assert!(quiet(Some(reference + 12 * mib), reference, Some(0)));
            reference = next_reference(reference + 12 * mib, reference);
        }
        assert_eq!(reference, 40 * mib, "ten runs later, no creep");
        assert_eq!(next_reference(30 * mib, reference), 30 * mib, "a lower level is the new floor");
    }

    #[test]
    fn a_wait_records_the_level_the_next_run_returns_to() {
        let dir = tempfile::tempdir().unwrap();
        let handle = std::fs::File::open(dir.path()).unwrap();
        let settle = Settle::new();
        assert_eq!(settle.previous.load(Ordering::Relaxed), u64::MAX);
        let first = settle.wait(&handle, dir.path(), 0, 1 << 20);
        assert_eq!(first.warm_seconds, None, "nothing to warm for a run that puts nothing in memory");
        assert!(first.seconds >= 0.0 && first.seconds <= SETTLE_LIMIT.as_secs_f64() + 0.1, "{first:?}");
        assert_ne!(settle.previous.load(Ordering::Relaxed), u64::MAX, "the level before this run is kept");
    }
}
