//! The latency table: one line per latency case, in µs as the small O_SYNC comparison
//! printed them.

use std::io::{self, Write};

pub use plan::latency::is_latency_case;
use plan::latency::{is_not_durable_save, pattern_of};
use result::{CaseResult, ResultFile, Status};

/// The table: one line per case, in µs as the C/Python O_SYNC write-up prints them.
pub fn render(result: &ResultFile, out: &mut dyn Write) -> io::Result<()> {
    let target = &result.target;
    writeln!(out, "# writebench latency on {} ({}, {})", target.path, target.fs_type, target.device)?;
    if target.memory_filesystem() {
        writeln!(out, "note: {} keeps files in memory: syncs do nothing there and nothing is durable", target.fs_type)?;
    } else if let Some(note) = crate::document::ram_backed(target) {
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
    // A line under a row: a case the race dropped says so, as in the throughput table.
    let mut notes: Vec<Option<String>> = vec![None];
    for &case in &latency {
        let label = case.case.id.trim_start_matches("latency ").to_string();
        match (&case.latency_ns, case.status) {
            (Some(latency), Status::Ok) => {
                rows.push(latency_row(label, latency, case.ops_per_second));
                notes.push(None);
                if let Some(sync) = &case.sync_latency_ns {
                    rows.push(latency_row("  of which the sync call".into(), sync, None));
                    notes.push(None);
                }
                // Under the case's last row.
                *notes.last_mut().expect("a row was pushed") = crate::wording::race_note(case);
            }
            _ => {
                let reason = case.error.clone().unwrap_or_default();
                let mut row: [String; 9] = Default::default();
                row[0] = label;
                row[1] = format!("{}: {reason}", case.status.name());
                rows.push(row);
                notes.push(None);
            }
        }
    }
    let widths: Vec<usize> = (0..9).map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    for (row, note) in rows.iter().zip(&notes) {
        let mut line = format!("    {:<w$}", row[0], w = widths[0]);
        if row[2].is_empty() && !row[1].is_empty() && row[1].contains(':') {
            line += &format!("  {}", row[1]);
        } else {
            for (column, cell) in row.iter().enumerate().skip(1) {
                line += &format!("  {cell:>w$}", w = widths[column]);
            }
        }
        writeln!(out, "{}", line.trim_end())?;
        if let Some(note) = note {
            writeln!(out, "      {note}")?;
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use result::race::{Behind, CaseRace, Exit};

    /// A measured latency case named `id`, with its sync's percentiles, dropped by the
    /// race after 5 loops when `dropped`.
    fn case(id: &str, dropped: bool) -> CaseResult {
        let pwrite = plan::catalog::by_name("pwrite").unwrap();
        let mut case = plan::Case::new(pwrite, plan::FileState::Empty, 8, 1, plan::Durability::None, 8);
        case.id = id.to_string();
        case.kind = plan::CaseKind::of_older_case(id, "pwrite");
        let latency = serde_json::json!({"count": 2500, "mean": 1070.0, "p50": 950.0, "p90": 1120.0, "p99": 1370.0,
            "p999": 49850.0, "max": 68160.0});
        let behind = Behind {
            goal: "small-durable-commits".into(),
            leader: "latency overwrite0 8B odsync".into(),
            factor: 1.35,
            low: 1.07,
            high: 1.70,
            p_value: 0.009,
        };
        let race =
            dropped.then_some(CaseRace { runs: 5, round: 9, exit: Exit::Slower, behind: Some(behind), observed: 0 });
        CaseResult {
            status: Status::Ok,
            error: None,
            latency_ns: Some(latency.clone()),
            sync_latency_ns: Some(latency),
            ops_per_second: Some(885968.0),
            race,
            ..CaseResult::without_result(case, Status::Ok, String::new())
        }
    }

    #[test]
    fn a_latency_case_the_race_dropped_says_so_under_its_last_row_in_loops() {
        let cases = [case("latency append 8B every-fdatasync:1", true), case("latency append 8B odsync", false)];
        let mut out = Vec::new();
        render_cases(&cases, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let at = lines.iter().position(|l| l.contains("append 8B every-fdatasync:1")).unwrap();
        assert!(lines[at + 1].contains("of which the sync call"), "{text}");
        assert_eq!(
            lines[at + 2],
            "      dropped after 5 loops: 1.35x slower than the best for small-durable-commits (1.07–1.70x)"
        );
        assert_eq!(text.matches("dropped after").count(), 1, "the case kept in the race says nothing: {text}");
    }
}
