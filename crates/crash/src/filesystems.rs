//! The filesystems `writebench crash` checks, one row each: how to make one on the
//! recorder's device, how large its device must be, and its checker in read-only mode
//! (docs/crash.md). A new filesystem is one row.

use std::path::Path;

use lab::loopdev;
use lab::objects::{Object, Objects};
use lab::shell::Log;

const MIB: u64 = 1 << 20;

#[derive(Debug)]
pub struct CrashFs {
    pub name: &'static str,
    /// mkfs and its arguments before the device. ext4's lazy initialisation is off: it
    /// writes and flushes in the background, into the recording.
    pub mkfs: &'static [&'static str],
    /// The device's size: the smallest mkfs takes with room to spare (the image is
    /// sparse in memory, so it costs what is written).
    pub device_bytes: u64,
    /// The checker and its arguments before the device; it changes nothing and exits 0
    /// when the filesystem is clean.
    pub checker: &'static [&'static str],
    /// The programs needed and the Debian package of each.
    pub tools: &'static [(&'static str, &'static str)],
}

pub const ALL: &[CrashFs] = &[
    CrashFs {
        name: "ext4",
        // 4 KiB blocks, as on a disk of any size: mkfs.ext4 picks 1 KiB for one this small.
        mkfs: &["mkfs.ext4", "-q", "-F", "-b", "4096", "-E", "lazy_itable_init=0,lazy_journal_init=0"],
        device_bytes: 64 * MIB,
        checker: &["e2fsck", "-f", "-n"],
        tools: &[("mkfs.ext4", "e2fsprogs"), ("e2fsck", "e2fsprogs")],
    },
    CrashFs {
        name: "xfs",
        mkfs: &["mkfs.xfs", "-q", "-f"],
        device_bytes: 320 * MIB,
        checker: &["xfs_repair", "-n"],
        tools: &[("mkfs.xfs", "xfsprogs"), ("xfs_repair", "xfsprogs")],
    },
    CrashFs {
        name: "btrfs",
        mkfs: &["mkfs.btrfs", "-q", "-f"],
        device_bytes: 128 * MIB,
        checker: &["btrfs", "check", "--readonly"],
        tools: &[("mkfs.btrfs", "btrfs-progs"), ("btrfs", "btrfs-progs")],
    },
];

pub fn by_name(name: &str) -> Option<&'static CrashFs> {
    ALL.iter().find(|fs| fs.name == name)
}

pub fn names() -> Vec<&'static str> {
    ALL.iter().map(|fs| fs.name).collect()
}

impl CrashFs {
    /// A loop device over `image`, noted in `objects` for the teardown: detached, and
    /// for btrfs forgotten by the kernel's device list first (it keeps every device it
    /// scanned, and a detach would leave a stale entry).
    pub fn attach(&self, image: &Path, objects: &mut Objects, log: &mut Log) -> Result<String, String> {
        let device = loopdev::attach(image, log)?;
        objects.push(Object::Loop { device: device.clone(), image: image.to_path_buf() });
        if self.name == "btrfs" {
            objects.push(Object::BtrfsDevices(vec![device.clone()]));
        }
        Ok(device)
    }

    /// Why it cannot be checked here: a missing program (with its package) or a kernel
    /// without it.
    pub fn missing(&self) -> Option<String> {
        for (program, package) in self.tools.iter().chain(&[("losetup", "mount"), ("mount", "mount")]) {
            if !lab::shell::have(program) {
                return Some(format!("{} needs {program} (Debian package {package})", self.name));
            }
        }
        let known = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
        if !known.split_whitespace().any(|word| word == self.name) {
            let loaded = std::process::Command::new("modprobe").arg(self.name).status().is_ok_and(|s| s.success());
            let known = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
            if !loaded || !known.split_whitespace().any(|word| word == self.name) {
                return Some(format!("this kernel has no {} (not in /proc/filesystems)", self.name));
            }
        }
        None
    }
}
