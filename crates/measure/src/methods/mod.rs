//! The engines of the native write methods, one file each, behind one small trait (the
//! model is fio's `engines/`, docs/design.md §5).
//!
//! An engine knows how to issue its calls for one contiguous span of a file; it knows
//! nothing of timing, statistics or output. What a method is (its family, what it
//! supports and refuses) is data in the catalogue (`plan::catalog`), whose native entry
//! finds its engine here by name: a new method is one new file, one line in
//! [`ENGINES`] and its catalogue entry.

use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::durability::{Pacer, Pacing, sync_fd};
use crate::source::{Cursor, Streams, Writer};
pub use error::CallError;
pub(crate) use error::{no_progress, retry_eintr};
use plan::durability::{Durability, SyncCall};

pub use create::CreateCall;

mod create;
mod fwrite;
mod io_uring;
mod mmap;
mod pwrite;
mod pwritev;
mod pwritev2;
mod vectored;
mod write;
mod writev;

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
    /// `every:N`, shared by the run's writers (see [`Span::pacer`]).
    pub pacing: &'a Pacing,
    /// The `RWF_*` flags the durability mode puts on each `pwritev2` call.
    pub rwf: libc::c_int,
    /// `--stonewall`: when this writer stops, and where it says how far it got.
    pub wall: Option<Wall<'a>>,
}

/// `--stonewall SECS` (IOR's `-D`, docs/scale.md): each writer stops issuing calls once
/// SECS have passed since its start line, and says how much of its part it wrote. Every
/// writer of every rank starts at one start line, so they stop together; the run's
/// figure is then what all of them wrote over the span.
pub struct Stonewall {
    pub after: Duration,
    /// Per part: the bytes written when the wall stopped it; `u64::MAX` while it has
    /// not (it then wrote its whole part).
    written: Vec<AtomicU64>,
}

impl Stonewall {
    /// A wall after `after` for a run of `parts` writers (one per run: it records).
    pub fn new(after: Duration, parts: usize) -> Stonewall {
        Stonewall { after, written: (0..parts).map(|_| AtomicU64::new(u64::MAX)).collect() }
    }

    /// What part `index` of `len` bytes wrote, and whether the wall stopped it.
    pub fn written(&self, index: usize, len: u64) -> (u64, bool) {
        match self.written[index].load(Ordering::Relaxed) {
            u64::MAX => (len, false),
            bytes => (bytes, true),
        }
    }
}

/// One writer's wall: the moment it stops, and its slot for what it wrote by then.
#[derive(Clone, Copy)]
pub struct Wall<'a> {
    at: Instant,
    written: &'a AtomicU64,
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

    /// The hook a method asks after each call and as the span ends; it syncs when the
    /// durability mode says.
    pub fn pacer(&self) -> Pacer<'_> {
        self.pacing.pacer_at(self.offset)
    }

    /// Asked before each call that would write at `offset` (by the engines whose
    /// [`Engine::wall_refusal`] is None): under `--stonewall`, whether this
    /// writer's time is up; then it records what it wrote and must issue no more calls.
    /// Never before its first call: every writer writes something, as in IOR, so no run
    /// has nothing to divide. Without a wall, false at the cost of one branch.
    #[inline]
    pub fn at_wall(&self, offset: u64) -> bool {
        match &self.wall {
            Some(wall) if offset > self.offset && Instant::now() >= wall.at => {
                wall.written.store(offset - self.offset, Ordering::Relaxed);
                true
            }
            _ => false,
        }
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
    /// The files' paths, for executors that open them again (a runner process).
    pub paths: &'a [std::path::PathBuf],
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
    /// `every:N` across the run's writers: `Pacing::of(durability, parts, files)`.
    pub pacing: Pacing,
    /// `--stonewall`: the run's wall, when there is one.
    pub stonewall: Option<&'a Stonewall>,
}

impl Job<'_> {
    /// Part `index`'s span. A method asks for it as its writer starts, so that a wall
    /// counts from there.
    pub fn span(&self, index: usize) -> Span<'_> {
        let part = self.parts[index];
        let wall = self.stonewall.map(|wall| Wall { at: Instant::now() + wall.after, written: &wall.written[index] });
        Span {
            fd: self.files[part.file],
            offset: part.offset,
            len: part.len,
            chunk: self.chunk,
            iov: self.iov,
            source: self.source.writer(index),
            pacing: &self.pacing,
            rwf: self.durability.rwf_flags(),
            wall,
        }
    }

    /// The call of an `end` mode (fsync when the mode has none, for callers that sync
    /// anyway).
    pub fn end_call(&self) -> SyncCall {
        self.durability.end_sync().unwrap_or(SyncCall::Fsync)
    }

    /// Sync span of a one-file run: the `end` call on every file, in order.
    pub fn sync_files(&self) -> Result<(), CallError> {
        sync_all(self.files, self.end_call())
    }

    /// Sync span of a file-per-thread run: the `end` call on part `index`'s file.
    pub fn sync_part_file(&self, index: usize) -> Result<(), CallError> {
        sync_fd(self.end_call(), self.files[self.parts[index].file])
    }
}

/// The code of a native method: what `case_runs` calls to write it. The method's
/// catalogue entry (`plan::catalog`) says what it supports and refuses; the engine says
/// only what depends on this system and how to write.
pub trait Engine: Sync {
    /// The name of the catalogue entry the engine writes.
    fn name(&self) -> &'static str;
    /// Why this system cannot run the method at all, if it cannot (asked once per case).
    fn unsupported_reason(&self) -> Option<String> {
        None
    }
    /// Why `--stonewall` cannot stop it, if it cannot: an engine that can asks
    /// [`Span::at_wall`] before each call (or chunk, or request) and says None.
    fn wall_refusal(&self) -> Option<&'static str> {
        Some("its loop does not ask for the wall between its writes")
    }
    /// Untimed set-up of one run (rings, buffers); its duration is recorded apart.
    fn prepare<'a>(&'a self, job: &'a Job<'a>) -> Result<Box<dyn Prepared + 'a>, CallError>;
}

/// A run, ready to go. The executor calls `write_part` once per part, each from its
/// own thread when there are several; with an `end` mode, a one-file run then gets one
/// `sync` after every part, and in a file-per-thread run each writer calls `sync_part`
/// for its own file as soon as its part is written; `finish` comes last.
///
/// Which span each call is in (docs/design.md §2.2, as the executor times them):
/// - write span: from the first writer's start to the last `write_part` returned;
///   closing steps that must come before the data can be made durable are part of
///   `write_part` (fwrite's `fclose` flushes stdio's buffer into the kernel);
/// - sync span: one-file, the `sync` call; file-per-thread, from the last part written
///   to the last `sync_part` returned;
/// - `finish` (munmap, close of descriptors the method opened) is timed where it
///   happens, after the parts and after the sync: it ends the sync span when the run
///   has one (msync needs the map, so munmap cannot come earlier), else the write span.
pub trait Prepared: Sync {
    /// Write span: writes part `index` completely.
    fn write_part(&self, index: usize) -> Result<(), CallError>;
    /// Sync span, one-file layouts: makes every file of the run durable.
    fn sync(&self) -> Result<(), CallError>;
    /// Sync span, file-per-thread layouts: makes part `index`'s file durable; called by
    /// the thread that wrote the part, right after it.
    fn sync_part(&self, index: usize) -> Result<(), CallError>;
    /// Whether [`Prepared::finish`] has anything to do (then it is timed).
    fn closes(&self) -> bool {
        false
    }
    /// The closing steps that must wait for every part and the sync, e.g. `munmap`.
    fn finish(&mut self) -> Result<(), CallError> {
        Ok(())
    }
    /// What an io_uring run submitted (asked after the sync and the closing steps).
    fn ring_record(&self) -> Option<result::RingRecord> {
        None
    }
    /// Untimed, in part `index`'s writer thread: just before its span opens (`after`
    /// false) and once its writes (and its own sync) are timed. For readings that only
    /// the writer's thread can make while it lives, and that are no part of the write:
    /// the CPU of the io_uring workers named after it.
    fn around_part(&self, _index: usize, _after: bool) {}
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
        self.job.sync_files()
    }

    fn sync_part(&self, index: usize) -> Result<(), CallError> {
        self.job.sync_part_file(index)
    }
}

/// fsync every file of a run, in order.
pub fn fsync_all(files: &[RawFd]) -> Result<(), CallError> {
    sync_all(files, SyncCall::Fsync)
}

/// fsync or fdatasync every file of a run, in order.
pub fn sync_all(files: &[RawFd], call: SyncCall) -> Result<(), CallError> {
    for &fd in files {
        sync_fd(call, fd)?;
    }
    Ok(())
}

/// Every engine; the file creation methods have none (`create.rs`: the runner times
/// their call itself).
static ENGINES: &[&dyn Engine] = &[
    &mmap::MMAP,
    &mmap::MMAP_MAPS,
    &mmap::MMAP_FDS,
    &mmap::MMAP_POPULATE,
    &writev::Writev,
    &pwritev::Pwritev,
    &pwritev2::PLAIN,
    &pwritev2::DONTCACHE,
    &pwritev2::APPEND,
    &pwritev2::ATOMIC,
    &fwrite::Fwrite,
    &write::Write,
    &pwrite::Pwrite,
    &io_uring::PLAIN,
    &io_uring::FIXED,
    &io_uring::REGFILE,
    &io_uring::SQPOLL,
];

/// The engine of the native method `name`.
pub fn engine(name: &str) -> Option<&'static dyn Engine> {
    ENGINES.iter().copied().find(|engine| engine.name() == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use plan::catalog;

    #[test]
    fn every_native_write_method_has_one_engine_and_every_engine_an_entry() {
        for method in catalog::native() {
            let engines = ENGINES.iter().filter(|engine| engine.name() == method.name).count();
            assert_eq!(engines, usize::from(method.creation.is_none()), "{}", method.name);
        }
        for engine in ENGINES {
            assert!(catalog::find(catalog::NATIVE, engine.name()).is_some(), "{}", engine.name());
        }
    }
}
