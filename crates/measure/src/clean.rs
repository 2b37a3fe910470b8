//! Removing scratch directories (docs/design.md §6): this run's on a signal, and finding
//! and removing those a killed run left behind (`writebench clean`, whose listing and
//! question are the app's). Only a real directory (never a symlink) named
//! like ours and owned by us is touched, and only the files directly in it: entries are
//! unlinked relative to the directory's descriptor, so a symlink inside is removed as a
//! link and whatever it points to is left alone.

use std::ffi::{CStr, CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::target::SCRATCH_PREFIX;

/// Removes the files in the scratch directory `path`, then the directory. Subdirectories
/// (writebench makes none) are left, and then the directory stays: an error says so.
pub fn remove_scratch(path: &Path) -> io::Result<()> {
    let dir = open_dir(path)?;
    for name in names_in(dir.as_raw_fd())? {
        // flags 0: unlink a file or a symlink, never a directory, never follow.
        // SAFETY: unlinkat relative to a directory descriptor we hold.
        if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) } != 0 {
            let error = io::Error::last_os_error();
            if error.raw_os_error() != Some(libc::ENOENT) {
                return Err(error);
            }
        }
    }
    drop(dir);
    match std::fs::remove_dir(path) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

fn open_dir(path: &Path) -> io::Result<OwnedFd> {
    let c_path = CString::new(path.as_os_str().as_bytes())?;
    // O_NOFOLLOW|O_DIRECTORY: if the name was swapped for a symlink, this fails.
    // SAFETY: plain open; the result is checked.
    let fd =
        unsafe { libc::open(c_path.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The names in a directory, without `.` and `..`.
fn names_in(dir: RawFd) -> io::Result<Vec<CString>> {
    // fdopendir takes ownership of the descriptor it is given: give it a duplicate.
    // SAFETY: dup of a descriptor we hold.
    let copy = unsafe { libc::fcntl(dir, libc::F_DUPFD_CLOEXEC, 0) };
    if copy < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `copy` is ours; on success the stream owns it, on failure we close it.
    let stream = unsafe { libc::fdopendir(copy) };
    if stream.is_null() {
        let error = io::Error::last_os_error();
        // SAFETY: closing the duplicate we made.
        unsafe { libc::close(copy) };
        return Err(error);
    }
    let mut names = Vec::new();
    loop {
        // SAFETY: readdir on an open stream; the entry is valid until the next call.
        let entry = unsafe { libc::readdir(stream) };
        if entry.is_null() {
            break;
        }
        // SAFETY: d_name is NUL-terminated.
        let name = unsafe { CStr::from_ptr((*entry).d_name.as_ptr()) };
        if name.to_bytes() != b"." && name.to_bytes() != b".." {
            names.push(name.to_owned());
        }
    }
    // SAFETY: closing the stream we opened.
    unsafe { libc::closedir(stream) };
    Ok(names)
}

/// A scratch directory left behind by a run that no longer exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stale {
    pub path: PathBuf,
    pub pid: u32,
    pub files: u64,
    pub bytes: u64,
}

/// The pid in a scratch directory's name (`.writebench-<pid>-<hex nonce>`), or None
/// when the name is not one writebench makes.
pub fn pid_in_name(name: &OsStr) -> Option<u32> {
    let rest = name.to_str()?.strip_prefix(SCRATCH_PREFIX)?;
    let (pid, nonce) = rest.split_once('-')?;
    let valid_nonce = !nonce.is_empty() && nonce.len() <= 8 && nonce.bytes().all(|b| b.is_ascii_hexdigit());
    let valid_pid = !pid.is_empty() && pid.len() <= 10 && pid.bytes().all(|b| b.is_ascii_digit());
    if !(valid_nonce && valid_pid) {
        return None;
    }
    pid.parse().ok().filter(|&pid| pid > 0)
}

/// True when `pid` is a running writebench (so its directory is in use). A pid that
/// was reused by another program does not count.
fn is_running_writebench(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/comm")) {
        Ok(comm) => comm.trim_end() == "writebench",
        Err(_) => false,
    }
}

/// The stale scratch directories directly in `parent`: named like ours, a real
/// directory owned by the current user, and no running writebench with that pid.
pub fn find_stale(parent: &Path) -> io::Result<Vec<Stale>> {
    // SAFETY: geteuid cannot fail.
    let uid = unsafe { libc::geteuid() };
    let mut found = Vec::new();
    for entry in std::fs::read_dir(parent)? {
        let entry = entry?;
        let Some(pid) = pid_in_name(&entry.file_name()) else { continue };
        let path = entry.path();
        let Ok(metadata) = std::fs::symlink_metadata(&path) else { continue };
        if !metadata.file_type().is_dir() || metadata.uid() != uid || is_running_writebench(pid) {
            continue;
        }
        let (mut files, mut bytes) = (0, 0);
        if let Ok(inside) = std::fs::read_dir(&path) {
            for item in inside.flatten() {
                files += 1;
                bytes += item.metadata().map(|m| m.blocks() * 512).unwrap_or(0);
            }
        }
        found.push(Stale { path, pid, files, bytes });
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_names_are_recognised() {
        for (name, pid) in [
            (".writebench-123-abcdef01", Some(123)),
            (".writebench-1-0", Some(1)),
            (".writebench-123", None),
            (".writebench--ab", None),
            (".writebench-0-ab", None),
            (".writebench-12x-ab", None),
            (".writebench-12-xyz", None),
            (".writebench-12-abcdef012", None),
            ("writebench-12-ab", None),
            ("data", None),
        ] {
            assert_eq!(pid_in_name(OsStr::new(name)), pid, "{name}");
        }
    }

    #[test]
    fn removal_unlinks_symlinks_without_following_them() {
        let parent = tempfile::tempdir().unwrap();
        let victim = parent.path().join("victim");
        std::fs::write(&victim, b"keep me").unwrap();
        let scratch = parent.path().join(".writebench-999999-1");
        std::fs::create_dir(&scratch).unwrap();
        std::fs::write(scratch.join("a.dat"), b"x").unwrap();
        std::os::unix::fs::symlink(&victim, scratch.join("link")).unwrap();
        remove_scratch(&scratch).unwrap();
        assert!(!scratch.exists());
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
        // A scratch name that is a symlink to a directory is refused, not followed.
        let elsewhere = parent.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("precious"), b"p").unwrap();
        std::os::unix::fs::symlink(&elsewhere, &scratch).unwrap();
        assert!(remove_scratch(&scratch).is_err());
        assert!(elsewhere.join("precious").exists());
        assert!(find_stale(parent.path()).unwrap().is_empty(), "a symlink is never stale scratch");
    }
}
