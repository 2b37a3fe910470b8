//! The catalogue of runtimes × methods as data (docs/design.md §5): every runtime, the
//! methods it has and what each supports, and how its runner is built. The plan, the
//! analysis and the exports ask it what a method name means; the engine (`measure`)
//! looks up the code that writes a native method by its name here, and starts the
//! runner of any other runtime. What depends on the system at hand (whether this kernel
//! has io_uring or an `RWF_*` flag) is no data: the engine says it.
//!
//! A new method is its engine file (`measure/methods/`, listed in its `ENGINES`) and one
//! entry in `native.rs`; a new runtime is its runner (`runners/`) and one entry in
//! `runtimes.rs` (docs/code.md).

mod native;
mod runtimes;
mod toolchain;

use std::collections::BTreeSet;

use crate::durability::{Commit, Durability};
pub use runtimes::RUNTIMES;
pub use toolchain::{Build, Toolchain};

/// The runtime whose methods are this crate's own code: raw syscalls, C-equivalent.
pub const NATIVE: &str = "native";

/// How the table groups methods, after the sections of rapidgzip's benchmarkIOWrite results.
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
            Family::Asynchronous => "Asynchronous writing (requests in flight)",
            Family::Creation => "File creation (open + call + close)",
        }
    }
}

/// The call a file creation method times between open and close (the syscall itself is
/// `measure::methods::create`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Creation {
    PosixFallocate,
    Fallocate,
    Ftruncate,
}

impl Creation {
    /// Whether the call reserves blocks (then a size above the free space cannot work).
    pub fn allocates(self) -> bool {
        match self {
            Creation::PosixFallocate | Creation::Fallocate => true,
            Creation::Ftruncate => false,
        }
    }
}

/// A buffer in front of the descriptor, which O_DIRECT cannot take: the writes leave
/// from it, not from writebench's aligned source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Buffer {
    /// C stdio's (native `fwrite`): glibc writes from its own heap buffer, not aligned
    /// for O_DIRECT, and decides itself which calls bypass it, so O_DIRECT would fail
    /// with EINVAL or not by chance.
    Stdio,
    /// A runner's language's own (Python's `BufferedWriter`, Go's `bufio.Writer`, the C
    /// runner's stdio).
    Language,
}

/// One method of one runtime, as the plan and the reports see it: what it supports and
/// what it refuses. Native methods and their twins in other runtimes share a name; a
/// twin may support less (a runner's `write` takes no `writebehind:SIZE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Method {
    pub name: &'static str,
    pub family: Family,
    /// Whether `--iov` applies: a call gathers `iov` chunks.
    pub vectored: bool,
    /// Whether `--qd` applies: requests in flight.
    pub queued: bool,
    /// Whether several threads can write disjoint ranges of one file: true for methods
    /// that take an offset with each call, false for those that use the file position.
    pub shares_file: bool,
    /// Whether the file-per-thread layout means something for this method (the mmap
    /// variants differ only in how threads share one file, so they say no).
    pub file_per_thread: bool,
    /// Needs a file that already has its size: a map cannot extend its file (touching
    /// it beyond the end raises SIGBUS), so the empty state is refused rather than
    /// measured as sparse under another name.
    pub needs_size: bool,
    /// Writes at the end of the file (`pwritev2-append`): only into an empty file.
    pub appends: bool,
    /// A buffer in front of the descriptor, if the method writes through one.
    pub buffer: Option<Buffer>,
    /// Whether each call can carry the `RWF_*` flags of `rwf-sync` and `rwf-dsync`
    /// (pwritev2).
    pub per_call_flags: bool,
    /// Whether `writebehind:SIZE` applies: calls through a descriptor at offsets the
    /// method knows after each call.
    pub write_behind: bool,
    /// The native method that makes the same system calls: a runner's cost is measured
    /// against it (docs/runtimes.md). A twin's is its own name; Python's `fileio`, Go's
    /// `bufio` or Java's `channel` say `write`, Java's `async` and Node's
    /// `write-callback` `pwrite`.
    pub counterpart: &'static str,
    /// Why O_DIRECT cannot be asked of it, where its language's API has no way (Java's
    /// `java.io` streams open without it; JavaScript cannot place a Buffer at an aligned
    /// address).
    pub no_direct: Option<&'static str>,
    /// Whether `every:N` is implemented: native io_uring links a fsync to each batch's
    /// last write (`measure::methods::io_uring`), the Go and Zig runners' io_uring do not.
    pub every: bool,
    /// For the file creation methods: the call timed between open and close.
    pub creation: Option<Creation>,
    /// How much a programmer must know to write with it, lowest first: the order in which
    /// the Answer prefers methods among those within the margin of the fastest
    /// (docs/answer.md). A plain call 0, a vectored one 1, a buffer in front of the
    /// descriptor 2, per-call flags 3, a mapping 4, a queue of requests 5. Set by the
    /// family ([`method`]); an entry that is simpler or harder than its family says so.
    pub simplicity: u8,
}

/// A method that supports nothing optional: the entries switch on what they have.
const fn method(name: &'static str, family: Family) -> Method {
    Method {
        name,
        family,
        vectored: false,
        queued: false,
        shares_file: false,
        file_per_thread: true,
        needs_size: false,
        appends: false,
        buffer: None,
        per_call_flags: false,
        write_behind: false,
        counterpart: name,
        no_direct: None,
        every: true,
        creation: None,
        simplicity: match family {
            Family::Simple => 0,
            Family::Vectored => 1,
            Family::Mapped => 4,
            Family::Asynchronous => 5,
            Family::Parallel | Family::Creation => 6,
        },
    }
}

impl Method {
    /// Why the method cannot start from an empty file, if it cannot (asked once per
    /// case in the `empty` state).
    pub fn empty_file_refusal(&self) -> Option<String> {
        self.needs_size.then(|| {
            format!("{}: mmap cannot extend a file: the file must be sized first, which is the sparse state", self.name)
        })
    }

    /// Why the method cannot write into a file that already has its size (the sparse,
    /// prealloc and overwrite states), if it cannot.
    pub fn sized_file_refusal(&self) -> Option<String> {
        self.appends
            .then(|| format!("{} writes at the end of the file: only into an empty file (state empty)", self.name))
    }

    /// Why the method cannot honour `durability`, if it cannot (asked once per case).
    pub fn durability_refusal(&self, durability: Durability) -> Option<String> {
        let name = self.name;
        match self.buffer {
            Some(Buffer::Language) if durability.direct => {
                return Some(format!("{name}: the language's own buffer is not aligned for O_DIRECT"));
            }
            Some(Buffer::Stdio) if durability.direct => {
                return Some(format!("{name}: stdio's buffer is not aligned for O_DIRECT"));
            }
            _ => {}
        }
        if let Some(reason) = self.no_direct.filter(|_| durability.direct) {
            return Some(format!("{name}: {reason}"));
        }
        if !self.every && durability.every().is_some() {
            let native = if name == "io_uring" { " (native io_uring has it)" } else { "" };
            return Some(format!(
                "{name}: every:N is not implemented in this runtime's runner{native}; use end, osync or odsync"
            ));
        }
        // Stores into a map do not go through write(2), so the open flags mean nothing
        // to them; saying "osync" for a case that is not would mislead.
        if self.family == Family::Mapped && durability.open_flags() != 0 {
            return Some(format!(
                "{name}: stores into a map bypass write(2); O_SYNC, O_DSYNC and O_DIRECT do not apply"
            ));
        }
        // Creating a file writes no data: only none and end (an fsync of the new file's
        // metadata and allocation) mean something.
        if self.creation.is_some() {
            return match durability.commit {
                Commit::None | Commit::End(_) if !durability.direct => None,
                _ => Some(format!("{name}: creating a file makes no write calls; only none and end apply")),
            };
        }
        None
    }

    /// Why the method cannot carry the modes only some methods can: per-call `RWF_*`
    /// flags (the pwritev2 methods) and write-behind (methods that write through a
    /// descriptor at offsets they know).
    pub fn mode_refusal(&self, durability: Durability) -> Option<String> {
        let name = self.name;
        if durability.rwf_flags() != 0 && !self.per_call_flags {
            return Some(format!(
                "{name}: {durability} is a flag of each pwritev2 call; only the pwritev2 methods take it"
            ));
        }
        if durability.write_behind().is_some() && !self.write_behind {
            return Some(format!(
                "{name}: {durability} needs calls through a descriptor at known offsets (write, pwrite, writev, pwritev, pwritev2)"
            ));
        }
        None
    }
}

/// A runtime: its methods and, for every runtime but native, its runner's toolchain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Runtime {
    pub name: &'static str,
    /// Its methods; native's in the order the table shows them within a family.
    pub methods: &'static [Method],
    /// How its runner is built and started; None for native, whose methods are this
    /// crate's own engines (`measure::methods`).
    pub toolchain: Option<Toolchain>,
    /// The calls of its small-write loops (`latency`, docs/runtimes.md): a record
    /// rewritten at offset 0, and one appended at the file position (each of the
    /// language's file objects that writes there: Python's `io.FileIO` and buffered
    /// `open()`, Go's `bufio`, Java's streams and channel, Node's `writeSync` and awaited
    /// `FileHandle.write`).
    pub overwrite0: &'static [&'static str],
    pub append: &'static [&'static str],
    /// The calls of its crash-safe saves' writes into the new file; none where the
    /// runner makes no saves.
    pub saves: &'static [&'static str],
}

impl Runtime {
    /// Its method names, in the catalogue's order.
    pub fn method_names(&self) -> Vec<&'static str> {
        self.methods.iter().map(|method| method.name).collect()
    }

    /// Whether a runner's hello line offers the methods the catalogue lists for its
    /// runtime, in any order (docs/runtimes.md): a runner and the catalogue that
    /// disagree would plan cases the runner program refuses, or leave some of its methods unused.
    pub fn check_offer(&self, offered: &[String]) -> Result<(), String> {
        let listed = self.method_names();
        let same = offered.iter().map(String::as_str).collect::<BTreeSet<_>>() == listed.iter().copied().collect();
        if same {
            return Ok(());
        }
        let offered = if offered.is_empty() { "nothing".to_string() } else { offered.join(", ") };
        Err(format!("the {} runner offers {offered} but the catalogue lists {}", self.name, listed.join(", ")))
    }
}

/// The runtime called `name`.
pub fn runtime(name: &str) -> Option<&'static Runtime> {
    RUNTIMES.iter().find(|runtime| runtime.name == name)
}

/// The names of every runtime, native first.
pub fn runtime_names() -> Vec<&'static str> {
    RUNTIMES.iter().map(|runtime| runtime.name).collect()
}

/// Every native method, in the order the table shows them within a family.
pub fn native() -> &'static [Method] {
    native::METHODS
}

/// The method `name` of `runtime`, if that runtime has it.
pub fn find(runtime: &str, name: &str) -> Option<&'static Method> {
    self::runtime(runtime)?.methods.iter().find(|method| method.name == name)
}

/// What a method name means (its family, whether it is vectored...): the plan's
/// vocabulary, asked of the native runtime, which has every method but the few of
/// other runtimes that have no native twin (`bufio`, Python's `buffered`).
pub fn by_name(name: &str) -> Option<&'static Method> {
    // Native comes first: its entry where it has one, else the one runtime's that does.
    RUNTIMES.iter().flat_map(|runtime| runtime.methods).find(|method| method.name == name)
}

/// The native method `runtime`'s `method` is measured against: its twin, or the one
/// that makes the same system calls (`Method::counterpart`).
pub fn counterpart(runtime: &str, method: &str) -> Option<&'static Method> {
    find(NATIVE, find(runtime, method)?.counterpart)
}

/// The methods no native method is a twin of, in the order the table shows them: by
/// runtime, then in the runtime's order.
pub fn own() -> Vec<&'static Method> {
    let mut own: Vec<&'static Method> = Vec::new();
    for method in RUNTIMES.iter().flat_map(|runtime| runtime.methods) {
        if find(NATIVE, method.name).is_none() && !own.iter().any(|known| known.name == method.name) {
            own.push(method);
        }
    }
    own
}

/// Every method name of every runtime: native's, then those only other runtimes have.
pub fn names() -> Vec<&'static str> {
    native().iter().chain(own()).map(|method| method.name).collect()
}

/// Where a method comes in the table within its family: native's order, then the
/// methods only other runtimes have.
pub fn position(name: &str) -> usize {
    names().iter().position(|known| *known == name).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests;
