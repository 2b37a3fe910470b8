//! Write methods, one file each, behind one small trait (the model is fio's `engines/`).
//!
//! A method knows how to issue its calls for one contiguous span of a file; it knows
//! nothing of timing, statistics or output. Registering a new method is one new file
//! and one line in [`ALL`].

use std::io;
use std::os::fd::RawFd;

pub use crate::error::CallError;
pub(crate) use crate::error::{no_progress, retry_eintr};
use crate::measure::durability::Pacer;
use crate::measure::source::{Cursor, Streams, Writer};
use crate::plan::durability::{Durability, SyncCall};

pub use create::CreateCall;

mod create;
mod fwrite;
mod io_uring;
mod mmap;
mod pwrite;
mod pwritev;
mod vectored;
mod write;
mod writev;

/// How the table groups methods, after the sections of seed 003.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    Mapped,
    Vectored,
    Parallel,
    Simple,
    Asynchronous,
    Creation,
}

impl Family {
    pub fn title(self) -> &'static str {
        match self {
            Family::Mapped => "Mapped writing (mmap)",
            Family::Vectored => "Vectorized writing",
            Family::Parallel => "Parallel writing",
            Family::Simple => "Simple writing",
            Family::Asynchronous => "Asynchronous writing (io_uring)",
            Family::Creation => "File creation (open + call + close)",
        }
    }
}

/// One contiguous range of one open file, and the shape of the calls that write it.
pub struct Span<'a> {
    pub fd: RawFd,
    pub offset: u64,
    pub len: u64,
    /// Bytes per call; for vectored methods, bytes per iovec.
    pub chunk: usize,
    /// iovecs per call (vectored methods only).
    pub iov: usize,
    /// The part's own buffer (see `measure::source`).
    pub source: &'a Writer,
    /// `every:N`: sync after every N calls (see [`Span::pacer`]).
    pub every: Option<(u32, SyncCall)>,
}

impl<'a> Span<'a> {
    pub fn cursor(&self) -> Cursor<'a> {
        self.source.cursor(self.offset)
    }

    /// Places the file position at the span's start, for methods that write at the
    /// position (write, writev): once per span, outside the per-call loop.
    pub fn seek_to_offset(&self) -> Result<(), CallError> {
        // SAFETY: lseek on a descriptor the run owns.
        if unsafe { libc::lseek(self.fd, self.offset as libc::off_t, libc::SEEK_SET) } < 0 {
            return Err(CallError::new(format!("lseek to {}", self.offset), io::Error::last_os_error()));
        }
        Ok(())
    }

    /// The hook a method asks after each call; it syncs when the durability mode says.
    pub fn pacer(&self) -> Pacer {
        Pacer::new(self.every)
    }
}

/// The part of a run one thread writes: a range of one of the run's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    /// Index into [`Job::files`].
    pub file: usize,
    pub offset: u64,
    pub len: u64,
}

/// Everything a method needs for one run: the open, prepared files and who writes what.
pub struct Job<'a> {
    pub files: &'a [RawFd],
    /// Final length of each file (the state already has it for sparse/prealloc/overwrite).
    pub file_lens: &'a [u64],
    /// One part per thread.
    pub parts: &'a [Part],
    pub chunk: usize,
    pub iov: usize,
    pub queue_depth: usize,
    /// One buffer per part, and what each file must hold.
    pub source: &'a Streams<'a>,
    pub durability: Durability,
}

impl Job<'_> {
    pub fn span(&self, index: usize) -> Span<'_> {
        let part = self.parts[index];
        Span {
            fd: self.files[part.file],
            offset: part.offset,
            len: part.len,
            chunk: self.chunk,
            iov: self.iov,
            source: self.source.writer(index),
            every: self.durability.every(),
        }
    }
}

pub trait Method: Sync {
    fn name(&self) -> &'static str;
    fn family(&self) -> Family;
    /// Whether `--iov` applies.
    fn vectored(&self) -> bool {
        false
    }
    /// Whether `--qd` applies.
    fn queued(&self) -> bool {
        false
    }
    /// Whether several threads can write disjoint ranges of one file: true for methods
    /// that take an offset with each call, false for those that use the file position.
    fn shares_file(&self) -> bool {
        false
    }
    /// Whether the file-per-thread layout means something for this method (the mmap
    /// variants differ only in how threads share one file, so they say no).
    fn file_per_thread(&self) -> bool {
        true
    }
    /// Why this system cannot run the method at all, if it cannot (asked once per case).
    fn unsupported_reason(&self) -> Option<String> {
        None
    }
    /// For the file creation methods: the call the runner times between open and close.
    fn creation(&self) -> Option<CreateCall> {
        None
    }
    /// Why the method cannot honour `durability`, if it cannot (asked once per case).
    fn durability_refusal(&self, _durability: Durability) -> Option<String> {
        None
    }
    /// Untimed set-up of one run (rings, buffers); its duration is recorded apart.
    fn prepare<'a>(&'a self, job: &'a Job<'a>) -> Result<Box<dyn Prepared + 'a>, CallError>;
}

/// A run, ready to go. The runner calls `write_part` once per part, each from its own
/// thread when there are several, then `sync` if the durability mode asks, then `finish`.
pub trait Prepared: Sync {
    /// Timed (write span): writes part `index` completely.
    fn write_part(&self, index: usize) -> Result<(), CallError>;
    /// Timed (sync span): makes the written data durable.
    fn sync(&self) -> Result<(), CallError>;
    /// Timed (write span): what the method must do after writing, e.g. `munmap`.
    fn finish(&mut self) -> Result<(), CallError> {
        Ok(())
    }
}

/// Methods that are one loop over a span of one descriptor.
pub(crate) trait SpanMethod: Sync {
    fn write_span(&self, span: &Span) -> Result<(), CallError>;
}

/// The [`Prepared`] of every [`SpanMethod`]: nothing to set up, fsync to sync.
pub(crate) struct SpanRun<'a, M: SpanMethod> {
    method: &'a M,
    job: &'a Job<'a>,
}

impl<'a, M: SpanMethod> SpanRun<'a, M> {
    pub(crate) fn boxed(method: &'a M, job: &'a Job<'a>) -> Result<Box<dyn Prepared + 'a>, CallError> {
        Ok(Box::new(SpanRun { method, job }))
    }
}

impl<M: SpanMethod> Prepared for SpanRun<'_, M> {
    fn write_part(&self, index: usize) -> Result<(), CallError> {
        self.method.write_span(&self.job.span(index))
    }

    fn sync(&self) -> Result<(), CallError> {
        sync_all(self.job.files, self.job.durability.end_sync().unwrap_or(SyncCall::Fsync))
    }
}

/// fsync every file of a run, in order.
pub fn fsync_all(files: &[RawFd]) -> Result<(), CallError> {
    sync_all(files, SyncCall::Fsync)
}

/// fsync or fdatasync every file of a run, in order.
pub fn sync_all(files: &[RawFd], call: SyncCall) -> Result<(), CallError> {
    for &fd in files {
        call.call(fd)?;
    }
    Ok(())
}

/// Every native method, in the order the table shows them within a family.
pub static ALL: &[&dyn Method] = &[
    &mmap::MMAP,
    &mmap::MMAP_MAPS,
    &mmap::MMAP_FDS,
    &mmap::MMAP_POPULATE,
    &writev::Writev,
    &pwritev::Pwritev,
    &fwrite::Fwrite,
    &write::Write,
    &pwrite::Pwrite,
    &io_uring::PLAIN,
    &io_uring::FIXED,
    &create::POSIX_FALLOCATE,
    &create::FALLOCATE,
    &create::FTRUNCATE,
];

pub fn by_name(name: &str) -> Option<&'static dyn Method> {
    ALL.iter().copied().find(|method| method.name() == name)
}

pub fn names() -> Vec<&'static str> {
    ALL.iter().map(|method| method.name()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        let names = names();
        for name in &names {
            assert_eq!(by_name(name).unwrap().name(), *name);
            assert_eq!(names.iter().filter(|other| *other == name).count(), 1);
        }
        assert!(by_name("mmap-private").is_none());
    }
}
