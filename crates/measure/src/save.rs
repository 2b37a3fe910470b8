//! One crash-safe save of a whole file, as a program saves a document: the calls of
//! `latency`'s `replace` patterns, in the order that makes each step count.
//!
//! - `replace`: create a temp file beside the target, write it, **fsync it** (its data
//!   is durable before any name points at it), close it, **rename** it over the target
//!   (atomic: readers see the old file or the new one, never a mix), **fsync the
//!   directory** (the rename itself survives a crash);
//! - `replace-tmpfile`: the temp file is `open(dir, O_TMPFILE)`, nameless until it is
//!   complete and synced, then given the temp name with `linkat` (through
//!   `/proc/self/fd/N` with `AT_SYMLINK_FOLLOW`: `AT_EMPTY_PATH` needs
//!   CAP_DAC_READ_SEARCH before Linux 6.10) and renamed: a crash leaves no half-written
//!   temp file to clean up;
//! - `replace-unsafe`: `replace` without either fsync. Fast, and not durable: after a
//!   crash the target may be empty or partial (ext4 without `auto_da_alloc`, xfs) or
//!   still the old file.
//!
//! Everything happens relative to the scratch directory's descriptor, with this run's
//! own names (the runner's file names: the target and one temp name), so that the
//! hygiene that removes a run's files removes a temp file left by a failed save too,
//! and the signal handlers remove whatever a Ctrl-C left. The names are made before the
//! timed loop; a save allocates only the `/proc/self/fd/N` path of `replace-tmpfile`.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::fd;
use error::{CallError, no_progress, retry_eintr};
use plan::latency::Pattern;

/// The saves of one case: where, under which names, which way.
pub struct Saver {
    dir: RawFd,
    pattern: Pattern,
    target: CString,
    temp: CString,
    /// The names for messages.
    target_name: String,
    temp_name: String,
}

impl Saver {
    /// `dir` is the scratch directory's descriptor; `target` and `temp` are names in it.
    pub fn new(dir: RawFd, pattern: Pattern, target: &str, temp: &str) -> io::Result<Saver> {
        Ok(Saver {
            dir,
            pattern,
            target: CString::new(target)?,
            temp: CString::new(temp)?,
            target_name: target.to_string(),
            temp_name: temp.to_string(),
        })
    }

    /// Whether this filesystem makes O_TMPFILE files (asked before the timed loop, on
    /// a throw-away one): EOPNOTSUPP where it cannot, EISDIR from kernels older than
    /// O_TMPFILE, which see only O_DIRECTORY in its bits.
    pub fn tmpfile_refusal(&self) -> Option<String> {
        match self.open_tmpfile() {
            Ok(file) => fd::close(file).err().map(|error| format!("close of an O_TMPFILE file: {error}")),
            Err(error) => Some(format!("open(O_TMPFILE) in the scratch directory: {}", error::plain(&error))),
        }
    }

    /// One save of `data` over the target; the caller times it.
    pub fn save(&self, data: &[u8]) -> Result<(), CallError> {
        let durable = self.pattern != Pattern::ReplaceUnsafe;
        let file = if self.pattern == Pattern::ReplaceTmpfile {
            self.open_tmpfile().map_err(|error| CallError::new("open(O_TMPFILE)", error))?
        } else {
            self.create_temp().map_err(|error| CallError::new(format!("create {}", self.temp_name), error))?
        };
        write_all(file.as_raw_fd(), data)?;
        if durable {
            fd::fsync(file.as_raw_fd()).map_err(|error| CallError::new("fsync of the new file", error))?;
        }
        if self.pattern == Pattern::ReplaceTmpfile {
            self.link(file.as_raw_fd())?;
        }
        fd::close(file).map_err(|error| CallError::new("close of the new file", error))?;
        // SAFETY: renameat of two NUL-terminated names relative to our directory.
        if unsafe { libc::renameat(self.dir, self.temp.as_ptr(), self.dir, self.target.as_ptr()) } != 0 {
            let what = format!("rename {} to {}", self.temp_name, self.target_name);
            return Err(CallError::new(what, io::Error::last_os_error()));
        }
        if durable {
            fd::fsync(self.dir).map_err(|error| CallError::new("fsync of the directory", error))?;
        }
        Ok(())
    }

    /// What the target holds now (read back after the case, untimed).
    pub fn read_target(&self) -> Result<Vec<u8>, CallError> {
        let what = |error| CallError::new(format!("read {} back", self.target_name), error);
        // SAFETY: openat relative to our directory descriptor; the result is checked.
        let raw = unsafe {
            libc::openat(self.dir, self.target.as_ptr(), libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        };
        if raw < 0 {
            return Err(what(io::Error::last_os_error()));
        }
        // SAFETY: a fresh descriptor we own.
        let file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(raw) });
        let mut data = Vec::new();
        io::Read::read_to_end(&mut &file, &mut data).map_err(what)?;
        Ok(data)
    }

    /// The temp file, new (O_EXCL: never one that appeared under our name).
    fn create_temp(&self) -> io::Result<OwnedFd> {
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: openat relative to our directory descriptor; the result is checked.
        let raw = unsafe { libc::openat(self.dir, self.temp.as_ptr(), flags, 0o600) };
        owned(raw)
    }

    /// A nameless file in the directory.
    fn open_tmpfile(&self) -> io::Result<OwnedFd> {
        // SAFETY: openat of "." relative to our directory descriptor; checked.
        let raw =
            unsafe { libc::openat(self.dir, c".".as_ptr(), libc::O_TMPFILE | libc::O_WRONLY | libc::O_CLOEXEC, 0o600) };
        owned(raw)
    }

    /// Gives the O_TMPFILE file `fd` the temp name.
    fn link(&self, fd: RawFd) -> Result<(), CallError> {
        let what = |error| CallError::new(format!("linkat of the O_TMPFILE file to {}", self.temp_name), error);
        let path = CString::new(format!("/proc/self/fd/{fd}")).map_err(|error| what(error.into()))?;
        // SAFETY: linkat of NUL-terminated names; the new one relative to our directory.
        let linked = unsafe {
            libc::linkat(libc::AT_FDCWD, path.as_ptr(), self.dir, self.temp.as_ptr(), libc::AT_SYMLINK_FOLLOW)
        };
        if linked != 0 {
            return Err(what(io::Error::last_os_error()));
        }
        Ok(())
    }
}

fn owned(raw: RawFd) -> io::Result<OwnedFd> {
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// The whole of `data` at the file position; a short write continues with the rest.
fn write_all(fd: RawFd, mut data: &[u8]) -> Result<(), CallError> {
    while !data.is_empty() {
        // SAFETY: `data` is valid for reads of its length; `fd` is open.
        let written = retry_eintr(|| unsafe { libc::write(fd, data.as_ptr().cast(), data.len()) })
            .and_then(|n| if n == 0 { Err(no_progress()) } else { Ok(n) })
            .map_err(|error| CallError::new(format!("write of {} bytes to the new file", data.len()), error))?;
        data = &data[written..];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::Scratch;

    #[test]
    fn each_pattern_replaces_the_target_and_leaves_no_temp_file() {
        let parent = tempfile::tempdir().unwrap();
        let scratch = Scratch::create(parent.path()).unwrap();
        std::fs::write(scratch.path().join("t"), b"old").unwrap();
        for pattern in [Pattern::Replace, Pattern::ReplaceTmpfile, Pattern::ReplaceUnsafe] {
            let saver = Saver::new(scratch.dir_fd(), pattern, "t", "t.tmp").unwrap();
            if let Some(reason) = saver.tmpfile_refusal() {
                assert_eq!(pattern, Pattern::ReplaceTmpfile, "{reason}");
                continue;
            }
            saver.save(b"first").unwrap();
            saver.save(pattern.name().as_bytes()).unwrap();
            assert_eq!(saver.read_target().unwrap(), pattern.name().as_bytes());
            assert_eq!(scratch.listing(), ["t"], "{pattern:?}");
        }
    }

    #[test]
    fn a_failed_call_is_named_with_the_os_text() {
        let parent = tempfile::tempdir().unwrap();
        let scratch = Scratch::create(parent.path()).unwrap();
        // The temp name is taken by a directory: the exclusive create fails.
        std::fs::create_dir(scratch.path().join("t.tmp")).unwrap();
        let saver = Saver::new(scratch.dir_fd(), Pattern::Replace, "t", "t.tmp").unwrap();
        let error = saver.save(b"x").unwrap_err().to_string();
        assert!(error.starts_with("create t.tmp: File exists"), "{error}");
        std::fs::remove_dir(scratch.path().join("t.tmp")).unwrap();
        let error = saver.read_target().unwrap_err().to_string();
        assert!(error.contains("read t back: No such file"), "{error}");
    }
}
