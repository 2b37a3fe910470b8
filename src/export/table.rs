//! The table on stdout, grouped like seed 003's sections: one section per file state,
//! one subsection per method family, one line per case with the buffered and the
//! durable throughput in decimal GB/s.

use std::io::{self, Write};

use crate::methods;
use crate::plan::FileState;
use crate::result::{CaseResult, ResultFile, Status};
use crate::stats::{Summary, format_mean_sd, format_seed_style};
use crate::units::format_size;

pub fn render(result: &ResultFile, out: &mut dyn Write) -> io::Result<()> {
    let target = &result.target;
    writeln!(out, "# writebench on {} ({}, {})", target.path, target.fs_type, target.device)?;
    if let Some(case) = result.cases.first() {
        writeln!(
            out,
            "{} per run; throughput in GB/s as ( min: a, mean ± sd, max: b ) over {} runs; durable includes the sync",
            format_size(case.case.bytes),
            result.options.get("repeat").and_then(|v| v.as_u64()).unwrap_or(0)
        )?;
    }
    if target.fs_type == "tmpfs" || target.fs_type == "ramfs" {
        writeln!(
            out,
            "note: {} keeps files in memory: fsync does nothing there, and nothing is durable",
            target.fs_type
        )?;
    }
    for state in FileState::ALL {
        let in_state: Vec<&CaseResult> = result.cases.iter().filter(|c| c.case.state == state).collect();
        if in_state.is_empty() {
            continue;
        }
        writeln!(out, "\n## Write into {}", state.description())?;
        let mut families: Vec<_> = in_state.iter().map(|c| family_of(c)).collect();
        families.sort();
        families.dedup();
        for family in families {
            writeln!(out, "\n### {}\n", family.title())?;
            let rows: Vec<[String; 4]> = in_state.iter().filter(|c| family_of(c) == family).map(|c| row(c)).collect();
            write_aligned(out, &rows)?;
        }
    }
    Ok(())
}

fn family_of(case: &CaseResult) -> methods::Family {
    methods::by_name(&case.case.method).map(|m| m.family()).unwrap_or(methods::Family::Simple)
}

fn row(result: &CaseResult) -> [String; 4] {
    let label = format!("{}, sync {}:", result.case.label(), result.case.durability);
    match (result.status, result.stats, result.durable_stats) {
        (Status::Ok, Some(buffered), Some(durable)) => {
            let buffered = buffered.scaled(1e-9);
            let durable = durable.scaled(1e-9);
            let mut notes = Vec::new();
            if buffered.is_noisy() || durable.is_noisy() {
                notes.push(format!("noisy (cv {:.0} %)", 100.0 * buffered.cv().max(durable.cv())));
            }
            [label, format!("{} GB/s", format_seed_style(&buffered)), durable_text(&durable), notes.join(", ")]
        }
        (status, _, _) => {
            let reason = result.error.clone().unwrap_or_default();
            [label, format!("{}: {reason}", status.name()), String::new(), String::new()]
        }
    }
}

fn durable_text(durable: &Summary) -> String {
    format!("durable {} GB/s", format_mean_sd(durable.mean, durable.stddev))
}

fn write_aligned(out: &mut dyn Write, rows: &[[String; 4]]) -> io::Result<()> {
    let width = |column: usize| rows.iter().map(|r| r[column].chars().count()).max().unwrap_or(0);
    let (label_width, buffered_width, durable_width) = (width(0), width(1), width(2));
    for [label, buffered, durable, note] in rows {
        let line =
            format!("    {label:<label_width$} {buffered:<buffered_width$}   {durable:<durable_width$}   {note}");
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}
