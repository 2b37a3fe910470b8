//! `target.fs_type` names the filesystem under PATH right: tmpfs, and ext4, xfs and
//! btrfs each on a loop device, with statfs's magic recorded beside it.

use crate::common;

use common::{LoopFs, Tmpfs, run_result};

/// The result's target of a one-case run on `dir`.
fn target_of(dir: &std::path::Path) -> serde_json::Value {
    let args = ["--methods", "write", "--states", "empty", "--chunks", "64KiB", "--threads", "1"];
    let (result, _) =
        run_result(dir, &[&args[..], &["--durability", "none", "--size", "64KiB", "--repeat", "1"]].concat());
    result["target"].clone()
}

#[test]
fn tmpfs_ext4_xfs_and_btrfs_are_named_with_their_magic() {
    let tmpfs = Tmpfs::mount("16m");
    let target = target_of(&tmpfs.path());
    assert_eq!(target["fs_type"], "tmpfs");
    assert_eq!(target["fs_magic"], "0x01021994");
    // mkfs.xfs wants 300 MiB at least and mkfs.btrfs about 114 MiB; the images are
    // sparse, in the temporary directory.
    for (fs, mib, magic) in [("ext4", 64, "0x0000ef53"), ("xfs", 320, "0x58465342"), ("btrfs", 160, "0x9123683e")] {
        let mounted = LoopFs::make(fs, mib);
        let target = target_of(&mounted.path());
        assert_eq!(target["fs_type"], fs, "{target}");
        assert_eq!(target["fs_magic"], magic, "{target}");
        assert!(target["device"].as_str().unwrap().starts_with("/dev/loop"), "{target}");
    }
}
