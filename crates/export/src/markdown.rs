//! `--export-markdown`: the layout of rapidgzip's benchmarkIOWrite reports (the
//! hand-written documents writebench replaces), so that their readers feel at home:
//! File Creation; Mmap Write; then "Write into" each file state with Vectorized,
//! Parallel and Simple Writing; one `label: ( min: a, mean ± sd, max: b ) GB/s` line
//! per case. Before them, right after the header, the Answer (each goal's lines as the
//! terminal prints them) and a numbered list of Observations; after them the context.
//!
//! Every case gets a line: cases that fit none of those sections (io_uring, latency,
//! anything unknown) go under "More Cases" at the end, never dropped. The lines are
//! indented code, as in those documents, so text from the result file is literal
//! there; elsewhere it is escaped so that it cannot become markup.

use std::io::{self, Write};

use crate::document::{self, one_line};
use crate::latency_table::is_latency_case;
use crate::wording::{most_common_size, notes, runs_wording};
use plan::FileState;
use plan::catalog::{self, Family};
use plan::numbers::format_mean_sd;
use plan::units::format_size;
use result::{CaseResult, ResultFile, Status};

/// Where a case goes in the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Place {
    Creation,
    Mmap,
    State(FileState, Kind),
    Asynchronous,
    Latency,
    Other,
}

/// The subsections of a state section, in the documents' order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Vectorized,
    Parallel,
    Simple,
}

impl Kind {
    fn title(self) -> &'static str {
        match self {
            Kind::Vectorized => "Vectorized Writing",
            Kind::Parallel => "Parallel Writing",
            Kind::Simple => "Simple Writing",
        }
    }
}

fn place(case: &CaseResult) -> Place {
    if is_latency_case(&case.case) {
        return Place::Latency;
    }
    let Some(method) = catalog::by_name(&case.case.method) else { return Place::Other };
    let several = case.case.threads > 1;
    match method.family {
        Family::Creation => Place::Creation,
        Family::Mapped => Place::Mmap,
        Family::Asynchronous => Place::Asynchronous,
        Family::Parallel => Place::State(case.case.state, Kind::Parallel),
        Family::Vectored | Family::Simple if several => Place::State(case.case.state, Kind::Parallel),
        Family::Vectored => Place::State(case.case.state, Kind::Vectorized),
        Family::Simple => Place::State(case.case.state, Kind::Simple),
    }
}

/// (section, subsection) titles of a place.
fn titles(place: Place) -> (String, Option<&'static str>) {
    match place {
        Place::Creation => ("File Creation".into(), None),
        Place::Mmap => ("Mmap Write".into(), None),
        Place::State(state, kind) => (format!("Write into {}", state.description()), Some(kind.title())),
        Place::Asynchronous => ("More Cases".into(), Some("Asynchronous Writing (io_uring)")),
        Place::Latency => ("More Cases".into(), Some("Small Writes, One at a Time (latency)")),
        Place::Other => ("More Cases".into(), Some("Other Cases")),
    }
}

pub fn render(result: &ResultFile, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "# {}\n", escape(&document::title(result)))?;
    let size = format_size(most_common_size(result));
    writeln!(
        out,
        "{size} per run unless a line says otherwise. Each line: the buffered throughput (bytes over the time of \
         the write calls) in GB/s, as ( min: a, mean ± sd, max: b ) over {}; then, where the durability mode \
         syncs, the durable throughput (the write calls and the sync).",
        escape(&runs_wording(&result.options))
    )?;
    if let Some(source) = document::data_source(result) {
        writeln!(out, "\n{}", escape(source))?;
    }
    if let Some(note) = document::target_note(result) {
        writeln!(out, "\nNote: {note}")?;
    }
    if let Some(command) = document::command_line(result) {
        let fence = fence_for(&command);
        writeln!(out, "\n{fence}bash\n{command}\n{fence}")?;
    }
    // The Answer first, as on the terminal and in the HTML: what to do comes before the
    // evidence; then the observations, then every case.
    writeln!(out, "\n## Answer\n")?;
    if result.answer.is_empty() {
        writeln!(out, "{}", document::no_answer(result))?;
    }
    for (title, recommendation) in document::shown_answers(result, false) {
        let goal = escape(&title);
        match crate::glance::lines(recommendation) {
            // The three lines first, as on the terminal; the rule behind the pick under them.
            Some(lines) => {
                writeln!(out, "- **{goal}**: {}", escape(&lines[0]))?;
                for line in &lines[1..] {
                    writeln!(out, "  {}", escape(line))?;
                }
                writeln!(out, "  <br>*Why:* {}", escape(&recommendation.text))?;
                // What a reader should know beside the lines, as `--explain` says it.
                for caveat in recommendation.glance.iter().flat_map(|g| &g.caveats) {
                    writeln!(out, "  <br>{}", escape(caveat))?;
                }
            }
            None => {
                let tied = if recommendation.tied { " (tied)" } else { "" };
                writeln!(out, "- **{goal}**{tied}: {}", escape(&recommendation.text))?;
            }
        }
    }
    writeln!(out, "\n## Observations\n")?;
    if result.observations.is_empty() {
        writeln!(out, "{}", document::no_observations(result))?;
    }
    for (number, observation) in result.observations.iter().enumerate() {
        writeln!(out, "{:>2}. {}", number + 1, escape(&observation.text))?;
    }
    let mut placed: Vec<(Place, &CaseResult)> = result.cases.iter().map(|case| (place(case), case)).collect();
    // Stable: within a place, the result's own order (the suite's).
    placed.sort_by_key(|(place, _)| *place);
    let mut section = String::new();
    let mut index = 0;
    while index < placed.len() {
        let place = placed[index].0;
        let end = placed[index..].iter().position(|(p, _)| *p != place).map_or(placed.len(), |n| index + n);
        let (title, subsection) = titles(place);
        if title != section {
            writeln!(out, "\n## {title}")?;
            section = title;
        }
        if let Some(subsection) = subsection {
            writeln!(out, "\n### {subsection}")?;
        }
        writeln!(out)?;
        write_lines(out, place, &placed[index..end])?;
        index = end;
    }
    if !result.crash.is_empty() {
        writeln!(
            out,
            "\n## Crash checks\n\nThe durable modes measured, on a new {} with these mount options, against simulated \
             power losses (docs/crash.md):\n",
            escape(&result.target.fs_type)
        )?;
        super::crash::markdown_table(&result.crash, out)?;
    }
    writeln!(out, "\n## Context\n")?;
    for (name, value) in document::context_facts(result) {
        writeln!(out, "- {name}: {}", escape(&value))?;
    }
    let options = document::options_json(result);
    let fence = fence_for(&options);
    writeln!(out, "\nOptions as applied:\n\n{fence}json\n{options}\n{fence}")
}

/// The lines of one subsection, a blank line between methods as in the documents.
fn write_lines(out: &mut dyn Write, place: Place, cases: &[(Place, &CaseResult)]) -> io::Result<()> {
    let chunk_width = cases.iter().map(|(_, c)| format_size(c.case.chunk_bytes).len()).max().unwrap_or(0);
    let mut previous: Option<(&str, u32)> = None;
    for (_, case) in cases {
        let group = (case.case.method.as_str(), case.case.files);
        if previous.is_some_and(|previous| previous != group) {
            writeln!(out)?;
        }
        previous = Some(group);
        let line = if place == Place::Latency { latency_line(case) } else { line(place, case, chunk_width) };
        // Only breaks from the result file's text are replaced: the alignment stays.
        writeln!(out, "    {}", line.replace(|c: char| c.is_control(), " "))?;
    }
    Ok(())
}

/// The documents' wording of a case, e.g. "writev 1 GiB into an emptied file in  4 KiB
/// chunks (x128)", with the durability mode after it, then its figures.
fn line(place: Place, result: &CaseResult, chunk_width: usize) -> String {
    let case = &result.case;
    let runtime = if case.runtime == catalog::NATIVE { String::new() } else { format!("{}: ", case.runtime) };
    let size = format_size(case.bytes);
    let chunk = format!("{:>chunk_width$}", format_size(case.chunk_bytes));
    let vectored = catalog::by_name(&case.method).is_some_and(|m| m.vectored);
    let iov = if vectored { format!(" (x{})", case.iov) } else { String::new() };
    let threads = case.threads;
    let into = |state: FileState| format!("into {}", state.description());
    let label = match place {
        Place::Creation => format!("{} file sized {size}", case.method),
        Place::Mmap => {
            let how = match case.state {
                FileState::Sparse => format!("ftruncate + mmap write {size}"),
                FileState::Prealloc => format!("fallocate + mmap write {size}"),
                state => format!("mmap write {size} {}", into(state)),
            };
            let variant = match case.method.as_str() {
                "mmap" => String::new(),
                "mmap-maps" => " and maps".to_string(),
                "mmap-fds" => " and maps and fds".to_string(),
                other => format!(" ({other})"),
            };
            let using = if case.method == "mmap" && threads == 1 {
                String::new()
            } else {
                format!(" using {threads:>2} threads{variant}")
            };
            format!("{how} in {} chunks{using}", format_size(case.chunk_bytes))
        }
        Place::State(_, Kind::Parallel) if case.files > 1 => format!(
            "Use {} to write {size} into one file per thread in {chunk} chunks{iov} using {threads:>2} threads",
            case.method
        ),
        Place::State(state, Kind::Parallel) => {
            format!(
                "Use {} to write {size} {} in {chunk} chunks{iov} using {threads:>2} threads",
                case.method,
                into(state)
            )
        }
        Place::State(state, _) => format!("{} {size} {} in {chunk} chunks{iov}", case.method, into(state)),
        Place::Asynchronous => {
            let depth = case.queue_depth.map(|depth| format!(", {depth} in flight")).unwrap_or_default();
            let several = if threads > 1 { format!(" using {threads:>2} threads") } else { String::new() };
            format!("{} {size} {} in {chunk} chunks{depth}{several}", case.method, into(case.state))
        }
        Place::Latency | Place::Other => case.id.clone(),
    };
    format!("{runtime}{label}, sync {}: {}", case.durability, figures(result))
}

/// "( min: a, mean ± sd, max: b ) GB/s; durable m ± s GB/s; notes", or why there is no figure.
fn figures(result: &CaseResult) -> String {
    match (result.status, result.stats.or(result.call_us)) {
        (Status::Ok, Some(buffered)) => {
            // A file creation in µs per call (`document::per_call`), others in GB/s.
            let (buffered, durable, unit) = match crate::document::per_call(result) {
                Some((write, durable)) => (write, durable, "µs per call"),
                None => (buffered.scaled(1e-9), result.durable_stats.map(|d| d.scaled(1e-9)), "GB/s"),
            };
            let mut text = format!("{} {unit}", crate::document::seed_style(&buffered));
            if let Some(durable) = durable {
                text += &format!("; durable {} {unit}", format_mean_sd(durable.mean, durable.stddev));
            }
            let notes = notes(result);
            if !notes.is_empty() {
                text += &format!("; {}", notes.join(", "));
            }
            text
        }
        (Status::Ok, None) => "no figure: no run gave a usable time".to_string(),
        (status, _) => format!("{}: {}", status.name(), result.error.as_deref().unwrap_or("no reason recorded")),
    }
}

/// "overwrite0 8B odsync: 1000 operations, mean 0.34 µs, p50 …, max …, 2609876 per second".
fn latency_line(result: &CaseResult) -> String {
    let label = result.case.id.trim_start_matches("latency ");
    let Some(latency) = result.latency_ns.as_ref().filter(|_| result.status == Status::Ok) else {
        return format!("{label}: {}", figures(result));
    };
    let micros = |value: &serde_json::Value, key: &str| value.get(key).and_then(|v| v.as_f64()).map(|ns| ns / 1000.0);
    let percentiles = |value: &serde_json::Value| {
        [("mean", "mean"), ("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p999", "p99.9"), ("max", "max")]
            .iter()
            .filter_map(|(key, name)| micros(value, key).map(|us| format!("{name} {us:.2} µs")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let count = latency.get("count").and_then(|v| v.as_u64()).unwrap_or(0);
    let mut text = format!("{label}: {count} operations, {}", percentiles(latency));
    if let Some(ops) = result.ops_per_second {
        text += &format!(", {ops:.0} per second");
    }
    if let Some(sync) = &result.sync_latency_ns {
        text += &format!("; of which the sync call: {}", percentiles(sync));
    }
    if let Some(note) = crate::wording::race_note(result) {
        text += &format!("; {note}");
    }
    text
}

/// A code fence longer than any run of backticks in `text`, so the text cannot close it.
fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

/// Text from the result file outside code: one line, and no character that would make
/// it a link, emphasis, code or an HTML tag.
fn escape(text: &str) -> String {
    let mut escaped = String::new();
    for c in one_line(text).chars() {
        if matches!(c, '\\' | '`' | '*' | '[' | ']' | '<') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    escaped
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
