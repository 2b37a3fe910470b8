//! The scratch directory and the files in it: the only things writebench ever touches
//! (docs/design.md §6). Files are opened relative to the directory's descriptor with
//! `O_NOFOLLOW`, created exclusively, and removed by name from that descriptor.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::durability::{DioAlignment, dio_alignment};
use crate::source::{PERIOD, Source, Stream};
use crate::{fd, space};
use error::{CallError, no_progress, retry_eintr};
use plan::FileState;

/// Scratch directories are named `.writebench-<pid>-<nonce>`: recognisable as ours,
/// unique per run, so two runs on the same PATH never share one.
pub const SCRATCH_PREFIX: &str = ".writebench-";

/// A file made and brought into its state, with what that took.
pub struct Prepared {
    pub fd: OwnedFd,
    /// Create, state and fsync, in seconds.
    pub seconds: f64,
    /// The fsync alone.
    pub sync_seconds: f64,
}

pub struct Scratch {
    path: PathBuf,
    dir: OwnedFd,
    keep: bool,
    /// What runs in this directory wait for before their timed spans.
    settle: crate::settle::Settle,
}

impl Scratch {
    /// Creates a fresh, private (0700) scratch directory under `parent`.
    pub fn create(parent: &Path) -> io::Result<Scratch> {
        let nonce = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let path = parent.join(format!("{SCRATCH_PREFIX}{}-{:x}", std::process::id(), nonce & 0xffff_ffff));
        // mkdir fails if the name exists, so the directory is ours alone.
        std::fs::DirBuilder::new().mode_0700().create(&path)?;
        let c_path = CString::new(path.as_os_str().as_bytes())?;
        // SAFETY: plain open of a path; the result is checked.
        let fd = unsafe {
            libc::open(c_path.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        };
        if fd < 0 {
            let error = io::Error::last_os_error();
            let _ = std::fs::remove_dir(&path);
            return Err(error);
        }
        // SAFETY: `fd` is a fresh descriptor we own.
        let dir = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Scratch { path, dir, keep: false, settle: crate::settle::Settle::new() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The names in the directory, sorted (unit tests check what a run left).
    #[cfg(test)]
    pub(crate) fn listing(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// The directory's descriptor, for calls relative to it that this file does not
    /// wrap (latency's saves: O_TMPFILE, linkat, renameat, and their directory fsync,
    /// timed in a loop that must not allocate names). Only names of this run's own
    /// files go with it.
    pub fn dir_fd(&self) -> RawFd {
        self.dir.as_raw_fd()
    }

    /// Leaves the directory and its last files in place (test-only `--keep`).
    pub fn keep(&mut self) {
        self.keep = true;
    }

    /// Waits, untimed, until the previous run's work on this filesystem is done, for a
    /// run that puts `memory` bytes in the page cache and `room` bytes in its files (see
    /// `measure::settle`).
    pub fn settle(&self, memory: u64, room: u64) -> crate::settle::Settled {
        self.settle.wait(&self.dir, &self.path, memory, room)
    }

    /// Creates `name` and brings it into `state` for a run of `size` bytes; all of it
    /// is outside the timed span. The file is synced so that preparing it leaves no
    /// dirty pages or journal work for the timed span to pay for.
    pub fn prepare(&self, name: &str, state: FileState, size: u64, seed: u64) -> Result<OwnedFd, CallError> {
        self.prepare_timed(name, state, size, seed).map(|prepared| prepared.fd)
    }

    /// [`Scratch::prepare`], timed on the monotonic clock: what preparing the file took,
    /// and its fsync apart.
    pub fn prepare_timed(&self, name: &str, state: FileState, size: u64, seed: u64) -> Result<Prepared, CallError> {
        let started = std::time::Instant::now();
        let file = self.create_file(name, 0).map_err(|error| CallError::new(format!("create {name}"), error))?;
        let fd = file.as_raw_fd();
        match state {
            FileState::Overwrite => prefill(fd, size, seed, name)?,
            new => size_new_file(fd, new, size)?,
        }
        let syncing = std::time::Instant::now();
        fd::fsync(fd).map_err(|error| CallError::new("fsync after preparing the file", error))?;
        let done = std::time::Instant::now();
        Ok(Prepared { fd: file, seconds: (done - started).as_secs_f64(), sync_seconds: (done - syncing).as_secs_f64() })
    }

    /// A new file as a program makes it (docs/answer.md, "One span a program pays"):
    /// `open(O_CREAT)` with the durability mode's `flags`, then the `ftruncate` or
    /// `fallocate` of its state, and no fsync, which the program folds into the one
    /// that makes its data durable. Only for the new-file states (not `overwrite`).
    pub fn create_new(
        &self,
        name: &str,
        state: FileState,
        size: u64,
        flags: libc::c_int,
    ) -> Result<OwnedFd, CallError> {
        assert!(state.is_new_file(), "{} is not a new file's state", state.name());
        let file = self.create_file(name, flags).map_err(|error| {
            let with = if flags == 0 { String::new() } else { format!(" with {}", flag_names(flags)) };
            CallError::new(format!("create {name}{with}"), error)
        })?;
        size_new_file(file.as_raw_fd(), state, size)?;
        Ok(file)
    }

    /// A new descriptor of `name`'s file (created by [`Scratch::prepare`], open as
    /// `prepared`) opened with the durability mode's `flags` (O_SYNC, O_DSYNC,
    /// O_DIRECT): the state was prepared without them, so only the timed run pays for
    /// them. O_DSYNC cannot be set with fcntl(F_SETFL) on Linux, hence a new open rather
    /// than a flag change; it goes through the descriptor, not the name, so it is the
    /// same file whatever happened to the name.
    pub fn reopen(&self, name: &str, prepared: RawFd, flags: libc::c_int) -> Result<OwnedFd, CallError> {
        fd::reopen(prepared, libc::O_RDWR | flags)
            .map_err(|error| CallError::new(format!("open {name} with {}", flag_names(flags)), error))
    }

    /// Opens `name`, which another MPI rank made in this (shared) directory, for writing
    /// with the mode's `flags`; never creates it, never follows a symlink.
    pub fn join(&self, name: &str, flags: libc::c_int) -> Result<OwnedFd, CallError> {
        let c_name = CString::new(name).map_err(|error| CallError::new(format!("open {name}"), error.into()))?;
        // SAFETY: openat relative to our directory descriptor; the result is checked.
        let fd = unsafe {
            libc::openat(
                self.dir.as_raw_fd(),
                c_name.as_ptr(),
                libc::O_RDWR | libc::O_NOFOLLOW | libc::O_CLOEXEC | flags,
            )
        };
        if fd < 0 {
            return Err(CallError::new(format!("open {name} made by rank 0"), io::Error::last_os_error()));
        }
        // SAFETY: `fd` is a fresh descriptor we own.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// The scratch directory rank 0 of an MPI job made in a PATH every rank sees, opened
    /// by another rank: it is rank 0's to remove at the end, so dropping this leaves it
    /// (a signal still removes it, from any rank: see `measure::signals`).
    pub fn join_dir(path: &Path) -> io::Result<Scratch> {
        let c_path = CString::new(path.as_os_str().as_bytes())?;
        // SAFETY: plain open of a path; the result is checked.
        let fd = unsafe {
            libc::open(c_path.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor we own.
        let dir = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Scratch { path: path.to_path_buf(), dir, keep: true, settle: crate::settle::Settle::new() })
    }

    /// Whether this filesystem opens a file with `flags`, and the O_DIRECT alignment of
    /// its files: asked once per case, on a throw-away file.
    pub fn probe_open(&self, name: &str, flags: libc::c_int) -> Result<DioAlignment, CallError> {
        let created = self.create_file(name, 0).map_err(|error| CallError::new(format!("create {name}"), error));
        let result = created.and_then(|file| {
            let reopened = self.reopen(name, file.as_raw_fd(), flags)?;
            Ok(dio_alignment(reopened.as_raw_fd()))
        });
        // Committed, so that the case's first run does not pay for the probe's unlink.
        self.remove(name)
            .and_then(|()| self.sync_dir())
            .map_err(|error| CallError::new(format!("remove {name}"), error))?;
        result
    }

    /// Creates `name` empty (the creation cases time this themselves).
    pub fn create_empty(&self, name: &str) -> io::Result<OwnedFd> {
        self.create_file(name, 0)
    }

    /// Bytes an unprivileged writer may still allocate on the scratch directory's filesystem.
    pub fn free_bytes(&self) -> io::Result<u64> {
        space::free_bytes(space::At::Fd(self.dir.as_raw_fd()))
    }

    /// Creates `name` exclusively, opened for reading and writing with `flags` besides.
    fn create_file(&self, name: &str, flags: libc::c_int) -> io::Result<OwnedFd> {
        let c_name = CString::new(name)?;
        // O_EXCL|O_NOFOLLOW: never reuse or follow anything that appeared under our name.
        // SAFETY: openat relative to our directory descriptor; the result is checked.
        let fd = unsafe {
            libc::openat(
                self.dir.as_raw_fd(),
                c_name.as_ptr(),
                libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC | flags,
                0o600,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor we own.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// Commits the directory's entries (creations and removals): fsync of the directory.
    pub fn sync_dir(&self) -> io::Result<()> {
        fd::fsync(self.dir.as_raw_fd())
    }

    /// Makes `name`'s data and metadata durable (untimed hygiene for runs that closed
    /// their file without a sync): opened again by name, fsynced, closed.
    pub fn sync_name(&self, name: &str) -> io::Result<()> {
        let c_name = CString::new(name)?;
        // SAFETY: openat relative to our directory descriptor; the result is checked.
        let fd = unsafe {
            libc::openat(self.dir.as_raw_fd(), c_name.as_ptr(), libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor we own.
        let file = unsafe { OwnedFd::from_raw_fd(fd) };
        fd::fsync(file.as_raw_fd())?;
        fd::close(file)
    }

    /// Removes a file this run created.
    pub fn remove(&self, name: &str) -> io::Result<()> {
        let c_name = CString::new(name)?;
        // SAFETY: unlinkat relative to our directory descriptor.
        if unsafe { libc::unlinkat(self.dir.as_raw_fd(), c_name.as_ptr(), 0) } != 0 {
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::NotFound {
                return Err(error);
            }
        }
        Ok(())
    }

    /// Every name in the scratch directory (only files this run created can be there).
    fn entries(&self) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&self.path)? {
            names.push(entry?.file_name().to_string_lossy().into_owned());
        }
        Ok(names)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        for name in self.entries().unwrap_or_default() {
            let _ = self.remove(&name);
        }
        if let Err(error) = std::fs::remove_dir(&self.path) {
            eprintln!("writebench: could not remove scratch directory {}: {error}", self.path.display());
        }
    }
}

/// Brings a just-created file into a new file's `state`: nothing for `empty`, its
/// length for `sparse`, its blocks for `prealloc`.
fn size_new_file(fd: RawFd, state: FileState, size: u64) -> Result<(), CallError> {
    match state {
        FileState::Empty | FileState::Overwrite => Ok(()),
        FileState::Sparse => {
            // SAFETY: ftruncate on a descriptor the caller owns.
            if unsafe { libc::ftruncate(fd, size as libc::off_t) } != 0 {
                return Err(CallError::new(format!("ftruncate to {size}"), io::Error::last_os_error()));
            }
            Ok(())
        }
        FileState::Prealloc => {
            // fallocate(2), not posix_fallocate(3): the latter silently falls back to
            // writing zeros where the filesystem cannot preallocate, which is not this state.
            // SAFETY: fallocate on a descriptor the caller owns.
            if unsafe { libc::fallocate(fd, 0, 0, size as libc::off_t) } != 0 {
                return Err(CallError::new(format!("fallocate of {size} bytes"), io::Error::last_os_error()));
            }
            Ok(())
        }
    }
}

/// Writes the whole file with data that differs from what the run will write: from
/// another seed's pattern, so that a method that wrote nothing (or only part of each
/// block) cannot pass verification in the overwrite state, and stamped with a stream of
/// its own, so that the prefill is no more dedupable than the run, and storage that
/// compares a block before overwriting it finds every block changed.
fn prefill(fd: RawFd, size: u64, seed: u64, name: &str) -> Result<(), CallError> {
    const CHUNK: usize = 1 << 20;
    let other = Source::new(seed ^ 0x5555_5555_5555_5555);
    let stream = Stream::prefill(seed, name, PERIOD);
    let mut buffer = vec![0u8; CHUNK];
    let mut offset = 0u64;
    while offset < size {
        let bytes = &mut buffer[..CHUNK.min((size - offset) as usize)];
        stream.fill(&other, offset, bytes);
        let mut done = 0;
        while done < bytes.len() {
            let at = offset + done as u64;
            // SAFETY: the slice is valid for reads of its length.
            let written = retry_eintr(|| unsafe {
                libc::pwrite(fd, bytes[done..].as_ptr().cast(), bytes.len() - done, at as libc::off_t)
            })
            .and_then(|n| if n == 0 { Err(no_progress()) } else { Ok(n) })
            .map_err(|error| CallError::new(format!("prefill write at offset {at}"), error))?;
            done += written;
        }
        offset += bytes.len() as u64;
    }
    Ok(())
}

/// "O_SYNC|O_DIRECT", for messages.
pub fn flag_names(flags: libc::c_int) -> String {
    let names: Vec<&str> = [(libc::O_SYNC, "O_SYNC"), (libc::O_DSYNC, "O_DSYNC"), (libc::O_DIRECT, "O_DIRECT")]
        .into_iter()
        // O_SYNC includes the O_DSYNC bit: name only the strongest.
        .filter(|&(flag, name)| flags & flag == flag && !(name == "O_DSYNC" && flags & libc::O_SYNC == libc::O_SYNC))
        .map(|(_, name)| name)
        .collect();
    if names.is_empty() { "no extra flags".into() } else { names.join("|") }
}

trait DirBuilderMode {
    fn mode_0700(&mut self) -> &mut Self;
}

impl DirBuilderMode for std::fs::DirBuilder {
    fn mode_0700(&mut self) -> &mut Self {
        use std::os::unix::fs::DirBuilderExt;
        self.mode(0o700)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn scratch_is_private_unique_and_removed() {
        let parent = tempfile::tempdir().unwrap();
        let first = Scratch::create(parent.path()).unwrap();
        let second = Scratch::create(parent.path()).unwrap();
        assert_ne!(first.path(), second.path());
        let mode = std::fs::metadata(first.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let path = first.path().to_path_buf();
        first.prepare("a.dat", FileState::Sparse, 4096, 1).unwrap();
        drop(first);
        assert!(!path.exists());
        drop(second);
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 0);
    }

    #[test]
    fn states_have_the_promised_length() {
        let parent = tempfile::tempdir().unwrap();
        let scratch = Scratch::create(parent.path()).unwrap();
        for (name, state, length) in [
            ("e", FileState::Empty, 0),
            ("s", FileState::Sparse, 10_000),
            ("p", FileState::Prealloc, 10_000),
            ("o", FileState::Overwrite, 10_000),
        ] {
            scratch.prepare(name, state, 10_000, 1).unwrap();
            assert_eq!(std::fs::metadata(scratch.path().join(name)).unwrap().len(), length, "{state:?}");
        }
    }

    #[test]
    fn the_overwrite_prefill_is_not_the_runs_stream_and_repeats_no_block() {
        use crate::source::{BLOCK, STAMP};
        let parent = tempfile::tempdir().unwrap();
        let scratch = Scratch::create(parent.path()).unwrap();
        let (name, size) = ("case0003-run1-f0.dat", PERIOD + 3 * BLOCK);
        scratch.prepare(name, FileState::Overwrite, size as u64, 7).unwrap();
        let data = std::fs::read(scratch.path().join(name)).unwrap();
        let mut timed = vec![0u8; size];
        Stream::timed(7, name, PERIOD).fill(&Source::new(7), 0, &mut timed);
        let mut blocks = std::collections::HashSet::new();
        for (offset, (old, new)) in data.chunks(BLOCK).zip(timed.chunks(BLOCK)).enumerate() {
            // Another pattern under another stamp: a block half written would show.
            assert_ne!(old[..STAMP], new[..STAMP], "block {offset}");
            assert_ne!(old[STAMP..], new[STAMP..], "block {offset}");
            assert!(blocks.insert(old), "block {offset} of the prefill repeats");
        }
    }

    #[test]
    fn an_existing_name_or_symlink_is_never_reused() {
        let parent = tempfile::tempdir().unwrap();
        let scratch = Scratch::create(parent.path()).unwrap();
        let victim = parent.path().join("victim");
        std::fs::write(&victim, b"keep me").unwrap();
        std::os::unix::fs::symlink(&victim, scratch.path().join("x.dat")).unwrap();
        assert!(scratch.prepare("x.dat", FileState::Overwrite, 4096, 1).is_err());
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
    }
}
