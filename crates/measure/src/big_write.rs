//! One big buffered file, written in 1 MiB `write` calls with its progress timed (docs/
//! answer.md, "Past the dirty limit"): where a writer starts to wait for writeback, and
//! the rate it gets after that, are measured, not read from `vm.dirty_ratio`. On this
//! machine's disk (2026-11-29) a writer was slowed after about 0.5 GiB, far below the
//! 4.6 GiB the settings give, and went on at 0.4 GB/s, a quarter of the device's direct
//! rate: the kernel's balancing keys on the writeback it measures, not on the limit
//! alone. This module only writes and times; `analysis` reads the points.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// Bytes per `write` call.
pub const CHUNK: usize = 1 << 20;

/// Writes a new file `name` in `dir` until `most` bytes or `time` has passed, noting
/// (bytes written, seconds since the first write) after every `every` bytes; then
/// removes it, which drops its dirty pages unwritten. No sync: the rate is what a
/// program writing a big file sees before it syncs.
pub fn write_big(dir: &Path, name: &str, most: u64, time: Duration, every: u64) -> io::Result<Vec<(u64, f64)>> {
    let path = dir.join(name);
    let mut file: File = OpenOptions::new().write(true).create_new(true).open(&path)?;
    // Not zeros: a filesystem that compresses or dedups must not make it cheap.
    let buffer: Vec<u8> = (0..CHUNK).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let mut points = Vec::new();
    let started = Instant::now();
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
            points.push((written, started.elapsed().as_secs_f64()));
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
        assert_eq!(points.iter().map(|p| p.0).collect::<Vec<u64>>(), [2, 4, 6, 8].map(|m| m * CHUNK as u64));
        assert!(points.windows(2).all(|w| w[1].1 >= w[0].1), "{points:?}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the file is removed");
    }
}
