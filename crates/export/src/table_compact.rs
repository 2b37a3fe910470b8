//! The default table's lines: one per case within [`WIDTH`] columns, with the median,
//! its interval and the durable figure; the case named by its id (without the state,
//! which the section names), and a legend of the id's abbreviations once, above it.
//! The notes that do not fit the case's line follow it, indented. `--style classic` and
//! the Markdown export keep the `( min, mean ± sd, max )` lines of the original write-ups.

use std::io::{self, Write};

use crate::text::{Paint, WIDTH, wrap};
use crate::wording::{cpu_note, detail_notes, dirty_words, noise_note};
use plan::CaseKind;
use plan::numbers::three_digits;
use plan::units::format_size;
use result::Summary;
use result::glance::{Shown, WIDE_RANGE};
use result::{CaseResult, Status};

/// Where the notes that do not fit a case's line start.
const CONTINUATION: &str = "        ";

/// The legend above the table: what the figures are and how a case's id is read.
pub fn legend(runs_wording: &str) -> Vec<String> {
    [
        "GB/s: bytes over the mean run time, its 95 % range in brackets, as in the Answer; durable \
         includes the sync (— where the mode never syncs)"
            .to_string(),
        format!("runs: {runs_wording}"),
        "a case: method, chunk, xN buffers a call, qdN requests in flight, tN threads, fN files \
         (one shared file if no f), then the durability mode (see writebench run --help)"
            .to_string(),
        "of ceiling: the median's share of this machine's memory copy at the case's size (mem) or \
         of the device's own write rate (dev), from the calibration"
            .to_string(),
    ]
    .iter()
    .flat_map(|text| wrapped(text, "", "  "))
    .collect()
}

/// `text` wrapped to [`WIDTH`]: its first line after `first`, the others after `rest`.
pub fn wrapped(text: &str, first: &str, rest: &str) -> Vec<String> {
    let width = WIDTH - first.chars().count().max(rest.chars().count());
    wrap(text, width)
        .into_iter()
        .enumerate()
        .map(|(number, line)| format!("{}{line}", if number == 0 { first } else { rest }))
        .collect()
}

/// One case's line, in cells, and its notes.
pub struct Row {
    cells: [String; 4],
    /// "noisy": a figure's interval is wider than its target; coloured as a warning.
    noisy: bool,
    notes: Vec<String>,
    /// The "CPU-bound" note among `notes`, and the writers' median CPU share: said
    /// once above the table instead when every case of it has one (on tmpfs, all do).
    cpu: Option<(String, f64)>,
    /// The "started with … dirty" note among `notes`, and the most bytes a run found
    /// dirty: said once above the table when every case of it has one, as another
    /// program's dirty pages on the machine give every case (a build just before).
    dirty: Option<(String, f64)>,
    /// A file creation: its figures are µs per call, not GB/s (a 64 MiB ftruncate at
    /// 3 µs would read "24000 GB/s", which no data moved at).
    creation: bool,
}

pub fn row(result: &CaseResult, usual_size: u64) -> Row {
    let mut label = short_id(result);
    let creates = result.case.kind == CaseKind::Creation;
    if result.case.bytes != usual_size && !creates {
        label += &format!(" ({})", format_size(result.case.bytes));
    }
    match (result.status, result.stats.or(result.call_us)) {
        (Status::Ok, Some(buffered)) => {
            let mut poorly = None;
            let mut shown = |summary: &Summary| match creates {
                true => per_call(summary),
                false => {
                    let shown = Shown::of(summary, "bytes/s");
                    if !shown.well_measured {
                        poorly = Some(format!("not measured well enough ({} runs)", shown.runs));
                    }
                    figure(&shown)
                }
            };
            let buffered_cell = shown(&buffered);
            let durable = match result.durable_stats.or(result.durable_call_us) {
                Some(durable) => shown(&durable),
                None => "—".to_string(),
            };
            let mut notes = detail_notes(result);
            // Too wide a range says more than "noisy", and is said instead of it.
            let noisy = poorly.is_none() && noise_note(result).is_some();
            notes.splice(0..0, poorly);
            Row {
                cells: [label, buffered_cell, durable, ceiling(result)],
                noisy,
                notes,
                cpu: cpu_note(result).map(|note| (note, result.facts.cpu_share.unwrap_or(f64::NAN))),
                dirty: result.facts.dirty_at_start.map(|(count, most)| (dirty_words(count, most), most as f64)),
                creation: creates,
            }
        }
        (status, _) => {
            let reason = result.error.clone().unwrap_or_default();
            Row {
                cells: [label, String::new(), String::new(), String::new()],
                noisy: false,
                notes: vec![format!("{}: {reason}", status.name())],
                cpu: None,
                dirty: None,
                creation: creates,
            }
        }
    }
}

/// The rows of one subsection under a header of their own, aligned; notes that would
/// pass [`WIDTH`] move to the lines below the case's, indented.
/// `durable` false leaves the durable column out: on a filesystem that keeps its files
/// in memory, no figure is durable (the exports keep what the syncs measured).
pub fn write(out: &mut dyn Write, rows: &[Row], paint: Paint, durable: bool) -> io::Result<()> {
    let mut rows = said_once(rows);
    if !durable {
        for row in &mut rows {
            row.cells[2].clear();
        }
    }
    let cpu = |share: f64| format!("{:.0}", 100.0 * share.min(1.0));
    let rows = said_once_above(out, rows, |row| &mut row.cpu, &|low, high| {
        let range = if cpu(low) == cpu(high) { cpu(high) } else { format!("{}-{}", cpu(low), cpu(high)) };
        format!("every case below is CPU-bound (writers on CPU {range} % of the time): the calls set the pace")
    })?;
    let rows = said_once_above(out, rows, |row| &mut row.dirty, &|_, most| {
        format!(
            "every case below had runs that started with dirty pages waiting, up to {} (earlier writeback \
             overlapped them)",
            format_size(most as u64)
        )
    })?;
    // A subsection of file creations only (the table groups them so) reads in µs.
    let unit = if !rows.is_empty() && rows.iter().all(|r| r.creation) { "µs/call" } else { "GB/s" };
    let header = ["case", unit, if durable { "durable" } else { "" }, "of ceiling"].map(String::from);
    let width = |column: usize| {
        rows.iter().map(|r| r.cells[column].chars().count()).chain([header[column].chars().count()]).max().unwrap_or(0)
    };
    let widths = [width(0), width(1), width(2), width(3)];
    let line_of = |cells: &[String; 4]| {
        let gap = if durable { "  " } else { "" };
        format!(
            "    {:<w0$}  {:>w1$}{gap}{:>w2$}  {:<w3$}",
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3]
        )
    };
    let mut notes_header = line_of(&header);
    notes_header.push_str("  notes");
    writeln!(out, "{}", notes_header.trim_end())?;
    for row in rows {
        let line = line_of(&row.cells);
        let mut notes: Vec<String> = row.notes.clone();
        if row.noisy {
            notes.insert(0, "noisy".to_string());
        }
        let joined = notes.join(", ");
        let fits = line.chars().count() + 2 + joined.chars().count() <= WIDTH;
        if fits || joined.is_empty() {
            let coloured = colour_notes(&joined, row.noisy, paint);
            writeln!(out, "{}", format!("{line}  {coloured}").trim_end())?;
            continue;
        }
        // The figures stay on the case's line; "noisy" with them when it fits.
        let (inline, rest) = match row.noisy && line.chars().count() + 7 <= WIDTH {
            true => (format!("  {}", paint.warn("noisy")), notes[1..].join(", ")),
            false => (String::new(), joined.clone()),
        };
        writeln!(out, "{}", format!("{line}{inline}").trim_end())?;
        for continued in wrapped(&rest, CONTINUATION, CONTINUATION) {
            writeln!(out, "{continued}")?;
        }
    }
    Ok(())
}

/// Where every measured case of the table has the note `field` holds, one line above it
/// says so, from the least and the most of the figure beside each note, and the rows
/// leave the note out: fifteen lines of "CPU-bound (writers on CPU 100 % of the time)"
/// on tmpfs said nothing a line would not.
fn said_once_above(
    out: &mut dyn Write,
    mut rows: Vec<Row>,
    field: impl Fn(&mut Row) -> &mut Option<(String, f64)>,
    sentence: &dyn Fn(f64, f64) -> String,
) -> io::Result<Vec<Row>> {
    let mut figures = Vec::new();
    let mut measured = 0;
    for row in rows.iter_mut().filter(|row| !row.cells[1].is_empty()) {
        measured += 1;
        figures.extend(field(row).as_ref().map(|note| note.1));
    }
    if measured < 2 || figures.len() < measured {
        return Ok(rows);
    }
    let low = figures.iter().copied().fold(f64::INFINITY, f64::min);
    let high = figures.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    for line in wrapped(&sentence(low, high), "    ", "      ") {
        writeln!(out, "{line}")?;
    }
    for row in &mut rows {
        if let Some((note, _)) = field(row).take() {
            row.notes.retain(|n| *n != note);
        }
    }
    Ok(rows)
}

/// Rows whose case did not run for the same reason as the row above say "as above":
/// a family refused in a state repeats one reason for every chunk and thread count.
fn said_once(rows: &[Row]) -> Vec<Row> {
    let mut out: Vec<Row> = Vec::with_capacity(rows.len());
    let mut previous: Option<&str> = None;
    for row in rows {
        let reason = row.cells[1].is_empty().then(|| row.notes.first().map(String::as_str)).flatten();
        let mut row = Row {
            cells: row.cells.clone(),
            noisy: row.noisy,
            notes: row.notes.clone(),
            cpu: row.cpu.clone(),
            dirty: row.dirty.clone(),
            creation: row.creation,
        };
        if reason.is_some() && reason == previous {
            let status = reason.unwrap_or_default().split(':').next().unwrap_or_default();
            row.notes = vec![format!("{status}: as above")];
        }
        previous = reason;
        out.push(row);
    }
    out
}

fn colour_notes(notes: &str, noisy: bool, paint: Paint) -> String {
    match notes.strip_prefix("noisy") {
        Some(rest) if noisy => format!("{}{rest}", paint.warn("noisy")),
        _ => notes.to_string(),
    }
}

/// The case's id without its state, which the section heading names.
fn short_id(result: &CaseResult) -> String {
    let state = result.case.state.name();
    let mut dropped = false;
    let words: Vec<&str> = result
        .case
        .id
        .split(' ')
        .filter(|word| {
            let drop = !dropped && *word == state;
            dropped |= drop;
            !drop
        })
        .collect();
    words.join(" ")
}

/// "4.65 (4.51–4.80)": bytes over the mean time in GB/s to three significant digits,
/// and the 95 % range of that figure (none from a single run, or where the range is too
/// wide to mean anything: a note says so).
fn figure(shown: &Shown) -> String {
    let value = three_digits(shown.value * 1e-9);
    match (shown.low, shown.high) {
        (Some(low), Some(high)) if shown.well_measured => {
            format!("{value} ({}–{})", three_digits(low * 1e-9), three_digits(high * 1e-9))
        }
        _ => value,
    }
}

/// A creation's mean time per call in µs (`call_us`), with the 95 % range of the mean.
fn per_call(micros: &Summary) -> String {
    let value = three_digits(micros.mean);
    match (micros.ci95_low, micros.ci95_high) {
        (Some(low), Some(high)) if low > 0.0 && high / low <= WIDE_RANGE => {
            format!("{value} ({}–{})", three_digits(low), three_digits(high))
        }
        _ => value,
    }
}

/// "41 % mem", or "41 % mem, 23 % dev" where the durable figure has its own ceiling or
/// share.
fn ceiling(result: &CaseResult) -> String {
    let Some(share) = &result.ceiling else { return String::new() };
    let short = |of: &str| match of {
        "memory copy" => "mem".to_string(),
        "device" => "dev".to_string(),
        other => other.to_string(),
    };
    let percent = |pct: f64| if pct < 0.5 { "<1 %".to_string() } else { format!("{pct:.0} %") };
    let buffered = format!("{} {}", percent(share.buffered_pct), short(&share.buffered_of));
    match (share.durable_pct, &share.durable_of) {
        (Some(pct), Some(of)) => {
            let durable = format!("{} {}", percent(pct), short(of));
            if durable == buffered { buffered } else { format!("{buffered}, {durable}") }
        }
        _ => buffered,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use context::calibration::CeilingShare;
    use plan::{Case, FileState};
    use result::Run;

    fn measured(mode: &str, times: &[f64]) -> CaseResult {
        let method = plan::catalog::by_name("pwrite").unwrap();
        let case = Case::new(method, FileState::Prealloc, 1 << 20, 1, mode.parse().unwrap(), 1 << 30);
        let runs = times.iter().map(|&t| Run { write_seconds: t, sync_seconds: 0.1, ..Run::default() }).collect();
        analysis::advice::testkit::measured(case, runs, 1)
    }

    fn rendered(rows: &[Row]) -> String {
        let mut out = Vec::new();
        write(&mut out, rows, Paint::PLAIN, true).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_line_names_the_case_without_its_state_and_gives_median_and_interval() {
        let row = row(&measured("end", &[1.0, 1.0, 1.0]), 1 << 30);
        assert_eq!(row.cells[0], "pwrite 1MiB t1 end");
        assert_eq!(row.cells[1], "1.07 (1.07–1.07)", "1 GiB in 1 s");
        assert_eq!(row.cells[2], "0.976 (0.976–0.976)", "1 GiB in 1.1 s with the sync");
        let none = super::row(&measured("none", &[1.0, 1.1, 0.9]), 1 << 30);
        assert_eq!(none.cells[2], "—", "nothing synced, no durable figure");
        assert_eq!(none.cells[1], "1.07 (0.860–1.43)", "bytes over the mean time, and its range");
        let wide = super::row(&measured("none", &[0.1, 1.9]), 1 << 30);
        assert_eq!(wide.cells[1], "1.07", "a range past 10x is no figure");
        assert_eq!(wide.notes[0], "not measured well enough (2 runs)");
        let other_size = super::row(&measured("none", &[1.0]), 1 << 20);
        assert_eq!(other_size.cells[0], "pwrite 1MiB t1 none (1 GiB)");
        assert_eq!(other_size.cells[1], "1.07", "one run: no interval");
    }

    #[test]
    fn ceilings_are_short_and_a_durable_share_shows_only_where_it_differs() {
        let mut result = measured("end", &[1.0, 1.0]);
        let share = CeilingShare {
            buffered_pct: 41.2,
            buffered_of: "memory copy".into(),
            durable_pct: Some(23.0),
            durable_of: Some("device".into()),
        };
        result.ceiling = Some(share.clone());
        assert_eq!(ceiling(&result), "41 % mem, 23 % dev");
        result.ceiling =
            Some(CeilingShare { durable_pct: Some(41.4), durable_of: Some("memory copy".into()), ..share });
        assert_eq!(ceiling(&result), "41 % mem");
    }

    #[test]
    fn notes_that_do_not_fit_follow_the_line_and_no_line_passes_the_width() {
        let mut quiet = row(&measured("end", &[1.0, 1.0, 1.0]), 1 << 30);
        quiet.notes = vec!["threads spread 6 %".into()];
        let mut busy = row(&measured("end", &[1.0, 1.5, 0.7]), 1 << 30);
        busy.noisy = true;
        busy.notes = vec!["another process busy on CPU (up to 101 % of one CPU in 4 runs)".into(); 3];
        let text = rendered(&[quiet, busy]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("    case") && lines[0].ends_with("notes"), "{text}");
        assert!(lines[1].contains("0.976 (0.976–0.976)") && lines[1].ends_with("  threads spread 6 %"), "{text}");
        assert!(lines[2].ends_with("noisy"), "noisy stays beside the figures: {text}");
        assert!(lines[3].starts_with("        another process busy"), "{text}");
        assert!(lines.len() >= 5, "three long notes take more than one line: {text}");
        assert!(lines.iter().all(|line| line.chars().count() <= WIDTH), "{text}");
    }

    #[test]
    fn a_case_that_did_not_run_says_why_below_it() {
        let mut result = measured("end", &[1.0]);
        result.status = Status::Unsupported;
        result.stats = None;
        result.error = Some("O_DIRECT: Invalid argument (EINVAL) ".repeat(4));
        let text = rendered(&[row(&result, 1 << 30)]);
        assert!(text.lines().nth(2).unwrap().starts_with("        unsupported: O_DIRECT"), "{text}");
        assert!(text.lines().all(|line| line.chars().count() <= WIDTH), "{text}");
    }

    #[test]
    fn a_reason_is_said_once_for_the_cases_below_it() {
        let mut result = measured("end", &[1.0]);
        result.status = Status::Unsupported;
        result.stats = None;
        result.error = Some("mmap cannot extend a file".into());
        let text = rendered(&[row(&result, 1 << 30), row(&result, 1 << 30), row(&measured("end", &[1.0]), 1 << 30)]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].ends_with("unsupported: mmap cannot extend a file"), "{text}");
        assert!(lines[2].ends_with("unsupported: as above"), "{text}");
        assert!(!lines[3].contains("as above"), "{text}");
    }

    #[test]
    fn a_cpu_bound_note_every_case_has_is_said_once_above_the_table() {
        let bound = |share: f64| {
            let mut result = measured("end", &[1.0, 1.0]);
            result.cpu_bound = true;
            result.runs.iter_mut().for_each(|run| run.cpu_share = Some(share));
            result.facts = analysis::case_facts::facts(&result);
            result
        };
        let text = rendered(&[row(&bound(0.97), 1 << 30), row(&bound(1.0), 1 << 30)]);
        assert!(text.starts_with("    every case below is CPU-bound (writers on CPU 97-100 % of the time)"), "{text}");
        assert_eq!(text.matches("CPU-bound").count(), 1, "{text}");
        // One case that is not: each says its own.
        let text = rendered(&[row(&bound(0.97), 1 << 30), row(&measured("end", &[1.0, 1.0]), 1 << 30)]);
        assert!(!text.contains("every case"), "{text}");
        assert!(text.contains("pwrite 1MiB t1 end") && text.contains("CPU-bound (writers on CPU 97 % of the time)"));
        assert!(text.lines().all(|line| line.chars().count() <= WIDTH), "{text}");
    }

    /// Another program's dirty pages (a build just before) give every case runs that
    /// started dirty: one line above the table, not one under each case.
    #[test]
    fn a_dirty_start_every_case_has_is_said_once_above_the_table() {
        let dirty = |mib: u64| {
            let mut result = measured("end", &[1.0, 1.0]);
            result.runs[0].dirty_before_bytes = Some(mib << 20);
            result.facts = analysis::case_facts::facts(&result);
            result
        };
        // 1 GiB a run: dirty past a tenth of it.
        let text = rendered(&[row(&dirty(150), 1 << 30), row(&dirty(310), 1 << 30)]);
        assert!(
            text.starts_with("    every case below had runs that started with dirty pages waiting, up to 310 MiB"),
            "{text}"
        );
        assert_eq!(text.matches("dirty").count(), 1, "{text}");
        // One case without: each says its own.
        let text = rendered(&[row(&dirty(150), 1 << 30), row(&measured("end", &[1.0, 1.0]), 1 << 30)]);
        assert!(!text.contains("every case"), "{text}");
        assert!(text.contains("1 run started with up to 150 MiB dirty (earlier writeback overlapped)"), "{text}");
        assert!(text.lines().all(|line| line.chars().count() <= WIDTH), "{text}");
    }

    #[test]
    fn the_legend_fits() {
        let legend = legend("5 to 7 runs, until the 95 % CI of the mean is within ±5 % (noisy: not reached)");
        assert!(legend.iter().all(|line| line.chars().count() <= WIDTH), "{legend:?}");
        assert!(legend.iter().any(|line| line.contains("tN threads")), "{legend:?}");
    }
}
