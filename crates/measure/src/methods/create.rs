//! File creation (benchmarkIOWrite's "File Creation"): how long it takes to make a file of a
//! size with `posix_fallocate(3)`, `fallocate(2)` or `ftruncate(2)`. The timed span is
//! open + call + close, so these are not write methods and have no engine: `case_runs`
//! times them itself (`measure::creation`), with the call the catalogue's entry names
//! (`plan::catalog::Creation`); here are the calls.

use std::io;
use std::os::fd::RawFd;

use super::retry_eintr;
use error::retry;
use plan::catalog::Creation;

/// What `case_runs` needs of a creation method.
#[derive(Clone, Copy)]
pub struct CreateCall {
    pub call: fn(RawFd, u64) -> io::Result<()>,
    /// Whether the call reserves blocks (then a size above the free space cannot work).
    pub allocates: bool,
}

impl CreateCall {
    /// The call of a catalogue entry's creation kind.
    pub fn of(creation: Creation) -> CreateCall {
        let call = match creation {
            Creation::PosixFallocate => posix_fallocate,
            Creation::Fallocate => fallocate,
            Creation::Ftruncate => ftruncate,
        };
        CreateCall { call, allocates: creation.allocates() }
    }
}

/// posix_fallocate RETURNS the error number (it does not set errno). glibc falls back
/// to writing a byte per block where the filesystem cannot preallocate.
fn posix_fallocate(fd: RawFd, len: u64) -> io::Result<()> {
    let len = off_t(len)?;
    // SAFETY: posix_fallocate on an open descriptor.
    retry(|| match unsafe { libc::posix_fallocate(fd, 0, len) } {
        0 => Ok(()),
        errno => Err(io::Error::from_raw_os_error(errno)),
    })
}

/// fallocate(2) mode 0: reserves blocks (unwritten extents); EOPNOTSUPP where the
/// filesystem cannot, with no fallback.
fn fallocate(fd: RawFd, len: u64) -> io::Result<()> {
    let len = off_t(len)?;
    // SAFETY: fallocate on an open descriptor.
    retry_eintr(|| unsafe { libc::fallocate(fd, 0, 0, len) } as isize).map(drop)
}

/// ftruncate(2): sets the length; no blocks are allocated (a sparse file).
fn ftruncate(fd: RawFd, len: u64) -> io::Result<()> {
    let len = off_t(len)?;
    // SAFETY: ftruncate on an open descriptor.
    retry_eintr(|| unsafe { libc::ftruncate(fd, len) } as isize).map(drop)
}

fn off_t(len: u64) -> io::Result<libc::off_t> {
    libc::off_t::try_from(len).map_err(|_| io::Error::from_raw_os_error(libc::EFBIG))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn each_call_gives_the_file_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let creations = plan::catalog::native().iter().filter_map(|m| Some((m.name, m.creation?)));
        for (index, (name, creation)) in creations.enumerate() {
            let path = dir.path().join(format!("{index}"));
            let file = std::fs::File::create(&path).unwrap();
            (CreateCall::of(creation).call)(file.as_raw_fd(), 1 << 20).unwrap();
            assert_eq!(std::fs::metadata(&path).unwrap().len(), 1 << 20, "{name}");
        }
    }

    #[test]
    fn posix_fallocate_errors_come_from_its_return_value() {
        // A read-only descriptor: posix_fallocate returns EBADF; errno is not looked at.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r");
        std::fs::write(&path, b"").unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let error = posix_fallocate(file.as_raw_fd(), 4096).unwrap_err();
        assert_eq!(error.raw_os_error(), Some(libc::EBADF));
    }
}
