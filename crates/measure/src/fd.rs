//! Descriptor calls several modules need, each written once: `fstat`, a new open file
//! description of an open file (through `/proc/self/fd`), and a `close` whose result is
//! checked.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};

use error::retry_eintr;

/// `fstat(2)` of an open descriptor.
pub fn fstat(fd: RawFd) -> io::Result<libc::stat> {
    // SAFETY: libc::stat is plain integers, for which all zeros is a valid value.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat on a descriptor with a valid out pointer; a bad descriptor is EBADF.
    if unsafe { libc::fstat(fd, &mut stat) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(stat)
}

/// `fsync(2)`, retried on EINTR (the untimed syncs of hygiene; timed syncs go through
/// `durability::sync_fd`, which names the call in its error).
pub fn fsync(fd: RawFd) -> io::Result<()> {
    // SAFETY: fsync of a descriptor; a bad one is EBADF.
    retry_eintr(|| unsafe { libc::fsync(fd) } as isize).map(drop)
}

/// `posix_fadvise(POSIX_FADV_DONTNEED)` of the whole file: its clean pages leave the
/// page cache, so the next access to them goes to the device. Dirty pages stay (sync
/// first).
pub fn drop_cache(fd: RawFd) -> io::Result<()> {
    // SAFETY: posix_fadvise on a descriptor; it returns the error number, not -1.
    match unsafe { libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED) } {
        0 => Ok(()),
        errno => Err(io::Error::from_raw_os_error(errno)),
    }
}

/// A new open file description of the file `fd` has open, with `flags` (`O_RDONLY`,
/// `O_RDWR`, with `O_DIRECT`, `O_SYNC`...): not a `dup`, which would share the file
/// position and the status flags. `/proc/self/fd/N` names the file the descriptor has
/// open, not a path that someone could replace, and the result is checked to be the
/// same file (device and inode) all the same.
pub fn reopen(fd: RawFd, flags: libc::c_int) -> io::Result<OwnedFd> {
    let path = CString::new(format!("/proc/self/fd/{fd}"))?;
    // SAFETY: open of a NUL-terminated path; the result is checked.
    let new = unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `new` is a fresh descriptor we own.
    let own = unsafe { OwnedFd::from_raw_fd(new) };
    let (old, now) = (fstat(fd)?, fstat(own.as_raw_fd())?);
    if (old.st_dev, old.st_ino) != (now.st_dev, now.st_ino) {
        return Err(io::Error::other(format!("{} names another file than descriptor {fd}", path.to_string_lossy())));
    }
    Ok(own)
}

/// `close(2)` with its result checked (dropping an OwnedFd ignores it): a deferred
/// write error (NFS, quota) shows up here. Not retried on EINTR: on Linux the
/// descriptor is gone either way.
pub fn close(fd: OwnedFd) -> io::Result<()> {
    // SAFETY: we own the descriptor and give it up here, exactly once.
    if unsafe { libc::close(fd.into_raw_fd()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reopen_gives_the_same_file_with_its_own_position() {
        let dir = tempfile::tempdir().unwrap();
        let file = std::fs::File::create(dir.path().join("a")).unwrap();
        let again = reopen(file.as_raw_fd(), libc::O_RDWR).unwrap();
        let (a, b) = (fstat(file.as_raw_fd()).unwrap(), fstat(again.as_raw_fd()).unwrap());
        assert_eq!((a.st_dev, a.st_ino), (b.st_dev, b.st_ino));
        // SAFETY: lseek on open descriptors.
        unsafe { libc::lseek(file.as_raw_fd(), 10, libc::SEEK_SET) };
        assert_eq!(unsafe { libc::lseek(again.as_raw_fd(), 0, libc::SEEK_CUR) }, 0, "not a dup");
        close(again).unwrap();
        assert!(reopen(-1, libc::O_RDONLY).is_err());
        assert_eq!(fstat(-1).unwrap_err().raw_os_error(), Some(libc::EBADF));
    }
}
