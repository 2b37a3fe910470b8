//! Where a target's data ends up: on a device, in memory only, or somewhere that cannot
//! be seen from here. The filesystem's name does not tell: ext4 on a loop device over a
//! file on tmpfs, or bindfs over a tmpfs directory, keep their data in RAM like tmpfs
//! itself, and a sync there makes nothing durable on a device (docs/results.md).
//!
//! The chain is followed down from the mount that holds the path: a block filesystem
//! to its device; a loop device to its backing file, and that file's mount in turn; an
//! md or dm device to its members (`slaves`); a partition to its disk; a btrfs to every
//! device of its filesystem; bindfs to its source directory; overlay to its upper
//! layer. The leaves decide: zram and brd RAM disks, tmpfs and ramfs hold data in RAM;
//! other block devices are devices; network filesystems, other FUSE daemons and
//! anything not followed are unknown rather than guessed.
//!
//! Everything is read through [`System`], so that the logic runs on text fixtures in the
//! tests and on sysfs and /proc/self/mountinfo here.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::find_mount;

/// What holds the data in the end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backing {
    /// Memory only: tmpfs, ramfs, RAM disks, or devices and FUSE mounts over them.
    Ram,
    /// Block devices that are not RAM disks (a sync there reaches a device).
    Device,
    /// Not known from here (a network filesystem, a FUSE daemon whose storage is not
    /// known, a mix of RAM and devices), and results saved before it was recorded.
    #[default]
    Unknown,
}

impl Backing {
    pub fn word(self) -> &'static str {
        match self {
            Backing::Ram => "ram",
            Backing::Device => "device",
            Backing::Unknown => "unknown",
        }
    }
}

/// What the chain is read from: sysfs, the mount table and the processes' command lines.
pub trait System {
    /// /proc/self/mountinfo's text.
    fn mountinfo(&self) -> &str;
    /// A file's text without its final newline (`/sys/block/loop0/loop/backing_file`).
    fn read(&self, path: &str) -> Option<String>;
    /// The names in a directory (`/sys/block/md0/slaves`), sorted; none if it is missing.
    fn list(&self, dir: &str) -> Vec<String>;
    /// Where a path leads once every symlink is followed (`/sys/dev/block/7:0` →
    /// `/sys/devices/virtual/block/loop0`, `/dev/mapper/root` → `/dev/dm-0`).
    fn resolve(&self, path: &str) -> Option<String>;
    /// The command lines (argv) of the processes that have `word` among their arguments.
    fn commands_naming(&self, word: &str) -> Vec<Vec<String>>;
}

/// The backing of a path, and the chain in words ("ext4 on /dev/loop3, a file on tmpfs").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub backing: Backing,
    pub chain: String,
}

/// Steps followed at most: loop devices over files on loop devices do not go deeper in
/// practice, and a cycle in a broken fixture must end.
const DEPTH: usize = 12;

/// Filesystems whose data is on another machine.
const NETWORK: &[&str] =
    &["nfs", "nfs4", "cifs", "smb3", "smbfs", "ceph", "glusterfs", "lustre", "beegfs", "9p", "virtiofs", "afs", "gpfs"];

/// Where the data of `path` (absolute, symlinks resolved) ends up.
pub fn of_path(system: &dyn System, path: &str) -> Found {
    let link = path_link(system, path, 0);
    Found { backing: link.backing, chain: link.text }
}

/// The filesystem holding a path, and what is under it.
struct Link {
    backing: Backing,
    text: String,
}

/// A device and what is under it: `name, what` in words.
struct DeviceLink {
    backing: Backing,
    name: String,
    what: String,
}

impl DeviceLink {
    fn text(&self) -> String {
        if self.what.is_empty() { self.name.clone() } else { format!("{}, {}", self.name, self.what) }
    }
}

fn unknown(text: String) -> Link {
    Link { backing: Backing::Unknown, text }
}

fn path_link(system: &dyn System, path: &str, depth: usize) -> Link {
    if depth > DEPTH {
        return unknown(format!("{path}: more than {DEPTH} steps down, not followed"));
    }
    let Some(mount) = find_mount(system.mountinfo(), Path::new(path)) else {
        return unknown(format!("{path}: in no mount of the mount table"));
    };
    let fs = mount.fs_type.as_str();
    let source = mount.device.as_str();
    match fs {
        "tmpfs" | "ramfs" | "devtmpfs" => Link { backing: Backing::Ram, text: fs.to_string() },
        "fuseblk" => block_link(system, &mount, depth),
        "fuse" | "fuse.bindfs" => bindfs_link(system, &mount, depth),
        "overlay" => {
            let upper = mount.options.split(',').find_map(|option| option.strip_prefix("upperdir="));
            let upper = upper.map(super::unescape_mount_field);
            // In a container the upper layer is a path of the host's, which this mount
            // table does not have: it then falls under the overlay itself.
            let seen = |upper: &str| {
                find_mount(system.mountinfo(), Path::new(upper)).is_some_and(|m| m.mount_point != mount.mount_point)
            };
            match upper {
                Some(upper) if seen(&upper) => {
                    let inner = path_link(system, &upper, depth + 1);
                    Link { backing: inner.backing, text: format!("overlay, its upper layer on {}", inner.text) }
                }
                Some(upper) => unknown(format!("overlay whose upper layer {upper} is not in this mount table")),
                None => unknown("overlay without an upper layer".to_string()),
            }
        }
        _ if fs.starts_with("fuse.") => {
            unknown(format!("{fs} from {source}: where its daemon keeps the data is not known"))
        }
        _ if NETWORK.contains(&fs) || NETWORK.iter().any(|n| fs.starts_with(&format!("{n}."))) => {
            unknown(format!("{fs} from {source}: on another machine's storage, not seen from here"))
        }
        _ => block_link(system, &mount, depth),
    }
}

/// bindfs passes a directory through: its source (the mount's source in the table,
/// which bindfs sets to the directory) holds the data. A mount typed plain `fuse` is
/// taken for bindfs only when a bindfs process names its mount point; any other FUSE
/// daemon keeps its data where it alone knows.
fn bindfs_link(system: &dyn System, mount: &super::Mount, depth: usize) -> Link {
    let fs = mount.fs_type.as_str();
    let source = super::unescape_mount_field(&mount.device);
    let source = source.as_str();
    let bindfs = fs == "fuse.bindfs"
        || system.commands_naming(&mount.mount_point).iter().any(|argv| {
            argv.first().is_some_and(|program| program.rsplit('/').next() == Some("bindfs"))
                && argv.iter().any(|arg| arg.trim_end_matches('/') == source.trim_end_matches('/'))
        });
    if !bindfs || !source.starts_with('/') {
        return unknown(format!("{fs} from {source}: where its daemon keeps the data is not known"));
    }
    let inner = path_link(system, source, depth + 1);
    let named = if fs == "fuse" { "fuse (bindfs)" } else { fs };
    Link { backing: inner.backing, text: format!("{named} over {source}, on {}", inner.text) }
}

/// A filesystem on block devices: the device by the mount's number, else by its source
/// (btrfs shows an anonymous number); every device of a btrfs.
fn block_link(system: &dyn System, mount: &super::Mount, depth: usize) -> Link {
    let fs = mount.fs_type.as_str();
    let by_number = system.resolve(&format!("/sys/dev/block/{}", mount.number)).and_then(|p| base_name(&p));
    let by_source = || {
        mount.device.starts_with("/dev/").then(|| system.resolve(&mount.device)).flatten().and_then(|p| base_name(&p))
    };
    let Some(name) = by_number.or_else(by_source) else {
        return unknown(format!("{fs} from {}: no block device found under it", mount.device));
    };
    let members = if fs == "btrfs" { btrfs_devices(system, &name) } else { vec![name] };
    let devices: Vec<DeviceLink> = members.iter().map(|member| device_link(system, member, depth + 1)).collect();
    Link { backing: combine(devices.iter().map(|d| d.backing)), text: format!("{fs} on {}", group(&devices)) }
}

/// Every device of the btrfs that `name` belongs to (/sys/fs/btrfs/FSID/devices/).
fn btrfs_devices(system: &dyn System, name: &str) -> Vec<String> {
    for fsid in system.list("/sys/fs/btrfs") {
        let devices = system.list(&format!("/sys/fs/btrfs/{fsid}/devices"));
        if devices.iter().any(|device| device == name) {
            return devices;
        }
    }
    vec![name.to_string()]
}

fn device_link(system: &dyn System, name: &str, depth: usize) -> DeviceLink {
    let dev = format!("/dev/{name}");
    let link = |backing, what: String| DeviceLink { backing, name: dev.clone(), what };
    if depth > DEPTH {
        return link(Backing::Unknown, format!("more than {DEPTH} steps down, not followed"));
    }
    // A partition's sysfs directory sits inside its disk's (loop0p1 inside loop0).
    if system.read(&format!("/sys/class/block/{name}/partition")).is_some() {
        let disk = system
            .resolve(&format!("/sys/class/block/{name}"))
            .and_then(|p| Path::new(&p).parent().and_then(|d| d.file_name()).map(|n| n.to_string_lossy().into_owned()));
        return match disk {
            Some(disk) => {
                let inner = device_link(system, &disk, depth + 1);
                link(inner.backing, format!("a partition of {}", inner.text()))
            }
            None => link(Backing::Unknown, "a partition of a disk not found".to_string()),
        };
    }
    if name.starts_with("loop") {
        return match system.read(&format!("/sys/block/{name}/loop/backing_file")) {
            Some(file) => {
                // The kernel adds " (deleted)" once the file is removed; its mount is the same.
                let file = file.strip_suffix(" (deleted)").unwrap_or(&file);
                let inner = path_link(system, file, depth + 1);
                link(inner.backing, format!("a file on {}", inner.text))
            }
            None => link(Backing::Unknown, "a loop device without a backing file".to_string()),
        };
    }
    if name.starts_with("zram") {
        return link(Backing::Ram, "a compressed RAM disk (zram)".to_string());
    }
    if name.strip_prefix("ram").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) {
        return link(Backing::Ram, "a RAM disk (brd)".to_string());
    }
    let slaves = system.list(&format!("/sys/block/{name}/slaves"));
    if !slaves.is_empty() {
        let members: Vec<DeviceLink> = slaves.iter().map(|slave| device_link(system, slave, depth + 1)).collect();
        return link(combine(members.iter().map(|m| m.backing)), format!("over {}", group(&members)));
    }
    if ["nbd", "rbd", "drbd"].iter().any(|kind| name.starts_with(kind)) {
        return link(Backing::Unknown, "a network block device".to_string());
    }
    link(Backing::Device, "a device".to_string())
}

/// Memory only where every leaf is; a device where every leaf is one; else unknown
/// (a mix: part of the data reaches a device, part does not).
fn combine(backings: impl Iterator<Item = Backing>) -> Backing {
    let all: Vec<Backing> = backings.collect();
    match all.first() {
        Some(&first) if all.iter().all(|&b| b == first) => first,
        _ => Backing::Unknown,
    }
}

/// Several devices in words: "/dev/loop0 and /dev/loop1, each a file on tmpfs" where
/// they rest on the same kind of thing, else each with its own words.
fn group(devices: &[DeviceLink]) -> String {
    match devices {
        [] => "no device".to_string(),
        [one] => one.text(),
        [first, ..] if devices.iter().all(|d| d.what == first.what) => {
            let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
            let (last, rest) = names.split_last().expect("two or more");
            format!("{} and {last}, each {}", rest.join(", "), first.what)
        }
        _ => devices.iter().map(DeviceLink::text).collect::<Vec<_>>().join("; "),
    }
}

fn base_name(path: &str) -> Option<String> {
    Path::new(path).file_name().map(|name| name.to_string_lossy().into_owned())
}

/// This machine: sysfs, /proc/self/mountinfo and /proc/PID/cmdline.
pub struct Live {
    mountinfo: String,
}

impl Live {
    pub fn new(mountinfo: String) -> Live {
        Live { mountinfo }
    }
}

impl System for Live {
    fn mountinfo(&self) -> &str {
        &self.mountinfo
    }

    fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(path).ok().map(|text| text.strip_suffix('\n').unwrap_or(&text).to_string())
    }

    fn list(&self, dir: &str) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
        let mut names: Vec<String> = entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    fn resolve(&self, path: &str) -> Option<String> {
        std::fs::canonicalize(path).ok().map(|p| p.display().to_string())
    }

    fn commands_naming(&self, word: &str) -> Vec<Vec<String>> {
        let mut found = Vec::new();
        let Ok(entries) = std::fs::read_dir("/proc") else { return found };
        for entry in entries.flatten() {
            if !entry.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else { continue };
            let argv: Vec<String> =
                raw.split(|&b| b == 0).filter(|a| !a.is_empty()).map(|a| String::from_utf8_lossy(a).into()).collect();
            if argv.iter().skip(1).any(|arg| arg.trim_end_matches('/') == word.trim_end_matches('/')) {
                found.push(argv);
            }
        }
        found
    }
}

#[cfg(test)]
#[path = "backing_tests.rs"]
mod tests;
