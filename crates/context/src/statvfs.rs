//! `statvfs(2)`: the one place writebench asks a file system about its space (the
//! context records it; measure checks free space with it).

use std::io;
use std::os::fd::RawFd;
use std::path::Path;

/// What to ask statvfs about: a path, or an open descriptor (fstatvfs).
#[derive(Debug, Clone, Copy)]
pub enum At<'a> {
    Path(&'a Path),
    Fd(RawFd),
}

/// `statvfs(2)` or `fstatvfs(2)`: the one place writebench asks a file system about itself.
pub fn statvfs(at: At) -> io::Result<libc::statvfs> {
    // SAFETY: libc::statvfs is plain integers, for which all zeros is a valid value.
    let mut fs: libc::statvfs = unsafe { std::mem::zeroed() };
    let result = match at {
        At::Path(path) => {
            let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())?;
            // SAFETY: statvfs with a valid path and out pointer.
            unsafe { libc::statvfs(c_path.as_ptr(), &mut fs) }
        }
        // SAFETY: fstatvfs with a valid out pointer; a bad descriptor is EBADF.
        At::Fd(fd) => unsafe { libc::fstatvfs(fd, &mut fs) },
    };
    if result != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fs)
}

/// Bytes available to unprivileged users on the file system of `at`.
pub fn free_bytes(at: At) -> io::Result<u64> {
    let fs = statvfs(at)?;
    Ok((fs.f_bavail as u64).saturating_mul(fs.f_frsize as u64))
}

/// Bytes available to unprivileged users, and bytes in all, on the file system of `at`.
pub fn space(at: At) -> io::Result<(u64, u64)> {
    let fs = statvfs(at)?;
    let unit = fs.f_frsize as u64;
    Ok(((fs.f_bavail as u64).saturating_mul(unit), (fs.f_blocks as u64).saturating_mul(unit)))
}
