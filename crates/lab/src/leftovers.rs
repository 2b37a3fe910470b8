//! What a lab killed with SIGKILL (or a power cut of its process) left behind: mounts
//! under `/dev/shm/writebench-lab-<pid>-mnt/`, md arrays of its loop devices, loop
//! devices on its images, the images in /dev/shm and the mount-point directories, and
//! the processes still working in those mounts (a user's program a killed `crash --run`
//! was checking: it would keep them busy). Only objects of a pid that is no running
//! writebench count; `writebench clean` lists them and removes them in teardown order,
//! the processes first.

use std::path::PathBuf;

use super::names::{self, SHM};
use super::objects::{self, Object};
use super::{loopdev, md};

#[derive(Debug, Default, PartialEq, Eq)]
pub struct Leftovers {
    /// Processes whose working directory, root or an open file is in a mount of ours:
    /// (pid, its name, the path).
    pub processes: Vec<(u32, String, String)>,
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
        lines.extend(self.processes.iter().map(|(pid, name, path)| format!("process {pid} ({name}) using {path}")));
        lines.extend(self.mounts.iter().map(|m| format!("mount {m}")));
        lines.extend(self.arrays.iter().map(|a| format!("md array {a}")));
        lines.extend(self.loops.iter().map(|(device, image)| format!("loop device {device} on {image}")));
        lines.extend(self.images.iter().map(|i| format!("backing file {}", i.display())));
        lines.extend(self.dirs.iter().map(|d| format!("directory {}", d.display())));
        lines
    }

    /// Removes everything, processes and mounts first; Err: the steps that failed.
    pub fn remove(&self) -> Result<(), Vec<String>> {
        end_processes(&self.processes);
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
        // A distributed row's hosts' state is a tree of files (filesystems::hosts_dir).
        order.extend(dirs.into_iter().map(|d| {
            if d.to_string_lossy().ends_with(super::filesystems::HOSTS_SUFFIX) {
                Object::Tree(d)
            } else {
                Object::Dir(d)
            }
        }));
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
    found.processes = processes_in(&|path: &str| gone(names::mount_pid(path)));
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

/// The processes (not this one) whose working directory, root or an open file has a
/// path `ours` accepts: (pid, name, the first such path).
fn processes_in(ours: &dyn Fn(&str) -> bool) -> Vec<(u32, String, String)> {
    let own = std::process::id();
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else { return found };
    for pid in entries.flatten().filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok()) {
        if pid == own {
            continue;
        }
        let proc = PathBuf::from(format!("/proc/{pid}"));
        let mut links = vec![proc.join("cwd"), proc.join("root")];
        if let Ok(fds) = std::fs::read_dir(proc.join("fd")) {
            links.extend(fds.flatten().map(|fd| fd.path()));
        }
        let held = links.iter().filter_map(|link| std::fs::read_link(link).ok()).find_map(|target| {
            let target = target.to_string_lossy().into_owned();
            ours(&target).then_some(target)
        });
        // A lab host's process (glusterd, its bricks, a volume's client) works inside the
        // host's own mounts; its environment names the host's state directory.
        let held = held.or_else(|| super::netns::tag_of(pid).filter(|tag| ours(tag)));
        if let Some(path) = held {
            let name = std::fs::read_to_string(proc.join("comm")).unwrap_or_default().trim_end().to_string();
            found.push((pid, name, path));
        }
    }
    found
}

/// Kills `processes` and waits (up to 2 s) until they are gone, so that their mounts
/// come off.
fn end_processes(processes: &[(u32, String, String)]) {
    for (pid, _, _) in processes {
        // SAFETY: a plain kill of a process listed as holding a leftover mount.
        unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while processes.iter().any(|(pid, _, _)| PathBuf::from(format!("/proc/{pid}/cwd")).exists())
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// `writebench clean`'s part for the lab: lists the leftovers and removes them once
/// `confirm` agrees (`--yes`, or the user on a terminal; see `app::clean`).
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
            processes: vec![(77, "python3".into(), "/dev/shm/writebench-lab-9-mnt/crash-ext4".into())],
            mounts: vec!["/dev/shm/writebench-lab-9-mnt/ext4".into()],
            loops: vec![("/dev/loop9".into(), "/dev/shm/writebench-lab-9-ext4-0.img".into())],
            ..Leftovers::default()
        };
        assert_eq!(
            found.lines(),
            [
                "process 77 (python3) using /dev/shm/writebench-lab-9-mnt/crash-ext4",
                "mount /dev/shm/writebench-lab-9-mnt/ext4",
                "loop device /dev/loop9 on /dev/shm/writebench-lab-9-ext4-0.img"
            ]
        );
    }
}
