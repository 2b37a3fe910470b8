//! `writebench run`: its options, and their validation into a suite, settings and a
//! schedule. Every bad input becomes one line and exit 2.
//!
//! Past 600 lines on purpose: one clap struct whose every option carries its help text,
//! and the one validation that reads them together; split, each half would need the other.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::cli::export::{ExportArgs, RunExports};
use crate::cli::parse::{MAX_CHUNK, MAX_IOV, MAX_QUEUE_DEPTH, MAX_THREADS};
use crate::cli::parse::{check_paths, methods_help, override_with, parse_count, parse_list, parse_runtimes};
use crate::cli::usage::UsageError;
use crate::executors::case_runs::RunSettings;
use crate::plan::DEFAULT_SEED;
use crate::plan::catalog;
use crate::plan::durability::parse_mode;
use crate::plan::suites::Suite;
use crate::plan::units::{format_size, parse_size};
use crate::plan::{DropReason, FileState, Layout, Pages};
use crate::rounds::scheduler::{Order, Racing, Schedule};
use crate::stats::significance::EQUIVALENCE;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SuiteName {
    /// Every plain and vectored method in every file state at 4 KiB, 64 KiB and 1 MiB
    /// chunks, 2 threads, the mmap variants, io_uring at depths 1 and 32 (raced within 30 s).
    Quick,
    /// The full matrix: rapidgzip's benchmarkIOWrite matrix at 1 GiB (10 runs) and the IO
    /// Playground's at 409,600,000 bytes (hours on a slow disk: it says how long before it
    /// starts; --size scales it).
    // `seed`: its old name, still accepted, not advertised.
    #[value(alias = "seed")]
    Full,
}

impl SuiteName {
    fn name(self) -> &'static str {
        match self {
            SuiteName::Quick => "quick",
            SuiteName::Full => "full",
        }
    }
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Directory to measure. writebench creates a private scratch directory inside it
    /// and removes it at the end; nothing else there is touched.
    #[arg(default_value = ".")]
    pub path: PathBuf,

    /// Which set of cases to start from; the options below narrow or override it.
    #[arg(long, value_enum, default_value_t = SuiteName::Quick)]
    pub suite: SuiteName,

    /// Bytes written per run, e.g. 256MiB, 1GiB, 400MB [quick: 64MiB].
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,

    // The help lists the method catalogue itself (`methods_help`), so a new method
    // cannot be missing from it.
    #[arg(long, value_name = "LIST", help = methods_help())]
    pub methods: Option<String>,

    /// Runtimes, comma-separated: native (writebench's own calls), c, python, go, zig,
    /// java, node. Each method is also written by each named runtime that has it, side
    /// by side; the methods a runtime alone has (python's fileio, go's bufio, java's
    /// channel, node's writeSync...) join when --methods is not given.
    /// A runtime whose toolchain is missing gives unsupported cases [default: native].
    #[arg(long, value_name = "LIST")]
    pub runtimes: Option<String>,

    /// File states before the run: empty, sparse, prealloc, overwrite [default: all].
    #[arg(long, value_name = "LIST")]
    pub states: Option<String>,

    /// Bytes per call (per iovec for writev/pwritev), 1B to 1GiB [quick: 4KiB,64KiB,1MiB].
    #[arg(long, value_name = "LIST")]
    pub chunks: Option<String>,

    /// iovecs per writev/pwritev call, 1 to 1024 [quick: 1,128].
    #[arg(long, value_name = "LIST")]
    pub iov: Option<String>,

    /// Writer threads per case, e.g. 1,2,4 [quick: 1].
    #[arg(long, value_name = "LIST")]
    pub threads: Option<String>,

    /// With several threads: one-file (disjoint ranges; offset methods only) and/or
    /// file-per-thread (the size split over one file per thread) [default: both, each
    /// where the method has it].
    #[arg(long, value_name = "LIST")]
    pub layout: Option<String>,

    /// Requests in flight per io_uring ring, 1 to 4096.
    #[arg(long, value_name = "LIST")]
    pub qd: Option<String>,

    /// The pages of the buffer the writers write from: ordinary (as a program's own
    /// allocation gets them) and/or huge (2 MiB-aligned, madvise MADV_HUGEPAGE). An
    /// O_DIRECT call reaches the device in requests built from them, one piece a page
    /// [quick: ordinary, and huge for its O_DIRECT cases].
    #[arg(long, value_name = "LIST")]
    pub pages: Option<String>,

    /// When the data is made durable: none (page cache only); end / end-fdatasync (one
    /// fsync / fdatasync after the last write, timed apart as the sync span; with a file
    /// per thread, each thread syncs its own file); every:N / every-fdatasync:N (fsync /
    /// fdatasync after every N calls of the case, counted across all its threads, inside
    /// the write span, and once more for the calls left at the end);
    /// osync / odsync (opened with O_SYNC / O_DSYNC); rwf-sync / rwf-dsync (RWF_SYNC /
    /// RWF_DSYNC on every pwritev2 call: the pwritev2 methods only); writebehind:SIZE
    /// (sync_file_range starts each SIZE window's writeback and waits for the one before,
    /// then one fdatasync: write, pwrite, writev, pwritev, pwritev2); direct (O_DIRECT),
    /// alone or as direct+MODE, e.g. direct+end, direct+odsync [default: end].
    #[arg(long, value_name = "LIST")]
    pub durability: Option<String>,

    /// Measured runs per case, exactly (unless --target-ci is given too, when it is the
    /// least); the cases are then not raced [quick: raced, see --budget; full: 10].
    #[arg(long, value_name = "N")]
    pub repeat: Option<u32>,

    /// Race the cases for the Answer's goals within this time, probe and calibration
    /// included (30s, 2m, 1m30s): every case gets a warm-up and --min-runs runs, then the
    /// rounds go only to cases still in contention for an open goal, up to --max-runs,
    /// then what is left to observations not yet settled, and stop when nothing is open
    /// or the next round would pass the budget. none:
    /// no racing, the suite's fixed runs or CI target [quick: 30s, or 1m on a device
    /// whose first runs alone take over two thirds of that, and on a device at least 25s
    /// of rounds after the first runs however long they took; full: none].
    #[arg(long, value_name = "DURATION|none")]
    pub budget: Option<String>,

    /// Discarded runs per case before the measured ones, interleaved like them
    /// [default: 1].
    #[arg(long, value_name = "N")]
    pub warmup: Option<u32>,

    /// Repeat each case until the 95 % confidence interval of its mean time is within
    /// ±PCT % of the mean (for the durable time too where the case syncs), between
    /// --min-runs and --max-runs runs, judged at the larger of the case's own noise and
    /// the noise typical of the run's cases (a case whose few runs agreed by chance does
    /// not stop on them) [quick with --budget none: 5].
    #[arg(long, value_name = "PCT")]
    pub target_ci: Option<f64>,

    /// What "tied" means in the Answer: two strategies are tied only when the whole 95 %
    /// interval of their factor lies within ±PCT %; a difference neither shown nor ruled
    /// out is "undecided". The observations call no effect one that lies within it.
    #[arg(long, value_name = "PCT", default_value_t = 100.0 * EQUIVALENCE)]
    pub equivalence: f64,

    /// With a CI target: measured runs per case at least [default: --repeat, quick: 5].
    /// When racing: the runs every case gets before any leaves the race [2].
    #[arg(long, value_name = "N")]
    pub min_runs: Option<u32>,

    /// With a CI target: measured runs per case at most [default: 30, quick: 7]. When
    /// racing: the most runs a case still in contention gets [20].
    #[arg(long, value_name = "N")]
    pub max_runs: Option<u32>,

    /// interleaved: round after round, every case once per round in an order shuffled
    /// from --seed, so that the machine's drift spreads over all cases; grouped: all
    /// runs of a case back to back, case after case.
    #[arg(long, value_enum, default_value_t = OrderName::Interleaved)]
    pub order: OrderName,

    /// Seed of the pseudo-random data written.
    #[arg(long, default_value_t = DEFAULT_SEED, value_name = "N")]
    pub seed: u64,

    #[command(flatten)]
    pub export: ExportArgs<RunExports>,

    /// Print only the Answer (each goal in three lines, and the first observations).
    #[arg(long)]
    pub quiet: bool,

    /// Print every case's figures before the Answer (by default only the Answer shows;
    /// the exports always hold every case).
    #[arg(long, conflicts_with = "quiet")]
    pub table: bool,

    /// Under each goal of the Answer, the rule behind its pick: what it was compared
    /// with, the race's state, and what its figure leaves out.
    #[arg(long)]
    pub explain: bool,

    /// The table on stdout. compact: one line per case within 100 columns (median, its
    /// interval, durable figure, share of the ceiling); classic: ( min: a, mean ± sd,
    /// max: b ) as in rapidgzip's benchmarkIOWrite results, as wide as it needs.
    #[arg(long, value_enum, default_value_t = StyleName::Compact)]
    pub style: StyleName,

    /// After each run's timed span, read the files back and compare them with the data
    /// written; a difference fails the case with its offset [quick: on].
    #[arg(long, conflicts_with = "no_verify")]
    pub verify: bool,

    /// Do not read the files back (the quick suite verifies by default).
    #[arg(long)]
    pub no_verify: bool,

    /// Stonewalling (IOR's -D): every writer, each thread of each MPI rank, stops
    /// issuing calls this long after the run's start (0.5s, 2s); the figure is what all
    /// of them wrote by then over the span, and each writer's bytes are recorded, so
    /// a straggler shows as fewer bytes instead of a longer run. --size is the most a
    /// run writes. Native methods but mmap-populate; no --verify (docs/scale.md).
    #[arg(long, value_name = "DURATION", conflicts_with = "verify", value_parser = crate::plan::units::parse_duration)]
    pub stonewall: Option<std::time::Duration>,

    /// Test aid: before verifying, flip the byte at OFFSET of each run's file FILE (the
    /// first if left out), or cut its last byte (short), or add one (long).
    #[arg(long, hide = true, value_name = "[FILE:]OFFSET|short|long", requires = "verify",
          value_parser = crate::measure::verify::Corruption::parse)]
    pub corrupt_for_test: Option<crate::measure::verify::Corruption>,

    /// Test aid: keep the scratch directory and every run's files.
    #[arg(long, hide = true)]
    pub keep: bool,

    /// No free-space checks: the run is not refused and no case is skipped, so a case
    /// that does not fit meets the filesystem's own error (ENOSPC).
    #[arg(long)]
    pub no_space_check: bool,

    /// Drop each prepared file's pages from the page cache before its run
    /// (posix_fadvise DONTNEED, after the file is synced, untimed): without it, the
    /// overwrite state starts cache-warm, its pages still in memory from preparing it.
    #[arg(long)]
    pub drop_cache: bool,

    /// Where the data written comes from: cached (each writer reuses an 8 MiB buffer,
    /// in the CPU caches as data just produced is) or memory (streamed from a buffer as
    /// large as the run, up to 1 GiB, out of the caches when the run starts; native
    /// methods only) [cached].
    #[arg(long, value_name = "cached|memory", default_value = "cached")]
    pub source: crate::plan::data_source::DataSource,

    /// No short calibration before the cases (about a second): the table then has no
    /// "% of ceiling" and no figure is checked against this machine's limits.
    #[arg(long)]
    pub no_calibrate: bool,

    /// Measure the calibration again, even where one of this machine and path from the
    /// last hour is kept (it is reused otherwise, and the output says how old it is).
    #[arg(long, conflicts_with = "no_calibrate")]
    pub recalibrate: bool,

    /// After the cases, check the durable modes measured against simulated power losses
    /// on a new filesystem of PATH's type (ext4, xfs, btrfs) with PATH's mount options:
    /// the Answer's durable recommendations then say what it found (crash.md; needs root).
    #[arg(long)]
    pub crash_check: bool,

    #[command(flatten)]
    pub mpi: MpiArgs,
}

/// `run --mpi`'s options (the MPI plan made of them is `cli::mpi`).
#[derive(Debug, Clone, Args)]
pub struct MpiArgs {
    /// Run as one rank of an MPI job: `mpirun -np N writebench run --mpi PATH ...`.
    /// Every rank writes its share of each case at once (--size is what all ranks write
    /// together); --layout then takes shared-file (ranks write disjoint ranges of one
    /// file) and/or file-per-rank, and --threads is per rank. Rank 0 prints and writes
    /// the result. Needs a build with `--features mpi`.
    #[arg(long)]
    pub mpi: bool,

    /// With --mpi: PATH is local to each node, so each rank makes its own scratch
    /// directory in it (file-per-rank only). Without it, PATH must be one directory
    /// every rank sees (a parallel or network filesystem, or one node's).
    #[arg(long)]
    pub mpi_local: bool,
}

/// The thread layout inside a rank under --mpi: its threads share its file.
pub const THREAD_LAYOUT: Layout = Layout::OneFile;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StyleName {
    Compact,
    Classic,
}

impl StyleName {
    pub fn style(self) -> crate::export::table::Style {
        match self {
            StyleName::Compact => crate::export::table::Style::Compact,
            StyleName::Classic => crate::export::table::Style::Classic,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OrderName {
    Interleaved,
    Grouped,
}

/// Most runs per case `--repeat`, `--min-runs` and `--max-runs` accept.
pub const MAX_RUNS: u32 = 1_000_000;

/// `--max-runs` when `--target-ci` is given without it.
pub const DEFAULT_MAX_RUNS: u32 = 30;

impl RunArgs {
    /// `--equivalence` as a fraction: the one place the percentage given becomes the
    /// margin δ the race and the Answer use.
    pub fn margin(&self) -> f64 {
        self.equivalence / 100.0
    }

    /// Applies the options to every part of the suite and checks everything that can be
    /// checked before any file is written. The plan may come out empty (e.g. `--methods
    /// mmap --threads 3` in a suite without mmap); the caller says so.
    pub fn suite(&self) -> Result<Suite, UsageError> {
        let mut suite = Suite::by_name(self.suite.name()).expect("every suite name has a suite");
        let usage = |message: String| UsageError(message);
        if self.mpi.mpi_local && !self.mpi.mpi {
            return Err(usage(
                "--mpi-local is an option of --mpi (mpirun -np N writebench run --mpi --mpi-local PATH)".into(),
            ));
        }
        if let Some(size) = &self.size {
            let size = parse_size(size).map_err(|e| usage(format!("--size: {e}")))?;
            if size == 0 {
                return Err(usage("--size: must be at least 1 byte".into()));
            }
            suite.scale_to(size);
        }
        let methods = self.methods.as_deref().map(|list| {
            parse_list(list, "--methods", |name| {
                catalog::by_name(name)
                    .map(|m| m.name.to_string())
                    .ok_or_else(|| format!("unknown method '{name}' (known: {})", catalog::names().join(", ")))
            })
        });
        let runtimes = self.runtimes.as_deref().map(parse_runtimes);
        let states = self.states.as_deref().map(|list| parse_list(list, "--states", |s| s.parse::<FileState>()));
        let durability = self.durability.as_deref().map(|list| parse_list(list, "--durability", parse_mode));
        let count = |option: &'static str, high: u32| {
            move |list: &str| parse_list(list, option, |s| parse_count(s, 1, high as u64).map(|n| n as u32))
        };
        let iov = self.iov.as_deref().map(count("--iov", MAX_IOV));
        let threads = self.threads.as_deref().map(count("--threads", MAX_THREADS));
        let layouts = if self.mpi.mpi {
            // Under --mpi, --layout names rank layouts (cli::mpi); a rank's threads share its file.
            Some(Ok(vec![THREAD_LAYOUT]))
        } else {
            self.layout.as_deref().map(|list| parse_list(list, "--layout", |s| s.parse::<Layout>()))
        };
        let depths = self.qd.as_deref().map(count("--qd", MAX_QUEUE_DEPTH));
        let pages = self.pages.as_deref().map(|list| parse_list(list, "--pages", |s| s.parse::<Pages>()));
        let chunks = self.chunks.as_deref().map(|list| {
            parse_list(list, "--chunks", |s| {
                let chunk = parse_size(s)?;
                if chunk == 0 || chunk > MAX_CHUNK {
                    return Err(format!("chunk '{s}' is out of range (1B to 1GiB)"));
                }
                Ok(chunk)
            })
        });
        let methods = methods.transpose()?;
        let runtimes = runtimes.transpose()?;
        let states = states.transpose()?;
        let durability = durability.transpose()?;
        let iov = iov.transpose()?;
        let threads = threads.transpose()?;
        let layouts = layouts.transpose()?;
        let depths = depths.transpose()?;
        let pages = pages.transpose()?;
        let chunks = chunks.transpose()?;
        if let Some(chunks) = &chunks {
            if let Some(&too_big) = chunks.iter().find(|&&chunk| chunk > suite.reference_size) {
                return Err(usage(format!(
                    "--chunks: a chunk of {} is larger than --size {}",
                    format_size(too_big),
                    format_size(suite.reference_size)
                )));
            }
        }
        if let Some(methods) = &methods {
            suite.pick_methods(methods);
            // Naming methods asks for those methods' throughput: no latency section.
            suite.latency = None;
        }
        if self.mpi.mpi {
            // Latency is one process's question: no latency section under --mpi.
            suite.latency = None;
        }
        if let Some(latency) = &mut suite.latency {
            latency.seed = self.seed;
            latency.runtimes = runtimes.clone().unwrap_or_default();
        }
        if let (Some(runtimes), None) = (&runtimes, &methods) {
            // The runtimes' own methods (no native twin) join where plain write runs.
            let own: Vec<String> = catalog::own()
                .iter()
                .map(|method| method.name.to_string())
                .filter(|name| runtimes.iter().any(|runtime| catalog::find(runtime, name).is_some()))
                .collect();
            for part in suite.parts.iter_mut().filter(|part| part.methods.iter().any(|m| m == "write")) {
                part.methods.extend(own.iter().cloned());
            }
        }
        for part in &mut suite.parts {
            override_with(&mut part.runtimes, &runtimes);
            override_with(&mut part.states, &states);
            override_with(&mut part.durability, &durability);
            override_with(&mut part.iov, &iov);
            override_with(&mut part.threads, &threads);
            override_with(&mut part.layouts, &layouts);
            override_with(&mut part.queue_depths, &depths);
            override_with(&mut part.pages, &pages);
            if pages.is_none() && durability.is_some() && part.pages == [Pages::Huge] {
                // The suite's huge pages are for its own O_DIRECT modes (plan::pages): the
                // user's modes replace them, and --pages gives any mode huge pages.
                part.methods.clear();
            }
            override_with(&mut part.chunks, &chunks);
        }
        if let Some(repeat) = self.repeat {
            if !(1..=MAX_RUNS).contains(&repeat) {
                return Err(usage("--repeat: must be between 1 and 1000000".into()));
            }
            suite.repeat = repeat;
        }
        if let Some(warmup) = self.warmup {
            if warmup > 1_000_000 {
                return Err(usage("--warmup: must be at most 1000000".into()));
            }
            suite.warmup = warmup;
        }
        Ok(suite)
    }

    pub fn settings(&self, suite: &Suite) -> RunSettings {
        // A stonewalled run writes an unknown share of each part: the quick suite's
        // own read-back is off under it (and --verify refused with it).
        let verify = self.verify || (suite.name == "quick" && !self.no_verify && self.stonewall.is_none());
        RunSettings {
            repeat: suite.repeat,
            warmup: suite.warmup,
            seed: self.seed,
            keep_files: self.keep,
            // The quick suite's own check reads each case's first measured run back;
            // --verify reads every run back.
            verify: verify
                .then_some(crate::measure::verify::Verify { corrupt: self.corrupt_for_test, first_only: !self.verify }),
            space_check: !self.no_space_check,
            drop_cache: self.drop_cache,
            ranks: None,
            stonewall: self.stonewall,
            source: self.source,
        }
    }

    /// The combinations the user's own --threads or --layout asked for that yield no
    /// case, one line each (a suite's own combinations that do not apply stay silent:
    /// "both layouts" means both where the method has them).
    pub fn dropped_notes(&self, suite: &Suite) -> Vec<String> {
        suite
            .dropped()
            .iter()
            .filter(|dropped| match dropped.reason {
                DropReason::Layout(_) => self.layout.is_some(),
                DropReason::TooFewChunks { .. } => self.threads.is_some(),
            })
            .map(|dropped| dropped.describe())
            .collect()
    }

    /// How many runs each case gets, and in which order. An explicit `--repeat` fixes
    /// the count unless `--target-ci` is given too; otherwise a suite with a budget races
    /// (unless `--budget none`), and one without applies its target.
    pub fn schedule(&self, suite: &Suite) -> Result<Schedule, UsageError> {
        let usage = |message: &str| Err(UsageError(message.to_string()));
        // Also refuses NaN.
        if !(self.equivalence > 0.0 && self.equivalence <= 100.0) {
            return usage("--equivalence: must be a percentage above 0 and at most 100");
        }
        if let Some(pct) = self.target_ci {
            // Also refuses NaN.
            if !(pct > 0.0 && pct <= 100.0) {
                return usage("--target-ci: must be a percentage above 0 and at most 100");
            }
        }
        let order = match self.order {
            OrderName::Interleaved => Order::Interleaved,
            OrderName::Grouped => Order::Grouped,
        };
        if let Some(budget) = self.budget()? {
            return self.racing(budget, suite, order);
        }
        let target_ci = self.target_ci.or(if self.repeat.is_some() { None } else { suite.target_ci });
        let Some(pct) = target_ci else {
            if self.min_runs.is_some() || self.max_runs.is_some() {
                return usage("--min-runs and --max-runs need --target-ci (--repeat alone fixes the number of runs)");
            }
            return Ok(Schedule::fixed(suite.repeat, suite.warmup, order, self.seed));
        };
        let min_runs = self.min_runs.unwrap_or(suite.repeat);
        let default_max = if self.target_ci.is_some() { DEFAULT_MAX_RUNS } else { suite.max_runs };
        let max_runs = self.max_runs.unwrap_or(default_max.max(min_runs));
        check_runs(min_runs, max_runs)?;
        Ok(Schedule {
            warmup: suite.warmup,
            min_runs,
            max_runs,
            target_ci: Some(pct),
            order,
            seed: self.seed,
            race: None,
        })
    }

    /// The budget the cases race within: `--budget`, else the suite's unless the runs
    /// are fixed some other way (`--repeat`, `--target-ci`, `--order grouped`, `--mpi`).
    /// An explicit budget beside one of those is refused.
    pub fn budget(&self) -> Result<Option<std::time::Duration>, UsageError> {
        let fixed = [
            (self.repeat.is_some(), "--repeat fixes the runs of every case"),
            (self.target_ci.is_some(), "--target-ci repeats every case to its target"),
            (self.order == OrderName::Grouped, "--order grouped runs each case's runs back to back"),
            (self.mpi.mpi, "--mpi ranks run the same rounds, which each rank's own judgement would break"),
        ];
        let given = match self.budget.as_deref().map(str::trim) {
            Some("none") => return Ok(None),
            Some(text) => {
                Some(crate::plan::units::parse_duration(text).map_err(|e| UsageError(format!("--budget: {e}")))?)
            }
            None => None,
        };
        match (given, fixed.iter().find(|(set, _)| *set)) {
            (Some(_), Some((_, why))) => {
                Err(UsageError(format!("--budget races the cases, but {why}: give one of them (or --budget none)")))
            }
            (Some(budget), None) => Ok(Some(budget)),
            (None, Some(_)) => Ok(None),
            (None, None) => Ok(suite_budget(self.suite)),
        }
    }

    fn racing(&self, budget: std::time::Duration, suite: &Suite, order: Order) -> Result<Schedule, UsageError> {
        let min_runs = self.min_runs.unwrap_or(crate::rounds::race::MIN_RUNS);
        let max_runs = self.max_runs.unwrap_or(crate::rounds::race::MAX_RUNS.max(min_runs));
        if min_runs < 2 {
            return Err(UsageError("--min-runs: a race needs 2 runs of each case at least (an interval)".into()));
        }
        check_runs(min_runs, max_runs)?;
        let race = Racing::from_now(Some(budget));
        Ok(Schedule {
            warmup: suite.warmup,
            min_runs,
            max_runs,
            target_ci: None,
            order,
            seed: self.seed,
            race: Some(race),
        })
    }

    /// PATH must be an existing directory; export files must be creatable.
    pub fn check_paths(&self) -> Result<(), UsageError> {
        check_paths(&self.path, &self.export)
    }
}

/// The budget a suite races within unless told otherwise.
fn suite_budget(name: SuiteName) -> Option<std::time::Duration> {
    Suite::by_name(name.name()).and_then(|suite| suite.budget)
}

fn check_runs(min_runs: u32, max_runs: u32) -> Result<(), UsageError> {
    if !(1..=MAX_RUNS).contains(&min_runs) {
        return Err(UsageError("--min-runs: must be between 1 and 1000000".into()));
    }
    if !(2..=MAX_RUNS).contains(&max_runs) {
        return Err(UsageError(
            "--max-runs: must be between 2 (a confidence interval needs two runs) and 1000000".into(),
        ));
    }
    if min_runs > max_runs {
        return Err(UsageError(format!("--min-runs {min_runs} is more than --max-runs {max_runs}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use crate::plan::{Durability, FileState};
    use clap::Parser;

    fn args(extra: &[&str]) -> RunArgs {
        let mut argv = vec!["writebench", "run"];
        argv.extend_from_slice(extra);
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Run(args) => args,
            Command::Clean(_)
            | Command::Latency(_)
            | Command::Report(_)
            | Command::Compare(_)
            | Command::Calibrate(_)
            | Command::Lab(_)
            | Command::Crash(_)
            | Command::Trace(_)
            | Command::TraceCrashReplay(_)
            | Command::Completions(_)
            | Command::Man => {
                unreachable!("the argv says run")
            }
        }
    }

    #[test]
    fn options_narrow_the_quick_suite() {
        let suite =
            args(&["--methods", "pwrite,write", "--states", "prealloc", "--chunks", "1B,4KiB", "--size", "1MiB"])
                .suite()
                .unwrap();
        // Parts of other methods (mmap, io_uring) drop out; the others keep their order.
        assert!(suite.parts.iter().all(|p| p.methods.iter().all(|m| m == "pwrite" || m == "write")));
        assert!(suite.parts.iter().any(|p| p.methods == vec!["fwrite", "write", "pwrite"][1..]));
        for part in &suite.parts {
            assert_eq!(part.states, vec![FileState::Prealloc]);
            assert_eq!(part.chunks, vec![1, 4096]);
            assert_eq!(part.size, 1 << 20);
            // The quick suite's durability part keeps its own modes, its part in huge pages
            // its O_DIRECT one; the others keep end.
            let direct_end = "direct+end".parse::<Durability>().unwrap();
            assert!(
                [vec![Durability::End], vec![direct_end]].contains(&part.durability) || part.durability.len() == 2,
                "{:?}",
                part.durability
            );
        }
        assert_eq!((suite.repeat, suite.warmup), (5, 1));
        let cases = suite.cases();
        assert!(cases.iter().all(|c| c.state == FileState::Prealloc && (c.method == "pwrite" || c.method == "write")));
        assert!(cases.iter().any(|c| c.id == "pwrite prealloc 4KiB t1 end"));
        assert!(cases.iter().any(|c| c.id == "pwrite prealloc 1B t1 end"));
    }

    #[test]
    fn bad_values_are_one_line_errors_naming_the_option() {
        for (extra, expected) in [
            (&["--size", "12XB"][..], "--size"),
            (&["--size", "0"][..], "--size"),
            (&["--methods", "mmap-private"][..], "unknown method 'mmap-private'"),
            (&["--states", "dense"][..], "unknown state"),
            (&["--chunks", "0"][..], "out of range"),
            (&["--chunks", "2GiB"][..], "out of range"),
            (&["--chunks", "1MiB", "--size", "4KiB"][..], "larger than --size"),
            (&["--iov", "1025"][..], "--iov"),
            (&["--iov", "x"][..], "not a whole number"),
            (&["--durability", "sometimes"][..], "unknown durability"),
            (&["--methods", "write,,pwrite"][..], "empty item"),
            (&["--repeat", "0"][..], "--repeat"),
            (&["--threads", "0"][..], "--threads"),
            (&["--threads", "2000"][..], "out of range"),
            (&["--layout", "striped"][..], "unknown layout"),
            (&["--qd", "0"][..], "--qd"),
            (&["--qd", "99999"][..], "out of range"),
            (&["--pages", "2MiB"][..], "unknown pages '2MiB' (known: ordinary, huge)"),
        ] {
            let error = args(extra).suite().err().expect(expected).0;
            assert!(error.contains(expected), "{extra:?}: {error}");
            assert!(!error.contains('\n'));
        }
    }
}
