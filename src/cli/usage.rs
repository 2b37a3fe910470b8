//! What every subcommand's validation shares: the one-line error and the export-path check.

use std::path::Path;

/// Bad input, as the single line the user will see.
#[derive(Debug)]
pub struct UsageError(pub String);

/// An export file must be creatable: not a directory, in a directory that exists.
pub fn check_export_path(option: &str, file: &Path) -> Result<(), UsageError> {
    if file.is_dir() {
        return Err(UsageError(format!("{option}: {} is a directory", file.display())));
    }
    let parent = match file.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(UsageError(format!("{option}: directory {} does not exist", parent.display())));
    }
    Ok(())
}
