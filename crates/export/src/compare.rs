//! `compare` on the terminal and in Markdown: the context differences first (a faster
//! figure on another filesystem is no regression), then one line per case with each
//! file's median and its factor against the baseline, then the recommendations, then the
//! counts. Both renderings are made from the same cells, so they cannot disagree.

use std::io::{self, Write};

use plan::numbers::{format_g6, three_digits};
use plan::units::format_size;
use result::Status;
use result::compare::{CaseComparison, CompareResult, FileCase, GoalComparison, Versus};

/// The terminal rendering.
pub fn render(compared: &CompareResult, out: &mut dyn Write) -> io::Result<()> {
    let baseline = &compared.files[0].label;
    writeln!(out, "# writebench compare: {baseline} is the baseline")?;
    for line in file_lines(compared) {
        writeln!(out, "  {line}")?;
    }
    if let Some(note) = &compared.memory_note {
        for line in crate::text::wrap(&format!("note: {note}"), crate::text::WIDTH) {
            writeln!(out, "{line}")?;
        }
    }
    writeln!(out)?;
    if compared.differences.is_empty() {
        writeln!(out, "Context: the same in every file (host, filesystem, writebench version, options)")?;
    } else {
        writeln!(out, "## Context differences\n")?;
        let mut rows = vec![header("field", compared)];
        rows.extend(difference_rows(compared));
        if aligned_width(&rows) <= WIDTH {
            write_aligned(out, &rows, &[])?;
        } else {
            // Long values (CPU models, mount options) read better one file per line.
            for row in &rows[1..] {
                writeln!(out, "  {}", row[0])?;
                for (file, value) in compared.files.iter().zip(&row[1..]) {
                    writeln!(out, "      {}  {value}", file.label)?;
                }
            }
        }
    }
    writeln!(out, "\n## Cases\n")?;
    for line in legend(compared) {
        writeln!(out, "{line}")?;
    }
    writeln!(out)?;
    let mut rows = vec![case_header(compared)];
    rows.extend(compared.cases.iter().flat_map(|case| case_rows(case, compared)));
    if aligned_width(&rows) <= WIDTH {
        let right: Vec<usize> = (1..rows[0].len()).collect();
        write_aligned(out, &rows, &right)?;
    } else {
        write_case_blocks(out, &rows, compared)?;
    }
    let unmatched = unmatched_lines(compared);
    if !unmatched.is_empty() {
        writeln!(out, "\nNot compared:")?;
        for line in unmatched {
            writeln!(out, "  {line}")?;
        }
    }
    let across = across_lines(compared);
    if !across.is_empty() {
        writeln!(out, "\n## Across the files\n")?;
        // Sentences, wrapped to the terminal's width (the table above may be wider).
        for line in across {
            for (index, piece) in crate::text::wrap(&line, crate::text::WIDTH - 4).iter().enumerate() {
                writeln!(out, "{}{piece}", if index == 0 { "  " } else { "    " })?;
            }
        }
    }
    if !compared.crash.is_empty() {
        writeln!(out, "\n## Crash checks (docs/crash.md)\n")?;
        super::crash::text_table(&compared.crash, out)?;
    }
    writeln!(out, "\n## Answer\n")?;
    for (line, picks) in answer_lines(compared) {
        writeln!(out, "  {line}")?;
        for pick in picks {
            writeln!(out, "      {pick}")?;
        }
    }
    writeln!(out)?;
    for line in summary_lines(compared) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// The same content as Markdown (`--export-markdown`).
pub fn render_markdown(compared: &CompareResult, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "# writebench compare\n")?;
    for line in file_lines(compared) {
        writeln!(out, "- {}", escape(&line))?;
    }
    if let Some(note) = &compared.memory_note {
        writeln!(out, "\nNote: {}", escape(note))?;
    }
    writeln!(out)?;
    if compared.differences.is_empty() {
        writeln!(out, "Context: the same in every file (host, filesystem, writebench version, options).")?;
    } else {
        writeln!(out, "## Context differences\n")?;
        let mut rows = vec![header("field", compared)];
        rows.extend(difference_rows(compared));
        write_markdown_table(out, &rows, false)?;
    }
    writeln!(
        out,
        "\n## Cases\n\n{}\n",
        escape(&legend(compared).iter().map(|line| line.trim()).collect::<Vec<_>>().join(" "))
    )?;
    let mut rows = vec![case_header(compared)];
    rows.extend(compared.cases.iter().flat_map(|case| case_rows(case, compared)));
    write_markdown_table(out, &rows, true)?;
    let unmatched = unmatched_lines(compared);
    if !unmatched.is_empty() {
        writeln!(out, "\nNot compared:\n")?;
        for line in unmatched {
            writeln!(out, "- {}", escape(&line))?;
        }
    }
    let across = across_lines(compared);
    if !across.is_empty() {
        writeln!(out, "\n## Across the files\n")?;
        for line in across {
            writeln!(out, "- {}", escape(&line))?;
        }
    }
    if !compared.crash.is_empty() {
        writeln!(out, "\n## Crash checks\n")?;
        super::crash::markdown_table(&compared.crash, out)?;
    }
    writeln!(out, "\n## Answer\n")?;
    for (line, picks) in answer_lines(compared) {
        writeln!(out, "- {}", escape(&line))?;
        for pick in picks {
            writeln!(out, "  - {}", escape(&pick.replacen("  ", ": ", 1)))?;
        }
    }
    writeln!(out)?;
    for line in summary_lines(compared) {
        writeln!(out, "{}\n", escape(&line))?;
    }
    Ok(())
}

/// `--export-json`: the comparison as data.
pub fn render_json(compared: &CompareResult, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, compared).map_err(io::Error::other)?;
    out.write_all(b"\n")
}

fn file_lines(compared: &CompareResult) -> Vec<String> {
    compared
        .files
        .iter()
        .enumerate()
        .map(|(index, file)| {
            let mut notes = Vec::new();
            if index == 0 {
                notes.push("baseline".to_string());
            }
            if !file.complete {
                notes.push("incomplete: the run was interrupted".to_string());
            }
            let notes = if notes.is_empty() { String::new() } else { format!(" ({})", notes.join("; ")) };
            format!("{} = {}{notes}", file.label, file.name)
        })
        .collect()
}

fn header(first: &str, compared: &CompareResult) -> Vec<String> {
    std::iter::once(first.to_string()).chain(compared.files.iter().map(|f| f.label.clone())).collect()
}

fn difference_rows(compared: &CompareResult) -> Vec<Vec<String>> {
    compared
        .differences
        .iter()
        .map(|difference| {
            let values = difference.values.iter().map(|v| v.clone().unwrap_or_else(|| "(absent)".to_string()));
            std::iter::once(difference.field.clone()).chain(values).collect()
        })
        .collect()
}

/// What the columns mean, in lines short enough for a terminal.
fn legend(compared: &CompareResult) -> Vec<String> {
    let baseline = &compared.files[0].label;
    vec![
        "Median GB/s of the runs (latency cases: operations/s); \"durable\" lines include the sync.".to_string(),
        format!("X/{baseline}: X's rate over {baseline}'s from the mean run times, with its 95 % interval."),
        format!("*: significant: Welch's t-test on the run times, p < {} after Holm's correction over", compared.alpha),
        format!("   every test (write and durable) of that file against {baseline}."),
    ]
}

fn case_header(compared: &CompareResult) -> Vec<String> {
    let baseline = &compared.files[0].label;
    let mut row = vec!["case".to_string(), baseline.clone()];
    for file in &compared.files[1..] {
        row.push(file.label.clone());
        row.push(format!("{}/{baseline}", file.label));
    }
    row
}

/// The case's line, and a "durable" line below it where the case syncs.
fn case_rows(case: &CaseComparison, compared: &CompareResult) -> Vec<Vec<String>> {
    let size = if compared.cases.iter().any(|c| c.id == case.id && c.bytes != case.bytes)
        || compared.unmatched.iter().any(|u| u.id == case.id)
        || case.files.iter().flatten().any(|side| side.bytes != case.bytes)
    {
        // The same id with another size elsewhere: say which one this line is.
        format!(", {}", format_size(case.bytes))
    } else {
        String::new()
    };
    let mut write = vec![format!("{}{size}", case.id), figure(case.files[0].as_ref(), false)];
    let mut durable = vec!["  durable".to_string(), figure(case.files[0].as_ref(), true)];
    for (other, versus) in case.files[1..].iter().zip(&case.versus) {
        write.push(figure(other.as_ref(), false));
        durable.push(figure(other.as_ref(), true));
        write.push(ratio(versus.as_ref(), false));
        durable.push(ratio(versus.as_ref(), true));
    }
    let syncs = case.files.iter().flatten().any(|side| side.durable_median.is_some());
    if syncs { vec![write, durable] } else { vec![write] }
}

/// A file's median: GB/s, operations/s for latency cases, or why there is none.
fn figure(side: Option<&FileCase>, durable: bool) -> String {
    let Some(side) = side else { return "absent".to_string() };
    let median = if durable { side.durable_median } else { side.median };
    match (median, side.ops_per_second, side.median) {
        // A latency case: operations per second of its loop, with the sync where it has one.
        (Some(rate), Some(ops), Some(write)) => format!("{:.0}/s", ops * rate / write),
        (Some(rate), _, _) => format_g6(rate * 1e-9),
        (None, _, _) if side.status != Status::Ok => side.status.name().to_string(),
        (None, _, _) if durable => "—".to_string(),
        (None, _, _) => "no runs".to_string(),
    }
}

/// "×1.02 [0.98, 1.07] *", or the ratio of the medians where there is no test; no ratio
/// at all between cases of different sizes, but why.
fn ratio(versus: Option<&Versus>, durable: bool) -> String {
    let Some(versus) = versus else { return "—".to_string() };
    let Some(test) = (if durable { versus.durable.as_ref() } else { versus.write.as_ref() }) else {
        return "—".to_string();
    };
    if let Some(sizes) = versus.different_sizes {
        return sizes.reason();
    }
    match &test.tested {
        Some(t) => {
            let mark = if t.significant { " *" } else { "  " };
            format!("×{} [{}, {}]{mark}", three_digits(t.factor), three_digits(t.low), three_digits(t.high))
        }
        None => format!("×{} (no test: one run)  ", three_digits(test.other_median / test.baseline_median)),
    }
}

fn unmatched_lines(compared: &CompareResult) -> Vec<String> {
    compared
        .unmatched
        .iter()
        .map(|u| {
            let labels: Vec<&str> = u.in_files.iter().map(|&i| compared.files[i].label.as_str()).collect();
            let whose = if u.in_files.len() == 1 { "only in" } else { "not in the baseline, in" };
            format!("{} ({}): {whose} {}", u.id, format_size(u.bytes), labels.join(", "))
        })
        .collect()
}

/// One line per goal, with a line below it for each file's pick; then the files that
/// stored no answer.
/// The fastest file and strategy per goal, then the effects set side by side (filled
/// by `across` for the lab; empty for a plain compare).
fn across_lines(compared: &CompareResult) -> Vec<String> {
    let fastest = compared.fastest.iter().map(|f| format!("best of all files for {}", f.text));
    fastest.chain(compared.across.iter().map(|o| o.text.clone())).collect()
}

fn answer_lines(compared: &CompareResult) -> Vec<(String, Vec<String>)> {
    let mut lines: Vec<(String, Vec<String>)> =
        compared.answers.iter().map(|goal| goal_lines(goal, compared)).collect();
    let missing: Vec<&str> = compared.files.iter().filter(|f| !f.answer_stored).map(|f| f.label.as_str()).collect();
    if !missing.is_empty() {
        let verb = if missing.len() == 1 { "has" } else { "have" };
        lines
            .push((format!("{}: no answer stored ({verb} no recommendations to compare)", missing.join(", ")), vec![]));
    }
    if compared.answers.is_empty() && missing.len() < compared.files.len() {
        lines.push(("no goal is answered".to_string(), vec![]));
    }
    lines
}

fn goal_lines(goal: &GoalComparison, compared: &CompareResult) -> (String, Vec<String>) {
    let name = match goal.record_bytes {
        Some(bytes) => format!("{} ({})", goal.goal, plan::units::format_size(bytes)),
        None => goal.goal.clone(),
    };
    let head = match goal.same_strategy {
        Some(true) => {
            let case = &goal.picks.iter().flatten().next().expect("a same strategy has picks").case;
            format!("{name}: the same strategy, {case}")
        }
        Some(false) => format!("{name}: different strategies"),
        None => name,
    };
    let with_case = goal.same_strategy != Some(true);
    let picks = goal
        .picks
        .iter()
        .zip(&compared.files)
        .filter(|(_, file)| file.answer_stored)
        .map(|(pick, file)| match pick {
            Some(pick) => {
                let tied = if pick.tied { ", tied with the runner-up" } else { "" };
                let case = if with_case { format!("{}, ", pick.case) } else { String::new() };
                format!("{}  {case}{}{tied}", file.label, metric(&pick.metric, pick.median))
            }
            None => format!("{}  does not answer it", file.label),
        })
        .collect();
    (head, picks)
}

/// A recommendation's figure in its unit.
fn metric(name: &str, value: f64) -> String {
    let reading = result::metric::reading(name, value);
    match reading.unit {
        "GB/s" => reading.text(format_g6),
        "µs" => reading.text(three_digits),
        "" => format!("{} {name}", three_digits(value)),
        _ => reading.text(|v| format!("{v:.0}")),
    }
}

/// One line per file against the baseline: how many cases differ, of how many tested.
fn summary_lines(compared: &CompareResult) -> Vec<String> {
    let baseline = &compared.files[0].label;
    compared
        .summary
        .iter()
        .map(|pair| {
            let mut line = format!(
                "Summary: {} vs {baseline}: {} of {} cases differ significantly ({} of {} tests, Holm, α = {})",
                compared.files[pair.file].label,
                pair.cases_significant,
                pair.cases_tested,
                pair.tests_significant,
                pair.tests,
                compared.alpha
            );
            if pair.cases_untested > 0 {
                line += &format!(", {} untested", pair.cases_untested);
            }
            line
        })
        .collect()
}

/// The terminal width the rendering keeps to where it can.
pub const WIDTH: usize = 100;

fn column_widths(rows: &[Vec<String>]) -> Vec<usize> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    (0..columns).map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0)).collect()
}

/// The width of the lines [`write_aligned`] makes of `rows`.
fn aligned_width(rows: &[Vec<String>]) -> usize {
    let widths = column_widths(rows);
    2 + widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1)
}

/// The case table too wide for a terminal (five filesystems made ~325 columns): each
/// case's line, then one line per file with its median and its factor against the
/// baseline, the "durable" lines likewise below it.
fn write_case_blocks(out: &mut dyn Write, rows: &[Vec<String>], compared: &CompareResult) -> io::Result<()> {
    let labels: Vec<&str> = compared.files.iter().map(|file| file.label.as_str()).collect();
    let label_width = labels.iter().map(|label| label.chars().count()).max().unwrap_or(0);
    let figure_width = rows[1..]
        .iter()
        .flat_map(|row| std::iter::once(&row[1]).chain(row[2..].iter().step_by(2)))
        .map(|cell| cell.chars().count())
        .max()
        .unwrap_or(0);
    for row in &rows[1..] {
        writeln!(out, "  {}", row[0])?;
        let pad = if row[0].starts_with("  ") { "        " } else { "      " };
        writeln!(out, "{pad}{:<label_width$}  {:>figure_width$}", labels[0], row[1])?;
        for (index, pair) in row[2..].chunks(2).enumerate() {
            let (figure, ratio) = (&pair[0], pair.get(1).map_or("", String::as_str));
            let line = format!("{pad}{:<label_width$}  {figure:>figure_width$}  {ratio}", labels[index + 1]);
            writeln!(out, "{}", line.trim_end())?;
        }
    }
    Ok(())
}

/// Columns padded to their widest cell; the columns in `right` aligned right.
fn write_aligned(out: &mut dyn Write, rows: &[Vec<String>], right: &[usize]) -> io::Result<()> {
    let widths = column_widths(rows);
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, cell)| {
                let width = widths[c];
                if right.contains(&c) { format!("{cell:>width$}") } else { format!("{cell:<width$}") }
            })
            .collect();
        writeln!(out, "  {}", cells.join("  ").trim_end())?;
    }
    Ok(())
}

fn write_markdown_table(out: &mut dyn Write, rows: &[Vec<String>], numbers: bool) -> io::Result<()> {
    let Some((header, body)) = rows.split_first() else { return Ok(()) };
    // An indented first cell (a case's durable line) keeps its tie to the line above.
    let cell = |c: &String| if c.starts_with("  ") { format!("↳ {}", escape(c.trim())) } else { escape(c.trim()) };
    let line = |row: &Vec<String>| format!("| {} |", row.iter().map(cell).collect::<Vec<_>>().join(" | "));
    writeln!(out, "{}", line(header))?;
    let rule: Vec<&str> = (0..header.len()).map(|c| if numbers && c > 0 { "---:" } else { "---" }).collect();
    writeln!(out, "|{}|", rule.join("|"))?;
    for row in body {
        writeln!(out, "{}", line(row))?;
    }
    Ok(())
}

/// Markdown's table separator and emphasis characters, taken literally.
fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('|', "\\|").replace('*', "\\*").replace('_', "\\_")
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
