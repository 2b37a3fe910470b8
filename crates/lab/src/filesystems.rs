//! The filesystems the lab builds, one row each in [`ALL`]: the tools it needs (with the
//! Debian package that has them), the kernel support, how many RAM-backed devices, and
//! the default mkfs and mount options. One builder does every block filesystem (images →
//! loop devices → md array where wanted → mkfs → mount); tmpfs and FUSE have their own.
//! A new filesystem is one row.

use std::path::PathBuf;

use super::names::Names;
use super::objects::{Object, Objects};
use super::shell::{Log, Step, have};
use super::{loopdev, md};
pub use crate::crash_fs::{BlockNames, CrashFs};

const MIB: u64 = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A tmpfs: no device at all, the page cache alone.
    Tmpfs,
    /// `mkfs` on one loop device, or on several given to mkfs together (btrfs RAID).
    Block,
    /// `mkfs` on an md RAID-0 array of the loop devices.
    MdRaid0 { chunk_kib: u32 },
    /// bindfs (a FUSE passthrough) over a tmpfs: the cost of the FUSE round trip.
    Fuse,
    /// A GlusterFS volume of this kind over three namespace hosts, bricks on tmpfs
    /// (`hosts`), run from host 1's client.
    Gluster { volume: &'static str },
}

/// What a GlusterFS row needs, each with its Debian package.
const GLUSTER_TOOLS: &[(&str, &str)] = &[
    ("glusterd", "glusterfs-server"),
    ("gluster", "glusterfs-server"),
    ("mount.glusterfs", "glusterfs-client"),
    ("unshare", "util-linux"),
    ("nsenter", "util-linux"),
    ("ip", "iproute2"),
];

/// A GlusterFS row: the rows differ only in their name and the volume's kind.
const fn gluster(name: &'static str, volume: &'static str, what: &'static str) -> Filesystem {
    Filesystem { name, what, kind: Kind::Gluster { volume }, tools: GLUSTER_TOOLS, kernel_type: "fuse", ..NO_DEVICE }
}

/// What a row without a block device leaves empty (tmpfs, FUSE, GlusterFS): no mkfs, no
/// options, no devices, no crash check.
const NO_DEVICE: Filesystem = Filesystem {
    name: "",
    what: "",
    kind: Kind::Tmpfs,
    tools: &[],
    kernel_type: "",
    mkfs: "",
    mkfs_fixed: "",
    mkfs_options: "",
    mount_options: "",
    devices: 0,
    min_device_bytes: 0,
    crash: None,
};

/// ext4 on one loop device, as mkfs.ext4 makes it: the ext4 rows differ from it in a
/// field or two.
const EXT4: Filesystem = Filesystem {
    name: "ext4",
    what: "ext4 on one loop device",
    kind: Kind::Block,
    tools: &[("losetup", "mount"), ("mkfs.ext4", "e2fsprogs")],
    kernel_type: "ext4",
    mkfs: "mkfs.ext4",
    mkfs_fixed: "-q -F",
    mkfs_options: "",
    mount_options: "",
    devices: 1,
    min_device_bytes: 32 * MIB,
    crash: None,
};

/// The directory of a distributed row's hosts' state, beside its mount point.
pub const HOSTS_SUFFIX: &str = "-hosts";

#[derive(Debug)]
pub struct Filesystem {
    /// The name on the command line, in file names and in the comparison.
    pub name: &'static str,
    /// One line for the user.
    pub what: &'static str,
    pub kind: Kind,
    /// Programs needed, each with the Debian package that has it.
    pub tools: &'static [(&'static str, &'static str)],
    /// The type the kernel must know (`/proc/filesystems`).
    pub kernel_type: &'static str,
    /// `mkfs` program (block kinds).
    pub mkfs: &'static str,
    /// Arguments always given to mkfs (quiet, overwrite), not options of the filesystem.
    pub mkfs_fixed: &'static str,
    /// The filesystem's options; `--mkfs-opt FS=…` replaces them.
    pub mkfs_options: &'static str,
    /// Mount options; `--mount-opt FS=…` replaces them (tmpfs keeps its size).
    pub mount_options: &'static str,
    /// Loop devices over files in /dev/shm: RAM-backed where /dev/shm is tmpfs, as the
    /// lab says before it builds (each result's `target.backing` records it).
    pub devices: usize,
    /// The smallest device mkfs accepts (mkfs.xfs wants 300 MiB, btrfs about 114 MiB).
    pub min_device_bytes: u64,
    /// How `writebench crash` makes and checks it on its recorder's device, for one row
    /// of each filesystem type it checks (`crash --fs` takes the type).
    pub crash: Option<CrashFs>,
}

/// Every filesystem, in the order `--fs all` builds them (tmpfs first: the baseline of
/// the comparison, the page cache without a filesystem's costs).
pub const ALL: &[Filesystem] = &[
    Filesystem {
        name: "tmpfs",
        what: "tmpfs (memory only, no device)",
        tools: &[("mount", "mount")],
        kernel_type: "tmpfs",
        ..NO_DEVICE
    },
    Filesystem {
        crash: Some(CrashFs {
            name: "ext4",
            // 4 KiB blocks, as on a disk of any size: mkfs.ext4 picks 1 KiB for one this small.
            mkfs: &["mkfs.ext4", "-q", "-F", "-b", "4096", "-E", "lazy_itable_init=0,lazy_journal_init=0"],
            device_bytes: 64 * MIB,
            checker: &["e2fsck", "-f", "-n"],
            tools: &[("mkfs.ext4", "e2fsprogs"), ("e2fsck", "e2fsprogs"), ("debugfs", "e2fsprogs")],
            blocks: BlockNames::Debugfs,
        }),
        ..EXT4
    },
    Filesystem {
        name: "xfs",
        what: "xfs on one loop device",
        kind: Kind::Block,
        tools: &[("losetup", "mount"), ("mkfs.xfs", "xfsprogs")],
        kernel_type: "xfs",
        mkfs: "mkfs.xfs",
        mkfs_fixed: "-q -f",
        mkfs_options: "",
        mount_options: "",
        devices: 1,
        min_device_bytes: 320 * MIB,
        crash: Some(CrashFs {
            name: "xfs",
            mkfs: &["mkfs.xfs", "-q", "-f"],
            device_bytes: 320 * MIB,
            checker: &["xfs_repair", "-n"],
            tools: &[("mkfs.xfs", "xfsprogs"), ("xfs_repair", "xfsprogs"), ("xfs_db", "xfsprogs")],
            blocks: BlockNames::XfsDb,
        }),
    },
    Filesystem {
        name: "btrfs-raid0",
        what: "btrfs over two loop devices, data RAID-0, metadata RAID-1",
        kind: Kind::Block,
        tools: &[("losetup", "mount"), ("mkfs.btrfs", "btrfs-progs")],
        kernel_type: "btrfs",
        mkfs: "mkfs.btrfs",
        mkfs_fixed: "-q -f",
        mkfs_options: "-d raid0 -m raid1",
        mount_options: "",
        devices: 2,
        min_device_bytes: 256 * MIB,
        crash: Some(CrashFs {
            name: "btrfs",
            mkfs: &["mkfs.btrfs", "-q", "-f"],
            device_bytes: 128 * MIB,
            checker: &["btrfs", "check", "--readonly"],
            tools: &[("mkfs.btrfs", "btrfs-progs"), ("btrfs", "btrfs-progs")],
            blocks: BlockNames::Unnamed,
        }),
    },
    Filesystem {
        name: "ext4-md-raid0",
        what: "ext4 on an md RAID-0 of four loop devices, 512 KiB chunks",
        kind: Kind::MdRaid0 { chunk_kib: 512 },
        tools: &[("losetup", "mount"), ("mdadm", "mdadm"), ("mkfs.ext4", "e2fsprogs")],
        devices: 4,
        ..EXT4
    },
    Filesystem {
        name: "fuse",
        what: "bindfs (a FUSE passthrough) over a tmpfs",
        kind: Kind::Fuse,
        tools: &[("mount", "mount"), ("bindfs", "bindfs")],
        kernel_type: "fuse",
        ..NO_DEVICE
    },
    Filesystem {
        name: "ext4-nojournal",
        what: "ext4 without a journal on one loop device",
        mkfs_options: "-O ^has_journal",
        ..EXT4
    },
    Filesystem {
        name: "f2fs",
        what: "f2fs on one loop device",
        kind: Kind::Block,
        tools: &[("losetup", "mount"), ("mkfs.f2fs", "f2fs-tools")],
        kernel_type: "f2fs",
        mkfs: "mkfs.f2fs",
        mkfs_fixed: "-q -f",
        mkfs_options: "",
        mount_options: "",
        devices: 1,
        min_device_bytes: 128 * MIB,
        crash: None,
    },
    gluster(
        "glusterfs-distribute",
        "distribute",
        "GlusterFS, distribute: each file whole on one of 3 namespace hosts' bricks",
    ),
    gluster(
        "glusterfs-disperse",
        "disperse",
        "GlusterFS, disperse 2+1: each file in 2 fragments and 1 of parity over 3 namespace hosts",
    ),
    gluster("glusterfs-replica", "replica", "GlusterFS, replica 3: each file whole on each of 3 namespace hosts"),
];

/// The six of the comparison: what `--fs` means when not given.
pub const DEFAULT: &[&str] = &["tmpfs", "ext4", "xfs", "btrfs-raid0", "ext4-md-raid0", "fuse"];

pub fn by_name(name: &str) -> Option<&'static Filesystem> {
    ALL.iter().find(|fs| fs.name == name)
}

pub fn names() -> Vec<&'static str> {
    ALL.iter().map(|fs| fs.name).collect()
}

/// The filesystems `writebench crash` checks: each row's crash part, by its type.
pub fn crash_checked() -> impl Iterator<Item = &'static CrashFs> {
    ALL.iter().filter_map(|fs| fs.crash.as_ref())
}

impl Filesystem {
    /// Why this filesystem cannot be built here (a missing tool, with its Debian
    /// package; a kernel without the filesystem or without md), or Ok.
    pub fn check(&self) -> Result<(), String> {
        for (program, package) in self.tools {
            if !have(program) {
                return Err(format!("{program} not found (Debian package {package}: apt-get install {package})"));
            }
        }
        if !kernel_knows(self.kernel_type) {
            return Err(format!("the kernel has no {} filesystem (not in /proc/filesystems)", self.kernel_type));
        }
        if matches!(self.kind, Kind::Gluster { .. }) && !std::path::Path::new("/var/lib/glusterd").is_dir() {
            return Err("no /var/lib/glusterd to seed the hosts' state from (apt-get install glusterfs-server)".into());
        }
        if matches!(self.kind, Kind::Fuse | Kind::Gluster { .. }) && !std::path::Path::new("/dev/fuse").exists() {
            return Err("no /dev/fuse (the kernel's FUSE device)".to_string());
        }
        if matches!(self.kind, Kind::MdRaid0 { .. }) && !md::available() {
            return Err("the kernel has no md (software RAID) driver: /proc/mdstat is missing".to_string());
        }
        Ok(())
    }

    /// Bytes of each RAM-backed device (or of the tmpfs, or of each GlusterFS brick) for
    /// runs of `need` bytes.
    pub fn device_bytes(&self, need: u64) -> u64 {
        let bytes = match self.kind {
            Kind::Gluster { volume } => brick_bytes(volume, need),
            _ => need / self.devices.max(1) as u64 + 64 * MIB,
        };
        bytes.max(self.min_device_bytes).div_ceil(MIB) * MIB
    }

    /// Memory the filesystem may take at most: its devices' files, or the tmpfs.
    pub fn memory_bytes(&self, need: u64) -> u64 {
        // A distributed row: a tmpfs brick on each of its three hosts.
        let bricks = if matches!(self.kind, Kind::Gluster { .. }) { GLUSTER_HOSTS } else { self.devices.max(1) };
        self.device_bytes(need) * bricks as u64
    }
}

/// The hosts, and so the bricks, of a GlusterFS row.
pub const GLUSTER_HOSTS: usize = super::hosts::HOSTS;

/// Of a file's bytes, the share one brick of a `volume` keeps: the whole file for
/// `distribute` (by its name's hash, any file may land on one brick) and `replica` (a
/// copy on each), one fragment of the two data fragments for `disperse` 2+1 (the parity
/// fragment is as large).
pub fn brick_share(volume: &str) -> f64 {
    if volume == "disperse" { 1.0 / (GLUSTER_HOSTS - 1) as f64 } else { 1.0 }
}

/// GlusterFS refuses new files on a brick with less than this share of it free (its
/// `storage.reserve` option, 1 % by default).
const GLUSTER_RESERVE: f64 = 0.01;

/// Each brick of a `volume` for runs of `need` bytes (docs/lab.md, "How big the
/// bricks are"): its share of `need` (what a run keeps on the filesystem at once, and as
/// much again for the run before it, whose removed files a volume frees late), GlusterFS's
/// reserve on top, and 64 MiB for its own files (`.glusterfs`'s links and the volume's
/// state). Removed files that pile up past that wait: the settle step before each run
/// waits until the run fits (`measure::settle`).
pub fn brick_bytes(volume: &str, need: u64) -> u64 {
    let data = (need as f64 * brick_share(volume)).ceil();
    (data / (1.0 - GLUSTER_RESERVE)).ceil() as u64 + 64 * MIB
}

/// True when the kernel has `kind` (loading its module first, as mount would).
fn kernel_knows(kind: &str) -> bool {
    let listed = || {
        std::fs::read_to_string("/proc/filesystems")
            .unwrap_or_default()
            .lines()
            .any(|line| line.split_whitespace().last() == Some(kind))
    };
    if listed() {
        return true;
    }
    let _ = Step::new("modprobe").arg("-q").arg(kind).run();
    listed()
}

/// One filesystem to build: its row, the options that apply and the room it needs.
pub struct Request<'a> {
    pub fs: &'a Filesystem,
    pub names: Names,
    pub mkfs_options: String,
    pub mount_options: String,
    /// Bytes the suite may have on the filesystem at once.
    pub need: u64,
}

/// What a build made: where it is mounted, and the record for the result file.
#[derive(Debug, Clone)]
pub struct Built {
    pub mount: PathBuf,
    pub commands: Vec<String>,
    pub devices: Vec<String>,
    pub images: Vec<String>,
    pub device_bytes: u64,
    /// The host (its holder's pid) the suite runs in: a distributed row's host 1, whose
    /// client alone has the volume mounted.
    pub enter: Option<u32>,
}

/// Builds `request`; every object made goes into `objects` at once, so that the caller
/// tears down whatever was made when a later step fails.
pub fn build(request: &Request, objects: &mut Objects) -> Result<Built, String> {
    let fs = request.fs;
    let mut log = Log::default();
    let root = request.names.mount_root();
    if !root.exists() {
        objects.make_dir(&root)?;
    }
    let mount = request.names.mount_point(fs.name);
    objects.make_dir(&mount)?;
    let device_bytes = fs.device_bytes(request.need);
    let mut built = Built {
        mount: mount.clone(),
        commands: Vec::new(),
        devices: Vec::new(),
        images: Vec::new(),
        device_bytes,
        enter: None,
    };
    let tmpfs_options = |user: &str| {
        let size = format!("size={device_bytes}");
        if user.is_empty() { size } else { format!("{size},{user}") }
    };
    match fs.kind {
        Kind::Tmpfs => {
            let step = Step::new("mount").arg("-t").arg("tmpfs").arg("-o").arg(tmpfs_options(&request.mount_options));
            log.run(step.arg("writebench-lab").arg(&mount))?;
            objects.push(Object::Mount(mount.clone()));
        }
        Kind::Fuse => {
            let lower = request.names.mount_point(&format!("{}-lower", fs.name));
            objects.make_dir(&lower)?;
            log.run(
                Step::new("mount")
                    .arg("-t")
                    .arg("tmpfs")
                    .arg("-o")
                    .arg(tmpfs_options(""))
                    .arg("writebench-lab")
                    .arg(&lower),
            )?;
            objects.push(Object::Mount(lower.clone()));
            let mut step = Step::new("bindfs");
            if !request.mount_options.is_empty() {
                step = step.arg("-o").arg(&request.mount_options);
            }
            log.run(step.arg(&lower).arg(&mount))?;
            objects.push(Object::Mount(mount.clone()));
        }
        Kind::Gluster { volume } => {
            let state = request.names.mount_point(&format!("{}{HOSTS_SUFFIX}", fs.name));
            built.enter = Some(
                super::hosts::build(volume, &request.mount_options, &state, &mount, device_bytes, &mut log, objects)?
                    .first_host,
            );
        }
        Kind::Block | Kind::MdRaid0 { .. } => {
            let mut loops = Vec::new();
            for n in 0..fs.devices {
                let image = request.names.image(fs.name, n);
                // A sparse file: /dev/shm gives it memory only as the filesystem writes.
                let file = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&image)
                    .map_err(|e| format!("cannot create {}: {}", image.display(), error::plain(&e)))?;
                objects.push(Object::Image(image.clone()));
                file.set_len(device_bytes)
                    .map_err(|e| format!("cannot size {}: {}", image.display(), error::plain(&e)))?;
                drop(file);
                built.images.push(image.display().to_string());
                let device = loopdev::attach(&image, &mut log)?;
                objects.push(Object::Loop { device: device.clone(), image });
                loops.push(device);
            }
            let targets = match fs.kind {
                Kind::MdRaid0 { chunk_kib } => {
                    let name = request.names.md_name();
                    let array = md::create_raid0(&name, &loops, chunk_kib, "", &mut log)?;
                    objects.push(Object::Md { device: array.clone() });
                    vec![array]
                }
                _ => loops.clone(),
            };
            let mut step = Step::new(fs.mkfs).words(fs.mkfs_fixed).words(&request.mkfs_options);
            for target in &targets {
                step = step.arg(target);
            }
            log.run(step)?;
            if fs.mkfs == "mkfs.btrfs" {
                objects.push(Object::BtrfsDevices(targets.clone()));
            }
            let mut options: Vec<String> = Vec::new();
            if targets.len() > 1 {
                // Every member named, so that the mount needs no `btrfs device scan`.
                options.extend(targets[1..].iter().map(|device| format!("device={device}")));
            }
            if !request.mount_options.is_empty() {
                options.push(request.mount_options.clone());
            }
            let mut step = Step::new("mount").arg("-t").arg(fs.kernel_type);
            if !options.is_empty() {
                step = step.arg("-o").arg(options.join(","));
            }
            log.run(step.arg(&targets[0]).arg(&mount))?;
            objects.push(Object::Mount(mount.clone()));
            built.devices = loops.into_iter().chain(targets.into_iter().filter(|t| t.starts_with("/dev/md"))).collect();
        }
    }
    built.commands = log.lines;
    Ok(built)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_every_filesystem_once_with_safe_names_and_packages() {
        let names = names();
        for fs in ALL {
            assert!(super::super::names::valid_fs_name(fs.name), "{}", fs.name);
            assert_eq!(names.iter().filter(|n| **n == fs.name).count(), 1, "{}", fs.name);
            assert!(fs.tools.iter().all(|(program, package)| !program.is_empty() && !package.is_empty()));
            let block = matches!(fs.kind, Kind::Block | Kind::MdRaid0 { .. });
            assert_eq!(block, fs.devices > 0, "{}", fs.name);
            assert_eq!(block, !fs.mkfs.is_empty(), "{}", fs.name);
        }
        assert!(DEFAULT.iter().all(|name| by_name(name).is_some()));
        assert_eq!(by_name("btrfs-raid0").unwrap().mkfs_options, "-d raid0 -m raid1");
    }

    /// The crash check takes a filesystem by its type: one row of each type holds it,
    /// a block filesystem of that type, whose checker and mkfs have their packages.
    #[test]
    fn each_crash_checked_type_is_on_one_block_row_of_that_type() {
        let checked: Vec<(&str, &CrashFs)> =
            ALL.iter().filter_map(|fs| fs.crash.as_ref().map(|crash| (fs.kernel_type, crash))).collect();
        assert_eq!(checked.iter().map(|(_, c)| c.name).collect::<Vec<_>>(), ["ext4", "xfs", "btrfs"]);
        for (kernel_type, crash) in &checked {
            assert_eq!(*kernel_type, crash.name, "its type is its name for crash --fs");
            assert_eq!(checked.iter().filter(|(_, c)| c.name == crash.name).count(), 1, "{}", crash.name);
            assert!(!crash.mkfs.is_empty() && !crash.checker.is_empty() && !crash.tools.is_empty());
        }
        let row = ALL.iter().find(|fs| fs.crash.as_ref().is_some_and(|c| c.name == "btrfs")).unwrap();
        assert!(matches!(row.kind, Kind::Block), "{}", row.name);
    }

    #[test]
    fn devices_are_large_enough_for_mkfs_and_for_the_runs() {
        let xfs = by_name("xfs").unwrap();
        assert_eq!(xfs.device_bytes(32 * MIB), 320 * MIB, "mkfs.xfs's minimum");
        assert_eq!(xfs.device_bytes(1024 * MIB), 1088 * MIB);
        let md = by_name("ext4-md-raid0").unwrap();
        assert_eq!(md.device_bytes(1024 * MIB), 320 * MIB);
        assert_eq!(md.memory_bytes(1024 * MIB), 1280 * MIB);
        assert_eq!(by_name("tmpfs").unwrap().memory_bytes(MIB), 65 * MIB);
    }
}
