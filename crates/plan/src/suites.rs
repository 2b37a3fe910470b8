//! The named suites: each is a union of parts, every part a cross product of options
//! (a [`Selection`]). The user's options override the same field in every part, and
//! `--size` scales every part's size by the same factor.

use serde::Serialize;

use crate::catalog;
use crate::durability::{Commit, SyncCall};
use crate::latency;
use crate::{Case, Dropped, Durability, FileState, Layout, Pages, Selection, expand, expand_and_drop};

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

pub struct Suite {
    pub name: &'static str,
    /// The size the parts are defined at; `--size` replaces it and scales every part.
    pub reference_size: u64,
    pub repeat: u32,
    pub warmup: u32,
    /// The `--target-ci` the suite applies unless the user fixes `--repeat` (percent of
    /// the mean), and its `--max-runs`.
    pub target_ci: Option<f64>,
    pub max_runs: u32,
    /// Race the cases for the Answer within this time, probe and calibration included
    /// (docs/racing.md), unless the user fixes the runs; None: no racing.
    pub budget: Option<std::time::Duration>,
    /// The budget instead, unless `--budget` is given, on a path with a device behind
    /// it where every case's first runs alone would take longer than `budget`: there
    /// `budget` would leave no round to race after them (docs/racing.md).
    pub slow_path_budget: Option<std::time::Duration>,
    /// On a path with a device behind it, unless `--budget` is given: the rounds after
    /// the first runs get at least this long, the budget stretched at run time when the
    /// first runs took longer than estimated (`rounds::scheduler::Racing::rounds_floor`).
    pub slow_path_rounds: Option<std::time::Duration>,
    pub parts: Vec<Selection>,
    /// Small-write latency cases run after the throughput cases (`writebench latency`'s
    /// measurement, shortened).
    pub latency: Option<latency::LatencyPlan>,
}

impl Suite {
    pub fn by_name(name: &str) -> Option<Suite> {
        match name {
            "quick" => Some(quick()),
            // "seed" is the full suite's old name.
            "full" | "seed" => Some(full()),
            _ => None,
        }
    }

    /// The combinations of methods, threads and layouts that yield no case, each once.
    pub fn dropped(&self) -> Vec<Dropped> {
        let mut all: Vec<Dropped> = Vec::new();
        for part in &self.parts {
            for entry in expand_and_drop(part).1 {
                if !all.contains(&entry) {
                    all.push(entry);
                }
            }
        }
        all
    }

    /// Every case of every part, without duplicates, in table order.
    pub fn cases(&self) -> Vec<Case> {
        let mut cases: Vec<Case> = Vec::new();
        for part in &self.parts {
            for case in expand(part) {
                if !cases.iter().any(|c| c.id == case.id) {
                    cases.push(case);
                }
            }
        }
        let position = catalog::position;
        // Stable: the runtimes of one combination stay side by side, in expansion order.
        cases.sort_by_key(|c| {
            let family = catalog::by_name(&c.method).map(|m| m.family);
            let shape = (c.bytes, c.chunk_bytes, c.iov, c.queue_depth, c.threads, c.files, c.pages);
            (c.state, family, position(&c.method), shape)
        });
        cases
    }

    /// Applies `--methods`: each part keeps the named methods it has, so parts for other
    /// methods drop out. A named method that no part has joins the parts that have a
    /// method of its family (`io_uring-fixed` runs where `io_uring` would).
    pub fn pick_methods(&mut self, names: &[String]) {
        let family = |name: &str| catalog::by_name(name).map(|m| m.family);
        for name in names {
            if self.parts.iter().any(|part| part.methods.contains(name)) {
                continue;
            }
            for part in &mut self.parts {
                if part.methods.iter().any(|m| family(m) == family(name)) {
                    part.methods.push(name.clone());
                }
            }
        }
        for part in &mut self.parts {
            part.methods.retain(|m| names.contains(m));
        }
    }

    /// Applies `--size`: every part keeps its proportion to the reference size.
    pub fn scale_to(&mut self, size: u64) {
        for part in &mut self.parts {
            part.size = ((part.size as u128 * size as u128) / self.reference_size as u128).max(1) as u64;
        }
        self.reference_size = size;
    }
}

/// The options as a suite applies them (docs/design.md §4), for the result file: each list is
/// the union over the suite's parts, in the order first met, after the user's options
/// replaced the parts' own; sizes in bytes. A list counts only the parts it applies
/// to (chunks: parts with a write method, as a creation case's "chunk" is its size;
/// iov: vectored methods; queue depths: queued methods; layouts: several threads).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Applied {
    pub methods: Vec<String>,
    pub runtimes: Vec<String>,
    pub states: Vec<FileState>,
    pub sizes: Vec<u64>,
    pub chunks: Vec<u64>,
    pub iov: Vec<u32>,
    pub threads: Vec<u32>,
    pub layouts: Vec<Layout>,
    pub queue_depths: Vec<u32>,
    pub durability: Vec<Durability>,
    /// The writers' buffers' pages (`--pages`).
    pub pages: Vec<Pages>,
    /// The latency section (`writebench latency`'s plan), null when there is none.
    pub latency: Option<serde_json::Value>,
}

impl Suite {
    pub fn applied(&self) -> Applied {
        fn union<T: Clone + PartialEq>(into: &mut Vec<T>, items: &[T]) {
            for item in items {
                if !into.contains(item) {
                    into.push(item.clone());
                }
            }
        }
        let has = |part: &Selection, test: &dyn Fn(&catalog::Method) -> bool| {
            part.methods.iter().filter_map(|name| catalog::by_name(name)).any(test)
        };
        let mut applied = Applied {
            methods: Vec::new(),
            runtimes: Vec::new(),
            states: Vec::new(),
            sizes: Vec::new(),
            chunks: Vec::new(),
            iov: Vec::new(),
            threads: Vec::new(),
            layouts: Vec::new(),
            queue_depths: Vec::new(),
            durability: Vec::new(),
            pages: Vec::new(),
            latency: self.latency.as_ref().map(latency::LatencyPlan::applied),
        };
        for part in self.parts.iter().filter(|part| !part.methods.is_empty()) {
            union(&mut applied.methods, &part.methods);
            union(&mut applied.runtimes, &part.runtimes);
            union(&mut applied.states, &part.states);
            union(&mut applied.sizes, &[part.size]);
            if has(part, &|m| m.creation.is_none()) {
                union(&mut applied.chunks, &part.chunks);
            }
            if has(part, &|m| m.vectored) {
                union(&mut applied.iov, &part.iov);
            }
            union(&mut applied.threads, &part.threads);
            if part.threads.iter().any(|&threads| threads > 1) {
                union(&mut applied.layouts, &part.layouts);
            }
            if has(part, &|m| m.queued) {
                union(&mut applied.queue_depths, &part.queue_depths);
            }
            union(&mut applied.durability, &part.durability);
            union(&mut applied.pages, &part.pages);
        }
        applied
    }
}

/// The file creation methods (open + call + close).
const CREATION: [&str; 3] = ["posix_fallocate", "fallocate", "ftruncate"];

fn part(methods: &[&str], states: &[FileState], chunks: &[u64], size: u64) -> Selection {
    Selection {
        size,
        methods: methods.iter().map(|m| m.to_string()).collect(),
        runtimes: vec![catalog::NATIVE.to_string()],
        states: states.to_vec(),
        chunks: chunks.to_vec(),
        iov: vec![1],
        durability: vec![Durability::End],
        threads: vec![1],
        // Both layouts wherever a method has them (threads > 1 only), as --layout says.
        layouts: Layout::ALL.to_vec(),
        queue_depths: vec![1],
        pages: vec![Pages::Ordinary],
        keep_oversized_chunks: false,
        size_in_id: false,
    }
}

/// The default: every plain and vectored method in every state at three chunk sizes,
/// then two threads, the mmap variants, io_uring at two depths, file creation, O_DIRECT
/// (also from huge pages) and O_DSYNC, and 1,000 small writes of 8 B, 512 B and 4 KiB per durability mode. About a minute on tmpfs
/// with two cores, files read back included.
pub fn quick() -> Suite {
    let size = 64 * MIB;
    let all_states = FileState::ALL;
    let two_states = [FileState::Empty, FileState::Prealloc];
    let mut core =
        part(&["writev", "pwritev", "fwrite", "write", "pwrite"], &all_states, &[4 * KIB, 64 * KIB, MIB], size);
    core.iov = vec![1, 128];
    let mut parallel = part(&["pwrite", "write"], &two_states, &[MIB], size);
    parallel.threads = vec![2];
    parallel.layouts = Layout::ALL.to_vec();
    // A map cannot extend a file: the mapped methods start from a sized one.
    let mut mapped = part(&["mmap", "mmap-maps", "mmap-fds"], &[FileState::Sparse, FileState::Prealloc], &[MIB], size);
    mapped.threads = vec![1, 2];
    let mut uring = part(&["io_uring"], &two_states, &[4 * KIB], size);
    uring.queue_depths = vec![1, 32];
    let creation = part(&CREATION, &[FileState::Empty], &[size], size);
    // What durability costs: O_DIRECT with an fsync at the end, and O_DSYNC, at one
    // chunk for the methods they apply to (fwrite and mmap refuse them).
    let mut durable = part(&["pwritev", "write", "pwrite", "io_uring"], &[FileState::Empty], &[MIB], size);
    durable.durability = vec![Durability::direct(Commit::End(SyncCall::Fsync)), Durability::of(Commit::ODsync)];
    // The same O_DIRECT writes from a buffer in huge pages: each call then reaches the
    // device in requests as large as it takes (plan::pages).
    let mut direct_huge = part(&["pwritev", "write", "pwrite", "io_uring"], &[FileState::Empty], &[MIB], size);
    direct_huge.durability = vec![Durability::direct(Commit::End(SyncCall::Fsync))];
    direct_huge.pages = vec![Pages::Huge];
    let parts = vec![core, parallel, mapped, uring, creation, durable, direct_huge];
    let latency = latency::LatencyPlan {
        count: 1000,
        // As many loops as the other cases have runs: `run` sets them from its schedule.
        loops: 5,
        // A counter or a flag (8 B), a log's record (512 B) and a database page (4 KiB):
        // small durable commits are answered at each, a log's appends apart from
        // rewrites in place (docs/answer.md).
        sizes: vec![8, 512, 4096],
        warmup: 100,
        patterns: vec![latency::Pattern::Overwrite0, latency::Pattern::Append],
        durability: vec![
            Durability::None,
            Durability::of(Commit::ODsync),
            Durability::of(Commit::Every(1, SyncCall::Fdatasync)),
        ],
        seed: crate::DEFAULT_SEED,
        runtimes: Vec::new(),
    };
    // Raced by default (budget below). With --budget none: repeat until the 95 % CI is
    // within ±5 % of the mean, 5 to 7 runs: most cases are quiet enough at 5 on tmpfs,
    // and at most 7 runs keeps the suite within its minute and a half.
    Suite {
        name: "quick",
        reference_size: size,
        repeat: 5,
        warmup: 1,
        target_ci: Some(5.0),
        max_runs: 7,
        // The answer in 30 seconds: every case gets a warm-up and two runs, and the
        // rounds after them go to the goals still open (docs/racing.md).
        budget: Some(std::time::Duration::from_secs(30)),
        // On this machine's disk the first runs take about 40 s: another 20 s of rounds
        // settle the goals whose differences are plain there (preallocating, 1.4x).
        slow_path_budget: Some(std::time::Duration::from_secs(60)),
        // The rounds the simulation's disk budget leaves (docs/racing.md: a minute, 35 s
        // of it gone before the rounds), which settle the goals at 5 % noise; in a slower
        // hour this disk's first runs took 50-55 s and left 5-10 s, which settled 1 or 2
        // of the 5 goals of 10.
        slow_path_rounds: Some(std::time::Duration::from_secs(25)),
        parts,
        latency: Some(latency),
    }
}

/// The creation-free sections of rapidgzip's benchmarkIOWrite results at 1 GiB (empty,
/// sparse and prealloc), and the IO Playground's Go matrix at 409,600,000 bytes. Chunks
/// above a scaled-down size are kept: the case then writes everything in one call, so
/// every row of the two write-ups has its case.
pub fn full() -> Suite {
    let states = [FileState::Empty, FileState::Sparse, FileState::Prealloc];
    let threads = vec![1, 2, 4, 8, 16];
    // "ftruncate + mmap write": the sparse state (a map cannot extend an empty file).
    let mut mapped = part(&["mmap", "mmap-maps", "mmap-fds"], &[FileState::Sparse, FileState::Prealloc], &[MIB], GIB);
    mapped.threads = threads.clone();
    let mut vectored = part(&["writev", "pwritev"], &states, &[KIB, 4 * KIB, 16 * KIB, 64 * KIB, MIB, 8 * MIB], GIB);
    vectored.iov = vec![128];
    let mut parallel = part(&["pwrite"], &states, &[MIB], GIB);
    parallel.threads = threads;
    let simple_chunks = [KIB, 4 * KIB, 8 * KIB, 16 * KIB, 64 * KIB, MIB, 16 * MIB, 64 * MIB, 512 * MIB, GIB];
    let simple = part(&["fwrite", "write"], &states, &simple_chunks, GIB);

    // The IO Playground: "blocking" is write(2) in a loop; the goroutines pwrite disjoint
    // ranges of one file; each io_uring goroutine has its own ring.
    let playground_size = 409_600_000;
    let blocking = part(&["write"], &[FileState::Empty], &[4 * KIB], playground_size);
    let mut pwrite = part(&["pwrite"], &[FileState::Empty], &[4 * KIB], playground_size);
    pwrite.threads = vec![1, 10];
    pwrite.layouts = vec![Layout::OneFile];
    let mut uring = part(&["io_uring"], &[FileState::Empty], &[4 * KIB], playground_size);
    uring.threads = vec![1, 10, 100];
    uring.layouts = vec![Layout::OneFile];
    uring.queue_depths = vec![1, 128];
    let mut parts = vec![mapped, vectored, parallel, simple, blocking, pwrite, uring];
    for part in &mut parts {
        part.keep_oversized_chunks = true;
        part.size_in_id = part.size != GIB;
    }
    // benchmarkIOWrite's file creation sizes (its 512 MiB to 4 GiB, and two smaller); the
    // size is already in these ids. --size scales them like every other part.
    for size in [128 * MIB, 256 * MIB, 512 * MIB, GIB, 2 * GIB, 4 * GIB] {
        parts.push(part(&CREATION, &[FileState::Empty], &[size], size));
    }
    // The write-ups' matrices are long already: exactly 10 runs, as they ran them.
    Suite {
        name: "full",
        reference_size: GIB,
        repeat: 10,
        warmup: 1,
        target_ci: None,
        max_runs: 10,
        budget: None,
        slow_path_budget: None,
        slow_path_rounds: None,
        parts,
        latency: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_covers_every_core_method_in_every_state_and_the_new_families() {
        let cases = quick().cases();
        for method in ["write", "pwrite", "writev", "pwritev", "fwrite"] {
            for state in FileState::ALL {
                assert!(cases.iter().any(|c| c.method == method && c.state == state), "{method} {state:?}");
            }
        }
        assert!(cases.iter().any(|c| c.id == "pwrite empty 1MiB t2 end"));
        assert!(cases.iter().any(|c| c.id == "write prealloc 1MiB t2 f2 end"));
        assert!(cases.iter().any(|c| c.id == "pwrite empty 1MiB t1 direct+end"));
        // Beside it and its O_DSYNC twin, the same from huge pages: only O_DIRECT cases
        // have them.
        let at = cases.iter().position(|c| c.id == "pwrite empty 1MiB t1 direct+end").unwrap();
        assert_eq!(cases[at + 1].id, "pwrite empty 1MiB t1 odsync");
        assert_eq!(cases[at + 2].id, "pwrite empty 1MiB t1 direct+end huge-pages");
        let huge: Vec<_> = cases.iter().filter(|c| c.pages == Pages::Huge).collect();
        assert_eq!(huge.len(), 4);
        assert!(huge.iter().all(|c| c.durability.direct), "{huge:?}");
        assert!(cases.iter().any(|c| c.id == "io_uring empty 1MiB qd1 t1 odsync"));
        assert!(cases.iter().any(|c| c.id == "posix_fallocate empty 64MiB t1 end"));
        let ids: std::collections::HashSet<_> = cases.iter().map(|c| &c.id).collect();
        assert_eq!(ids.len(), cases.len());
    }

    #[test]
    fn size_scales_every_part_and_tags_the_odd_sized_ones() {
        let mut suite = full();
        suite.scale_to(64 * MIB);
        let cases = suite.cases();
        assert!(cases.iter().any(|c| c.id == "write empty 1GiB t1 end" && c.bytes == 64 * MIB));
        // 409,600,000 x 64 MiB / 1 GiB = 25,600,000 bytes, tagged so ids stay unique.
        let blocking = cases.iter().find(|c| c.bytes == 25_600_000 && c.method == "write").unwrap();
        assert_eq!(blocking.id, "write empty 4KiB t1 end 24.41MiB");
        assert!(cases.iter().any(|c| c.id == "write empty 4KiB t1 end" && c.bytes == 64 * MIB));
    }

    #[test]
    fn picking_methods_keeps_the_parts_that_have_them_and_places_the_others_by_family() {
        let mut suite = quick();
        suite.pick_methods(&["pwrite".to_string(), "io_uring-fixed".to_string()]);
        let cases = suite.cases();
        assert!(cases.iter().all(|c| c.method == "pwrite" || c.method == "io_uring-fixed"));
        assert!(cases.iter().any(|c| c.id == "pwrite empty 1MiB t2 f2 end"), "pwrite's parallel part stays");
        assert!(cases.iter().any(|c| c.id == "io_uring-fixed prealloc 4KiB qd32 t1 end"), "placed with io_uring");
        // It joins io_uring's parts: 4 KiB at two depths, and the 1 MiB durability part.
        let durable = |c: &Case| c.chunk_bytes == MIB && c.durability != Durability::End;
        assert!(!cases.iter().any(|c| c.method == "io_uring-fixed" && c.chunk_bytes != 4096 && !durable(c)));
    }

    #[test]
    fn every_method_a_suite_names_is_registered() {
        for suite in [quick(), full()] {
            for part in &suite.parts {
                for name in &part.methods {
                    assert!(catalog::by_name(name).is_some(), "{} names {name}", suite.name);
                }
            }
        }
    }

    #[test]
    fn unknown_suites_are_none() {
        assert!(Suite::by_name("quick").is_some());
        assert!(Suite::by_name("everything").is_none());
    }
}
