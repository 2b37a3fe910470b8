//! Every runtime: native, then the runners of the other languages, each with its
//! methods and its toolchain (its runner's sources are embedded in the binary; how they
//! are built, cached and driven is `measure::runtimes`, protocol in docs/runtimes.md).
//! A new runtime is its runner under `runners/` and one entry here.
//!
//! A runner's method with a native twin (`pwrite`) shares its twin's name and answers
//! the plan's questions as it does, but takes neither per-call flags nor write-behind;
//! a method with no twin (`bufio`, Python's `buffered`) says its own.

use super::{Buffer, Build, Family, Method, NATIVE, Runtime, Toolchain, method};

/// A runner's method, as its native twin (or as its own, for those with none).
const fn twin(name: &'static str, family: Family, shares_file: bool) -> Method {
    Method { shares_file, ..method(name, family) }
}

const WRITE: Method = twin("write", Family::Simple, false);
const PWRITE: Method = twin("pwrite", Family::Simple, true);
const WRITEV: Method = Method { vectored: true, ..twin("writev", Family::Vectored, false) };
const PWRITEV: Method = Method { vectored: true, ..twin("pwritev", Family::Vectored, true) };
const FWRITE: Method =
    Method { buffer: Some(Buffer::Language), simplicity: 2, ..twin("fwrite", Family::Simple, false) };
/// A map per file, shared by the threads, as native `mmap`.
const MMAP: Method = Method { needs_size: true, file_per_thread: false, ..twin("mmap", Family::Mapped, true) };
const IO_URING: Method = Method { queued: true, every: false, ..twin("io_uring", Family::Asynchronous, true) };
/// Python's `io.FileIO.write`: the raw file object, no buffer of its own.
const FILEIO: Method = twin("fileio", Family::Simple, false);
/// Python's `open(path, 'r+b').write`: a `BufferedWriter` in front of the file.
const BUFFERED: Method =
    Method { buffer: Some(Buffer::Language), simplicity: 2, ..twin("buffered", Family::Simple, false) };
/// Go's `bufio.Writer` in front of an `os.File`.
const BUFIO: Method = Method { buffer: Some(Buffer::Language), simplicity: 2, ..twin("bufio", Family::Simple, false) };

pub static RUNTIMES: &[Runtime] = &[
    Runtime { name: NATIVE, methods: super::native::METHODS, toolchain: None },
    // `cc -O2`, pthreads, raw POSIX calls (runners/runner.c).
    Runtime {
        name: "c",
        methods: &[MMAP, WRITEV, PWRITEV, FWRITE, WRITE, PWRITE],
        toolchain: Some(Toolchain {
            sources: &[("runner.c", include_str!("../../../runners/runner.c"))],
            version: &[&["cc", "--version"]],
            build: Build::Compile(&["{tool}", "-O2", "-pthread", "-o", "runner", "runner.c"]),
            env: &[],
        }),
    },
    // `python3`, standard library only (runners/runner.py).
    Runtime {
        name: "python",
        methods: &[MMAP, WRITEV, PWRITEV, WRITE, FILEIO, BUFFERED, PWRITE],
        toolchain: Some(Toolchain {
            sources: &[("runner.py", include_str!("../../../runners/runner.py"))],
            version: &[&["python3", "--version"]],
            // -u: stdout unbuffered is not needed (the runner flushes each line); -I:
            // isolated from the user's PYTHONPATH and site-packages, so the standard
            // library is what runs.
            build: Build::Interpret(&["{tool}", "-I", "runner.py"]),
            env: &[],
        }),
    },
    // The `go` toolchain, a module with golang.org/x/sys (runners/go/).
    Runtime {
        name: "go",
        methods: &[WRITE, BUFIO, PWRITE, IO_URING],
        toolchain: Some(Toolchain {
            sources: &[
                ("runner.go", include_str!("../../../runners/go/runner.go")),
                ("go.mod", include_str!("../../../runners/go/go.mod")),
                ("go.sum", include_str!("../../../runners/go/go.sum")),
            ],
            version: &[&["go", "version"]],
            build: Build::Compile(&["{tool}", "build", "-trimpath", "-o", "runner", "."]),
            // A static binary without cgo; modules fetched as go.sum pins them.
            env: &[("CGO_ENABLED", "0"), ("GOFLAGS", "-mod=mod")],
        }),
    },
    // `zig` on PATH, else the PyPI package `ziglang` (runners/runner.zig).
    Runtime {
        name: "zig",
        methods: &[WRITE, PWRITE, IO_URING],
        toolchain: Some(Toolchain {
            sources: &[("runner.zig", include_str!("../../../runners/runner.zig"))],
            version: &[&["zig", "version"], &["python3", "-m", "ziglang", "version"]],
            build: Build::Compile(&["{tool}", "build-exe", "-O", "ReleaseFast", "-femit-bin=runner", "runner.zig"]),
            env: &[],
        }),
    },
];
