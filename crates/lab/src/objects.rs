//! What one build created, in the order it was created, and its teardown in reverse:
//! unmount, forget btrfs devices, stop md arrays, detach loop devices, remove backing
//! files and mount points. Each step checks that the object is still the lab's (a loop
//! device by its backing file, an md array by its members, a mount by its mount point
//! under the lab's directory) and goes on past a failure, so that one stuck object does
//! not leave the others behind; the failures are returned, one line each.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::shell::Step;
use super::{loopdev, md, names};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Object {
    /// A backing file in /dev/shm.
    Image(PathBuf),
    Loop {
        device: String,
        image: PathBuf,
    },
    Md {
        device: String,
    },
    /// Devices that btrfs registered: forgotten after the unmount, so that the kernel
    /// keeps no reference to a loop device about to be detached.
    BtrfsDevices(Vec<String>),
    /// A directory the lab made (a mount point, or the directory of mount points).
    Dir(PathBuf),
    /// A directory of the lab's with what is in it (a distributed row's hosts' state).
    Tree(PathBuf),
    /// A namespace host (`hosts`): its holder, its network namespace, and the volume
    /// mount inside it to take off first.
    Host {
        pid: u32,
        net: String,
        unmount: Option<PathBuf>,
    },
    Mount(PathBuf),
}

#[derive(Debug, Default)]
pub struct Objects {
    created: Vec<Object>,
}

impl Objects {
    pub fn push(&mut self, object: Object) {
        self.created.push(object);
    }

    pub fn is_empty(&self) -> bool {
        self.created.is_empty()
    }

    /// Creates the directory `path` and notes it, so that the teardown removes it.
    pub fn make_dir(&mut self, path: &Path) -> Result<(), String> {
        std::fs::create_dir(path).map_err(|e| format!("cannot create {}: {}", path.display(), error::plain(&e)))?;
        self.push(Object::Dir(path.to_path_buf()));
        Ok(())
    }

    /// Tears everything down, last created first. Err: the steps that failed.
    pub fn teardown(&mut self) -> Result<(), Vec<String>> {
        let mut failures = Vec::new();
        while let Some(object) = self.created.pop() {
            if let Err(error) = remove(&object) {
                failures.push(error);
            }
        }
        if failures.is_empty() { Ok(()) } else { Err(failures) }
    }
}

impl Drop for Objects {
    /// A panic or an early return still tears down.
    fn drop(&mut self) {
        if let Err(failures) = self.teardown() {
            for failure in failures {
                eprintln!("writebench: lab teardown: {failure}");
            }
        }
    }
}

fn remove(object: &Object) -> Result<(), String> {
    match object {
        Object::Image(path) => match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(format!("cannot remove {}: {}", path.display(), error::plain(&e)))
            }
            _ => Ok(()),
        },
        Object::Loop { device, image } => loopdev::detach(device, image),
        Object::Md { device } => md::stop(device),
        Object::BtrfsDevices(devices) => {
            for device in devices {
                // Older btrfs-progs lack --forget; the detach works without it.
                let _ = Step::new("btrfs").arg("device").arg("scan").arg("--forget").arg(device).run();
            }
            Ok(())
        }
        Object::Dir(path) => match std::fs::remove_dir(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(format!("cannot remove {}: {}", path.display(), error::plain(&e)))
            }
            _ => Ok(()),
        },
        Object::Mount(path) => unmount(path),
        Object::Host { pid, net, unmount } => super::netns::end(*pid, net, unmount.as_ref()),
        Object::Tree(path) => {
            if names::mount_pid(&path.to_string_lossy()).is_none() {
                return Err(format!("{} is not one of the lab's directories: left alone", path.display()));
            }
            match std::fs::remove_dir_all(path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    Err(format!("cannot remove {}: {}", path.display(), error::plain(&e)))
                }
                _ => Ok(()),
            }
        }
    }
}

/// The mount points in the mount table (`/proc/self/mounts`, octal escapes decoded).
pub fn mount_points() -> Vec<String> {
    let table = std::fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    table.lines().filter_map(|line| line.split(' ').nth(1)).map(context::unescape_mount_field).collect()
}

/// Unmounts `path` if it is a mount point of the lab's. A filesystem still busy (a
/// process just ending still has a file open there) is retried for a few seconds, then
/// detached lazily: the kernel finishes the unmount once the last file closes, and the
/// loop device's detach waits for that too.
pub fn unmount(path: &Path) -> Result<(), String> {
    let text = path.to_string_lossy().into_owned();
    if names::mount_pid(&text).is_none() {
        return Err(format!("{text} is not one of the lab's mount points: left alone"));
    }
    let mut last = String::new();
    for _ in 0..50 {
        if !mount_points().contains(&text) {
            return Ok(());
        }
        match Step::new("umount").arg(path).run() {
            Ok(_) => continue,
            Err(error) => last = error,
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if mount_points().contains(&text) {
        Step::new("umount").arg("-l").arg(path).run().map_err(|e| format!("{e} (after: {last})"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mount_table_is_read_with_its_escapes() {
        assert_eq!(context::unescape_mount_field("/mnt/a\\040b"), "/mnt/a b");
        assert_eq!(context::unescape_mount_field("/mnt/a\\134b"), "/mnt/a\\b");
        assert_eq!(context::unescape_mount_field("/mnt/plain"), "/mnt/plain");
        assert!(mount_points().contains(&"/".to_string()) || !mount_points().is_empty());
    }

    #[test]
    fn a_mount_point_not_the_labs_is_never_unmounted() {
        let error = unmount(Path::new("/")).unwrap_err();
        assert!(error.contains("not one of the lab's"), "{error}");
    }

    #[test]
    fn teardown_removes_files_and_directories_last_created_first() {
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("d");
        std::fs::create_dir(&inner).unwrap();
        let file = inner.join("f.img");
        std::fs::write(&file, b"x").unwrap();
        let mut objects = Objects::default();
        objects.push(Object::Dir(inner.clone()));
        objects.push(Object::Image(file.clone()));
        assert!(objects.teardown().is_ok());
        assert!(!inner.exists() && objects.is_empty());
    }
}
