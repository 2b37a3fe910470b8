//! Write methods, one file each, behind one small trait (the model is fio's `engines/`).
//!
//! A method knows how to issue its calls for one contiguous span of a file; it knows
//! nothing of timing, statistics or output. Registering a new method is one new file
//! and one line in [`ALL`].

use std::fmt;
use std::io;
use std::os::fd::RawFd;

use crate::source::{Cursor, Source};

mod fwrite;
mod pwrite;
mod pwritev;
mod vectored;
mod write;
mod writev;

/// How the table groups methods, after the sections of seed 003.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Family {
    Vectored,
    Simple,
}

impl Family {
    pub fn title(self) -> &'static str {
        match self {
            Family::Vectored => "Vectorized writing",
            Family::Simple => "Simple writing",
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
    pub source: &'a Source,
}

impl Span<'_> {
    pub fn cursor(&self) -> Cursor<'_> {
        Cursor::new(self.source, self.offset)
    }
}

pub trait Method: Sync {
    fn name(&self) -> &'static str;
    fn family(&self) -> Family;
    /// Whether `--iov` applies.
    fn vectored(&self) -> bool {
        false
    }
    /// Writes the whole span. Everything this does is inside the timed write span,
    /// including closing steps the method cannot do without (`fclose` for stdio).
    fn write_span(&self, span: &Span) -> Result<(), CallError>;
}

/// Every native method, in the order the table shows them within a family.
pub static ALL: &[&dyn Method] = &[
    &writev::Writev,
    &pwritev::Pwritev,
    &fwrite::Fwrite,
    &write::Write,
    &pwrite::Pwrite,
];

pub fn by_name(name: &str) -> Option<&'static dyn Method> {
    ALL.iter().copied().find(|method| method.name() == name)
}

pub fn names() -> Vec<&'static str> {
    ALL.iter().map(|method| method.name()).collect()
}

/// A failed call, with enough context to act on: which call, where, and the OS text.
#[derive(Debug)]
pub struct CallError {
    pub call: String,
    pub error: io::Error,
}

impl CallError {
    pub fn new(call: impl Into<String>, error: io::Error) -> CallError {
        CallError {
            call: call.into(),
            error,
        }
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.call, self.error)
    }
}

/// Runs a raw syscall that returns a byte count or -1, retrying on EINTR.
#[inline]
pub(crate) fn retry_eintr(mut call: impl FnMut() -> isize) -> io::Result<usize> {
    loop {
        let result = call();
        if result >= 0 {
            return Ok(result as usize);
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// A call that reports zero bytes written for a non-empty buffer would loop forever;
/// the kernel does not do that for regular files, so treat it as an error.
pub(crate) fn no_progress() -> io::Error {
    io::Error::new(io::ErrorKind::WriteZero, "the call wrote 0 bytes")
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
