//! `writebench calibrate`, and the short calibration `run` makes first: the memory copy
//! at each size class (`context::copy`), the syscall and clock figures of
//! `context::calibration`, and two ceilings measured on the path with the ordinary
//! case runs (`case_runs`: same files, hygiene and timing as every case):
//! - the page cache: `pwrite` in 1 MiB calls into a preallocated file, no sync;
//! - the device: O_DIRECT in 4 MiB `pwrite` calls and as 4 MiB io_uring requests 16 in
//!   flight, each into a preallocated file and over a written one. The fastest wins: a
//!   device that needs requests in flight to reach its rate gets them, one without
//!   io_uring still gets a figure, and the filesystem's own work on the way is left out
//!   where it can be: into preallocated (unwritten) blocks ext4 and xfs convert each
//!   extent as its write completes, which held this machine's disk to 1.44–1.60 GB/s
//!   where over written blocks it took 2.16–2.68 GB/s (fio, 256 MiB, 1 MiB at 16 in
//!   flight, four alternating pairs, 2026-12-06), and the durable rewrites of a run were
//!   then flagged above "the device's rate" at 2.2–2.4 GB/s; a copy-on-write filesystem
//!   allocates over written blocks, and writes preallocated ones in place. The calls
//!   write from a buffer in huge pages: from 4 KiB pages a 4 MiB call went to this
//!   disk in requests of 512 KiB, at 1.9–2.5 GB/s, where from huge pages it went as one
//!   request at 4.8–6.3 GB/s, and the page cache's writeback (3.6 MiB requests) passed
//!   the lower rate (`measure::huge`); and in 4 MiB requests, not 1 MiB, since a run's
//!   io_uring writes of 4 MiB 16 in flight from huge pages passed the 1 MiB ones' best
//!   (5.65 GB/s over a written file against a device rate of 4.92, 2026-12-06). No sync
//!   is timed: the rate a device accepts data at bounds every durable figure from above,
//!   whether or not its own cache is flushed.
//!
//! Each ceiling is the best run (not the mean): a ceiling is what the machine can do,
//! and this machine's speed drifts by tens of percent within minutes.

use std::time::Instant;

use crate::run_case;
use context::calibration::{self, Calibration, Ceiling};
use context::copy;
use context::device::BlockDevice;
use executors::case_runs::RunSettings;
use measure::source::Source;
use measure::space;
use measure::target::Scratch;
use plan::catalog;
use plan::durability::Commit;
use plan::{Case, Durability, FileState, Pages};
use result::{CaseResult, Status};

/// How much work a calibration does.
#[derive(Debug, Clone, Copy)]
pub struct Effort {
    /// The largest memory-copy class, bytes, shared out among the threads: the memory
    /// the calibration holds for a moment, freed before any case runs.
    pub memcpy_bytes: usize,
    pub memcpy_passes: usize,
    /// Calls per batch for the syscall and clock costs (five batches; the cheapest).
    pub calls: u32,
    /// Bytes per run of the page-cache and device cases (down to a quarter of it where
    /// the filesystem has too little room), and their measured runs (after one warm-up
    /// run).
    pub file_bytes: u64,
    pub file_runs: u32,
}

impl Effort {
    /// `run`'s: a few tenths of a second on tmpfs. Files as large as the quick suite's:
    /// with 32 MiB, the device's best was below a run's 64 MiB O_DIRECT writes 16 in
    /// flight (5.66 GB/s against their 6.48, 2026-12-06).
    pub const SHORT: Effort =
        Effort { memcpy_bytes: 64 << 20, memcpy_passes: 3, calls: 10_000, file_bytes: 64 << 20, file_runs: 2 };

    /// `writebench calibrate`'s, writing `file_bytes` per run.
    pub fn full(file_bytes: u64) -> Effort {
        Effort { memcpy_bytes: 256 << 20, memcpy_passes: 5, calls: 1_000_000, file_bytes, file_runs: 3 }
    }
}

/// Measures the ceilings on the scratch directory's filesystem. `case_sizes` are the
/// bytes of the cases the calibration is for (none for `writebench calibrate`): each
/// gets a memory-copy class of its own size. `step` is told what is being measured,
/// for a progress line.
pub fn calibrate(
    scratch: &Scratch,
    effort: Effort,
    case_sizes: &[u64],
    seed: u64,
    step: &mut dyn FnMut(&str),
) -> Calibration {
    let started = Instant::now();
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    step("memory copy");
    let classes = copy::classes(effort.memcpy_bytes as u64, case_sizes);
    let memcpy_classes = copy::measure(&classes, threads, effort.memcpy_passes);
    let largest = *memcpy_classes.last().expect("one class at least: the largest");
    step("system call and clock");
    let syscall_ns = calibration::syscall_ns(effort.calls);
    let clock_ns = calibration::clock_ns(effort.calls);
    let settings = RunSettings {
        repeat: effort.file_runs,
        warmup: 1,
        seed,
        keep_files: false,
        verify: None,
        space_check: true,
        drop_cache: false,
        ranks: None,
        stonewall: None,
        // The ceilings are the page cache's and the device's, whatever a run's source.
        source: plan::data_source::DataSource::Cached,
    };
    let source = Source::new(seed);
    // A small filesystem gets smaller files, down to a quarter of the effort's, before
    // it goes without the file ceilings.
    let file_bytes = [1, 2, 4]
        .map(|part| effort.file_bytes / part)
        .into_iter()
        .find(|&bytes| room_for(scratch, bytes).is_none())
        .unwrap_or(effort.file_bytes);
    let room = room_for(scratch, file_bytes);
    step("page cache");
    let buffered = [case("pwrite", FileState::Prealloc, 1 << 20, None, Durability::None, file_bytes)];
    let page_cache = match &room {
        Some(why) => Ceiling::missing(&how(&buffered, &settings), why.clone()),
        None => best_of(&buffered, scratch, &source, &settings),
    };
    step("device");
    let direct = Durability::direct(Commit::None);
    // From huge pages: each O_DIRECT call then goes to the device in requests as large
    // as it takes (`measure::huge`).
    let devices = [FileState::Prealloc, FileState::Overwrite].map(|state| {
        [
            case("pwrite", state, 4 << 20, None, direct, file_bytes).with_pages(Pages::Huge),
            case("io_uring", state, 4 << 20, Some(16), direct, file_bytes).with_pages(Pages::Huge),
        ]
    });
    let devices = devices.as_flattened();
    let block_device = BlockDevice::of(scratch.path());
    let device = match (&block_device, &room) {
        (None, _) => Ceiling::missing(&how(devices, &settings), "no block device under the path".into()),
        (Some(_), Some(why)) => Ceiling::missing(&how(devices, &settings), why.clone()),
        (Some(_), None) => best_of(devices, scratch, &source, &settings),
    };
    let big_write = block_device.map(|_| {
        step("one big file");
        big_write(scratch)
    });
    Calibration {
        big_write,
        memcpy_bytes_per_s: largest.bytes_per_s,
        memcpy_all_bytes_per_s: largest.all_bytes_per_s,
        memcpy_threads: threads,
        memcpy_bytes: largest.bytes,
        memcpy_classes,
        syscall_ns,
        clock_ns,
        page_cache,
        device,
        seconds: started.elapsed().as_secs_f64(),
        reused_age_seconds: None,
        peak_rss_bytes: measure::peak::peak_rss_bytes(),
    }
}

/// The most a big file's probe writes, and for how long: past the point where this
/// machine's writers waited (0.5 GiB on its disk, 2026-11-29) by enough to time the rate
/// after it, within about four seconds, at most a quarter of the free space.
const BIG_WRITE_MOST: u64 = 6 << 30;
pub const BIG_WRITE_TIME: std::time::Duration = std::time::Duration::from_secs(4);
const BIG_WRITE_STEP: u64 = 64 << 20;

/// One big buffered file on the path, its progress timed (`measure::big_write`).
fn big_write(scratch: &Scratch) -> calibration::BigWrite {
    let most = scratch.free_bytes().map_or(0, |free| (free / 4).min(BIG_WRITE_MOST));
    if most < 4 * BIG_WRITE_STEP {
        return calibration::BigWrite { why_not: Some("too little free space".into()), ..Default::default() };
    }
    match measure::big_write::write_big(scratch.path(), "calibrate-big.dat", most, BIG_WRITE_TIME, BIG_WRITE_STEP) {
        Ok(points) => calibration::BigWrite {
            points: points.iter().map(|p| [p.bytes as f64, p.seconds]).collect(),
            // All the points' or none.
            scheduled: points.iter().map(|p| p.scheduled).collect::<Option<_>>().unwrap_or_default(),
            host_takes_memory_back: Some(context::page_reporting::free_page_reporting()),
            why_not: None,
        },
        Err(error) => calibration::BigWrite { why_not: Some(error.to_string()), ..Default::default() },
    }
}

/// Why the file ceilings are not measured, if the filesystem is short of room: a
/// calibration must not fill the user's filesystem (others write there too).
fn room_for(scratch: &Scratch, bytes: u64) -> Option<String> {
    let free = scratch.free_bytes().ok()?;
    let needed = space::needed_for(bytes).saturating_mul(4);
    (free < needed).then(|| {
        format!(
            "not measured: {} free, and the calibration writes files of {} only with four times that free",
            plan::units::format_size(free),
            plan::units::format_size(bytes)
        )
    })
}

fn case(method: &str, state: FileState, chunk: u64, depth: Option<u32>, durability: Durability, bytes: u64) -> Case {
    let method = catalog::by_name(method).expect("calibration methods are registered");
    let case = Case::new(method, state, chunk, 1, durability, bytes);
    match depth {
        Some(depth) => case.with_queue_depth(depth),
        None => case,
    }
}

fn how(cases: &[Case], settings: &RunSettings) -> String {
    let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
    let named = match ids.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => ids.concat(),
    };
    let pages = match (cases[0].pages, context::transparent_hugepages().as_deref()) {
        (Pages::Ordinary, _) => "",
        (Pages::Huge, Some("always" | "madvise")) => ", from a buffer in huge pages",
        (Pages::Huge, _) => ", from 4 KiB pages (transparent huge pages are off)",
    };
    format!(
        "best run of {named} ({} runs of {} each, after a warm-up{pages})",
        settings.repeat,
        plan::units::format_size(cases[0].bytes)
    )
}

/// The fastest run of any of `cases` (buffered figure: these cases do not sync), or the
/// first case's error if none ran.
fn best_of(cases: &[Case], scratch: &Scratch, source: &Source, settings: &RunSettings) -> Ceiling {
    // Indices far from a run's own cases, so file names never meet.
    let results: Vec<CaseResult> = cases
        .iter()
        .enumerate()
        .map(|(i, case)| run_case(9000 + i, case, scratch, source, settings, &mut || {}))
        .collect();
    let best = results
        .iter()
        .filter(|r| r.status == Status::Ok)
        .flat_map(|r| r.runs.iter().map(move |run| r.case.bytes as f64 / run.write_seconds.max(1e-9)))
        .fold(None, |best: Option<f64>, rate| Some(best.map_or(rate, |b| b.max(rate))));
    let mut ceiling = Ceiling { bytes_per_s: best, how: how(cases, settings), why_not: None };
    if best.is_none() {
        let why = results.iter().find_map(|r| r.error.clone()).unwrap_or_else(|| "no run finished".into());
        ceiling.why_not = Some(why);
    }
    ceiling
}
