//! `writebench crash` (docs/crash.md) end to end on real parts: the recorder (its FUSE
//! file, a real ext4 on a loop device over it), the built-in workloads on ext4 and xfs
//! (`recorder`), and the user's own program with its checker (`program`). Needs root,
//! /dev/fuse, losetup, mkfs.ext4 and mkfs.xfs; fails loudly without them.
//!
//! One test binary (each file a module), so that CI links it once (docs/code.md).

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../common/mod.rs"]
mod common;

mod program;
mod recorder;

pub fn run(program: &str, args: &[&str]) -> String {
    let output = Command::new(program).args(args).output().unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(output.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// A loop device over a file, detached on drop.
pub struct Loop(pub String);

impl Loop {
    pub fn over(file: &Path) -> Loop {
        Loop(run("losetup", &["--find", "--show", file.to_str().unwrap()]))
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

/// A mount, undone on drop.
pub struct Mounted(PathBuf);

impl Mounted {
    pub fn of(device: &str, at: &Path, options: &str) -> Mounted {
        run("mount", &["-o", options, device, at.to_str().unwrap()]);
        Mounted(at.to_path_buf())
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Every object of writebench process `pid` still there: mounts, loop devices, files in
/// /dev/shm.
pub fn leftovers_of(pid: u32) -> Vec<String> {
    let mark = format!("writebench-lab-{pid}-");
    let mut found: Vec<String> = std::fs::read_to_string("/proc/self/mounts")
        .unwrap()
        .lines()
        .filter(|line| line.contains(&mark))
        .map(|line| format!("mount {line}"))
        .collect();
    for entry in std::fs::read_dir("/sys/block").unwrap().flatten() {
        if let Ok(backing) = std::fs::read_to_string(entry.path().join("loop/backing_file")) {
            if backing.contains(&mark) {
                found.push(format!("loop {} on {}", entry.file_name().to_string_lossy(), backing.trim()));
            }
        }
    }
    for entry in std::fs::read_dir("/dev/shm").unwrap().flatten() {
        if entry.file_name().to_string_lossy().starts_with(&mark) {
            found.push(format!("file {}", entry.path().display()));
        }
    }
    found
}

pub fn crash_command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_writebench"));
    command.arg("crash").args(args).current_dir("/");
    command
}

/// `writebench clean` removes the lab-named objects of every process that is no running
/// writebench, as this test binary is: the tests that clean and those that make such
/// objects in this process take turns.
pub static LAB_NAMES: std::sync::Mutex<()> = std::sync::Mutex::new(());
