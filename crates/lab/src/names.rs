//! Names of the lab's objects. Every object carries `writebench-lab-<pid>-` so that it is
//! recognisably the lab's own (docs/design.md §6), and the pid says whether the lab that made it
//! is still running (its objects are then in use, never leftovers).
//!
//! - backing files: `/dev/shm/writebench-lab-<pid>-<fs>-<n>.img` (RAM-backed);
//! - mount points: `/dev/shm/writebench-lab-<pid>-mnt/<fs>` (and `<fs>-lower` for FUSE);
//! - md arrays: `/dev/md/writebench-lab-<pid>-md` (md names hold 32 bytes at most, so
//!   no filesystem name in it; one md array exists at a time).
//!
//! Loop devices and md arrays have no names of their own that survive everything, so
//! they are recognised through what they rest on: a loop device by its backing file
//! (`/sys/block/loopN/loop/backing_file`), an md array by its members (loop devices of
//! ours).

use std::path::{Path, PathBuf};

/// Where the backing files and mount points go: RAM where it is tmpfs (as on common
/// Linux systems; the lab says what it is before it builds), so the lab measures the
/// filesystem and not a disk under it.
pub const SHM: &str = "/dev/shm";

/// The start of every name the lab gives.
pub const PREFIX: &str = "writebench-lab-";

/// The names of one lab process's objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Names {
    pub pid: u32,
}

impl Names {
    pub fn this_process() -> Names {
        Names { pid: std::process::id() }
    }

    /// The `n`-th backing file of filesystem `fs`.
    pub fn image(&self, fs: &str, n: usize) -> PathBuf {
        Path::new(SHM).join(format!("{PREFIX}{}-{fs}-{n}.img", self.pid))
    }

    /// The directory that holds every mount point of this lab.
    pub fn mount_root(&self) -> PathBuf {
        Path::new(SHM).join(format!("{PREFIX}{}-mnt", self.pid))
    }

    pub fn mount_point(&self, fs: &str) -> PathBuf {
        self.mount_root().join(fs)
    }

    /// The md array's name under /dev/md: at most 25 bytes (pids have 7 digits at most),
    /// within the 32 that md's metadata keeps.
    pub fn md_name(&self) -> String {
        format!("{PREFIX}{}-md", self.pid)
    }
}

/// The pid in a name the lab gave (`writebench-lab-<pid>-…`, a file name or a path's
/// last part), or None when the name is not one of the lab's.
pub fn pid_in(name: &str) -> Option<u32> {
    let base = name.rsplit('/').next()?;
    let rest = base.strip_prefix(PREFIX)?;
    let (pid, tail) = rest.split_once('-')?;
    if pid.is_empty() || pid.len() > 10 || !pid.bytes().all(|b| b.is_ascii_digit()) || tail.is_empty() {
        return None;
    }
    pid.parse().ok().filter(|&pid| pid > 0)
}

/// The pid of the lab that made the backing file `path` (as the kernel shows it, maybe
/// with " (deleted)" after it), if it is one of the lab's: directly in /dev/shm, named
/// like ours, ending in `.img`.
pub fn image_pid(path: &str) -> Option<u32> {
    let path = path.strip_suffix(" (deleted)").unwrap_or(path);
    let name = path.strip_prefix(SHM)?.strip_prefix('/')?;
    if name.contains('/') || !name.ends_with(".img") {
        return None;
    }
    pid_in(name)
}

/// The pid of the lab whose mount point `path` is (under `/dev/shm/writebench-lab-<pid>-mnt/`).
pub fn mount_pid(path: &str) -> Option<u32> {
    let rest = path.strip_prefix(SHM)?.strip_prefix('/')?;
    let (root, inside) = rest.split_once('/')?;
    if inside.is_empty() || !root.ends_with("-mnt") {
        return None;
    }
    pid_in(root)
}

/// True when `pid` is a running writebench: its objects are in use.
pub fn is_running_writebench(pid: u32) -> bool {
    // A zombie (killed, not yet reaped by its parent) still has its name: it holds
    // nothing any more.
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().and_then(|stat| {
        let after_name = stat.rsplit_once(')')?.1;
        after_name.split_whitespace().next().map(str::to_string)
    });
    if matches!(state.as_deref(), Some("Z" | "X")) {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/comm")) {
        Ok(comm) => comm.trim_end() == "writebench",
        Err(_) => false,
    }
}

/// Filesystem names are used in paths: only these characters.
pub fn valid_fs_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lab_knows_its_own_names_and_nobody_elses() {
        let names = Names { pid: 4242 };
        let image = names.image("btrfs-raid0", 1);
        assert_eq!(image, Path::new("/dev/shm/writebench-lab-4242-btrfs-raid0-1.img"));
        assert_eq!(image_pid(image.to_str().unwrap()), Some(4242));
        assert_eq!(image_pid("/dev/shm/writebench-lab-4242-ext4-0.img (deleted)"), Some(4242));
        let mount = names.mount_point("fuse-lower");
        assert_eq!(mount_pid(mount.to_str().unwrap()), Some(4242));
        assert_eq!(pid_in(&names.md_name()), Some(4242));
        assert!(Names { pid: 4_194_304 }.md_name().len() <= 32);
        for other in [
            "/tmp/writebench-lab-4242-ext4-0.img",
            "/dev/shm/sub/writebench-lab-4242-ext4-0.img",
            "/dev/shm/writebench-lab-x-ext4-0.img",
            "/dev/shm/writebench-lab-4242-ext4-0.raw",
            "/dev/shm/my.img",
            "/var/lib/images/disk.img",
        ] {
            assert_eq!(image_pid(other), None, "{other}");
        }
        assert_eq!(mount_pid("/dev/shm/writebench-lab-4242-mnt"), None, "the root itself is no mount point");
        assert_eq!(mount_pid("/mnt/writebench-lab-4242-mnt/ext4"), None);
        assert_eq!(pid_in("writebench-lab-0-x"), None);
    }

    #[test]
    fn filesystem_names_are_safe_in_paths() {
        assert!(valid_fs_name("ext4-md-raid0"));
        for bad in ["", "../x", "a/b", "Ext4", "a b"] {
            assert!(!valid_fs_name(bad), "{bad}");
        }
    }
}
