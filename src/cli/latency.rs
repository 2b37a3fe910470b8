//! `writebench latency [PATH]`: the arguments and their checks into a latency plan
//! (small writes one at a time, and whole-file saves).

use std::path::PathBuf;

use clap::Args;

use crate::cli::export::{ExportArgs, LatencyExports};
use crate::cli::parse::{MAX_CHUNK, check_paths, parse_list, parse_runtimes};
use crate::cli::usage::UsageError;
use crate::plan::DEFAULT_SEED;
use crate::plan::durability::parse_mode;
use crate::plan::units::parse_size;

pub const EXAMPLES: &str = "\
Examples:
  writebench latency /data                      10,000 writes of 8 B in 5 loops, overwrite0 and append
  writebench latency . --durability none,every-fdatasync:1 --count 1000 --export-json l.json
  writebench latency /data --patterns replace,replace-tmpfile --bytes 4KiB,1MiB
                                                crash-safe saves of a whole file, once per size";

/// Largest file a save (`latency --patterns replace...`) writes.
pub const MAX_SAVE: usize = 64 << 20;

/// Most operations per latency case: a histogram is bounded, the wall time is not.
pub const MAX_LATENCY_COUNT: u64 = 100_000_000;

/// Most loops per latency case, as `run --repeat` allows runs.
pub const MAX_LATENCY_LOOPS: u32 = crate::cli::run::MAX_RUNS;

#[derive(Debug, Args)]
pub struct LatencyArgs {
    /// Directory to measure (a private scratch directory is made in it and removed).
    #[arg(default_value = ".")]
    pub path: PathBuf,

    /// Timed operations per case, split over its --repeat loops.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub count: u64,

    /// Timed loops per case, each of --count/N operations into a new file, run in
    /// rounds with the other cases' loops (the margins between cases are tested on them).
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub repeat: u32,

    /// Bytes per write, or of the whole file per save: a list, each size its own case,
    /// e.g. 8 or 4KiB,1MiB (a save is at most 64MiB).
    #[arg(long, default_value = "8", value_name = "LIST")]
    pub bytes: String,

    /// Writes: overwrite0 (pwrite at offset 0 each time, like a device rewriting one
    /// block), append (write at the file position). Saves of a whole file (native only,
    /// once per size, with their own syncs instead of --durability): replace (temp file,
    /// fsync, rename, directory fsync), replace-tmpfile (the same from O_TMPFILE and
    /// linkat), replace-unsafe (no fsync: not durable).
    #[arg(long, default_value = "overwrite0,append", value_name = "LIST")]
    pub patterns: String,

    /// Durability modes, spelled as for `run` (every:N syncs after every N writes, and
    /// the sync call is also reported alone).
    #[arg(long, default_value = "none,odsync,osync,every-fdatasync:1", value_name = "LIST")]
    pub durability: String,

    /// Operations done before the timed ones of each loop, not recorded.
    #[arg(long, default_value_t = 100, value_name = "N")]
    pub warmup: u64,

    /// Runtimes, comma-separated: native, c, python, go, zig, java, node. Each times its
    /// own calls: pwrite at offset 0 (node: writeSync at 0); write at the file position,
    /// and also Python's io.FileIO and buffered open() (flushed each time), Go's bufio
    /// (flushed), Java's stream, buffered (flushed) and channel, and Node's writeSync
    /// and awaited FileHandle.write [default: native].
    #[arg(long, value_name = "LIST")]
    pub runtimes: Option<String>,

    /// Seed of the pseudo-random data written.
    #[arg(long, default_value_t = DEFAULT_SEED, value_name = "N")]
    pub seed: u64,

    #[command(flatten)]
    pub export: ExportArgs<LatencyExports>,
}

impl LatencyArgs {
    pub fn plan(&self) -> Result<crate::plan::latency::LatencyPlan, UsageError> {
        let usage = |message: String| UsageError(message);
        let sizes = parse_list(&self.bytes, "--bytes", |item| match parse_size(item)? {
            bytes @ 1..=MAX_CHUNK => Ok(bytes as usize),
            _ => Err(format!("'{item}' is out of range (1B to 1GiB)")),
        })?;
        if !(1..=MAX_LATENCY_COUNT).contains(&self.count) {
            return Err(usage(format!("--count: must be between 1 and {MAX_LATENCY_COUNT}")));
        }
        if !(1..=MAX_LATENCY_LOOPS).contains(&self.repeat) {
            return Err(usage(format!("--repeat: must be between 1 and {MAX_LATENCY_LOOPS}")));
        }
        if self.warmup > MAX_LATENCY_COUNT {
            return Err(usage(format!("--warmup: must be at most {MAX_LATENCY_COUNT}")));
        }
        let patterns = parse_list(&self.patterns, "--patterns", |s| s.parse::<crate::plan::latency::Pattern>())?;
        // Each save writes the whole file count + warmup times: 64 MiB is already 6 GiB at 100.
        if let Some(&big) = sizes.iter().find(|&&size| size > MAX_SAVE) {
            if patterns.iter().any(|p| p.is_save()) {
                return Err(usage(format!(
                    "--bytes: {big} B is too large for a save (replace patterns: at most 64MiB)"
                )));
            }
        }
        let durability = parse_list(&self.durability, "--durability", parse_mode)?;
        if let Some(mode) = durability.iter().find(|d| d.rwf_flags() != 0 || d.write_behind().is_some()) {
            return Err(usage(format!(
                "--durability {mode}: latency times write and pwrite calls, which take neither RWF_* flags nor \
                 write-behind (use osync or odsync; `run` has {mode} with the pwritev2 methods)"
            )));
        }
        Ok(crate::plan::latency::LatencyPlan {
            count: self.count,
            loops: self.repeat,
            sizes,
            warmup: self.warmup,
            patterns,
            durability,
            seed: self.seed,
            runtimes: match &self.runtimes {
                Some(list) => parse_runtimes(list)?,
                None => Vec::new(),
            },
        })
    }

    /// PATH must be an existing directory; export files must be creatable.
    pub fn check_paths(&self) -> Result<(), UsageError> {
        check_paths(&self.path, &self.export)
    }
}
