//! The filesystem's type from `statfs`'s magic number, the kernel's own answer for the
//! path (a bind mount, a symlink or a stale mount table cannot mislead it), refined by
//! the mount table where one magic covers several types (ext2/3/4) or the table says
//! more (`fuse.bindfs`).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Magic numbers from linux/magic.h (and zfs's own), with their usual names.
const MAGICS: &[(u64, &str)] = &[
    (0x0102_1994, "tmpfs"),
    (0xEF53, "ext4"),
    (0x5846_5342, "xfs"),
    (0x9123_683E, "btrfs"),
    (0xF2F5_2010, "f2fs"),
    (0x794C_7630, "overlay"),
    (0x6573_5546, "fuse"),
    (0x6969, "nfs"),
    (0xFF53_4D42, "cifs"),
    (0xFE53_4D42, "smb2"),
    (0x2FC1_2FC1, "zfs"),
    (0x8584_58F6, "ramfs"),
    (0x0BD0_0BD0, "lustre"),
    (0x1957_0903, "beegfs"),
    (0x4244, "hfs"),
    (0x5346_544E, "ntfs"),
    (0x2011_BAB0, "exfat"),
    (0x4D44, "vfat"),
    (0x9FA0, "proc"),
    (0x6265_6572, "sysfs"),
];

/// `statfs(path).f_type`, or `None` where the call fails.
pub fn magic_of(path: &Path) -> Option<u64> {
    let name = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statfs fills the struct we pass; the name is NUL-terminated.
    let mut buf: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(name.as_ptr(), &mut buf) } != 0 {
        return None;
    }
    // f_type is signed on some targets; the magic is its low 32 bits.
    Some(buf.f_type as u64 & 0xFFFF_FFFF)
}

/// The type to report: the magic's name, except where the mount table names the same
/// kind more precisely (ext2/ext3 share ext4's magic; `fuse.bindfs` is a FUSE
/// filesystem); the mount table's type where the magic is unknown.
pub fn resolve(magic: Option<u64>, mounted: Option<&str>) -> String {
    let named = magic.and_then(|m| MAGICS.iter().find(|(n, _)| *n == m).map(|(_, name)| *name));
    match (named, mounted) {
        (Some("ext4"), Some(table)) if table.starts_with("ext") => table.to_string(),
        (Some(kind), Some(table)) if table.starts_with(kind) => table.to_string(),
        (Some(kind), _) => kind.to_string(),
        (None, Some(table)) => table.to_string(),
        (None, None) => "unknown".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_magic_wins_over_a_mount_table_that_says_otherwise() {
        assert_eq!(resolve(Some(0x0102_1994), Some("ext4")), "tmpfs");
        assert_eq!(resolve(Some(0x5846_5342), None), "xfs");
        assert_eq!(resolve(Some(0x9123_683E), Some("btrfs")), "btrfs");
    }

    #[test]
    fn the_mount_table_refines_a_shared_or_generic_magic() {
        assert_eq!(resolve(Some(0xEF53), Some("ext3")), "ext3");
        assert_eq!(resolve(Some(0xEF53), Some("tmpfs")), "ext4");
        assert_eq!(resolve(Some(0x6573_5546), Some("fuse.bindfs")), "fuse.bindfs");
        assert_eq!(resolve(Some(0x1234), Some("weirdfs")), "weirdfs");
        assert_eq!(resolve(None, None), "unknown");
    }

    #[test]
    fn this_machines_proc_and_root_are_named() {
        assert_eq!(resolve(magic_of(Path::new("/proc")), None), "proc");
        assert!(magic_of(Path::new("/no/such/path")).is_none());
    }
}
