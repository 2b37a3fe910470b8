//! The latency table: one line per latency case, in µs as the small O_SYNC comparison
//! printed them.

use std::io::{self, Write};

pub use crate::plan::latency::is_latency_case;
use crate::plan::latency::{is_not_durable_save, pattern_of};
use crate::result::{CaseResult, ResultFile, Status};

/// The table: one line per case, in µs as the C/Python O_SYNC write-up prints them.
pub fn render(result: &ResultFile, out: &mut dyn Write) -> io::Result<()> {
    let target = &result.target;
    writeln!(out, "# writebench latency on {} ({}, {})", target.path, target.fs_type, target.device)?;
    if target.memory_filesystem() {
        writeln!(out, "note: {} keeps files in memory: syncs do nothing there and nothing is durable", target.fs_type)?;
    } else if let Some(note) = crate::export::document::ram_backed(target) {
        writeln!(out, "note: {note}; nothing is durable")?;
    }
    render_cases(&result.cases, out)
}

/// The latency lines of `cases` (others are left out), under their own header.
pub fn render_cases(cases: &[CaseResult], out: &mut dyn Write) -> io::Result<()> {
    let latency: Vec<&CaseResult> = cases.iter().filter(|c| is_latency_case(&c.case)).collect();
    writeln!(out, "µs per operation (the write, and the sync call when the mode makes one after it)")?;
    if latency.iter().any(|c| pattern_of(&c.case).is_some_and(|p| p.is_save())) {
        writeln!(
            out,
            "a save (replace...) is one operation: every call from creating the new file to the directory fsync"
        )?;
    }
    let mut rows = vec![["case", "count", "mean", "p50", "p90", "p99", "p99.9", "max", "ops/s"].map(String::from)];
    for &case in &latency {
        let label = case.case.id.trim_start_matches("latency ").to_string();
        match (&case.latency_ns, case.status) {
            (Some(latency), Status::Ok) => {
                rows.push(latency_row(label, latency, case.ops_per_second));
                if let Some(sync) = &case.sync_latency_ns {
                    rows.push(latency_row("  of which the sync call".into(), sync, None));
                }
            }
            _ => {
                let reason = case.error.clone().unwrap_or_default();
                let mut row: [String; 9] = Default::default();
                row[0] = label;
                row[1] = format!("{}: {reason}", case.status.name());
                rows.push(row);
            }
        }
    }
    let widths: Vec<usize> = (0..9).map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    for row in &rows {
        let mut line = format!("    {:<w$}", row[0], w = widths[0]);
        if row[2].is_empty() && !row[1].is_empty() && row[1].contains(':') {
            line += &format!("  {}", row[1]);
        } else {
            for (column, cell) in row.iter().enumerate().skip(1) {
                line += &format!("  {cell:>w$}", w = widths[column]);
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    if latency.iter().any(|c| is_not_durable_save(&c.case)) {
        writeln!(
            out,
            "not-durable: replace-unsafe makes no fsync; after a crash the file may be the old one, empty or partial"
        )?;
    }
    Ok(())
}

fn latency_row(label: String, latency: &serde_json::Value, ops: Option<f64>) -> [String; 9] {
    let micros = |key: &str| latency[key].as_f64().map(|ns| format!("{:.2}", ns / 1000.0)).unwrap_or_default();
    [
        label,
        latency["count"].as_u64().map(|n| n.to_string()).unwrap_or_default(),
        micros("mean"),
        micros("p50"),
        micros("p90"),
        micros("p99"),
        micros("p999"),
        micros("max"),
        ops.map(|ops| format!("{ops:.0}")).unwrap_or_default(),
    ]
}
