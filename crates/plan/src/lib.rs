//! Expands a suite and the user's option lists into the cases to run (docs/design.md §1).
//!
//! Past 600 lines for a reason: `Case` and the expansion that makes every case are one
//! piece (ids, shapes and the option lists meet here); its parts with a life of their
//! own already live in the submodules below.

pub mod catalog;
pub mod crash;
pub mod data_source;
pub mod durability;
pub mod latency;
pub mod names;
pub mod numbers;
pub mod pages;
pub mod pattern;
pub mod replay;
pub mod replay_changes;
pub mod replay_promises;
pub mod suites;
pub mod units;

use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::catalog::Method;
pub use crate::durability::Durability;
pub use crate::pages::Pages;
pub use crate::pattern::CaseKind;
use crate::units::{format_size, format_size_compact};

/// The seed used unless `--seed` says otherwise; recorded in every result file.
pub const DEFAULT_SEED: u64 = 0x7772_6974_6562_656e; // "writeben"

/// The longest the settle step before each run waits for the previous run's writeback
/// (docs/measurement.md, "Between runs"): past it, the run goes ahead and says so
/// (`settle_timed_out`), and the advice names the limit.
pub const SETTLE_LIMIT: Duration = Duration::from_secs(2);

/// The state of the file before the timed span opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileState {
    /// New, length 0: every write extends the file.
    Empty,
    /// `ftruncate`d to the final size: the length is set, no blocks are allocated.
    Sparse,
    /// `fallocate`d to the final size: blocks are reserved (unwritten extents).
    Prealloc,
    /// Fully written and synced before the run: blocks exist and hold other data.
    Overwrite,
}

impl FileState {
    pub const ALL: [FileState; 4] = [FileState::Empty, FileState::Sparse, FileState::Prealloc, FileState::Overwrite];

    pub fn name(self) -> &'static str {
        match self {
            FileState::Empty => "empty",
            FileState::Sparse => "sparse",
            FileState::Prealloc => "prealloc",
            FileState::Overwrite => "overwrite",
        }
    }

    /// Whether a run makes its file anew: every state but a fully written file. Its
    /// run times one span from `open(O_CREAT)` (docs/answer.md).
    pub fn is_new_file(self) -> bool {
        self != FileState::Overwrite
    }

    /// benchmarkIOWrite's section wording.
    pub fn description(self) -> &'static str {
        match self {
            FileState::Empty => "an emptied file",
            FileState::Sparse => "a sparsely allocated file",
            FileState::Prealloc => "a preallocated file",
            FileState::Overwrite => "a fully written file (overwrite)",
        }
    }
}

impl FromStr for FileState {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        names::find(&FileState::ALL, FileState::name, text)
            .map_err(|known| format!("unknown state '{text}' (known: {known})"))
    }
}

/// How threads share the work when there are several.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// N threads write disjoint ranges of one file (methods with offsets only).
    OneFile,
    /// The size is split over N files, one per thread (benchmarkIOWrite's "one file per thread").
    FilePerThread,
}

impl Layout {
    pub const ALL: [Layout; 2] = [Layout::OneFile, Layout::FilePerThread];

    pub fn name(self) -> &'static str {
        match self {
            Layout::OneFile => "one-file",
            Layout::FilePerThread => "file-per-thread",
        }
    }
}

impl FromStr for Layout {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        names::find(&Layout::ALL, Layout::name, text)
            .map_err(|known| format!("unknown layout '{text}' (known: {known})"))
    }
}

/// How MPI ranks share the work (`--mpi`), as IOR calls them: N-1 and N-N.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RankLayout {
    /// Every rank writes a disjoint range of one file (IOR's N-1).
    SharedFile,
    /// Every rank writes a file of its own (IOR's N-N).
    FilePerRank,
}

impl RankLayout {
    pub const ALL: [RankLayout; 2] = [RankLayout::SharedFile, RankLayout::FilePerRank];

    pub fn name(self) -> &'static str {
        match self {
            RankLayout::SharedFile => "shared-file",
            RankLayout::FilePerRank => "file-per-rank",
        }
    }
}

impl FromStr for RankLayout {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        names::find(&RankLayout::ALL, RankLayout::name, text)
            .map_err(|known| format!("unknown layout '{text}' under --mpi (known: {known})"))
    }
}

/// One fully specified write strategy. Plain data: it is what the result files carry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "CaseRead")]
pub struct Case {
    /// Stable, readable key, e.g. `pwritev prealloc 4KiB x128 t1 end`.
    pub id: String,
    pub runtime: String,
    pub method: String,
    pub state: FileState,
    pub chunk_bytes: u64,
    pub iov: u32,
    pub queue_depth: Option<u32>,
    pub threads: u32,
    pub files: u32,
    pub durability: Durability,
    /// Bytes written per run.
    pub bytes: u64,
    /// Under `--mpi`: the MPI ranks that write the case together, each with `threads`
    /// threads; `bytes` is what all of them write, and `files` is 1 (`shared-file`) or
    /// one per rank (`file-per-rank`). Absent for a case of one process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<u32>,
    /// What the case measures: a whole file's write, a file's creation, or a latency
    /// pattern's operations. Results saved before the field had it in the id, and are
    /// read so ([`CaseRead`]).
    pub kind: CaseKind,
    /// The pages of the writers' buffer; absent for ordinary ones (results saved before
    /// the field are read so).
    #[serde(default, skip_serializing_if = "Pages::is_ordinary")]
    pub pages: Pages,
}

/// A case as a result file holds it: `kind` may be missing (results saved before it).
#[derive(Deserialize)]
struct CaseRead {
    id: String,
    runtime: String,
    method: String,
    state: FileState,
    chunk_bytes: u64,
    iov: u32,
    queue_depth: Option<u32>,
    threads: u32,
    files: u32,
    durability: Durability,
    bytes: u64,
    #[serde(default)]
    ranks: Option<u32>,
    #[serde(default)]
    kind: Option<CaseKind>,
    #[serde(default)]
    pages: Pages,
}

impl From<CaseRead> for Case {
    fn from(read: CaseRead) -> Case {
        let kind = read.kind.unwrap_or_else(|| CaseKind::of_older_case(&read.id, &read.method));
        Case {
            id: read.id,
            runtime: read.runtime,
            method: read.method,
            state: read.state,
            chunk_bytes: read.chunk_bytes,
            iov: read.iov,
            queue_depth: read.queue_depth,
            threads: read.threads,
            files: read.files,
            durability: read.durability,
            bytes: read.bytes,
            ranks: read.ranks,
            kind,
            pages: read.pages,
        }
    }
}

impl Case {
    pub fn new(
        method: &Method,
        state: FileState,
        chunk_bytes: u64,
        iov: u32,
        durability: Durability,
        bytes: u64,
    ) -> Case {
        let mut case = Case {
            id: String::new(),
            runtime: catalog::NATIVE.to_string(),
            method: method.name.to_string(),
            state,
            chunk_bytes,
            iov,
            queue_depth: None,
            threads: 1,
            files: 1,
            durability,
            bytes,
            ranks: None,
            kind: if method.creation.is_some() { CaseKind::Creation } else { CaseKind::Throughput },
            pages: Pages::Ordinary,
        };
        case.id = case.make_id();
        case
    }

    /// The same case written by `ranks` MPI ranks (each with this case's threads, which
    /// share their rank's file or the one file), into one file or one file per rank.
    pub fn with_ranks(mut self, ranks: u32, layout: RankLayout) -> Case {
        self.ranks = Some(ranks);
        self.files = if layout == RankLayout::FilePerRank { ranks } else { 1 };
        self.id = self.make_id();
        self
    }

    /// The rank layout of an `--mpi` case.
    pub fn rank_layout(&self) -> Option<RankLayout> {
        self.ranks.map(
            |ranks| if self.files == ranks && ranks > 1 { RankLayout::FilePerRank } else { RankLayout::SharedFile },
        )
    }

    /// The same case written by `threads` threads, into one file or one file each.
    pub fn with_threads(mut self, threads: u32, layout: Layout) -> Case {
        self.threads = threads;
        self.files = if layout == Layout::FilePerThread { threads } else { 1 };
        self.id = self.make_id();
        self
    }

    /// The same case written by the runner of `runtime` (`native`: this crate's own code).
    pub fn with_runtime(mut self, runtime: &str) -> Case {
        self.runtime = runtime.to_string();
        self.id = self.make_id();
        self
    }

    /// The case as native writes it: its runtime's method's native counterpart (the
    /// twin, or the call it makes: Java's `channel` is `write`), with no requests in
    /// flight where that has none. The id stays the runner's.
    pub fn as_native(&self) -> Case {
        let counterpart = catalog::counterpart(&self.runtime, &self.method);
        let mut native = Case { runtime: catalog::NATIVE.to_string(), ..self.clone() };
        if let Some(counterpart) = counterpart {
            native.method = counterpart.name.to_string();
            native.queue_depth = self.queue_depth.filter(|_| counterpart.queued);
        }
        native
    }

    /// The same case written from a buffer in `pages`.
    pub fn with_pages(mut self, pages: Pages) -> Case {
        self.pages = pages;
        self.id = self.make_id();
        self
    }

    /// The same case with `depth` requests in flight (queued methods).
    pub fn with_queue_depth(mut self, depth: u32) -> Case {
        self.queue_depth = Some(depth);
        self.id = self.make_id();
        self
    }

    /// The id its fields give: that of a case changed field by field (a twin with
    /// another state, another durability), to find the case measured so.
    pub fn derived_id(&self) -> String {
        self.make_id()
    }

    fn make_id(&self) -> String {
        let mut parts = Vec::new();
        if self.runtime != catalog::NATIVE {
            parts.push(self.runtime.clone());
        }
        parts.push(self.method.clone());
        parts.push(self.state.name().to_string());
        parts.push(format_size_compact(self.chunk_bytes));
        if catalog::by_name(&self.method).is_some_and(|m| m.vectored) {
            parts.push(format!("x{}", self.iov));
        }
        if let Some(depth) = self.queue_depth {
            parts.push(format!("qd{depth}"));
        }
        if let Some(ranks) = self.ranks {
            parts.push(format!("r{ranks}"));
        }
        parts.push(format!("t{}", self.threads));
        if self.files > 1 {
            parts.push(format!("f{}", self.files));
        }
        parts.push(self.durability.name());
        if self.pages == Pages::Huge {
            parts.push("huge-pages".to_string());
        }
        parts.join(" ")
    }

    /// benchmarkIOWrite's line wording, for the table.
    pub fn label(&self) -> String {
        if catalog::by_name(&self.method).is_some_and(|m| m.creation.is_some()) {
            return format!("{} file sized {}", self.method, format_size(self.bytes));
        }
        let vectored = if catalog::by_name(&self.method).is_some_and(|m| m.vectored) {
            format!(" (x{})", self.iov)
        } else {
            String::new()
        };
        let queued = self.queue_depth.map(|depth| format!(", {depth} in flight")).unwrap_or_default();
        let parallel = match (self.threads, self.files) {
            (1, _) => String::new(),
            (threads, 1) => format!(", {threads:>2} threads into one file"),
            (threads, _) => format!(", {threads:>2} threads, a file each"),
        };
        // Under --mpi the threads of a rank always share its file (or the one file).
        let threads = if self.threads > 1 { format!(" x {} threads", self.threads) } else { String::new() };
        let parallel = match (self.ranks, self.rank_layout()) {
            (Some(ranks), Some(RankLayout::FilePerRank)) => format!(", {ranks} ranks{threads}, a file per rank"),
            (Some(ranks), _) => format!(", {ranks} ranks{threads} into one file"),
            (None, _) => parallel,
        };
        let runtime = if self.runtime == catalog::NATIVE { String::new() } else { format!("{} ", self.runtime) };
        format!("{runtime}{} in {:>7} chunks{vectored}{queued}{parallel}", self.method, format_size(self.chunk_bytes))
    }
}

/// The run options that shape every case, after defaults and validation.
#[derive(Debug, Clone, Serialize)]
pub struct Selection {
    pub size: u64,
    pub methods: Vec<String>,
    /// `native` and the runners (`--runtimes`): each method is run by every runtime
    /// that has it, side by side.
    pub runtimes: Vec<String>,
    pub states: Vec<FileState>,
    pub chunks: Vec<u64>,
    pub iov: Vec<u32>,
    pub durability: Vec<Durability>,
    pub threads: Vec<u32>,
    pub layouts: Vec<Layout>,
    pub queue_depths: Vec<u32>,
    /// The pages of the writers' buffers (native cases only: another runtime's runner
    /// allocates its own).
    pub pages: Vec<Pages>,
    /// Keep chunks larger than the size (one call writes it all) instead of dropping them.
    pub keep_oversized_chunks: bool,
    /// Add the size to the ids (a suite whose parts have different sizes).
    pub size_in_id: bool,
}

/// Why a combination the options name yields no case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DropReason {
    /// The method cannot write with several threads in this layout.
    Layout(Layout),
    /// More threads than calls: the size in chunks of this size is too few calls.
    TooFewChunks { chunk: u64, size: u64 },
}

/// A (method, threads) combination of a selection that yields no case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    pub method: String,
    pub threads: u32,
    pub reason: DropReason,
}

impl Dropped {
    /// One line for the user, e.g. "write with 2 threads into one file: write writes
    /// at the file position, so threads cannot share one file".
    pub fn describe(&self) -> String {
        let (method, threads) = (&self.method, self.threads);
        match &self.reason {
            DropReason::Layout(Layout::OneFile) => format!(
                "{method} with {threads} threads into one file: {method} writes at the file position, so threads cannot share one file"
            ),
            DropReason::Layout(Layout::FilePerThread) => {
                format!("{method} with {threads} threads, a file each: {method} only shares one file between threads")
            }
            DropReason::TooFewChunks { .. } if catalog::by_name(method).is_some_and(|m| m.creation.is_some()) => {
                format!("{method} with {threads} threads: a file creation is one call")
            }
            DropReason::TooFewChunks { chunk, size } => {
                let calls = size.div_ceil(*chunk);
                format!(
                    "{method} with {threads} threads in {} chunks: {} makes only {calls} call{}",
                    format_size(*chunk),
                    format_size(*size),
                    if calls == 1 { "" } else { "s" }
                )
            }
        }
    }
}

/// Every case of a selection, grouped as the table shows them: state, then family,
/// then method, chunk, iov, queue depth, threads, layout. Combinations that cannot be
/// are left out: chunks larger than the size (the caller rejects them up front when
/// the user named them), more threads than chunks, several threads on the file
/// position of one file.
pub fn expand(selection: &Selection) -> Vec<Case> {
    expand_and_drop(selection).0
}

/// [`expand`], and the combinations left out for their threads or layout (each once).
pub fn expand_and_drop(selection: &Selection) -> (Vec<Case>, Vec<Dropped>) {
    let mut chosen: Vec<&Method> = selection.methods.iter().filter_map(|name| catalog::by_name(name)).collect();
    chosen.sort_by_key(|method| (method.family, catalog::position(method.name)));
    // Each runtime of the selection that has the method, in the selection's order.
    let runtimes_of = |method: &Method| -> Vec<&str> {
        let runtimes: Vec<&str> = if selection.runtimes.is_empty() {
            vec![catalog::NATIVE]
        } else {
            selection.runtimes.iter().map(String::as_str).collect()
        };
        runtimes.into_iter().filter(|runtime| catalog::find(runtime, method.name).is_some()).collect()
    };
    let mut cases = Vec::new();
    let mut dropped: Vec<Dropped> = Vec::new();
    let mut drop = |method: &Method, threads: u32, reason: DropReason| {
        let entry = Dropped { method: method.name.to_string(), threads, reason };
        if !dropped.contains(&entry) {
            dropped.push(entry);
        }
    };
    for &state in &selection.states {
        for &method in &chosen {
            // A creation case makes the whole file in one call: its "chunk" is the size.
            let chunks: Vec<u64> = if method.creation.is_some() {
                vec![selection.size]
            } else {
                let fits = |chunk: u64| chunk <= selection.size || selection.keep_oversized_chunks;
                selection.chunks.iter().copied().filter(|&chunk| fits(chunk)).collect()
            };
            for chunk in chunks {
                let iovs: &[u32] = if method.vectored { &selection.iov } else { &[1] };
                let depths: Vec<Option<u32>> =
                    if method.queued { selection.queue_depths.iter().map(|&d| Some(d)).collect() } else { vec![None] };
                for &iov in iovs {
                    for &depth in &depths {
                        for &threads in &selection.threads {
                            if u64::from(threads) > selection.size.div_ceil(chunk) {
                                drop(method, threads, DropReason::TooFewChunks { chunk, size: selection.size });
                                continue;
                            }
                            let layouts: &[Layout] = if threads == 1 { &[Layout::OneFile] } else { &selection.layouts };
                            for &layout in layouts {
                                if threads > 1 && layout == Layout::OneFile && !method.shares_file {
                                    drop(method, threads, DropReason::Layout(layout));
                                    continue;
                                }
                                if threads > 1 && layout == Layout::FilePerThread && !method.file_per_thread {
                                    drop(method, threads, DropReason::Layout(layout));
                                    continue;
                                }
                                for &durability in &selection.durability {
                                    for runtime in runtimes_of(method) {
                                        for &pages in &selection.pages {
                                            if pages != Pages::Ordinary && runtime != catalog::NATIVE {
                                                continue;
                                            }
                                            let mut case =
                                                Case::new(method, state, chunk, iov, durability, selection.size)
                                                    .with_threads(threads, layout)
                                                    .with_runtime(runtime)
                                                    .with_pages(pages);
                                            if let Some(depth) = depth {
                                                case = case.with_queue_depth(depth);
                                            }
                                            if selection.size_in_id {
                                                case.id =
                                                    format!("{} {}", case.id, format_size_compact(selection.size));
                                            }
                                            cases.push(case);
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    (cases, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quick_suite() -> Selection {
        Selection {
            size: 128 << 20,
            methods: ["writev", "pwritev", "fwrite", "write", "pwrite"].map(String::from).to_vec(),
            runtimes: vec!["native".to_string()],
            states: FileState::ALL.to_vec(),
            chunks: vec![4 << 10, 64 << 10, 1 << 20],
            iov: vec![1, 128],
            durability: vec![Durability::End],
            threads: vec![1],
            layouts: Layout::ALL.to_vec(),
            queue_depths: vec![1],
            pages: vec![Pages::Ordinary],
            keep_oversized_chunks: false,
            size_in_id: false,
        }
    }

    /// Each page kind is a case of its own beside the ordinary one, for this crate's
    /// own calls only; a result says "pages" only of a case in huge pages, and a result
    /// saved before the field reads as ordinary pages.
    #[test]
    fn huge_pages_are_a_case_of_their_own_for_native_calls_only() {
        let selection = Selection {
            methods: vec!["write".to_string()],
            runtimes: vec!["native".to_string(), "python".to_string()],
            states: vec![FileState::Empty],
            chunks: vec![1 << 20],
            iov: vec![1],
            durability: vec!["direct+end".parse().unwrap()],
            pages: Pages::ALL.to_vec(),
            ..quick_suite()
        };
        let ids: Vec<String> = expand(&selection).into_iter().map(|c| c.id).collect();
        assert_eq!(
            ids,
            [
                "write empty 1MiB t1 direct+end",
                "write empty 1MiB t1 direct+end huge-pages",
                "python write empty 1MiB t1 direct+end"
            ]
        );
        let huge = &expand(&selection)[1];
        let json = serde_json::to_value(huge).unwrap();
        assert_eq!(json["pages"], "huge");
        let mut old = serde_json::to_value(&expand(&selection)[0]).unwrap();
        assert!(old.get("pages").is_none(), "{old}");
        assert_eq!(serde_json::from_value::<Case>(json).unwrap(), *huge);
        old.as_object_mut().unwrap().remove("kind");
        assert_eq!(serde_json::from_value::<Case>(old).unwrap().pages, Pages::Ordinary);
    }

    #[test]
    fn quick_suite_covers_every_method_and_state() {
        let cases = expand(&quick_suite());
        for method in ["writev", "pwritev", "fwrite", "write", "pwrite"] {
            for state in FileState::ALL {
                assert!(cases.iter().any(|c| c.method == method && c.state == state), "{method} {state:?}");
            }
        }
        // 3 plain methods x 3 chunks + 2 vectored x 3 chunks x 2 iov, per state.
        assert_eq!(cases.len(), 4 * (3 * 3 + 2 * 3 * 2));
        let ids: std::collections::HashSet<_> = cases.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids.len(), cases.len(), "ids must be unique");
    }

    #[test]
    fn ids_are_readable() {
        let pwritev = catalog::by_name("pwritev").unwrap();
        let case = Case::new(pwritev, FileState::Prealloc, 4096, 128, Durability::None, 1 << 30);
        assert_eq!(case.id, "pwritev prealloc 4KiB x128 t1 none");
        let write = catalog::by_name("write").unwrap();
        let case = Case::new(write, FileState::Empty, 1 << 20, 1, Durability::End, 1 << 30);
        assert_eq!(case.id, "write empty 1MiB t1 end");
        assert_eq!(case.label(), "write in   1 MiB chunks");
    }

    #[test]
    fn chunks_above_the_size_are_dropped_and_iov_applies_to_vectored_only() {
        let mut selection = quick_suite();
        selection.size = 64 << 10;
        selection.states = vec![FileState::Empty];
        let cases = expand(&selection);
        assert!(cases.iter().all(|c| c.chunk_bytes <= 64 << 10));
        assert!(cases.iter().filter(|c| c.method == "write").all(|c| c.iov == 1));
        assert!(cases.iter().any(|c| c.method == "writev" && c.iov == 128));
    }

    #[test]
    fn threads_share_a_file_only_with_offsets_and_never_outnumber_chunks() {
        let mut selection = quick_suite();
        selection.states = vec![FileState::Empty];
        selection.chunks = vec![1 << 20];
        selection.size = 2 << 20;
        selection.threads = vec![1, 2, 3];
        let cases = expand(&selection);
        assert!(cases.iter().all(|c| c.threads <= 2), "3 threads for 2 chunks are left out");
        let pwrite_one_file = cases.iter().find(|c| c.method == "pwrite" && c.threads == 2 && c.files == 1).unwrap();
        assert_eq!(pwrite_one_file.id, "pwrite empty 1MiB t2 end");
        assert!(cases.iter().any(|c| c.id == "pwrite empty 1MiB t2 f2 end"));
        assert!(cases.iter().any(|c| c.id == "write empty 1MiB t2 f2 end"));
        assert!(!cases.iter().any(|c| c.method == "write" && c.threads == 2 && c.files == 1));
        assert_eq!(pwrite_one_file.label(), "pwrite in   1 MiB chunks,  2 threads into one file");
    }

    #[test]
    fn what_threads_and_layouts_leave_out_is_said_once_each() {
        let mut selection = quick_suite();
        selection.methods = ["write", "pwrite", "mmap-maps"].map(String::from).to_vec();
        selection.states = FileState::ALL.to_vec();
        selection.chunks = vec![1 << 20];
        selection.size = 2 << 20;
        selection.threads = vec![2, 4];
        let (cases, dropped) = expand_and_drop(&selection);
        assert!(cases.iter().all(|c| c.threads == 2));
        let lines: Vec<String> = dropped.iter().map(Dropped::describe).collect();
        assert_eq!(
            lines,
            [
                "mmap-maps with 2 threads, a file each: mmap-maps only shares one file between threads",
                "mmap-maps with 4 threads in 1 MiB chunks: 2 MiB makes only 2 calls",
                "write with 2 threads into one file: write writes at the file position, so threads cannot share one file",
                "write with 4 threads in 1 MiB chunks: 2 MiB makes only 2 calls",
                "pwrite with 4 threads in 1 MiB chunks: 2 MiB makes only 2 calls",
            ]
        );
        let creation = Selection { methods: vec!["ftruncate".into()], threads: vec![2], ..selection };
        let (cases, dropped) = expand_and_drop(&creation);
        assert!(cases.is_empty());
        assert_eq!(dropped[0].describe(), "ftruncate with 2 threads: a file creation is one call");
    }

    #[test]
    fn parsing_states_and_durability() {
        assert_eq!("sparse".parse::<FileState>(), Ok(FileState::Sparse));
        assert!("dense".parse::<FileState>().unwrap_err().contains("'dense'"));
        assert_eq!("end".parse::<Durability>(), Ok(Durability::End));
        assert!("sometimes".parse::<Durability>().is_err());
        assert_eq!("file-per-thread".parse::<Layout>(), Ok(Layout::FilePerThread));
        assert!("one".parse::<Layout>().is_err());
    }
}
