//! Output, separate from measurement: each exporter renders a [`ResultFile`] (or a
//! comparison of saved results). The formats a file can be written in are the two tables
//! below: a new format is its file here and one line in a table (docs/code.md).

pub mod answer;
pub mod calibration;
pub mod case_notes;
pub mod charts;
pub mod compare;
pub mod compare_html;
pub mod crash;
pub mod csv;
pub mod document;
pub mod glance;
pub mod html;
pub mod json;
pub mod latency_table;
pub mod markdown;
pub mod ranks;
pub mod table;
pub mod table_compact;
pub mod text;
pub mod trace;
pub mod trace_answer;
pub mod trace_crash;
pub mod trace_words;
pub mod wording;

use std::io::{self, Write};
use std::path::Path;

use error::plain;
use result::ResultFile;
use result::compare::CompareResult;
use result::crash::CrashReport;
use result::trace::TraceReport;

/// One file format: its name (`--export-NAME`) and what writes it.
pub struct Format<T: 'static> {
    pub name: &'static str,
    pub render: fn(&T, &mut dyn Write) -> io::Result<()>,
}

/// Every format a result can be written in.
pub static RESULT_FORMATS: &[Format<ResultFile>] = &[
    Format { name: "json", render: json::render },
    Format { name: "csv", render: csv::render },
    Format { name: "markdown", render: markdown::render },
    Format { name: "html", render: html::render },
];

/// Every format a comparison of saved results can be written in.
pub static COMPARISON_FORMATS: &[Format<CompareResult>] = &[
    Format { name: "markdown", render: compare::render_markdown },
    Format { name: "html", render: compare_html::render },
    Format { name: "json", render: compare::render_json },
];

/// Every format a crash check's table can be written in.
pub static CRASH_FORMATS: &[Format<CrashReport>] = &[
    Format { name: "json", render: crash::render_json },
    Format { name: "markdown", render: crash::render_markdown },
    Format { name: "html", render: crash::render_html },
];

/// Every format a trace's patterns can be written in.
pub static TRACE_FORMATS: &[Format<TraceReport>] = &[
    Format { name: "json", render: trace::render_json },
    Format { name: "markdown", render: trace::render_markdown },
    Format { name: "html", render: trace::render_html },
];

/// Writes `value` into each (format, file), in order, each atomically; false if one
/// failed (said on stderr, and the others are still written).
pub fn write_files<T>(formats: &[Format<T>], value: &T, files: &[(&str, &Path)]) -> bool {
    let mut all_written = true;
    for &(name, file) in files {
        let format = formats.iter().find(|format| format.name == name).expect("every offered format is in its table");
        if let Err(error) = write_atomically(file, |out| (format.render)(value, out)) {
            eprintln!("writebench: could not write {}: {}", file.display(), plain(&error));
            all_written = false;
        }
    }
    all_written
}

/// Checks, before any work, that `file` can be an export's destination: not a
/// directory, in a directory that exists. `option` names it in the one-line error.
pub fn check_destination(option: &str, file: &Path) -> Result<(), String> {
    if file.is_dir() {
        return Err(format!("{option}: {} is a directory", file.display()));
    }
    let parent = match file.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(format!("{option}: directory {} does not exist", parent.display()));
    }
    Ok(())
}

/// Writes a result file atomically: a temporary file in the same directory, synced,
/// then renamed over the target, so a reader never sees half a file.
pub fn write_atomically(path: &Path, render: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let file_name = path.file_name().ok_or_else(|| io::Error::other("the export path names no file"))?;
    let temporary = directory.join(format!(".{}.{}.tmp", file_name.to_string_lossy(), std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&temporary)?;
        {
            let mut writer = io::BufWriter::new(&mut file);
            render(&mut writer)?;
            writer.flush()?;
        }
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        std::fs::write(&path, "old").unwrap();
        write_atomically(&path, |w: &mut dyn Write| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let failed = write_atomically(&path, |_: &mut dyn Write| Err(io::Error::other("boom")));
        assert!(failed.is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
