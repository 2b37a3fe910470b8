//! What analysis draws from a case's runs for the notes beside its figures: the
//! statistics of the runs that the notes say (the interval's width, medians of shares,
//! the median run's device traffic), so that the exporters lay them out in words
//! without computing one (docs/design.md §5). Drawn by `analysis::case_facts`, never
//! saved: a result read back has them drawn again from its runs.

use context::device::DeviceIo;

/// A case's facts; every field None or empty where its runs give nothing to say.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CaseFacts {
    /// The 95 % CI's half-width over the mean time, relative (the write + sync time
    /// where the case syncs); None with fewer than two runs.
    pub ci_relative: Option<f64>,
    /// The figures of the case as a new file, its preparation counted (the Answer's
    /// new-file goals), beside the writes' alone.
    pub new_file: Option<NewFile>,
    /// Mean over runs of (slowest thread − fastest) / slowest, where a run had threads.
    pub thread_spread: Option<f64>,
    /// A stonewalled case: how much it wrote before the wall, and how evenly.
    pub stonewall: Option<Stonewall>,
    /// The median run's share of its time on the CPU, where every run's was read.
    pub cpu_share: Option<f64>,
    /// The median run's CPU seconds of an io_uring SQPOLL thread.
    pub sqpoll_seconds: Option<f64>,
    /// Runs that started with earlier work's dirty pages waiting, and the most any found.
    pub dirty_at_start: Option<(usize, u64)>,
    /// Runs during which another process kept a CPU busy, and the largest share seen.
    pub others_busy: Option<(usize, f64)>,
    /// The device's traffic in the median run by bytes written.
    pub device: Option<DeviceIo>,
    /// The median run's share of the file the page cache kept once durable.
    pub resident_share: Option<f64>,
    /// An `--mpi` case: each rank's medians over the runs, and the spreads.
    pub ranks: Option<RankFigures>,
}

/// Mean rates in bytes/s, as a new file (its create, ftruncate or fallocate counted)
/// and of the writes alone; durable both, where the case syncs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewFile {
    pub new_file: f64,
    pub written: f64,
    /// (as a new file, the writes alone), durable.
    pub durable: Option<(f64, f64)>,
}

/// A stonewalled case's writing before the wall.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stonewall {
    /// The median run's share of the case's bytes written.
    pub written_share: f64,
    /// The bytes a run was to write.
    pub of_bytes: u64,
    /// How far apart the writers' bytes were, where a run had more than one writer.
    pub apart: Option<Apart>,
    /// The most writers of a run that finished their part before the wall, and how
    /// many writers a run had.
    pub finished: u32,
    pub writers: usize,
}

/// The median run's ratio of the most bytes a writer wrote to the least, and which
/// writer (rank or thread, by index) wrote the least in the run nearest that median.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Apart {
    pub ratio: f64,
    /// The writers were MPI ranks, not threads.
    pub ranks: bool,
    pub least: Option<usize>,
}

/// One rank's medians.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankFigure {
    pub bytes_per_second: f64,
    /// The bytes it wrote (under `--stonewall`, what it wrote by the wall).
    pub bytes: f64,
    pub start: f64,
    pub end: f64,
}

/// A case's per-rank medians, and the medians of the spreads across ranks.
#[derive(Debug, Clone, PartialEq)]
pub struct RankFigures {
    pub ranks: Vec<RankFigure>,
    /// Latest start less earliest start: what the barrier's exit skew (and the ranks'
    /// wake-up) put in front of the slowest starter. It is inside the job's figure.
    pub start_spread: f64,
    pub end_spread: f64,
    /// The job's write span (earliest start to latest end).
    pub span: f64,
    /// The rank whose median end is latest; under `--stonewall`, where every rank ends
    /// at the wall, the one whose median rate is lowest.
    pub slowest: u32,
}
