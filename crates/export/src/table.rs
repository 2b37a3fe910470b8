//! The table on stdout, grouped like the sections of rapidgzip's benchmarkIOWrite
//! results: one section per file state, one subsection per method family, one line per
//! case with the buffered and the durable throughput in decimal GB/s.

use std::io::{self, Write};

use crate::latency_table::{is_latency_case, render_cases as render_latency};
use crate::table_compact as compact;
use crate::text::Paint;
use crate::wording::{most_common_size, notes, runs_wording};
use plan::catalog;
use plan::numbers::format_mean_sd;
use plan::units::format_size;
use plan::{CaseKind, FileState};
use result::Summary;
use result::{CaseResult, ResultFile, Status};

/// How the table looks: `Compact` (the default) keeps within 100 columns; `Classic`
/// prints the `( min: a, mean ± sd, max: b )` lines of the original write-ups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Style {
    #[default]
    Compact,
    Classic,
}

pub fn render(result: &ResultFile, out: &mut dyn Write, style: Style, paint: Paint) -> io::Result<()> {
    let target = &result.target;
    let usual_size = most_common_size(result);
    let mut header = vec![format!("# writebench on {} ({}, {})", target.path, target.fs_type, target.device)];
    match style {
        Style::Classic => header.push(format!(
            "{} per run unless a line says otherwise; GB/s as ( min: a, mean ± sd, max: b ) over {}; durable includes the sync (— where the mode never syncs)",
            format_size(usual_size),
            runs_wording(&result.options)
        )),
        Style::Compact => header.push(format!("{} per run unless a line says otherwise", format_size(usual_size))),
    }
    if let Some(note) = crate::document::target_note(result) {
        header.push(format!("note: {note}"));
    }
    if let Some(calibration) = &result.calibration {
        header.push(format!("{}; \"% of\" a ceiling is the median's", crate::calibration::summary_line(calibration)));
    }
    match &target.block_device {
        None => header.push(format!("note: no block device under {}: no device figures", target.path)),
        Some(name) => {
            let on = target.block_device_parents.join(", ");
            let on = if on.is_empty() { String::new() } else { format!(", on {on}") };
            header.push(format!(
                "device: {name}{on}; \"to device\" is what it was asked to write during write + sync (median run)"
            ))
        }
    }
    for line in header {
        match style {
            Style::Classic => writeln!(out, "{line}")?,
            Style::Compact => {
                for wrapped in compact::wrapped(&line, "", "  ") {
                    writeln!(out, "{wrapped}")?;
                }
            }
        }
    }
    if style == Style::Compact {
        for line in compact::legend(&runs_wording(&result.options)) {
            writeln!(out, "{line}")?;
        }
    }
    for state in FileState::ALL {
        let in_state: Vec<&CaseResult> =
            result.cases.iter().filter(|c| c.case.state == state && !is_latency_case(&c.case)).collect();
        if in_state.is_empty() {
            continue;
        }
        writeln!(out, "\n{}", paint.heading(&format!("## Write into {}", state.description())))?;
        let mut families: Vec<_> = in_state.iter().map(|c| family_of(c)).collect();
        families.sort();
        families.dedup();
        for family in families {
            writeln!(out, "\n{}\n", paint.heading(&format!("### {}", family.title())))?;
            let in_family = in_state.iter().filter(|c| family_of(c) == family);
            match style {
                Style::Classic => {
                    let rows: Vec<[String; 4]> = in_family.map(|c| row(c, usual_size)).collect();
                    write_aligned(out, &rows)?;
                }
                Style::Compact => {
                    let rows: Vec<compact::Row> = in_family.map(|c| compact::row(c, usual_size)).collect();
                    compact::write(out, &rows, paint, !result.target.memory_filesystem())?;
                }
            }
        }
    }
    if result.cases.iter().any(|c| is_latency_case(&c.case)) {
        writeln!(out, "\n{}\n", paint.heading("## Small writes, one at a time (latency)"))?;
        render_latency(&result.cases, out)?;
    }
    Ok(())
}

/// The subsection of a case: its method's family, except that plain and vectored calls
/// from several threads go under "Parallel writing", as in those results.
fn family_of(case: &CaseResult) -> catalog::Family {
    use catalog::Family;
    let family = catalog::by_name(&case.case.method).map(|m| m.family).unwrap_or(Family::Simple);
    match family {
        Family::Simple | Family::Vectored if case.case.threads > 1 => Family::Parallel,
        other => other,
    }
}

fn row(result: &CaseResult, usual_size: u64) -> [String; 4] {
    // Creation labels name their size already.
    let creates = result.case.kind == CaseKind::Creation;
    let size = if result.case.bytes == usual_size || creates {
        String::new()
    } else {
        format!(", {}", format_size(result.case.bytes))
    };
    let label = format!("{}{size}, sync {}:", result.case.label(), result.case.durability);
    match (result.status, result.stats.or(result.call_us)) {
        // A file creation moves no data: its figures are µs per call.
        (Status::Ok, Some(_)) if creates && crate::document::per_call(result).is_some() => {
            let (write, durable) = crate::document::per_call(result).expect("checked");
            let durable = match durable {
                Some(durable) => format!("durable {} µs per call", format_mean_sd(durable.mean, durable.stddev)),
                None => "durable —".to_string(),
            };
            [label, format!("{} µs per call", crate::document::seed_style(&write)), durable, notes(result).join(", ")]
        }
        (Status::Ok, Some(buffered)) => {
            let durable = match result.durable_stats {
                Some(durable) => durable_text(&durable.scaled(1e-9)),
                // Nothing was made durable, so there is no durable figure to show.
                None => "durable —".to_string(),
            };
            [
                label,
                format!("{} GB/s", crate::document::seed_style(&buffered.scaled(1e-9))),
                durable,
                notes(result).join(", "),
            ]
        }
        (status, _) => {
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

#[cfg(test)]
mod tests {
    use super::*;
    use plan::{Case, FileState};
    use result::{Run, TargetCi};

    fn measured(mode: &str, times: &[f64]) -> CaseResult {
        let method = catalog::by_name("pwrite").unwrap();
        let case = Case::new(method, FileState::Empty, 1 << 20, 1, mode.parse().unwrap(), 1 << 30);
        let runs = times.iter().map(|&t| Run { write_seconds: t, sync_seconds: 0.1, ..Run::default() }).collect();
        analysis::advice::testkit::measured(case, runs, 1)
    }

    #[test]
    fn a_mode_that_never_syncs_shows_a_dash_for_durable() {
        let [_, buffered, durable, _] = row(&measured("none", &[1.0, 1.0, 1.0]), 1 << 30);
        assert!(buffered.starts_with("( min: "), "{buffered}");
        assert_eq!(durable, "durable —");
        let [_, _, durable, _] = row(&measured("end", &[1.0, 1.0, 1.0]), 1 << 30);
        assert!(durable.starts_with("durable 0.976") && durable.ends_with(" GB/s"), "{durable}");
    }

    #[test]
    fn noisy_only_where_the_target_was_missed_or_without_one_the_ci_is_wide() {
        let quiet = measured("none", &[1.0, 1.01, 0.99, 1.0]);
        assert_eq!(row(&quiet, 1 << 30)[3], "");
        let wide = measured("none", &[1.0, 1.5, 0.7, 1.2]);
        let ci = 100.0 * analysis::summarize::case_ci_relative(&wide).unwrap();
        assert_eq!(row(&wide, 1 << 30)[3], format!("noisy: CI ±{ci:.1} %"));
        let mut met = wide.clone();
        met.target_ci = Some(TargetCi { pct: 50.0, met: true, runs: 4, reached_pct: Some(ci), judged_pct: None });
        assert_eq!(row(&met, 1 << 30)[3], "", "a met target is not noisy, however wide");
        let mut missed = quiet.clone();
        missed.target_ci = Some(TargetCi { pct: 0.1, met: false, runs: 4, reached_pct: Some(1.23), judged_pct: None });
        assert_eq!(row(&missed, 1 << 30)[3], "noisy: CI ±1.2 % after 4 runs");
        let mut held = quiet.clone();
        held.target_ci =
            Some(TargetCi { pct: 2.0, met: false, runs: 8, reached_pct: Some(0.4), judged_pct: Some(6.25) });
        assert_eq!(row(&held, 1 << 30)[3], "noisy: CI ±0.4 % after 8 runs, ±6.2 % at the noise typical of this run");
    }

    #[test]
    fn outliers_are_listed_and_a_first_one_suggests_a_short_warm_up() {
        let result = measured("none", &[3.0, 1.0, 1.01, 0.99, 1.0, 1.02]);
        let notes = row(&result, 1 << 30)[3].clone();
        assert!(notes.ends_with("outlier run 1 (first run: warm-up too short?)"), "{notes}");
        let later = measured("none", &[1.0, 1.0, 1.01, 0.99, 5.0, 9.0, 1.02]);
        assert!(row(&later, 1 << 30)[3].ends_with("outlier runs 5, 6"), "{}", row(&later, 1 << 30)[3]);
    }
}
