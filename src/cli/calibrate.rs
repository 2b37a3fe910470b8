//! `writebench calibrate [PATH]`: the arguments and their checks.

use std::path::PathBuf;

use clap::Args;

use crate::cli::export::{CalibrateExports, ExportArgs};
use crate::cli::parse::check_paths;
use crate::cli::usage::UsageError;
use crate::plan::DEFAULT_SEED;
use crate::plan::units::parse_size;

pub const EXAMPLES: &str = "\
Examples:
  writebench calibrate /dev/shm                     memory copy, syscall and clock costs, tmpfs's write ceiling
  writebench calibrate /mnt/data --size 1GiB        and the device's own direct write rate, 1 GiB per run
  writebench calibrate . --export-json cal.json";

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Directory whose ceilings to measure (a private scratch directory is made in it
    /// and removed).
    #[arg(default_value = ".")]
    pub path: PathBuf,

    /// Bytes per run of the page-cache and device measurements (3 runs each, after a
    /// warm-up).
    #[arg(long, value_name = "SIZE", default_value = "256MiB")]
    pub size: String,

    /// Seed of the pseudo-random data written.
    #[arg(long, default_value_t = DEFAULT_SEED, value_name = "N")]
    pub seed: u64,

    #[command(flatten)]
    pub export: ExportArgs<CalibrateExports>,
}

/// Largest `--size`: the measurement runs four times over and keeps four times free.
const MAX_SIZE: u64 = 64 << 30;

impl CalibrateArgs {
    pub fn check(&self) -> Result<u64, UsageError> {
        let size = parse_size(&self.size).map_err(|e| UsageError(format!("--size: {e}")))?;
        if !(1 << 20..=MAX_SIZE).contains(&size) {
            return Err(UsageError("--size: must be between 1MiB and 64GiB".into()));
        }
        check_paths(&self.path, &self.export)?;
        Ok(size)
    }
}
