//! Every runtime: native, then the runners of the other languages, each with its
//! methods (how the runners are built, cached and driven is `measure::runtimes`,
//! protocol in docs/runtimes.md).
//!
//! A runner's method with a native twin (`pwrite`) shares its twin's name and answers
//! the plan's questions as it does, but takes neither per-call flags nor write-behind;
//! a method with no twin (`bufio`, Python's `buffered`) says its own.

use super::{Buffer, Family, Method, NATIVE, Runtime, method};

/// A runner's method, as its native twin (or as its own, for those with none).
const fn twin(name: &'static str, family: Family, shares_file: bool) -> Method {
    Method { shares_file, ..method(name, family) }
}

const WRITE: Method = twin("write", Family::Simple, false);
const PWRITE: Method = twin("pwrite", Family::Simple, true);
const WRITEV: Method = Method { vectored: true, ..twin("writev", Family::Vectored, false) };
const PWRITEV: Method = Method { vectored: true, ..twin("pwritev", Family::Vectored, true) };
const FWRITE: Method = Method { buffer: Some(Buffer::Language), ..twin("fwrite", Family::Simple, false) };
/// A map per file, shared by the threads, as native `mmap`.
const MMAP: Method = Method { needs_size: true, file_per_thread: false, ..twin("mmap", Family::Mapped, true) };
const IO_URING: Method = Method { queued: true, every: false, ..twin("io_uring", Family::Asynchronous, true) };
/// Python's `io.FileIO.write`: the raw file object, no buffer of its own.
const FILEIO: Method = twin("fileio", Family::Simple, false);
/// Python's `open(path, 'r+b').write`: a `BufferedWriter` in front of the file.
const BUFFERED: Method = Method { buffer: Some(Buffer::Language), ..twin("buffered", Family::Simple, false) };
/// Go's `bufio.Writer` in front of an `os.File`.
const BUFIO: Method = Method { buffer: Some(Buffer::Language), ..twin("bufio", Family::Simple, false) };

pub static RUNTIMES: &[Runtime] = &[
    Runtime { name: NATIVE, methods: super::native::METHODS },
    Runtime { name: "c", methods: &[MMAP, WRITEV, PWRITEV, FWRITE, WRITE, PWRITE] },
    Runtime { name: "python", methods: &[MMAP, WRITEV, PWRITEV, WRITE, FILEIO, BUFFERED, PWRITE] },
    Runtime { name: "go", methods: &[WRITE, BUFIO, PWRITE, IO_URING] },
    Runtime { name: "zig", methods: &[WRITE, PWRITE, IO_URING] },
];
