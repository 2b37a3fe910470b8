//! A filesystem as `writebench crash` makes it on the recorder's device (docs/crash.md):
//! mkfs, the device's size and the read-only checker, held by its row of
//! [`crate::filesystems::ALL`], so that one row is a filesystem for the lab and the crash
//! check alike. Here too its loop device and what the check needs.

use std::path::Path;

use crate::loopdev;
use crate::objects::{Object, Objects};
use crate::shell::Log;

#[derive(Debug)]
pub struct CrashFs {
    /// The kernel's name for it (`mount -t`), which `crash --fs` takes.
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
    /// How `crash --show-log` names the file each block belongs to.
    pub blocks: BlockNames,
}

/// The filesystem's own debugger that tells which file a block belongs to, run on the
/// image as the unmount left it (`crash::block_owners`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockNames {
    /// ext4: debugfs's `icheck` (block to inode), `ncheck` (inode to path) and `testb`.
    Debugfs,
    /// xfs: xfs_db's `blockget -n` and `blockuse -n`.
    XfsDb,
    /// Not named: btrfs maps its blocks through its chunk tree, and `btrfs
    /// inspect-internal logical-resolve` needs the filesystem mounted.
    Unnamed,
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
            if !crate::shell::have(program) {
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
