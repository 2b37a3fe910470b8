//! Every runtime: native, then the runners of the other languages, each with its
//! methods and its toolchain (its runner's sources are embedded in the binary; how they
//! are built, cached and driven is `executors::runtimes`, protocol in docs/runtimes.md).
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
const FILEIO: Method = Method { counterpart: "write", ..twin("fileio", Family::Simple, false) };
/// Python's `open(path, 'r+b').write`: a `BufferedWriter` in front of the file.
const BUFFERED: Method = Method {
    buffer: Some(Buffer::Language),
    simplicity: 2,
    counterpart: "write",
    ..twin("buffered", Family::Simple, false)
};
/// Go's `bufio.Writer` in front of an `os.File`.
const BUFIO: Method = Method {
    buffer: Some(Buffer::Language),
    simplicity: 2,
    counterpart: "write",
    ..twin("bufio", Family::Simple, false)
};

/// Java's `java.io` streams open a file through `RandomAccessFile` or `FileOutputStream`,
/// which have `rws`/`rwd` (O_SYNC, O_DSYNC) but no O_DIRECT.
const JAVA_IO: &str = "java.io opens files without O_DIRECT (only FileChannel takes ExtendedOpenOption.DIRECT)";
/// Java's `FileOutputStream.write(byte[])`: a write(2) per call, from a copy of the array.
const STREAM: Method = Method { no_direct: Some(JAVA_IO), counterpart: "write", ..method("stream", Family::Simple) };
/// Java's `BufferedOutputStream` (8 KiB) in front of a `FileOutputStream`; the same
/// shape as Python's `buffered`.
const JAVA_BUFFERED: Method = BUFFERED;
/// `FileChannel.write` of a heap `ByteBuffer` at the channel's position (the JDK copies
/// it into a temporary direct buffer on each call).
const CHANNEL: Method = Method { simplicity: 1, counterpart: "write", ..method("channel", Family::Simple) };
/// `FileChannel.write` of a direct `ByteBuffer`: no copy in the JDK.
const CHANNEL_DIRECT: Method =
    Method { simplicity: 1, counterpart: "write", ..method("channel-direct", Family::Simple) };
/// `AsynchronousFileChannel.write(buffer, position)`: `--qd` requests in flight per
/// part, on the JDK's thread pool; every:N is not implemented. The JDK's asynchronous
/// channel copies a heap buffer into a temporary direct one it does not align, so
/// O_DIRECT fails with EINVAL (seen with JDK 17): refused.
const ASYNC: Method = Method {
    queued: true,
    every: false,
    shares_file: true,
    no_direct: Some(
        "AsynchronousFileChannel copies heap buffers into unaligned temporary ones, which O_DIRECT refuses",
    ),
    counterpart: "pwrite",
    ..method("async", Family::Asynchronous)
};

/// JavaScript cannot place a Buffer at an address O_DIRECT accepts.
const NODE_BUFFERS: &str = "Node.js cannot align a Buffer's address for O_DIRECT";
/// `fs.writeSync(fd, buffer)` at the file position.
const WRITE_SYNC: Method =
    Method { no_direct: Some(NODE_BUFFERS), counterpart: "write", ..method("writeSync", Family::Simple) };
/// `fs.write(fd, buffer, ..., position, callback)`: `--qd` requests in flight on libuv's
/// thread pool, positional; every:N is not implemented.
const WRITE_CALLBACK: Method = Method {
    queued: true,
    every: false,
    shares_file: true,
    no_direct: Some(NODE_BUFFERS),
    counterpart: "pwrite",
    ..method("write-callback", Family::Asynchronous)
};
/// `await fileHandle.write(buffer)`, one at a time, at the file position.
const PROMISES: Method =
    Method { simplicity: 1, no_direct: Some(NODE_BUFFERS), counterpart: "write", ..method("promises", Family::Simple) };
/// `fs.createWriteStream` with its default high-water mark (16 KiB), each chunk written
/// as the stream takes it, waiting for `drain` when it says so; every:N is not
/// implemented (a stream's writes end in its own time).
const NODE_STREAM: Method = Method {
    buffer: Some(Buffer::Language),
    every: false,
    no_direct: Some(NODE_BUFFERS),
    simplicity: 2,
    counterpart: "write",
    ..method("stream", Family::Simple)
};

pub static RUNTIMES: &[Runtime] = &[
    Runtime {
        name: NATIVE,
        methods: super::native::METHODS,
        toolchain: None,
        overwrite0: &["pwrite"],
        append: &["write"],
        saves: &["write"],
    },
    // `cc -O2`, pthreads, raw POSIX calls (runners/runner.c).
    Runtime {
        name: "c",
        methods: &[MMAP, WRITEV, PWRITEV, FWRITE, WRITE, PWRITE],
        toolchain: Some(Toolchain {
            sources: &[("runner.c", include_str!("../../../../runners/runner.c"))],
            version: &[&["cc", "--version"]],
            build: Build::Compile(&["{tool}", "-O2", "-pthread", "-o", "runner", "runner.c"]),
            env: &[],
        }),
        overwrite0: &["pwrite"],
        append: &["write"],
        saves: &[],
    },
    // `python3`, standard library only (runners/runner.py).
    Runtime {
        name: "python",
        methods: &[MMAP, WRITEV, PWRITEV, WRITE, FILEIO, BUFFERED, PWRITE],
        toolchain: Some(Toolchain {
            sources: &[("runner.py", include_str!("../../../../runners/runner.py"))],
            version: &[&["python3", "--version"]],
            // -u: stdout unbuffered is not needed (the runner flushes each line); -I:
            // isolated from the user's PYTHONPATH and site-packages, so the standard
            // library is what runs.
            build: Build::Interpret(&["{tool}", "-I", "runner.py"]),
            env: &[],
        }),
        overwrite0: &["pwrite"],
        append: &["write", "fileio", "buffered"],
        saves: &[],
    },
    // The `go` toolchain, a module with golang.org/x/sys (runners/go/).
    Runtime {
        name: "go",
        methods: &[WRITE, BUFIO, PWRITE, IO_URING],
        toolchain: Some(Toolchain {
            sources: &[
                ("runner.go", include_str!("../../../../runners/go/runner.go")),
                ("go.mod", include_str!("../../../../runners/go/go.mod")),
                ("go.sum", include_str!("../../../../runners/go/go.sum")),
            ],
            version: &[&["go", "version"]],
            build: Build::Compile(&["{tool}", "build", "-trimpath", "-o", "runner", "."]),
            // A static binary without cgo; modules fetched as go.sum pins them.
            env: &[("CGO_ENABLED", "0"), ("GOFLAGS", "-mod=mod")],
        }),
        overwrite0: &["pwrite"],
        append: &["write", "bufio"],
        saves: &[],
    },
    // `zig` on PATH, else the PyPI package `ziglang` (runners/runner.zig).
    Runtime {
        name: "zig",
        methods: &[WRITE, PWRITE, IO_URING],
        toolchain: Some(Toolchain {
            sources: &[("runner.zig", include_str!("../../../../runners/runner.zig"))],
            version: &[&["zig", "version"], &["python3", "-m", "ziglang", "version"]],
            build: Build::Compile(&["{tool}", "build-exe", "-O", "ReleaseFast", "-femit-bin=runner", "runner.zig"]),
            env: &[],
        }),
        overwrite0: &["pwrite"],
        append: &["write"],
        saves: &[],
    },
    // `javac` and `java` from a JDK (runners/Runner.java).
    Runtime {
        name: "java",
        methods: &[MMAP, STREAM, JAVA_BUFFERED, CHANNEL, CHANNEL_DIRECT, PWRITE, ASYNC],
        toolchain: Some(Toolchain {
            sources: &[("Runner.java", include_str!("../../../../runners/Runner.java"))],
            version: &[&["javac", "-version"]],
            // The JVM's defaults, as a program is started; the JIT warms up in the
            // case's warm-up runs (docs/runtimes.md).
            build: Build::CompileThenRun(&["{tool}", "-d", ".", "Runner.java"], &["java", "-cp", ".", "Runner"]),
            env: &[],
        }),
        overwrite0: &["pwrite"],
        append: &["stream", "buffered", "channel"],
        saves: &[],
    },
    // `node`, no packages (runners/runner.js).
    Runtime {
        name: "node",
        methods: &[WRITE_SYNC, PROMISES, NODE_STREAM, WRITE_CALLBACK],
        toolchain: Some(Toolchain {
            sources: &[("runner.js", include_str!("../../../../runners/runner.js"))],
            version: &[&["node", "--version"]],
            build: Build::Interpret(&["{tool}", "runner.js"]),
            env: &[],
        }),
        overwrite0: &["writeSync"],
        append: &["writeSync", "promises"],
        saves: &[],
    },
];
