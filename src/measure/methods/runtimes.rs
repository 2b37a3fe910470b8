//! The methods of the other runtimes (C, Python, Go, Zig): what the plan needs to know of
//! them (family, threads, iov, queue depth, refusals). Their writing is done by a runner
//! process (`measure::runtimes`, protocol in docs/runtimes.md), so `prepare` is never
//! called for them: the runner picks the child-process executor for these cases.
//!
//! A method with a native twin (`pwrite`) shares its twin's name and its answers to the
//! plan's questions; a method with none (`bufio`, Python's `buffered`) says its own.

use super::{CallError, Family, Job, Method, Prepared};
use crate::plan::durability::Durability;

/// One method of a runtime other than native.
pub struct Foreign {
    pub name: &'static str,
    family: Family,
    shares_file: bool,
    vectored: bool,
    queued: bool,
    /// The method needs a sized file (mmap).
    sized: bool,
    /// Writes through a buffer of the language's own, which O_DIRECT cannot take.
    buffered: bool,
}

const fn twin(name: &'static str, family: Family, shares_file: bool) -> Foreign {
    Foreign { name, family, shares_file, vectored: false, queued: false, sized: false, buffered: false }
}

const WRITE: Foreign = twin("write", Family::Simple, false);
const PWRITE: Foreign = twin("pwrite", Family::Simple, true);
const WRITEV: Foreign = Foreign { vectored: true, ..twin("writev", Family::Vectored, false) };
const PWRITEV: Foreign = Foreign { vectored: true, ..twin("pwritev", Family::Vectored, true) };
const FWRITE: Foreign = Foreign { buffered: true, ..twin("fwrite", Family::Simple, false) };
const MMAP: Foreign = Foreign { sized: true, ..twin("mmap", Family::Mapped, true) };
const IO_URING: Foreign = Foreign { queued: true, ..twin("io_uring", Family::Asynchronous, true) };
/// Python's `io.FileIO.write`: the raw file object, no buffer of its own.
const FILEIO: Foreign = twin("fileio", Family::Simple, false);
/// Python's `open(path, 'r+b').write`: a `BufferedWriter` in front of the file.
const BUFFERED: Foreign = Foreign { buffered: true, ..twin("buffered", Family::Simple, false) };
/// Go's `bufio.Writer` in front of an `os.File`.
const BUFIO: Foreign = Foreign { buffered: true, ..twin("bufio", Family::Simple, false) };

pub static C: &[&dyn Method] = &[&MMAP, &WRITEV, &PWRITEV, &FWRITE, &WRITE, &PWRITE];
pub static PYTHON: &[&dyn Method] = &[&MMAP, &WRITEV, &PWRITEV, &WRITE, &FILEIO, &BUFFERED, &PWRITE];
pub static GO: &[&dyn Method] = &[&WRITE, &BUFIO, &PWRITE, &IO_URING];
pub static ZIG: &[&dyn Method] = &[&WRITE, &PWRITE, &IO_URING];

/// The methods no native method is a twin of, in the order the table shows them.
pub static OWN: &[&dyn Method] = &[&FILEIO, &BUFFERED, &BUFIO];

impl Method for Foreign {
    fn name(&self) -> &'static str {
        self.name
    }

    fn family(&self) -> Family {
        self.family
    }

    fn vectored(&self) -> bool {
        self.vectored
    }

    fn queued(&self) -> bool {
        self.queued
    }

    fn shares_file(&self) -> bool {
        self.shares_file
    }

    /// A map per file, shared by the threads, as native `mmap`.
    fn file_per_thread(&self) -> bool {
        !self.sized
    }

    fn empty_file_refusal(&self) -> Option<String> {
        self.sized.then(|| {
            format!("{}: mmap cannot extend a file: the file must be sized first, which is the sparse state", self.name)
        })
    }

    /// Native's refusals, O_DIRECT through a buffer of the language's own, and every:N
    /// through a runner's io_uring: native links a fsync to each batch's last write
    /// (`methods::io_uring`), the Go and Zig runners do not.
    fn durability_refusal(&self, durability: Durability) -> Option<String> {
        if durability.direct && self.buffered {
            return Some(format!("{}: the language's own buffer is not aligned for O_DIRECT", self.name));
        }
        if self.queued && durability.every().is_some() {
            return Some(format!(
                "{}: every:N is not implemented in this runtime's runner (native io_uring has it); use end, osync or odsync",
                self.name
            ));
        }
        super::find(super::NATIVE, self.name).and_then(|twin| twin.durability_refusal(durability))
    }

    fn prepare<'a>(&'a self, _job: &'a Job<'a>) -> Result<Box<dyn Prepared + 'a>, CallError> {
        // The runner gives these cases the child-process executor; reaching here is a bug.
        unreachable!("{} of another runtime is written by its runner process", self.name)
    }
}
