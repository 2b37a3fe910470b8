//! How a program writes (`writebench trace`, docs/trace.md) in words: per file, a few
//! labelled lines (how it was made, the write calls, where they went, the syncs and what
//! lay between them, preallocation, a save by rename, who wrote it, when), the same
//! lines on the terminal, in Markdown and in HTML; then what the trace could not see and
//! what it left out. The figures are counts: the times are the traced program's, slowed
//! by the tracer, and are said to be.

use std::io::{self, Write};

use html_escape::encode_text as text;

use plan::numbers::{seconds, thousands};
use plan::units::format_size;
use result::trace::{FilePattern, Made, Offsets, ReplayFigures, Spread, SyncCall, TraceReport};

pub use crate::trace_answer::{alternative_line, answer};
use crate::trace_words::{call_name, plural, rate, sync_name};

/// Files shown on the terminal; the exports hold every one.
const SHOWN: usize = 10;

pub fn render_text(report: &TraceReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "{}\n", header(report))?;
    let answer = answer(report);
    if !answer.is_empty() {
        writeln!(out, "Answer")?;
        for line in &answer {
            writeln!(out, "  {line}")?;
        }
        writeln!(out)?;
    }
    if report.files.is_empty() {
        writeln!(out, "The program wrote no file.")?;
    }
    for file in report.files.iter().take(SHOWN) {
        writeln!(out, "{}", title(file))?;
        for (label, line) in lines(file) {
            writeln!(out, "  {label:<10}{line}")?;
        }
        writeln!(out)?;
    }
    if report.files.len() > SHOWN {
        let rest = &report.files[SHOWN..];
        let bytes: u64 = rest.iter().map(|f| f.bytes).sum();
        writeln!(
            out,
            "... and {} more files ({} in all): --export-json, --export-markdown or --export-html hold every one.\n",
            thousands(rest.len() as u64),
            format_size(bytes)
        )?;
    }
    for line in notes(report) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

pub fn render_json(report: &TraceReport, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report).map_err(io::Error::other)?;
    writeln!(out)
}

pub fn render_markdown(report: &TraceReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "# How the program writes\n\n{}\n", header(report))?;
    let answer = answer(report);
    if !answer.is_empty() {
        writeln!(out, "## Answer\n")?;
        for line in &answer {
            writeln!(out, "- {line}")?;
        }
        writeln!(out)?;
    }
    if report.files.is_empty() {
        writeln!(out, "The program wrote no file.\n")?;
    }
    for file in &report.files {
        writeln!(out, "## {}\n", title(file).replace('`', "'"))?;
        writeln!(out, "| | |\n|---|---|")?;
        for (label, line) in lines(file) {
            writeln!(out, "| {label} | {} |", line.replace('|', "\\|"))?;
        }
        writeln!(out)?;
    }
    for line in notes(report) {
        writeln!(out, "- {line}")?;
    }
    Ok(())
}

pub fn render_html(report: &TraceReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>How the program writes</title>\n\
         <style>body{{font-family:sans-serif;max-width:70em;margin:2em auto}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}}</style></head><body>"
    )?;
    writeln!(out, "<h1>How the program writes</h1>\n<p>{}</p>", text(&header(report)))?;
    let answer = answer(report);
    if !answer.is_empty() {
        writeln!(out, "<section id=\"answer\"><h2>Answer</h2><ul>")?;
        for line in &answer {
            writeln!(out, "<li>{}</li>", text(line))?;
        }
        writeln!(out, "</ul></section>")?;
    }
    if report.files.is_empty() {
        writeln!(out, "<p>The program wrote no file.</p>")?;
    }
    for file in &report.files {
        writeln!(out, "<section><h2>{}</h2><table>", text(&title(file)))?;
        for (label, line) in lines(file) {
            writeln!(out, "<tr><th>{}</th><td>{}</td></tr>", text(label), text(&line))?;
        }
        writeln!(out, "</table></section>")?;
    }
    writeln!(out, "<ul>")?;
    for line in notes(report) {
        writeln!(out, "<li>{}</li>", text(&line))?;
    }
    writeln!(out, "</ul></body></html>")
}

/// What ran, how it ended, and that its times are not measurements.
pub fn header(report: &TraceReport) -> String {
    let what = if report.command.is_empty() {
        report.tracer.clone()
    } else {
        format!("{} under {}", shown_command(&report.command), report.tracer)
    };
    let ended = report.exit.as_ref().map(|e| format!(" ({e})")).unwrap_or_default();
    let stopped = if report.complete { "" } else { "; stopped by a signal: what was traced until then" };
    format!(
        "writebench trace: {what}{ended}: {} calls in {}{stopped}. Counted from its system calls; the times \
         are the traced program's (tracing slows every call), not measurements.",
        thousands(report.calls),
        seconds(report.seconds)
    )
}

/// The command as a user would type it, long arguments and paths kept whole.
fn shown_command(command: &[String]) -> String {
    command
        .iter()
        .map(|arg| {
            if arg.contains([' ', '\'', '"']) || arg.is_empty() {
                format!("'{}'", arg.replace('\'', "'\\''"))
            } else {
                arg.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// "/data/app.log: 301 KiB in 1,000 write calls".
fn title(file: &FilePattern) -> String {
    let calls: u64 = file.calls.iter().map(|c| c.calls).sum();
    format!("{}: {} in {} write call{}", file.path, format_size(file.bytes), thousands(calls), plural(calls))
}

/// The labelled lines of one file's pattern.
pub fn lines(file: &FilePattern) -> Vec<(&'static str, String)> {
    let mut lines = vec![("made", made(file)), ("writes", writes(file)), ("offsets", offsets(&file.offsets))];
    lines.push(("syncs", syncs(file)));
    if let Some(line) = preallocation(file) {
        lines.push(("prealloc", line));
    }
    if let Some(rename) = &file.rename {
        let times = if rename.times > 1 { format!(" ({} times)", thousands(rename.times)) } else { String::new() };
        let risk = match (rename.synced_before, rename.directory_synced_after) {
            (true, true) => "synced before the rename and its directory after: a crash leaves the old or the new file",
            (false, _) => "not synced before the rename: a crash may leave the new name with missing data",
            (true, false) => "its directory not synced after the rename: a crash may bring the old file back",
        };
        lines.push(("saved", format!("written as {}, then renamed over this name{times}; {risk}", rename.from)));
    }
    let who = match (file.threads, file.processes) {
        (1, _) => "1 thread".to_string(),
        (threads, 1) => format!("{threads} threads of one process"),
        (threads, processes) => format!("{threads} threads of {processes} processes"),
    };
    lines.push(("by", who));
    lines.push((
        "when",
        format!(
            "writes from {} to {} into the trace; {} inside write calls, {} inside syncs (traced)",
            seconds(file.first_write),
            seconds(file.last_write),
            seconds(file.seconds_writing),
            seconds(file.seconds_syncing)
        ),
    ));
    lines
}

fn made(file: &FilePattern) -> String {
    let flags = if file.open_flags.is_empty() { String::new() } else { format!(" ({})", file.open_flags.join("|")) };
    let mut line = match file.made {
        Made::New => format!("new, or empty when opened{flags}"),
        Made::Truncated => format!("truncated when opened{flags}"),
        Made::Existing => match file.size_at_open {
            Some(size) => format!("existing, {} when opened{flags}", format_size(size)),
            None if file.opens == 0 => "open before the trace began (a redirected output, say)".to_string(),
            None => format!("existing{flags}"),
        },
        Made::Unnamed => format!("without a name (O_TMPFILE), named by linkat{flags}"),
        Made::Unknown => format!("created or opened as it was{flags}: a tracer cannot tell which"),
    };
    if file.opens > 1 {
        line += &format!("; opened {} times for writing", thousands(file.opens));
    }
    if let Some(size) = file.final_size {
        line += &format!("; {} at the end", format_size(size));
    }
    if file.removed {
        line += "; removed before the program ended";
    }
    line
}

/// "301 B" when every value was the same, else "median 4 KiB (10–90 %: 512 B–64 KiB;
/// 1 B–1 MiB)".
fn spread(spread: &Spread, unit: fn(u64) -> String) -> String {
    if spread.min == spread.max {
        return unit(spread.median);
    }
    let middle = if spread.p10 == spread.p90 {
        unit(spread.p10)
    } else {
        format!("{}–{}", unit(spread.p10), unit(spread.p90))
    };
    format!("median {} (10–90 %: {middle}; {}–{})", unit(spread.median), unit(spread.min), unit(spread.max))
}

fn count(n: u64) -> String {
    thousands(n)
}

fn writes(file: &FilePattern) -> String {
    let parts: Vec<String> = file
        .calls
        .iter()
        .map(|kind| {
            let mut part = format!(
                "{} {} call{} of {}",
                call_name(kind.call),
                thousands(kind.calls),
                plural(kind.calls),
                spread(&kind.sizes, format_size)
            );
            if let Some(buffers) = &kind.buffers {
                part += &format!(" in {} buffers", spread(buffers, count));
            }
            for (flag, n) in &kind.flags {
                part += &format!(", {flag} on {}", thousands(*n));
            }
            part
        })
        .collect();
    parts.join("; ")
}

fn offsets(offsets: &Offsets) -> String {
    let total = offsets.append + offsets.sequential + offsets.same_place + offsets.random + offsets.unknown;
    let share = |n: u64| {
        let percent = 100.0 * n as f64 / total.max(1) as f64;
        if n == total {
            "all".to_string()
        } else if percent < 1.0 {
            format!("{} (<1 %)", thousands(n))
        } else {
            format!("{percent:.0} %")
        }
    };
    let kinds = [
        (offsets.append, "at the file's end (appends)"),
        (offsets.sequential, "where an earlier write ended, inside the file (a stream of overwrites)"),
        (offsets.same_place, "where the previous write began (the same bytes again)"),
        (offsets.random, "elsewhere (random)"),
        (offsets.unknown, "at an offset the trace cannot know"),
    ];
    kinds
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, words)| format!("{} {words}", share(*n)))
        .collect::<Vec<_>>()
        .join("; ")
}

fn syncs(file: &FilePattern) -> String {
    let Some(cadence) = &file.cadence else {
        let started = if file.syncs.iter().any(|s| s.call == SyncCall::SyncFileRange) {
            " (sync_file_range only starts writeback: it makes nothing durable)"
        } else {
            ""
        };
        return format!("never synced: all {} left to the kernel's writeback{started}", format_size(file.bytes));
    };
    let calls: Vec<String> =
        file.syncs.iter().map(|s| format!("{} {}", sync_name(s.call), thousands(s.calls))).collect();
    let between = if cadence.writes.max == 1 && cadence.writes.count > 0 {
        format!("a sync after every write call ({})", spread(&cadence.bytes, format_size))
    } else {
        format!(
            "between two syncs: {} in {} write calls",
            spread(&cadence.bytes, format_size),
            spread(&cadence.writes, count)
        )
    };
    let tail = if cadence.unsynced_bytes > 0 {
        format!("; {} written after the last sync", format_size(cadence.unsynced_bytes))
    } else {
        String::new()
    };
    format!("{}; {between}{tail}", calls.join(", "))
}

fn preallocation(file: &FilePattern) -> Option<String> {
    let p = &file.preallocation;
    let mut parts = Vec::new();
    if p.fallocate > 0 {
        let keep = match p.keep_size {
            0 => String::new(),
            n if n == p.fallocate => ", keeping the size (FALLOC_FL_KEEP_SIZE)".to_string(),
            n => format!(", {} keeping the size", thousands(n)),
        };
        parts.push(format!("fallocate {}, up to {} a call{keep}", thousands(p.fallocate), format_size(p.largest)));
    }
    if p.grown_by_truncate > 0 {
        parts.push(format!("grown by ftruncate {}", thousands(p.grown_by_truncate)));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The replay of the program's calls, in one sentence.
pub fn replay_line(replay: &ReplayFigures) -> String {
    let figure = rate(replay, true);
    let cut = if replay.cut { ", the program's calls up to --size" } else { "" };
    let pace = if replay.with_gaps {
        "with its recorded pauses between them"
    } else {
        "at full speed, its own work between them left out"
    };
    format!(
        "Your way, replayed on {} ({}): {figure}. The program's calls made again {pace}: {} runs of {} calls on \
         {} file{} by {} thread{} ({}, {} commit{}{cut}).",
        replay.on,
        replay.fs_type,
        replay.runs,
        thousands(replay.calls as u64),
        replay.files,
        plural(replay.files as u64),
        replay.threads,
        plural(replay.threads as u64),
        format_size(replay.bytes),
        thousands(replay.commits),
        plural(replay.commits)
    )
}

/// What the trace could not see, and what it left out.
pub fn notes(report: &TraceReport) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(replay) = &report.replay {
        notes.push(replay_line(replay));
        for alternative in &replay.alternatives {
            notes.push(format!("  Instead: {}.", alternative_line(alternative, replay.runs)));
        }
    }
    if let Some(crash) = &report.crash {
        notes.extend(crate::trace_crash::crash_lines(crash));
    }
    if let Some(uring) = &report.io_uring {
        notes.push(format!(
            "io_uring: {} ring{} set up, {} io_uring_enter calls; what went through it is not seen by a system-call \
             tracer and is not counted above.",
            thousands(uring.rings),
            plural(uring.rings),
            thousands(uring.enters)
        ));
    }
    for mapped in &report.mapped {
        notes.push(format!(
            "{} is mapped shared and writable ({}; msync {}): stores through a mapping are no system call and are \
             not counted above.",
            mapped.path,
            format_size(mapped.bytes),
            thousands(mapped.msyncs)
        ));
    }
    if report.whole_syncs > 0 {
        notes.push(format!(
            "sync or syncfs {} times: each counted as a sync of every file with writes not yet synced.",
            thousands(report.whole_syncs)
        ));
    }
    let left = &report.left_out;
    let mut out = Vec::new();
    if left.unwritten_files > 0 {
        out.push(format!("{} files opened and never written", thousands(left.unwritten_files)));
    }
    if left.pseudo_files > 0 {
        out.push(format!(
            "{} pipes, sockets, terminals, kernel files or inherited outputs written ({})",
            thousands(left.pseudo_files),
            format_size(left.pseudo_bytes)
        ));
    }
    if left.unnamed_writes > 0 {
        out.push(format!("{} writes to descriptors strace did not name", thousands(left.unnamed_writes)));
    }
    if !out.is_empty() {
        notes.push(format!("Left out: {}.", out.join("; ")));
    }
    notes
}

#[cfg(test)]
#[path = "trace_tests.rs"]
mod tests;
