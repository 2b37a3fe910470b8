//! The context a result needs to be trusted (docs/design.md §2.10): the host, and the
//! filesystem and device under the path.

pub mod backing;
pub mod calibration;
pub mod calibration_cache;
pub mod copy;
pub mod device;
pub mod dio;
pub mod features;
pub mod fstype;
pub mod page_reporting;
pub mod statvfs;
pub mod volume;

use std::collections::BTreeMap;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::dio::DioAlignment;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Host {
    pub kernel: String,
    pub cpu_model: String,
    pub cpus: usize,
    pub memory_bytes: u64,
    /// cpufreq's governor of CPU 0 (`performance`, `powersave`, `schedutil`…); null
    /// where the machine exposes none (most VMs).
    #[serde(default)]
    pub cpu_governor: Option<String>,
    /// The first CPU's clock as /proc/cpuinfo says at the end of the command, in MHz.
    #[serde(default)]
    pub cpu_mhz: Option<f64>,
    /// The writeback settings that decide when buffered data leaves the page cache:
    /// `vm.dirty_ratio`, `dirty_background_ratio`, `dirty_bytes`,
    /// `dirty_background_bytes`, `dirty_expire_centisecs`, `dirty_writeback_centisecs`.
    #[serde(default)]
    pub vm_dirty: BTreeMap<String, u64>,
    /// /proc/meminfo's `MemAvailable` as the command ended: what the dirty limit of
    /// `vm.dirty_ratio` is a share of, near enough (the kernel counts free and file
    /// pages). Absent in results from before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_available_bytes: Option<u64>,
    /// The memory limit of the cgroup writebench ran in (cgroup v2 `memory.max`), where
    /// there is one: its writers are throttled against it, not the machine's memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup_memory_max: Option<u64>,
    #[serde(default)]
    pub swap_total_bytes: u64,
    /// Whether pages went out to swap while the command measured (/proc/vmstat
    /// `pswpout` grew): a run that swapped measured the swap device too.
    #[serde(default)]
    pub swapped_during_run: Option<bool>,
    /// The kernel's transparent huge pages (`always`, `madvise` or `never`): what an
    /// ordinary buffer's pages are (`madvise`: 4 KiB unless asked), which decides how
    /// large an O_DIRECT request from it is (docs/measurement.md, "The writers' pages").
    /// Absent in results from before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transparent_hugepages: Option<String>,
    /// Under `--mpi`: the MPI library and every rank's host (the fields above are rank
    /// 0's machine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mpi: Option<MpiHosts>,
}

/// The MPI side of a result's host: which library ran the ranks, and where each ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MpiHosts {
    /// MPI_Get_library_version, e.g. "Open MPI v4.1.4, package: Debian OpenMPI, ...".
    pub library_version: String,
    /// How the ranks' times were put on one axis: one host's CLOCK_MONOTONIC, or each
    /// rank's exit from the barrier before the run (docs/scale.md).
    pub clock: String,
    /// Each rank's scratch directory is on its own node-local PATH (`--mpi-local`).
    pub local: bool,
    pub ranks: Vec<RankHost>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankHost {
    pub rank: u32,
    pub hostname: String,
    pub kernel: String,
}

/// Dirty and Writeback from /proc/meminfo, in bytes: data in the page cache not yet
/// written back, and data being written back now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirtyMemory {
    pub dirty: u64,
    pub writeback: u64,
}

impl DirtyMemory {
    pub fn now() -> Option<DirtyMemory> {
        let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
        Some(DirtyMemory { dirty: field_of(&meminfo, "Dirty:")?, writeback: field_of(&meminfo, "Writeback:")? })
    }
}

/// The machine's CPU time and this process's, in clock ticks (/proc/stat, /proc/self/stat),
/// read around a run to tell whether another process was busy meanwhile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuTicks {
    /// All CPUs' busy time: user, nice, system, irq and softirq. Idle, I/O wait and a
    /// hypervisor's steal are not another process of this machine.
    pub busy: u64,
    /// This process's: all its threads' user and system time.
    pub own: u64,
}

impl CpuTicks {
    pub fn now() -> Option<CpuTicks> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let line = stat.lines().find(|line| line.starts_with("cpu "))?;
        let fields: Vec<u64> = line.split_whitespace().skip(1).filter_map(|f| f.parse().ok()).collect();
        let busy = [0, 1, 2, 5, 6].iter().map(|&i| fields.get(i).copied().unwrap_or(0)).sum();
        // The command name (field 2) may hold spaces: count from the closing parenthesis.
        let own_stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        let after = own_stat.rsplit_once(')')?.1;
        let rest: Vec<u64> = after.split_whitespace().skip(11).take(2).filter_map(|f| f.parse().ok()).collect();
        Some(CpuTicks { busy, own: rest.iter().sum() })
    }

    /// Seconds of CPU that others used from `self` to `later`, less `excluded` seconds
    /// (a runner child's own CPU time, which /proc/stat counts and our process's does not).
    pub fn others_seconds(&self, later: &CpuTicks, excluded: f64) -> f64 {
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        let busy = later.busy.saturating_sub(self.busy) as f64 / hz;
        let own = later.own.saturating_sub(self.own) as f64 / hz;
        // Each of the four counters read is up to a tick behind: leave two ticks of
        // slack, so that a short quiet run does not read as shared.
        (busy - own - excluded - 2.0 / hz).max(0.0)
    }
}

/// Pages swapped out since boot (/proc/vmstat `pswpout`), taken before measuring so
/// that [`host`] can tell whether the command swapped.
pub fn swapped_out_pages() -> Option<u64> {
    let vmstat = std::fs::read_to_string("/proc/vmstat").ok()?;
    vmstat.lines().find_map(|line| line.strip_prefix("pswpout ")).and_then(|n| n.trim().parse().ok())
}

const VM_DIRTY: [&str; 6] = [
    "dirty_ratio",
    "dirty_background_ratio",
    "dirty_bytes",
    "dirty_background_bytes",
    "dirty_expire_centisecs",
    "dirty_writeback_centisecs",
];

/// cgroup v2's `memory.max` of this process's cgroup (/proc/self/cgroup's `0::` line);
/// None where it is "max", or the cgroup is v1 or unreadable.
fn cgroup_memory_max() -> Option<u64> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = own.lines().find_map(|line| line.strip_prefix("0::"))?;
    read_trimmed(&format!("/sys/fs/cgroup{}/memory.max", path.trim_end_matches('/')))?.parse().ok()
}

fn read_trimmed(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|text| text.trim().to_string()).filter(|text| !text.is_empty())
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TargetInfo {
    pub path: String,
    /// From `statfs`'s magic number, refined by the mount table (see [`fstype`]).
    pub fs_type: String,
    /// `statfs`'s f_type in hex, e.g. "0x01021994" (tmpfs); null when it failed.
    #[serde(default)]
    pub fs_magic: Option<String>,
    pub device: String,
    /// The block device under the path as /proc/diskstats names it, and what it sits
    /// on; null where there is none (tmpfs, FUSE, NFS): runs then have no device figures.
    #[serde(default)]
    pub block_device: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub block_device_parents: Vec<String>,
    /// The block device's model, rotational flag, block sizes and scheduler.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_queue: Option<device::Queue>,
    /// statvfs of the path as the command ended: bytes free to this user, and in all.
    #[serde(default)]
    pub free_bytes: Option<u64>,
    #[serde(default)]
    pub size_bytes: Option<u64>,
    pub mount_point: String,
    pub mount_options: String,
    /// The O_DIRECT alignment of a file in the scratch directory, found as the runner
    /// finds it for every O_DIRECT case (see [`dio::dio_alignment`]); null only when
    /// no file could be asked.
    pub dio_mem_align: Option<u32>,
    pub dio_offset_align: Option<u32>,
    /// Where the alignment came from: statx, the device's logical block size, or an
    /// assumption.
    #[serde(default)]
    pub dio_align_source: Option<String>,
    /// statx's atomic write units of a file in the scratch directory (`RWF_ATOMIC`);
    /// null where the kernel does not report them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub atomic_write: Option<features::AtomicWrite>,
    /// Whether the filesystem compresses or deduplicates ("no", "yes: btrfs mount
    /// option compress=zstd:3", …); null where it cannot be told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression: Option<String>,
    /// What holds the data in the end, followed down through loop devices, md and dm
    /// members, bindfs and overlay (see [`backing`]): "ram", "device" or "unknown"
    /// (also in results saved before it was recorded).
    #[serde(default)]
    pub backing: backing::Backing,
    /// That chain in words: "ext4 on /dev/loop3, a file on tmpfs".
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub backing_chain: String,
    /// A distributed filesystem's layout of the volume ([`volume`]): "GlusterFS disperse
    /// volume data, 1 x (2 + 1) = 3 bricks"; absent for the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub volume: Option<String>,
}

impl TargetInfo {
    /// The data stays in memory: what holds it is RAM (tmpfs itself, or a filesystem on
    /// loop devices over files on tmpfs, bindfs over a tmpfs directory), so a sync there
    /// makes nothing durable. Decided by the backing, not the filesystem's name; a result
    /// saved before the backing was recorded falls back to the name.
    pub fn in_memory(&self) -> bool {
        self.memory_filesystem() || self.backing == backing::Backing::Ram
    }

    /// tmpfs and ramfs themselves: files in the page cache with no filesystem work under
    /// them, where a sync has nothing at all to do.
    pub fn memory_filesystem(&self) -> bool {
        matches!(self.fs_type.as_str(), "tmpfs" | "ramfs")
    }
}

/// This machine, at the end of a command that started when /proc/vmstat's `pswpout`
/// was `swap_before` (see [`swapped_out_pages`]).
pub fn host(swap_before: Option<u64>) -> Host {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find_map(|line| line.strip_prefix("model name").and_then(|rest| rest.split_once(':')).map(|(_, v)| v.trim()))
        .unwrap_or("unknown")
        .to_string();
    Host {
        kernel: kernel_release(),
        cpu_model,
        cpus: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        memory_bytes: meminfo_field("MemTotal:").unwrap_or(0),
        cpu_governor: read_trimmed("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        cpu_mhz: cpuinfo.lines().find_map(|line| {
            line.strip_prefix("cpu MHz").and_then(|rest| rest.split_once(':')).and_then(|(_, v)| v.trim().parse().ok())
        }),
        vm_dirty: VM_DIRTY
            .iter()
            .filter_map(|name| {
                let value = read_trimmed(&format!("/proc/sys/vm/{name}"))?.parse().ok()?;
                Some((name.to_string(), value))
            })
            .collect(),
        memory_available_bytes: meminfo_field("MemAvailable:"),
        cgroup_memory_max: cgroup_memory_max(),
        swap_total_bytes: meminfo_field("SwapTotal:").unwrap_or(0),
        swapped_during_run: swap_before.zip(swapped_out_pages()).map(|(before, after)| after > before),
        transparent_hugepages: transparent_hugepages(),
        mpi: None,
    }
}

/// The kernel's setting for transparent huge pages (`always`, `madvise` or `never`, the
/// bracketed word of /sys/kernel/mm/transparent_hugepage/enabled), None where it has none.
pub fn transparent_hugepages() -> Option<String> {
    let text = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").ok()?;
    let start = text.find('[')? + 1;
    let end = start + text[start..].find(']')?;
    Some(text[start..end].to_string())
}

/// This machine's name, as `uname` gives it (the ranks' hosts, the calibration's cache).
pub fn hostname() -> String {
    // SAFETY: uname fills the struct we pass.
    let name = unsafe {
        let mut name: libc::utsname = std::mem::zeroed();
        libc::uname(&mut name);
        name
    };
    let node: Vec<u8> = name.nodename.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&node).into_owned()
}

fn kernel_release() -> String {
    // SAFETY: uname fills the struct we pass.
    let name = unsafe {
        let mut name: libc::utsname = std::mem::zeroed();
        libc::uname(&mut name);
        name
    };
    let release: Vec<u8> = name.release.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    format!("Linux {}", String::from_utf8_lossy(&release))
}

/// A /proc/meminfo field (`"MemTotal:"`) in bytes.
fn meminfo_field(field: &str) -> Option<u64> {
    field_of(&std::fs::read_to_string("/proc/meminfo").ok()?, field)
}

/// A field of /proc/meminfo's text, in bytes (the file says kB, meaning KiB).
fn field_of(meminfo: &str, field: &str) -> Option<u64> {
    let line = meminfo.lines().find(|line| line.starts_with(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Facts about the filesystem holding `path` (an existing directory), from
/// statfs and /proc/self/mountinfo, and the O_DIRECT alignment of `probe_file` if given.
pub fn target(path: &Path, probe_file: Option<&Path>) -> TargetInfo {
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mount = find_mount(&mountinfo, &canonical);
    let alignment = probe_file.and_then(alignment_of);
    let atomic = probe_file.and_then(atomic_write_of);
    let magic = fstype::magic_of(&canonical);
    let block = device::BlockDevice::of(&canonical);
    let space = statvfs::space(statvfs::At::Path(&canonical)).ok();
    let fs_type = fstype::resolve(magic, mount.as_ref().map(|m| m.fs_type.as_str()));
    let compression = features::compression(&fs_type, mount.as_ref().map_or("", |m| m.options.as_str()), &canonical);
    let found = backing::of_path(&backing::Live::new(mountinfo.clone()), &canonical.to_string_lossy());
    let volume = mount.as_ref().and_then(|m| volume::layout(&fs_type, &m.device));
    TargetInfo {
        path: canonical.display().to_string(),
        fs_type,
        fs_magic: magic.map(|m| format!("{m:#010x}")),
        device: mount.as_ref().map(|m| m.device.clone()).unwrap_or_else(|| "unknown".into()),
        block_device: block.as_ref().map(|b| b.name.clone()),
        block_device_parents: block.as_ref().map(|b| b.parents.clone()).unwrap_or_default(),
        block_queue: block.map(|b| b.queue),
        free_bytes: space.map(|(free, _)| free),
        size_bytes: space.map(|(_, size)| size),
        mount_point: mount.as_ref().map(|m| m.mount_point.clone()).unwrap_or_default(),
        mount_options: mount.map(|m| m.options).unwrap_or_default(),
        dio_mem_align: alignment.as_ref().map(|a| a.mem),
        dio_offset_align: alignment.as_ref().map(|a| a.offset),
        dio_align_source: alignment.map(|a| a.source),
        atomic_write: atomic,
        compression,
        backing: found.backing,
        backing_chain: found.chain,
        volume,
    }
}

#[derive(Debug, PartialEq)]
struct Mount {
    mount_point: String,
    /// The filesystem's device number as the table gives it (`7:3`; anonymous `0:N`
    /// for tmpfs, FUSE and btrfs).
    number: String,
    fs_type: String,
    device: String,
    options: String,
}

/// The mount whose mount point is the longest prefix of `path`; among equals the
/// last one listed, since a later mount on the same point hides the earlier.
fn find_mount(mountinfo: &str, path: &Path) -> Option<Mount> {
    let mut best: Option<Mount> = None;
    for line in mountinfo.lines() {
        // id parent major:minor root mount_point options [optional...] - fstype source super_options
        let (left, right) = match line.split_once(" - ") {
            Some(parts) => parts,
            None => continue,
        };
        let left: Vec<&str> = left.split(' ').collect();
        let right: Vec<&str> = right.split(' ').collect();
        if left.len() < 6 || right.len() < 3 {
            continue;
        }
        let mount_point = unescape_mount_field(left[4]);
        if !path.starts_with(&mount_point) {
            continue;
        }
        let longer = best.as_ref().is_none_or(|b| mount_point.len() >= b.mount_point.len());
        if longer {
            best = Some(Mount {
                mount_point,
                number: left[2].to_string(),
                fs_type: right[0].to_string(),
                device: right[1].to_string(),
                options: merge_options(left[5], right[2]),
            });
        }
    }
    best
}

/// The mount's options, then the superblock's that add something (both say `rw`).
fn merge_options(mount: &str, superblock: &str) -> String {
    let mut options: Vec<&str> = mount.split(',').collect();
    for option in superblock.split(',') {
        if !options.contains(&option) {
            options.push(option);
        }
    }
    options.join(",")
}

/// A field of the mount table (`/proc/self/mountinfo`, `/proc/self/mounts`), which
/// escapes space, tab, newline and backslash as octal (`\040`).
pub fn unescape_mount_field(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 3 < bytes.len() && bytes[i + 1..i + 4].iter().all(|b| (b'0'..=b'7').contains(b)) {
            out.push((bytes[i + 1] - b'0') * 64 + (bytes[i + 2] - b'0') * 8 + (bytes[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The atomic write units of `file` (see [`alignment_of`] for how it is opened).
fn atomic_write_of(file: &Path) -> Option<features::AtomicWrite> {
    let opened = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(file).ok()?;
    features::atomic_write(opened.as_raw_fd())
}

/// The O_DIRECT alignment of `file`, opened for the question (statx needs no write
/// access, and O_NOFOLLOW keeps it to the file itself).
fn alignment_of(file: &Path) -> Option<DioAlignment> {
    let opened = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(file).ok()?;
    Some(dio::dio_alignment(opened.as_raw_fd()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/vda rw,errors=remount-ro
30 22 0:25 / /dev/shm rw,nosuid,nodev shared:5 - tmpfs tmpfs rw,size=24G
31 22 0:26 / /mnt/my\\040disk rw,relatime - xfs /dev/loop0 rw,attr2
32 30 0:27 / /dev/shm rw,relatime - tmpfs small rw,size=8192k
";

    #[test]
    fn longest_and_latest_mount_wins() {
        let root = find_mount(MOUNTINFO, Path::new("/work/main")).unwrap();
        assert_eq!((root.fs_type.as_str(), root.device.as_str()), ("ext4", "/dev/vda"));
        let shm = find_mount(MOUNTINFO, Path::new("/dev/shm/x")).unwrap();
        assert_eq!(shm.device, "small");
        assert_eq!(shm.options, "rw,relatime,size=8192k");
        let spaced = find_mount(MOUNTINFO, Path::new("/mnt/my disk/data")).unwrap();
        assert_eq!(spaced.fs_type, "xfs");
        // A sibling whose name only starts like a mount point is not under it.
        assert_eq!(find_mount(MOUNTINFO, Path::new("/dev/shmx")).unwrap().fs_type, "ext4");
    }

    #[test]
    fn host_facts_are_read() {
        let host = host(swapped_out_pages());
        assert!(host.kernel.starts_with("Linux "));
        assert!(host.cpus >= 1);
        assert!(host.memory_bytes > 0);
        // Every Linux has these writeback settings, and a pswpout counter to compare.
        assert_eq!(host.vm_dirty.len(), VM_DIRTY.len(), "{:?}", host.vm_dirty);
        assert!(host.vm_dirty["dirty_expire_centisecs"] > 0);
        assert!(host.swapped_during_run.is_some());
        assert_eq!(super::host(None).swapped_during_run, None);
    }
}
