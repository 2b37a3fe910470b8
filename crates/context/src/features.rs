//! What the filesystem under the path does to data on its own: atomic writes it
//! offers (statx `STATX_WRITE_ATOMIC`, Linux 6.11) and whether it compresses or
//! deduplicates (btrfs's mount options and property, zfs's dataset properties), so
//! that a durable figure above the device's rate can be explained.

use std::ffi::CString;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// The atomic write units of a file, as statx reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AtomicWrite {
    /// Whether the file takes RWF_ATOMIC writes at all (STATX_ATTR_WRITE_ATOMIC).
    pub supported: bool,
    /// Smallest and largest write, bytes, that the kernel keeps whole across a crash.
    pub unit_min: u32,
    pub unit_max: u32,
    /// Most iovecs one atomic write may have.
    pub segments_max: u32,
}

/// `statx(STATX_WRITE_ATOMIC)` of `fd`'s file; None where the kernel does not answer
/// the question (before 6.11, or the filesystem leaves the bit out of the mask).
pub fn atomic_write(fd: RawFd) -> Option<AtomicWrite> {
    // SAFETY: statx with AT_EMPTY_PATH on an open descriptor fills the struct we pass.
    let stx = unsafe {
        let mut stx: libc::statx = std::mem::zeroed();
        let ok = libc::statx(fd, c"".as_ptr(), libc::AT_EMPTY_PATH, libc::STATX_WRITE_ATOMIC, &mut stx) == 0;
        ok.then_some(stx)
    }?;
    if stx.stx_mask & libc::STATX_WRITE_ATOMIC == 0 {
        return None;
    }
    Some(AtomicWrite {
        supported: stx.stx_attributes & libc::STATX_ATTR_WRITE_ATOMIC as u64 != 0 && stx.stx_atomic_write_unit_max > 0,
        unit_min: stx.stx_atomic_write_unit_min,
        unit_max: stx.stx_atomic_write_unit_max,
        segments_max: stx.stx_atomic_write_segments_max,
    })
}

/// Whether the filesystem compresses or deduplicates what is written to `path`, in
/// words ("no" where it cannot), or None where that cannot be told.
pub fn compression(fs_type: &str, mount_options: &str, path: &Path) -> Option<String> {
    match fs_type {
        "btrfs" => Some(btrfs(mount_options, path)),
        "zfs" => zfs(path),
        // These have no compression or deduplication of their own.
        "tmpfs" | "ramfs" | "ext2" | "ext3" | "ext4" | "xfs" => Some("no".into()),
        _ => None,
    }
}

/// btrfs compresses by mount option (`compress`, `compress-force`) or by a property
/// set on a file or directory, which new files inherit (the `btrfs.compression`
/// extended attribute); it deduplicates only when a tool asks it to, never on write.
fn btrfs(mount_options: &str, path: &Path) -> String {
    let option = mount_options
        .split(',')
        .find(|o| o.starts_with("compress=") || o.starts_with("compress-force=") || *o == "compress");
    let property = xattr(path, "btrfs.compression");
    match (option, property) {
        (_, Some(property)) if !property.is_empty() => {
            format!("yes: btrfs property compression={property} on the path")
        }
        (Some(option), _) => format!("yes: btrfs mount option {option}"),
        _ => "no".into(),
    }
}

fn xattr(path: &Path, name: &str) -> Option<String> {
    let path = CString::new(path.as_os_str().as_bytes()).ok()?;
    let name = CString::new(name).ok()?;
    let mut value = [0u8; 64];
    // SAFETY: the names are NUL-terminated and the buffer's length is passed.
    let len = unsafe { libc::getxattr(path.as_ptr(), name.as_ptr(), value.as_mut_ptr().cast(), value.len()) };
    (len >= 0).then(|| String::from_utf8_lossy(&value[..len as usize]).trim_end_matches('\0').to_string())
}

/// zfs says through its own command; a machine without it cannot be told.
fn zfs(path: &Path) -> Option<String> {
    let output = std::process::Command::new("zfs")
        .args(["get", "-H", "-o", "property,value", "compression,dedup"])
        .arg(path)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let text = String::from_utf8_lossy(&output.stdout);
    let pairs: Vec<String> = text.lines().map(|l| l.split('\t').collect::<Vec<_>>().join("=")).collect();
    let on = pairs.iter().any(|p| !(p.ends_with("=off") || p.ends_with("=-")));
    Some(format!("{}: zfs {}", if on { "yes" } else { "no" }, pairs.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn btrfs_compression_comes_from_its_mount_options() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            compression("btrfs", "rw,relatime,compress=zstd:3,space_cache=v2", dir.path()).unwrap(),
            "yes: btrfs mount option compress=zstd:3"
        );
        assert_eq!(
            compression("btrfs", "rw,compress-force=lzo", dir.path()).unwrap(),
            "yes: btrfs mount option compress-force=lzo"
        );
        assert_eq!(compression("btrfs", "rw,relatime,ssd", dir.path()).unwrap(), "no");
        assert_eq!(compression("ext4", "rw", dir.path()).unwrap(), "no");
        assert_eq!(compression("fuse.bindfs", "rw", dir.path()), None);
    }

    #[test]
    fn atomic_write_units_are_read_or_left_unknown() {
        let file = tempfile::tempfile().unwrap();
        // Whatever this kernel and filesystem say, the answer is consistent.
        if let Some(atomic) = atomic_write(file.as_raw_fd()) {
            assert!(!atomic.supported || (atomic.unit_min > 0 && atomic.unit_min <= atomic.unit_max), "{atomic:?}");
        }
        assert_eq!(atomic_write(-1), None);
    }
}
