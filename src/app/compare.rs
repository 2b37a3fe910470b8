//! `writebench compare`: reads the results, prints the comparison, writes the exports.

use std::io::Write;
use std::process::ExitCode;

use crate::analysis::compare::{self, across};
use crate::cli::{CompareArgs, UsageError};
use crate::export;

pub(super) fn compare(args: &CompareArgs) -> Result<ExitCode, UsageError> {
    let results = args.load()?;
    // Results from different filesystems get the lab's comparison across them (columns
    // by filesystem, "Across the files", the side-by-side chart); others a plain one.
    let compared = across::compare_saved_filesystems(&results).unwrap_or_else(|| compare::compare(&results));
    let mut stdout = std::io::stdout().lock();
    let _ = export::compare::render(&compared, &mut stdout).and_then(|()| stdout.flush());
    let written = export::write_files(export::COMPARISON_FORMATS, &compared, &args.export.paths());
    Ok(if written { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
