//! `writebench clean`: the scratch directories in PATH, then the leftovers of a killed
//! lab (mounts, md arrays, loop devices, backing files), wherever PATH is.

use std::path::Path;
use std::process::ExitCode;

use crate::cli::{CleanArgs, UsageError};
use crate::error::plain;
use crate::measure::clean::{find_stale, remove_scratch};

pub(super) fn clean(args: &CleanArgs) -> Result<ExitCode, UsageError> {
    // PATH is checked first (bad input says so before anything is listed).
    let mut confirm = crate::cli::confirm::unless_yes(args.yes);
    let scratch_done = clean_scratch(&args.path, &mut confirm).map_err(UsageError)?;
    let lab_done = crate::lab::leftovers::clean(&mut confirm).map_err(UsageError)?;
    Ok(ExitCode::from(if lab_done && scratch_done { 0 } else { 1 }))
}

/// `writebench clean [PATH] [--yes]`: lists the stale scratch directories in PATH on
/// stdout and removes them once `confirm` agrees (asked with the question and, for its
/// refusal, what stays listed): the user on the terminal, or `--yes`. Without a terminal
/// and without `--yes` it lists them and refuses (Err: exit 2). Ok(false) when a
/// removal failed (said on stderr).
fn clean_scratch(parent: &Path, confirm: &mut dyn FnMut(&str, &str) -> Result<bool, String>) -> Result<bool, String> {
    let metadata = std::fs::metadata(parent).map_err(|e| format!("PATH {}: {}", parent.display(), plain(&e)))?;
    if !metadata.is_dir() {
        return Err(format!("PATH {} is not a directory", parent.display()));
    }
    let stale = find_stale(parent).map_err(|e| format!("cannot read {}: {}", parent.display(), plain(&e)))?;
    if stale.is_empty() {
        println!("no stale scratch directories in {}", parent.display());
        return Ok(true);
    }
    for item in &stale {
        println!(
            "{}  (pid {} is gone; {} files, {})",
            item.path.display(),
            item.pid,
            item.files,
            crate::plan::units::format_size(item.bytes)
        );
    }
    let count = stale.len();
    let directories = if count == 1 { "y" } else { "ies" };
    let question = format!("Remove {count} director{directories} and the files in them? [y/N] ");
    let listed = format!("{count} stale scratch director{directories} listed, none removed");
    if !confirm(&question, &listed)? {
        println!("nothing removed");
        return Ok(true);
    }
    let mut all_removed = true;
    for item in &stale {
        match remove_scratch(&item.path) {
            Ok(()) => println!("removed {}", item.path.display()),
            Err(error) => {
                eprintln!("writebench: could not remove {}: {}", item.path.display(), plain(&error));
                all_removed = false;
            }
        }
    }
    Ok(all_removed)
}
