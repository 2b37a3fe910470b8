//! The start of every command that writes: signal handling, then the scratch directory
//! in PATH and the facts of its filesystem.

use std::path::{Path, PathBuf};

use crate::cli::{UsageError, plain};
use crate::context::{self, TargetInfo};
use crate::measure::signals;
use crate::measure::target::Scratch;

/// Signals come first, before any other thread starts, so that every thread inherits
/// the blocked mask.
pub(super) fn start_in(path: &Path) -> Result<(Scratch, TargetInfo), UsageError> {
    signals::install().map_err(|e| UsageError(format!("cannot set up signal handling: {}", plain(&e))))?;
    let scratch = signals::create_scratch(|| Scratch::create(path), Scratch::path)
        .map_err(|e| UsageError(format!("cannot create a scratch directory in {}: {}", path.display(), plain(&e))))?;
    let target = context::target(path, Some(&probe_file(&scratch)));
    Ok((scratch, target))
}

/// A throw-away file in the scratch directory, to ask statx for O_DIRECT alignment
/// (the answer is per file, and directories do not give it).
pub(super) fn probe_file(scratch: &Scratch) -> PathBuf {
    let path = scratch.path().join("probe");
    let _ = std::fs::File::create(&path);
    path
}

/// The scratch directory is done with: removed, unless `keep` (a test aid), and no
/// longer the signal handler's to remove.
pub(super) fn finish(mut scratch: Scratch, keep: bool) {
    if keep {
        signals::forget_scratch();
        scratch.keep();
        eprintln!("writebench: kept scratch directory {}", scratch.path().display());
    }
    drop(scratch);
    signals::forget_scratch();
}
