//! The crash table (docs/crash.md) on the terminal, and as JSON, Markdown and HTML: per
//! filesystem × mount options × workload, the states checked, the checker's repairs,
//! the promises broken, and for each broken promise an example in words. The words say
//! "no broken promise found in N states", never "safe": a check can miss a bug (one
//! schedule of the kernel per recording; no torn sectors), it cannot invent one.

use std::io::{self, Write};

use html_escape::encode_text as text;

use result::crash::{CrashCheck, CrashReport, Finding, FindingKind, Found};

fn options(entry: &CrashCheck) -> &str {
    if entry.mount_options.is_empty() { "defaults" } else { &entry.mount_options }
}

/// The workload column: the workload's name, or the user's command (`--run`), whole
/// where it fits, else made short for the table (whole in the JSON): each path by its
/// last part (`python3 "$WB_CRASH_FROM/app.py" wal` → `python3 app.py wal`), but for the
/// kernel's files (`/dev/urandom`, `/proc/…`, `/sys/…`), whose last part alone would read
/// as a file of the program's own; then cut.
fn workload(entry: &CrashCheck) -> String {
    const LONGEST: usize = 48;
    const KERNEL: [&str; 3] = ["/dev/", "/proc/", "/sys/"];
    let Some(command) = &entry.command else { return entry.workload.clone() };
    if command.chars().count() <= LONGEST {
        return command.clone();
    }
    let short: Vec<&str> = command
        .split_whitespace()
        .map(|word| {
            let bare = word.trim_matches(['"', '\'']);
            if !bare.contains('/') || KERNEL.iter().any(|k| bare.starts_with(k)) {
                word
            } else {
                bare.rsplit('/').next().filter(|last| !last.is_empty()).unwrap_or(word)
            }
        })
        .collect();
    let short = short.join(" ");
    if short.chars().count() <= LONGEST {
        short
    } else {
        format!("{}…", short.chars().take(LONGEST - 1).collect::<String>())
    }
}

/// The columns of every format: filesystem, mount options, workload, writes, flushes,
/// promises, states, repairs, broken.
const HEADER: [&str; 9] =
    ["filesystem", "mount options", "workload", "writes", "flushes", "promises", "states", "repairs", "broken"];

fn row(entry: &CrashCheck) -> [String; 9] {
    if let Some(why) = &entry.refused {
        let mut cells: [String; 9] = Default::default();
        cells[0] = entry.fs.clone();
        cells[1] = options(entry).to_string();
        cells[2] = workload(entry);
        cells[3] = format!("not run: {why}");
        return cells;
    }
    [
        entry.fs.clone(),
        options(entry).to_string(),
        workload(entry),
        entry.writes.to_string(),
        entry.flushes.to_string(),
        entry.promises.to_string(),
        entry.states.to_string(),
        entry.repairs.to_string(),
        entry.broken.to_string(),
    ]
}

/// The verdict under the table, one line per filesystem and mount options.
pub fn verdicts(entries: &[CrashCheck]) -> Vec<String> {
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut out = Vec::new();
    for entry in entries {
        let key = (entry.fs.clone(), entry.mount_options.clone());
        if seen.contains(&key) {
            continue;
        }
        seen.push(key.clone());
        let same: Vec<&CrashCheck> =
            entries.iter().filter(|e| e.fs == key.0 && e.mount_options == key.1 && e.refused.is_none()).collect();
        let states: usize = same.iter().map(|e| e.states).sum();
        let broken: Vec<String> = same.iter().filter(|e| e.broken > 0).map(|e| workload(e)).collect();
        let repairs: usize = same.iter().map(|e| e.repairs).sum();
        let failed: usize = same.iter().map(|e| e.checker_failed).sum();
        let judged = states - failed;
        let name = format!("{} ({})", entry.fs, options(entry));
        let program = !same.is_empty() && same.iter().all(|e| e.command.is_some());
        let of = if program { "the program".to_string() } else { workloads(same.len()) };
        let mut line = if judged == 0 && failed > 0 {
            format!("{name}: nothing judged: your checker could not judge any of the {states} states")
        } else if broken.is_empty() {
            format!("{name}: no broken promise found in {judged} states of {of}")
        } else if program {
            let mut line = format!(
                "{name}: the program's promises broken in {} of {judged} states",
                same.iter().map(|e| e.broken).sum::<usize>()
            );
            if let [only] = same[..] {
                line.push_str(&ever_broken(only));
            }
            line
        } else {
            format!("{name}: promises broken by {} of {} ({})", broken.len(), workloads(same.len()), broken.join(", "))
        };
        if repairs > 0 {
            let whose = if program { "the filesystem's checker" } else { "the checker" };
            line.push_str(&format!("; {whose} found {repairs} of {states} states in need of repair"));
        }
        if failed > 0 && judged > 0 {
            line.push_str(&format!("; your checker could not judge {failed} of {states} states"));
        }
        out.push(line);
    }
    // Across filesystems, which lost which of a program's promises: not ratios of
    // states, which differ with how often each filesystem flushed.
    let programs: Vec<&CrashCheck> = entries.iter().filter(|e| e.command.is_some() && e.refused.is_none()).collect();
    if programs.len() > 1 && programs.iter().any(|e| !e.promises_broken.is_empty()) {
        let each: Vec<String> = programs
            .iter()
            .map(|e| {
                let lost = if e.promises_broken.is_empty() { "none".to_string() } else { quoted(&e.promises_broken) };
                format!("{} ({}): {lost}", e.fs, options(e))
            })
            .collect();
        out.push(format!("Promises lost, by filesystem: {}", each.join("; ")));
    }
    out
}

/// "; promises ever broken: 3 of 4 ("commit 1", "commit 2", "commit 3")", for a result
/// that counted them.
fn ever_broken(entry: &CrashCheck) -> String {
    if entry.promises_broken.is_empty() {
        return String::new();
    }
    format!(
        "; promises ever broken: {} of {} ({})",
        entry.promises_broken.len(),
        entry.promises,
        quoted(&entry.promises_broken)
    )
}

/// "\"commit 1\", \"commit 2\"".
fn quoted(promises: &[String]) -> String {
    promises.iter().map(|p| format!("\"{p}\"")).collect::<Vec<_>>().join(", ")
}

fn workloads(n: usize) -> String {
    format!("{n} workload{}", if n == 1 { "" } else { "s" })
}

/// The findings of each entry that has them (every distinct one, corrupt first, with
/// its count and first state; a result saved before findings were grouped has up to three
/// examples); a user's checker's first failure and how the program ended, where it did
/// not end well. With how many of each list the terminal shows.
fn examples(entries: &[CrashCheck]) -> Vec<(String, Vec<String>, usize)> {
    let mut out = Vec::new();
    for e in entries {
        if !e.findings.is_empty() {
            let n = e.findings.len();
            let distinct = if n == 1 { "1 finding".to_string() } else { format!("{n} distinct findings") };
            let title = format!("{} ({}) {}: {distinct} in {} states", e.fs, options(e), workload(e), e.states);
            out.push((title, e.findings.iter().map(finding_line).collect(), FINDINGS_SHOWN));
        } else if !e.examples.is_empty() {
            let title =
                format!("{} ({}) {}: {} of {} states, for example", e.fs, options(e), workload(e), e.broken, e.states);
            out.push((title, e.examples.clone(), 1));
        }
        if let Some(failure) = &e.checker_failure {
            let title = format!(
                "{} ({}) {}: your checker failed in {} of {} states, first",
                e.fs,
                options(e),
                workload(e),
                e.checker_failed,
                e.states
            );
            out.push((title, vec![failure.clone()], 1));
        }
        if let Some(exit) = e.program_exit.as_ref().filter(|exit| *exit != "exit status 0") {
            let title = format!("{} ({}) {}: the program ended with {exit}", e.fs, options(e), workload(e));
            let stderr = e.program_stderr.as_deref().and_then(|s| s.lines().rev().find(|l| !l.trim().is_empty()));
            out.push((
                title,
                stderr.map(|line| format!("its standard error ended: {}", line.trim())).into_iter().collect(),
                1,
            ));
        }
    }
    out
}

/// Every state of every entry, as checked (`crash --show-states`).
pub fn states_text(entries: &[CrashCheck], out: &mut dyn Write) -> io::Result<()> {
    for e in entries.iter().filter(|e| !e.all_states.is_empty()) {
        writeln!(out, "\nevery state of {} ({}) {}:", e.fs, options(e), workload(e))?;
        for seen in &e.all_states {
            let found = match seen.found {
                Found::Kept => "kept",
                Found::Lost => "lost",
                Found::Corrupt => "corrupt",
                Found::Unjudged => "unjudged",
            };
            let mut said: Vec<String> = seen.words.iter().cloned().collect();
            said.extend(seen.repair.as_ref().map(|repair| format!("needs repair: {repair}")));
            let words = if said.is_empty() { String::new() } else { format!(": {}", said.join("; ")) };
            writeln!(out, "  {found:<9}{}{words}", seen.state)?;
        }
    }
    Ok(())
}

/// Findings of one entry the terminal shows; the files and `--show-states` hold all.
const FINDINGS_SHOWN: usize = 5;

/// "corrupt, in 3 states: power lost after …" or "lost, in 12 states: power lost after …".
fn finding_line(finding: &Finding) -> String {
    let states = if finding.states == 1 { "1 state".to_string() } else { format!("{} states", finding.states) };
    match finding.kind {
        FindingKind::Corrupt => format!("corrupt, in {states}: {}", finding.first),
        FindingKind::Lost => format!("lost, in {states}: {}", finding.first),
    }
}

/// The table for the terminal (stdout).
pub fn render_text(report: &CrashReport, out: &mut dyn Write) -> io::Result<()> {
    text_table(&report.crash, out)?;
    for entry in report.crash.iter().filter(|e| !e.log.is_empty()) {
        writeln!(out, "\nlog of {} ({}) {}:", entry.fs, options(entry), entry.workload)?;
        for line in &entry.log {
            writeln!(out, "{line}")?;
        }
    }
    if !report.complete {
        let unjudged: Vec<&str> = report
            .crash
            .iter()
            .filter(|e| e.states > 0 && e.checker_failed == e.states)
            .map(|e| e.fs.as_str())
            .collect();
        if unjudged.is_empty() {
            writeln!(out, "\ninterrupted: the entries above are those done before it")?;
        } else {
            writeln!(out, "\nnot complete: your checker judged none of the states on {}", unjudged.join(", "))?;
        }
    }
    Ok(())
}

/// The table, its verdicts and one example of each broken promise, for the terminal:
/// `crash`'s output and the section of a comparison that has crash checks.
pub fn text_table(entries: &[CrashCheck], out: &mut dyn Write) -> io::Result<()> {
    let rows: Vec<[String; 9]> = entries.iter().map(row).collect();
    let mut widths = HEADER.map(str::len);
    for cells in &rows {
        for (i, cell) in cells.iter().enumerate().take(3) {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut text = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i < 3 {
                text.push_str(&format!("{cell:<w$}  ", w = widths[i]));
            } else if cell.starts_with("not run") {
                text.push_str(cell);
            } else if !cell.is_empty() || i > 3 {
                text.push_str(&format!("{cell:>w$}  ", w = widths[i]));
            }
        }
        text.trim_end().to_string()
    };
    writeln!(out, "{}", line(&HEADER.map(String::from)))?;
    for cells in &rows {
        writeln!(out, "{}", line(cells))?;
    }
    writeln!(out)?;
    for verdict in verdicts(entries) {
        for (i, part) in super::text::wrap(&verdict, 100).iter().enumerate() {
            writeln!(out, "{}{part}", if i == 0 { "" } else { "  " })?;
        }
    }
    // The first findings of each entry on the terminal; the files have them all.
    for (title, list, shown) in examples(entries) {
        writeln!(out, "\n{title}:")?;
        for example in list.iter().take(shown) {
            for (i, part) in super::text::wrap(example, 96).iter().enumerate() {
                writeln!(out, "{}{part}", if i == 0 { "  - " } else { "    " })?;
            }
        }
    }
    Ok(())
}

pub fn render_json(report: &CrashReport, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report).map_err(io::Error::other)?;
    writeln!(out)
}

pub fn render_markdown(report: &CrashReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "## Crash checks\n")?;
    writeln!(
        out,
        "Kernel {}; at most {} states per workload; seed {}.\n",
        report.kernel, report.states_per_check, report.seed
    )?;
    markdown_table(&report.crash, out)
}

/// The table, its verdicts and the examples, in Markdown: the crash command's file and
/// the section of a run's report that has crash checks.
pub fn markdown_table(entries: &[CrashCheck], out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "| {} |", HEADER.join(" | "))?;
    writeln!(out, "|{}", "---|".repeat(HEADER.len()))?;
    for entry in entries {
        let cells = row(entry).map(|c| c.replace('|', "\\|"));
        writeln!(out, "| {} |", cells.join(" | "))?;
    }
    writeln!(out)?;
    for verdict in verdicts(entries) {
        writeln!(out, "- {verdict}")?;
    }
    for (title, list, _) in examples(entries) {
        writeln!(out, "\n**{title}**:\n")?;
        for example in list {
            writeln!(out, "- {example}")?;
        }
    }
    Ok(())
}

pub fn render_html(report: &CrashReport, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>writebench crash checks</title>"
    )?;
    writeln!(
        out,
        "<style>body{{font-family:sans-serif;max-width:70em;margin:2em auto}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #ccc;padding:.2em .5em}}td.n{{text-align:right}}tr.broken td{{background:#fdd}}</style>"
    )?;
    writeln!(out, "</head><body>")?;
    let facts = format!(
        "Kernel {}; at most {} states per workload; seed {}.",
        report.kernel, report.states_per_check, report.seed
    );
    html_section(&report.crash, &facts, out)?;
    writeln!(out, "</body></html>")
}

/// The crash checks as an HTML section (`id="crash"`): the crash command's page and the
/// section of a run's report that has crash checks.
pub fn html_section(entries: &[CrashCheck], facts: &str, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "<section id=\"crash\"><h2>Crash checks</h2>\n<p>{}</p>", text(facts))?;
    writeln!(out, "<table><tr>{}</tr>", HEADER.map(|h| format!("<th>{h}</th>")).join(""))?;
    for entry in entries {
        let class = if entry.broken > 0 { " class=\"broken\"" } else { "" };
        let cells: Vec<String> = row(entry)
            .iter()
            .enumerate()
            .map(
                |(i, c)| {
                    if i < 3 { format!("<td>{}</td>", text(c)) } else { format!("<td class=\"n\">{}</td>", text(c)) }
                },
            )
            .collect();
        writeln!(out, "<tr{class}>{}</tr>", cells.join(""))?;
    }
    writeln!(out, "</table>\n<ul>")?;
    for verdict in verdicts(entries) {
        writeln!(out, "<li>{}</li>", text(&verdict))?;
    }
    writeln!(out, "</ul>")?;
    for (title, list, _) in examples(entries) {
        writeln!(out, "<h3>{}</h3><ul>", text(&title))?;
        for example in list {
            writeln!(out, "<li>{}</li>", text(&example))?;
        }
        writeln!(out, "</ul>")?;
    }
    writeln!(out, "</section>")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(states: usize, broken: usize, failed: usize, repairs: usize) -> CrashCheck {
        CrashCheck {
            fs: "xfs".into(),
            workload: "run".into(),
            command: Some("python3 \"$WB_CRASH_FROM/sqlite-commit.py\" delete full".into()),
            check_command: Some("python3 check.py".into()),
            states,
            broken,
            checker_failed: failed,
            repairs,
            ..CrashCheck::default()
        }
    }

    #[test]
    fn a_program_s_verdict_counts_the_states_its_checker_judged() {
        assert_eq!(
            verdicts(&[program(10, 0, 0, 0)]),
            ["xfs (defaults): no broken promise found in 10 states of the program"]
        );
        assert_eq!(
            verdicts(&[program(10, 2, 3, 1)]),
            ["xfs (defaults): the program's promises broken in 2 of 7 states; the filesystem's checker found 1 of 10 \
                 states in need of repair; your checker could not judge 3 of 10 states"]
        );
        assert_eq!(
            verdicts(&[program(4, 0, 4, 0)]),
            ["xfs (defaults): nothing judged: your checker could not judge any of the 4 states"]
        );
        let refused = CrashCheck { refused: Some("no atomic writes".into()), ..program(0, 0, 0, 0) };
        let mut refused_workload = refused.clone();
        refused_workload.command = None;
        assert_eq!(
            verdicts(&[refused_workload]),
            ["xfs (defaults): no broken promise found in 0 states of 0 workloads"]
        );
        assert_eq!(
            workload(&program(1, 0, 0, 0)),
            "python3 sqlite-commit.py delete full",
            "by the name the user knows"
        );
        let other = |command: &str| workload(&CrashCheck { command: Some(command.into()), ..program(1, 0, 0, 0) });
        assert_eq!(
            other("head -c 8388608 /dev/urandom > f; sync f; echo one; head -c 10 /dev/zero > g"),
            "head -c 8388608 /dev/urandom > f; sync f; echo …",
            "the kernel's files are kept whole, then the line cut"
        );
        assert_eq!(other("sh \"${WB_CRASH_FROM}/examples/crash/git-commit.sh\" fsync"), "sh git-commit.sh fsync");
        assert_eq!(other("sh run.sh"), "sh run.sh", "whole where it fits");
    }
}
