//! `writebench clean`: the scratch directories in PATH, then the leftovers of a killed
//! lab (mounts, md arrays, loop devices, backing files), wherever PATH is.

use std::process::ExitCode;

use crate::cli::{CleanArgs, UsageError};

pub(super) fn clean(args: &CleanArgs) -> Result<ExitCode, UsageError> {
    // PATH is checked first (bad input says so before anything is listed).
    let mut confirm = crate::cli::confirm::unless_yes(args.yes);
    let scratch_done = crate::measure::clean::clean_command(&args.path, &mut confirm).map_err(UsageError)?;
    let lab_done = crate::lab::leftovers::clean(&mut confirm).map_err(UsageError)?;
    Ok(ExitCode::from(if lab_done && scratch_done { 0 } else { 1 }))
}
