//! The block device under a path, and what it did during a run: /proc/diskstats read
//! before and after, as `iostat` reads it. A filesystem without a block device (tmpfs,
//! FUSE, NFS) has none to read, and says so rather than showing zeros.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};

/// The device the filesystem under a path lives on, and what it is built on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockDevice {
    /// Its name in /proc/diskstats and /sys/block (`vda1`, `dm-0`, `md0`, `loop3`).
    pub name: String,
    /// What it sits on: a partition's disk, a dm or md device's members (`slaves`), a
    /// loop device's backing file, each as `kind name`.
    pub parents: Vec<String>,
    /// The request queue's facts, from the device itself or, for a partition, its disk.
    pub queue: Queue,
}

/// What /sys/block/NAME/queue (and device/) say of a device.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Queue {
    /// device/model, or device/vendor where there is no model (virtio disks).
    pub model: Option<String>,
    pub rotational: Option<bool>,
    pub logical_block_size: Option<u32>,
    pub physical_block_size: Option<u32>,
    /// The I/O scheduler in use (the bracketed one of queue/scheduler).
    pub scheduler: Option<String>,
}

impl Queue {
    fn of(sys: &Path) -> Queue {
        let read = |name: &str| {
            std::fs::read_to_string(sys.join(name)).ok().map(|t| t.trim().to_string()).filter(|t| !t.is_empty())
        };
        let number = |name: &str| read(name).and_then(|t| t.parse().ok());
        Queue {
            model: read("device/model").or_else(|| read("device/vendor")),
            rotational: read("queue/rotational").map(|t| t == "1"),
            logical_block_size: number("queue/logical_block_size"),
            physical_block_size: number("queue/physical_block_size"),
            scheduler: read("queue/scheduler").and_then(|t| {
                t.split_whitespace()
                    .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')).map(String::from))
            }),
        }
    }
}

impl BlockDevice {
    /// The block device of the filesystem holding `path`, or `None` where there is none
    /// (its device number has no entry in /sys/dev/block: tmpfs, FUSE, NFS, overlay).
    pub fn of(path: &Path) -> Option<BlockDevice> {
        let dev = std::fs::metadata(path).ok()?.dev();
        let (major, minor) = (libc::major(dev), libc::minor(dev));
        let sys = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
        let name = sys.file_name()?.to_string_lossy().into_owned();
        let mut parents = Vec::new();
        // A partition's directory sits inside its disk's, whose queue it uses.
        let mut queue_dir = sys.clone();
        if sys.join("partition").exists() {
            if let Some(disk_dir) = sys.parent() {
                let disk = disk_dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                parents.push(format!("disk {disk}"));
                queue_dir = disk_dir.to_path_buf();
            }
        }
        if let Ok(slaves) = std::fs::read_dir(sys.join("slaves")) {
            let mut members: Vec<String> =
                slaves.flatten().map(|entry| format!("member {}", entry.file_name().to_string_lossy())).collect();
            members.sort();
            parents.extend(members);
        }
        if let Ok(backing) = std::fs::read_to_string(sys.join("loop/backing_file")) {
            parents.push(format!("backing file {}", backing.trim()));
        }
        Some(BlockDevice { name, parents, queue: Queue::of(&queue_dir) })
    }

    /// This device's counters now, or `None` if /proc/diskstats has no line for it.
    pub fn sample(&self) -> Option<DiskSample> {
        let stats = std::fs::read_to_string("/proc/diskstats").ok()?;
        let at = Instant::now();
        stats.lines().find_map(|line| DiskSample::parse(line, &self.name, at))
    }
}

/// One device's cumulative write counters at one moment.
#[derive(Debug, Clone, Copy)]
pub struct DiskSample {
    at: Instant,
    /// Requests in flight at that moment (reads and writes).
    pub in_flight: u64,
    writes: u64,
    sectors_written: u64,
    io_ms: u64,
    weighted_ms: u64,
}

impl DiskSample {
    /// A /proc/diskstats line of device `name`: major minor name, then reads (4 fields),
    /// writes completed, merged, sectors, ms writing, in progress, ms doing I/O, weighted ms.
    fn parse(line: &str, name: &str, at: Instant) -> Option<DiskSample> {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.get(2) != Some(&name) || fields.len() < 14 {
            return None;
        }
        let number = |i: usize| fields[i].parse::<u64>().ok();
        Some(DiskSample {
            at,
            in_flight: number(11)?,
            writes: number(7)?,
            sectors_written: number(9)?,
            io_ms: number(12)?,
            weighted_ms: number(13)?,
        })
    }

    /// What the device did from `self` to `later`.
    pub fn until(&self, later: &DiskSample) -> DeviceIo {
        let ms = later.at.duration_since(self.at).as_secs_f64() * 1e3;
        let per_ms = |delta: u64| if ms > 0.0 { delta as f64 / ms } else { 0.0 };
        DeviceIo {
            // diskstats counts 512-byte sectors whatever the device's block size.
            bytes_written: later.sectors_written.saturating_sub(self.sectors_written) * 512,
            write_ops: later.writes.saturating_sub(self.writes),
            util_pct: (100.0 * per_ms(later.io_ms.saturating_sub(self.io_ms))).min(100.0),
            avg_queue: per_ms(later.weighted_ms.saturating_sub(self.weighted_ms)),
        }
    }
}

/// What the device under the path did during a run's write and sync spans together.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DeviceIo {
    /// Bytes the device was asked to write (data, metadata, journal: all of it).
    pub bytes_written: u64,
    pub write_ops: u64,
    /// Share of the time the device had I/O in flight, as iostat's %util.
    pub util_pct: f64,
    /// Requests in flight on average (iostat's aqu-sz).
    pub avg_queue: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = "   7       0 loop0 3321 14 2494978 1406 545460 190492 13179504 115173 0 104404 182477 20 17 4416424 17 316967 65878";

    #[test]
    fn a_diskstats_line_gives_the_write_counters() {
        let at = Instant::now();
        let before = DiskSample::parse(LINE, "loop0", at).unwrap();
        assert!(DiskSample::parse(LINE, "loop1", at).is_none());
        assert_eq!(before.in_flight, 0, "the ninth counter: requests in flight");
        let busy = LINE.replacen(" 0 104404", " 3 104404", 1);
        assert_eq!(DiskSample::parse(&busy, "loop0", at).unwrap().in_flight, 3);
        let later = DiskSample {
            at: at + std::time::Duration::from_millis(1000),
            in_flight: 0,
            writes: before.writes + 10,
            sectors_written: before.sectors_written + 2048,
            io_ms: before.io_ms + 250,
            weighted_ms: before.weighted_ms + 500,
        };
        let io = before.until(&later);
        assert_eq!((io.bytes_written, io.write_ops), (1 << 20, 10));
        assert!((io.util_pct - 25.0).abs() < 1e-9 && (io.avg_queue - 0.5).abs() < 1e-9, "{io:?}");
    }

    #[test]
    fn tmpfs_has_no_block_device_and_the_root_filesystem_may() {
        assert_eq!(BlockDevice::of(Path::new("/dev/shm")), None);
        assert_eq!(BlockDevice::of(Path::new("/proc")), None);
    }
}
