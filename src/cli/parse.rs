//! What the subcommands' options share: the limits of their values, the method
//! catalogue in `--methods`'s help, lists and counts parsed into one-line errors, and the
//! check of PATH and the export destinations before any work.

use std::path::Path;

use crate::cli::export::ExportArgs;
use crate::cli::usage::UsageError;
use crate::error::plain;
use crate::plan::catalog;
use crate::plan::units::split_list;

/// Largest chunk: rapidgzip's benchmarkIOWrite goes up to 1 GiB, and Linux moves at most
/// 0x7ffff000 bytes per call anyway.
pub const MAX_CHUNK: u64 = 1 << 30;
/// IOV_MAX on Linux.
pub const MAX_IOV: u32 = 1024;
/// Writer threads per case: far above the 100 goroutines of the IO Playground write-up,
/// well below what a 2-core machine
/// can start without trouble.
pub const MAX_THREADS: u32 = 1024;
/// Requests in flight per io_uring ring (the kernel allows up to 32768 entries).
pub const MAX_QUEUE_DEPTH: u32 = 4096;

/// What a method's name does not say, for `--methods`'s help.
pub(crate) const METHOD_NOTES: &[(&str, &str)] = &[
    ("pwritev2", "the durability mode's RWF_* flags only"),
    ("pwritev2-dontcache", "RWF_DONTCACHE"),
    ("pwritev2-append", "RWF_APPEND"),
    ("pwritev2-atomic", "RWF_ATOMIC"),
    ("io_uring-fixed", "registered buffer and file"),
    ("io_uring-regfile", "registered file only"),
    ("io_uring-sqpoll", "a kernel thread polls the queue; its CPU is recorded apart as sqpoll_cpu_seconds"),
];

/// `--methods`'s help: every native method of the catalogue (`catalog::native()`, in the table's
/// order, the file creation methods said as such), then those only other runtimes
/// have, with the runtimes that have them.
pub(crate) fn methods_help() -> String {
    let named = |method: &&catalog::Method| match METHOD_NOTES.iter().find(|(name, _)| *name == method.name) {
        Some((name, note)) => format!("{name} ({note})"),
        None => method.name.to_string(),
    };
    let (creation, writing): (Vec<_>, Vec<_>) =
        catalog::native().iter().partition(|method| method.family == catalog::Family::Creation);
    let own: Vec<String> = catalog::own()
        .iter()
        .map(|method| {
            let runtimes: Vec<&str> = catalog::RUNTIMES
                .iter()
                .filter(|runtime| runtime.methods.iter().any(|m| m.name == method.name))
                .map(|runtime| runtime.name)
                .collect();
            format!("{} ({})", method.name, runtimes.join(", "))
        })
        .collect();
    format!(
        "Methods, comma-separated: {}; file creation (open + call + close): {}; other runtimes' own: {} \
         [default: all]",
        writing.iter().map(named).collect::<Vec<_>>().join(", "),
        creation.iter().map(named).collect::<Vec<_>>().join(", "),
        own.join(", "),
    )
}

/// `--runtimes`: known runtime names, each once.
pub(crate) fn parse_runtimes(list: &str) -> Result<Vec<String>, UsageError> {
    parse_list(list, "--runtimes", |name| {
        let known = catalog::runtime_names();
        known
            .iter()
            .find(|known| **known == name)
            .map(|known| known.to_string())
            .ok_or_else(|| format!("unknown runtime '{name}' (known: {})", known.join(", ")))
    })
}

/// PATH must be an existing, writable directory and the export files creatable: checked
/// before anything is created, for `run` and `latency` alike.
pub(crate) fn check_paths<O>(path: &Path, exports: &ExportArgs<O>) -> Result<(), UsageError> {
    check_dir(path)?;
    crate::measure::space::check_writable(path).map_err(UsageError)?;
    exports.check()
}

fn check_dir(path: &Path) -> Result<(), UsageError> {
    let metadata =
        std::fs::metadata(path).map_err(|e| UsageError(format!("PATH {}: {}", path.display(), plain(&e))))?;
    if !metadata.is_dir() {
        return Err(UsageError(format!("PATH {} is not a directory", path.display())));
    }
    Ok(())
}

pub(crate) fn override_with<T: Clone>(field: &mut Vec<T>, value: &Option<Vec<T>>) {
    if let Some(value) = value {
        field.clone_from(value);
    }
}

pub(crate) fn parse_list<T: PartialEq>(
    text: &str,
    option: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, UsageError> {
    let items = split_list(text).map_err(|e| UsageError(format!("{option}: {e}")))?;
    let mut values = Vec::new();
    for item in items {
        let value = parse(&item).map_err(|e| UsageError(format!("{option}: {e}")))?;
        if !values.contains(&value) {
            values.push(value);
        }
    }
    Ok(values)
}

pub(crate) fn parse_count(text: &str, low: u64, high: u64) -> Result<u64, String> {
    let value: u64 = text.parse().map_err(|_| format!("'{text}' is not a whole number"))?;
    if !(low..=high).contains(&value) {
        return Err(format!("{value} is out of range ({low} to {high})"));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_note_is_of_a_method_in_the_catalogue() {
        for (name, _) in METHOD_NOTES {
            assert!(catalog::native().iter().any(|method| method.name == *name), "a note for '{name}', no such method");
        }
    }
}
