//! `target.backing`: what holds the data, found by following the path's mount down
//! (docs/results.md), not from the filesystem's name. ext4 on a loop device over a file
//! on tmpfs and bindfs over a tmpfs directory keep their data in RAM like tmpfs, and the
//! Answer says so; the same ext4 over a file elsewhere rests on what that file rests on.
//! As root, with mkfs.ext4, loop devices and bindfs; without them these tests fail.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{LoopFs, Tmpfs, run_result};

/// One small case that syncs, so the Answer has a durable goal to speak of.
const ONE_CASE: [&str; 16] = [
    "--methods",
    "write",
    "--states",
    "empty",
    "--chunks",
    "256KiB",
    "--threads",
    "1",
    "--durability",
    "end",
    "--size",
    "1MiB",
    "--repeat",
    "2",
    "--no-calibrate",
    "--no-verify",
];

/// The result's target and the output's text, its lines joined by single spaces (it
/// wraps at 100 columns): the note on what holds the data is said once, in the header.
fn run_on(dir: &Path) -> (serde_json::Value, String) {
    let (result, stdout) = run_result(dir, &ONE_CASE);
    assert!(stdout.contains("\n## Answer\n"), "no Answer in:\n{stdout}");
    let answer = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    (result["target"].clone(), answer)
}

#[test]
fn ext4_on_a_loop_device_over_a_file_on_tmpfs_is_recorded_as_ram_and_noted() {
    let tmpfs = Tmpfs::mount("160m");
    let ext4 = LoopFs::make_in(&tmpfs.path(), "ext4", 96, "loop");
    let (target, answer) = run_on(&ext4.path());
    assert_eq!(target["fs_type"], "ext4", "{target}");
    assert_eq!(target["backing"], "ram", "{target}");
    let chain = target["backing_chain"].as_str().unwrap();
    assert!(chain.starts_with("ext4 on /dev/loop") && chain.ends_with(", a file on tmpfs"), "{chain}");
    assert!(
        answer.contains(&format!(
            "note: ext4 here keeps its data in memory ({chain}); a sync there measures the filesystem's own work, \
             not a device"
        )),
        "{answer}"
    );
}

#[test]
fn tmpfs_keeps_its_own_note() {
    let tmpfs = Tmpfs::mount("16m");
    let (target, answer) = run_on(&tmpfs.path());
    assert_eq!((&target["backing"], &target["backing_chain"]), (&"ram".into(), &"tmpfs".into()), "{target}");
    assert!(
        answer.contains("note: tmpfs keeps files in memory: fsync does nothing there, nothing is durable"),
        "{answer}"
    );
}

/// bindfs `source` on a fresh directory, unmounted on drop.
struct Bindfs {
    mount_point: tempfile::TempDir,
}

impl Bindfs {
    fn over(source: &Path) -> Bindfs {
        let mount_point = tempfile::tempdir().unwrap();
        let status = Command::new("bindfs")
            .arg(source)
            .arg(mount_point.path())
            .status()
            .unwrap_or_else(|e| panic!("bindfs (Debian package bindfs) is needed for this test: {e}"));
        assert!(status.success(), "bindfs failed: this test needs root and /dev/fuse");
        Bindfs { mount_point }
    }

    fn path(&self) -> PathBuf {
        self.mount_point.path().to_path_buf()
    }
}

impl Drop for Bindfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.mount_point.path()).status();
    }
}

#[test]
fn bindfs_over_a_tmpfs_directory_is_ram_through_its_source() {
    let tmpfs = Tmpfs::mount("32m");
    let fuse = Bindfs::over(&tmpfs.path());
    let (target, answer) = run_on(&fuse.path());
    assert!(target["fs_type"].as_str().unwrap().starts_with("fuse"), "{target}");
    assert_eq!(target["backing"], "ram", "{target}");
    let chain = target["backing_chain"].as_str().unwrap();
    assert!(chain.contains(&format!(" over {}, on tmpfs", tmpfs.path().display())), "{chain}");
    assert!(answer.contains("here keeps its data in memory"), "{answer}");
}

#[test]
fn a_loop_device_over_a_file_elsewhere_rests_on_that_files_filesystem() {
    // The temporary directory is on a disk here and on tmpfs on some machines: either
    // way, ext4 over a file there has that directory's backing, and no note unless RAM.
    let (temp, _) = run_on(&std::env::temp_dir());
    let ext4 = LoopFs::make("ext4", 64);
    let (target, answer) = run_on(&ext4.path());
    assert_eq!(target["backing"], temp["backing"], "{target}\n{temp}");
    let chain = target["backing_chain"].as_str().unwrap();
    let under = temp["backing_chain"].as_str().unwrap();
    assert!(chain.starts_with("ext4 on /dev/loop") && chain.ends_with(&format!(", a file on {under}")), "{chain}");
    assert_eq!(answer.contains("keeps its data in memory"), temp["backing"] == "ram", "{answer}");
}
