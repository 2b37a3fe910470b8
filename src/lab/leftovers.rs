//! What a lab killed with SIGKILL (or a power cut of its process) left behind: mounts
//! under `/dev/shm/writebench-lab-<pid>-mnt/`, md arrays of its loop devices, loop
//! devices on its images, the images in /dev/shm and the mount-point directories. Only
//! objects of a pid that is no running writebench count; `writebench clean` lists them
//! and removes them in teardown order.

use std::path::PathBuf;

use super::names::{self, SHM};
use super::objects::{self, Object};
use super::{loopdev, md};

#[derive(Debug, Default, PartialEq, Eq)]
pub struct Leftovers {
    pub mounts: Vec<String>,
    pub arrays: Vec<String>,
    pub loops: Vec<(String, String)>,
    pub images: Vec<PathBuf>,
    pub dirs: Vec<PathBuf>,
}

impl Leftovers {
    pub fn is_empty(&self) -> bool {
        self == &Leftovers::default()
    }

    /// One line per object, for the listing.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        lines.extend(self.mounts.iter().map(|m| format!("mount {m}")));
        lines.extend(self.arrays.iter().map(|a| format!("md array {a}")));
        lines.extend(self.loops.iter().map(|(device, image)| format!("loop device {device} on {image}")));
        lines.extend(self.images.iter().map(|i| format!("backing file {}", i.display())));
        lines.extend(self.dirs.iter().map(|d| format!("directory {}", d.display())));
        lines
    }

    /// Removes everything, mounts first; Err: the steps that failed.
    pub fn remove(&self) -> Result<(), Vec<String>> {
        let mut order: Vec<Object> = Vec::new();
        // Deepest mount first, then the arrays, the loop devices, the files, the
        // directories (deepest first): the reverse of how a lab makes them.
        // A mount that serves a loop device's backing file (the crash check's recorder)
        // comes off after the loop devices: before, it is busy.
        let serves = |mount: &String| self.loops.iter().any(|(_, image)| image.starts_with(&format!("{mount}/")));
        let (mut served, mut mounts): (Vec<String>, Vec<String>) = self.mounts.iter().cloned().partition(serves);
        mounts.sort_by_key(|m| std::cmp::Reverse(m.len()));
        served.sort_by_key(|m| std::cmp::Reverse(m.len()));
        order.extend(mounts.into_iter().map(|m| Object::Mount(PathBuf::from(m))));
        order.push(Object::BtrfsDevices(self.loops.iter().map(|(device, _)| device.clone()).collect()));
        order.extend(self.arrays.iter().map(|device| Object::Md { device: device.clone() }));
        order.extend(self.loops.iter().map(|(device, image)| Object::Loop {
            device: device.clone(),
            image: PathBuf::from(image.strip_suffix(" (deleted)").unwrap_or(image)),
        }));
        order.extend(served.into_iter().map(|m| Object::Mount(PathBuf::from(m))));
        order.extend(self.images.iter().cloned().map(Object::Image));
        let mut dirs = self.dirs.clone();
        dirs.sort_by_key(|d| std::cmp::Reverse(d.as_os_str().len()));
        order.extend(dirs.into_iter().map(Object::Dir));
        let mut objects = objects::Objects::default();
        // Objects pops the last pushed first: push in reverse.
        for object in order.into_iter().rev() {
            objects.push(object);
        }
        objects.teardown()
    }
}

/// The lab's objects whose lab is gone.
pub fn find() -> Leftovers {
    find_where(|pid| !names::is_running_writebench(pid))
}

/// The lab's objects of the labs whose pid `wanted` accepts: a running lab sweeps its
/// own after each teardown, for an object whose creation a signal cut short (a loop
/// device that `losetup` attached but could not name before it was killed).
pub fn find_where(wanted: impl Fn(u32) -> bool) -> Leftovers {
    let gone = |pid: Option<u32>| pid.is_some_and(&wanted);
    let mut found = Leftovers {
        mounts: objects::mount_points().into_iter().filter(|m| gone(names::mount_pid(m))).collect(),
        ..Leftovers::default()
    };
    found.mounts.dedup();
    found.arrays = md::arrays().into_iter().filter(|(_, members)| gone(md::owner(members))).map(|(d, _)| d).collect();
    // A loop device rests on an image in /dev/shm (the lab's), or on the file a
    // mount of ours serves (the crash check's recorder: `<mount root>/recN/image`).
    let owner = |backing: &str| {
        names::image_pid(backing).or_else(|| backing.rsplit_once('/').and_then(|(dir, _)| names::mount_pid(dir)))
    };
    found.loops = loopdev::attached().into_iter().filter(|(_, backing)| gone(owner(backing))).collect();
    if let Ok(entries) = std::fs::read_dir(SHM) {
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(metadata) = std::fs::symlink_metadata(&path) else { continue };
            if metadata.is_file() && gone(names::image_pid(&path.to_string_lossy())) {
                found.images.push(path);
            } else if metadata.is_dir() && name.ends_with("-mnt") && gone(names::pid_in(&name)) {
                if let Ok(inside) = std::fs::read_dir(&path) {
                    // The type as the directory lists it: a stat would go into a mount
                    // on it, and fail on a FUSE mount whose daemon was killed.
                    let dirs = inside.flatten().filter(|e| e.file_type().is_ok_and(|t| t.is_dir()));
                    found.dirs.extend(dirs.map(|e| e.path()));
                }
                found.dirs.push(path);
            }
        }
    }
    found.images.sort();
    found.dirs.sort();
    found
}

/// `writebench clean`'s part for the lab: lists the leftovers and removes them once
/// `confirm` agrees (`--yes`, or the user on a terminal; see `measure::clean::clean_command`).
/// Ok(false) when a removal failed.
pub fn clean(confirm: &mut dyn FnMut(&str, &str) -> Result<bool, String>) -> Result<bool, String> {
    let found = find();
    if found.is_empty() {
        // Silent: most users never ran a lab, and `clean` is about their PATH.
        return Ok(true);
    }
    println!("left by a filesystem lab or crash check that is no longer running:");
    for line in found.lines() {
        println!("  {line}");
    }
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Err(
            "removing the lab's and crash check's leftovers needs root (unmount, mdadm --stop, losetup -d): run clean as root".into()
        );
    }
    if !confirm("Tear them down? [y/N] ", "the lab's leftovers are listed, none removed")? {
        println!("nothing removed");
        return Ok(true);
    }
    match found.remove() {
        Ok(()) => {
            println!("removed the lab's leftovers");
            Ok(true)
        }
        Err(failures) => {
            for failure in failures {
                eprintln!("writebench: {failure}");
            }
            Ok(false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_names_each_object_and_nothing_is_nothing() {
        assert!(Leftovers::default().is_empty());
        assert!(Leftovers::default().remove().is_ok());
        let found = Leftovers {
            mounts: vec!["/dev/shm/writebench-lab-9-mnt/ext4".into()],
            loops: vec![("/dev/loop9".into(), "/dev/shm/writebench-lab-9-ext4-0.img".into())],
            ..Leftovers::default()
        };
        assert_eq!(
            found.lines(),
            [
                "mount /dev/shm/writebench-lab-9-mnt/ext4",
                "loop device /dev/loop9 on /dev/shm/writebench-lab-9-ext4-0.img"
            ]
        );
    }
}
