//! The native methods: this crate's own code, one engine each in `measure/methods/`
//! (the engine of an entry is found by its name), in the order the table shows them
//! within a family. A new method is its engine file and one line here.

use super::{Buffer, Creation, Family, Method, method};

/// The mmap variants differ only in how threads share one file (`measure::methods::mmap`).
const fn mapped(name: &'static str) -> Method {
    Method { shares_file: true, file_per_thread: false, needs_size: true, ..method(name, Family::Mapped) }
}

/// The `pwritev2(2)` methods: per-call `RWF_*` flags on top of `pwritev`.
const fn pwritev2(name: &'static str) -> Method {
    Method {
        vectored: true,
        shares_file: true,
        per_call_flags: true,
        write_behind: true,
        simplicity: 3,
        ..method(name, Family::Vectored)
    }
}

/// The io_uring methods: `--qd` requests in flight at explicit offsets.
const fn uring(name: &'static str) -> Method {
    Method { queued: true, shares_file: true, ..method(name, Family::Asynchronous) }
}

/// The file creation methods: open + the call + close.
const fn creation(name: &'static str, call: Creation) -> Method {
    Method { creation: Some(call), ..method(name, Family::Creation) }
}

pub(super) static METHODS: &[Method] = &[
    mapped("mmap"),
    mapped("mmap-maps"),
    mapped("mmap-fds"),
    mapped("mmap-populate"),
    Method { vectored: true, write_behind: true, ..method("writev", Family::Vectored) },
    Method { vectored: true, shares_file: true, write_behind: true, ..method("pwritev", Family::Vectored) },
    pwritev2("pwritev2"),
    pwritev2("pwritev2-dontcache"),
    // Appends of several threads into one file would interleave.
    Method { shares_file: false, appends: true, ..pwritev2("pwritev2-append") },
    pwritev2("pwritev2-atomic"),
    Method { buffer: Some(Buffer::Stdio), simplicity: 2, ..method("fwrite", Family::Simple) },
    Method { write_behind: true, ..method("write", Family::Simple) },
    Method { shares_file: true, write_behind: true, ..method("pwrite", Family::Simple) },
    uring("io_uring"),
    uring("io_uring-fixed"),
    uring("io_uring-regfile"),
    uring("io_uring-sqpoll"),
    creation("posix_fallocate", Creation::PosixFallocate),
    creation("fallocate", Creation::Fallocate),
    creation("ftruncate", Creation::Ftruncate),
];
