//! One big buffered file, written in 1 MiB `write` calls with its progress timed (docs/
//! answer.md, "Past the dirty limit"): where a big file's writer is slowed, and the rate
//! it gets after that, are measured, not read from `vm.dirty_ratio`. With each point the
//! writer's own time on the CPU (`cpu::CpuClock`) and its time waiting for a CPU
//! (`/proc/thread-self/schedstat`), because a slowed writer is not always one the kernel makes wait for
//! writeback: one throttled by `balance_dirty_pages` sleeps (a strictly limited loop
//! device, 2026-12-06: on the CPU 19–24 % of its time), while on this project's VMs a
//! writer into memory the host had taken back (free page reporting) is slowed as much
//! while it keeps the CPU (85–95 %, its time in the copy into the page cache: `perf`),
//! with 2 GiB dirty, no page under writeback and far below the dirty limit. This module
//! only writes and times; `analysis` reads the points.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::cpu::CpuClock;

/// Bytes per `write` call.
pub const CHUNK: usize = 1 << 20;

/// Where a big file stood after a step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub bytes: u64,
    /// Since the first write.
    pub seconds: f64,
    /// The writer's `[seconds on a CPU, seconds runnable but waiting for one]` (another
    /// program's share) since the first write: None where the kernel does not keep the
    /// second (no `schedstat`).
    pub scheduled: Option<[f64; 2]>,
}

/// This thread's time runnable but waiting for a CPU, in seconds, as the scheduler counts
/// it (`/proc/thread-self/schedstat`: on a CPU, then waiting, both in ns, then the count
/// of time slices). Its time on a CPU comes from [`CpuClock`], which the kernel brings
/// up to date when read (schedstat's lags by up to a tick for the running thread).
fn waited() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(text.split_whitespace().nth(1)?.parse::<u64>().ok()? as f64 * 1e-9)
}

/// Writes a new file `name` in `dir` until `most` bytes or `time` has passed, noting
/// where it stands after every `every` bytes; then removes it, which drops its dirty
/// pages unwritten. No sync: the rate is what a program writing a big file sees before it
/// syncs.
pub fn write_big(dir: &Path, name: &str, most: u64, time: Duration, every: u64) -> io::Result<Vec<Point>> {
    let path = dir.join(name);
    let mut file: File = OpenOptions::new().write(true).create_new(true).open(&path)?;
    // Not zeros: a filesystem that compresses or dedups must not make it cheap.
    let buffer: Vec<u8> = (0..CHUNK).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let mut points = Vec::new();
    let started = Instant::now();
    let (cpu_before, waited_before) = (CpuClock::now(), waited());
    let mut written = 0u64;
    let outcome = loop {
        if written >= most || started.elapsed() >= time {
            break Ok(());
        }
        if let Err(error) = file.write_all(&buffer) {
            break Err(error);
        }
        written += CHUNK as u64;
        if written % every.max(CHUNK as u64) == 0 {
            // The times on and waiting for a CPU first, the time elapsed last: a thread
            // preempted between the readings still has its wait inside the time elapsed.
            let cpu = CpuClock::now().since(cpu_before);
            let scheduled =
                waited_before.zip(waited()).map(|(before, now)| [cpu.user + cpu.sys, (now - before).max(0.0)]);
            let seconds = started.elapsed().as_secs_f64();
            points.push(Point { bytes: written, seconds, scheduled });
        }
    };
    drop(file);
    let removed = std::fs::remove_file(&path);
    outcome?;
    removed?;
    Ok(points)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_notes_its_progress_and_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let points = write_big(dir.path(), "big", 8 * CHUNK as u64, Duration::from_secs(30), 2 * CHUNK as u64).unwrap();
        assert_eq!(points.iter().map(|p| p.bytes).collect::<Vec<u64>>(), [2, 4, 6, 8].map(|m| m * CHUNK as u64));
        assert!(points.windows(2).all(|w| w[1].seconds >= w[0].seconds), "{points:?}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the file is removed");
    }

    /// The writer's CPU time grows with its writes, and it and the time waiting for a CPU
    /// never pass the time elapsed (the scheduler's clock and the monotonic one agree to
    /// far less than the 5 ms allowed).
    #[test]
    fn each_point_has_the_writers_time_on_and_waiting_for_a_cpu() {
        let dir = tempfile::tempdir().unwrap();
        let points =
            write_big(dir.path(), "big", 64 * CHUNK as u64, Duration::from_secs(30), 16 * CHUNK as u64).unwrap();
        assert!(waited().is_some(), "this kernel keeps schedstat (the tests' machines do)");
        let cpu = |point: &Point| point.scheduled.unwrap()[0];
        for point in &points {
            let [cpu, runnable] = point.scheduled.unwrap();
            assert!(cpu + runnable <= point.seconds + 0.005, "{point:?}");
        }
        assert!(points.windows(2).all(|w| cpu(&w[1]) >= cpu(&w[0])), "{points:?}");
        assert!(cpu(points.last().unwrap()) > 0.0, "64 MiB copied takes some CPU: {points:?}");
    }
}
