//! What every subcommand's validation shares: the one-line error, and whether an export
//! would overwrite an input.

/// Bad input, as the single line the user will see.
#[derive(Debug)]
pub struct UsageError(pub String);

/// Whether two paths name one existing file (through links, hard links and `..` alike):
/// an export written over a result being read would replace the only copy.
pub fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}
