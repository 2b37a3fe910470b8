//! The "Answer" section on the terminal: each goal at a glance (three lines at most,
//! docs/answer.md), the first observations, and where the rest is. It renders what the
//! result holds (`answer`, `observations`) and derives nothing.

use std::io::{self, Write};

use crate::text::{Paint, WIDTH, wrap};
use result::ResultFile;

/// Observations shown on the terminal; the JSON export holds them all.
pub const SHOWN: usize = 5;

/// What the terminal shows beside each goal's three lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct View {
    /// The rule behind each pick, the race's state and the caveats (`--explain`).
    pub explain: bool,
    /// Where the table and the exports are, said after the observations (a run without
    /// `--table`).
    pub pointer: bool,
}

/// The header a run's output opens with when the table (which has its own) is not
/// shown: what was measured where, the statistic, and the caveats said once.
pub fn render_header(result: &ResultFile, out: &mut dyn Write) -> io::Result<()> {
    let target = &result.target;
    let size = plan::units::format_size(crate::wording::most_common_size(result));
    let measured = result.cases.iter().filter(|c| c.status == result::Status::Ok).count();
    let time = match &result.race {
        Some(race) => format!(", raced for {:.0} s", race.seconds),
        None => String::new(),
    };
    let mut lines = vec![
        format!(
            "# writebench on {} ({}): {measured} strategies measured, {size} per run{time}",
            target.path,
            crate::document::filesystem(target)
        ),
        "figures: bytes (or operations) over the mean run time, with its 95 % range in brackets (in a raced \
         Answer, from the noise pooled over the goal's candidates, as its verdicts)"
            .to_string(),
    ];
    if let Some(source) = crate::document::data_source(result) {
        lines.push(source.to_string());
    }
    if let Some(note) = crate::document::target_note(result) {
        lines.push(format!("note: {note}"));
    }
    // What could not be measured is said here, not only in the table: a run whose every
    // case failed would otherwise show no reason at all.
    let not_measured: Vec<&result::CaseResult> =
        result.cases.iter().filter(|c| c.status != result::Status::Ok).collect();
    if let Some(first) = not_measured.first() {
        let plural = if not_measured.len() == 1 { "y" } else { "ies" };
        lines.push(format!(
            "not measured: {} strateg{plural} (the first, {}, {}: {}); --table lists each",
            not_measured.len(),
            first.case.id,
            first.status.name(),
            crate::document::one_line(first.error.as_deref().unwrap_or_default())
        ));
    }
    for line in lines {
        for wrapped in wrap(&line, WIDTH) {
            writeln!(out, "{wrapped}")?;
        }
    }
    Ok(())
}

pub fn render(result: &ResultFile, out: &mut dyn Write, paint: Paint, view: View) -> io::Result<()> {
    writeln!(out, "\n{}\n", paint.heading("## Answer"))?;
    if result.answer.is_empty() {
        for line in wrap(crate::document::no_goal(), WIDTH) {
            writeln!(out, "{line}")?;
        }
    }
    for (title, recommendation) in crate::document::shown_answers(result, true) {
        let title = format!("{title}:");
        writeln!(out, "{}", paint.heading(&title))?;
        match crate::glance::lines(recommendation) {
            Some(lines) => {
                for (number, line) in lines.iter().enumerate() {
                    let line = if number == 0 { paint.good(line) } else { line.clone() };
                    // A line too long for the width goes on indented further, so that each
                    // of the three stays one line to the eye.
                    let parts = wrap(&line, WIDTH - 2);
                    if let Some((first, rest)) = parts.split_first() {
                        writeln!(out, "  {first}")?;
                        for wrapped in wrap(&rest.join(" "), WIDTH - 4) {
                            writeln!(out, "    {wrapped}")?;
                        }
                    }
                }
            }
            // Saved before the glance: its sentence, as it was.
            None => {
                for line in wrap(&recommendation.text, WIDTH - 2) {
                    writeln!(out, "  {line}")?;
                }
            }
        }
        if view.explain {
            let glance = recommendation.glance.as_ref();
            let caveats = glance.map(|g| g.caveats.clone()).unwrap_or_default();
            let why = std::iter::once(format!("why: {}", recommendation.text)).chain(caveats);
            for part in why {
                for (number, line) in wrap(&part, WIDTH - 6).iter().enumerate() {
                    let lead = if number == 0 { "    - " } else { "      " };
                    writeln!(out, "{lead}{line}")?;
                }
            }
        }
    }
    let total = result.observations.len();
    let shown = total.min(SHOWN);
    if total > shown {
        writeln!(out, "\nObservations (the first {shown} of {total}; all of them in the exports):")?;
    } else {
        writeln!(out, "\nObservations:")?;
    }
    if total == 0 {
        writeln!(out, "  none: no case differed significantly from one it can be compared with")?;
    }
    for observation in &result.observations[..shown] {
        for (number, line) in wrap(&observation.text, WIDTH - 4).iter().enumerate() {
            let lead = if number == 0 { "  - " } else { "    " };
            writeln!(out, "{lead}{line}")?;
        }
    }
    if shown > 0 {
        writeln!(out, "{}", crate::document::ID_LEGEND)?;
    }
    if view.pointer {
        writeln!(out)?;
        for line in wrap(
            "Every case: --table; the rule behind each pick: --explain; all of it in a file: --export-html, \
             --export-markdown, --export-json or --export-csv FILE.",
            WIDTH,
        ) {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use result::glance::{Alternative, Certainty, Glance, Shown};
    use result::{Figure, Observation, Recommendation};

    fn result(observations: usize) -> ResultFile {
        let mut result: ResultFile = serde_json::from_value(serde_json::json!({
            "schema": "writebench.v2", "tool": {"name": "writebench", "version": "0"},
            "host": {"kernel": "k", "cpu_model": "c", "cpus": 1, "memory_bytes": 1},
            "target": {"path": "/mnt", "fs_type": "ext4", "device": "d", "mount_point": "/mnt",
                       "mount_options": "rw", "dio_mem_align": null, "dio_offset_align": null},
            "options": {}, "cases": [], "observations": [], "complete": true
        }))
        .unwrap();
        result.observations = (0..observations)
            .map(|n| Observation {
                kind: "knee".into(),
                text: format!("observation {n}"),
                figures: vec![],
                comparison: None,
                numbers: Default::default(),
            })
            .collect();
        let best = Figure {
            case: "pwrite prealloc 1MiB t1 end".into(),
            metric: "durable".into(),
            median: 1.9e9,
            mean: 1.9e9,
            ci95_low: None,
            ci95_high: None,
        };
        let text = "pwrite in 1 MiB calls into a preallocated file, then one fsync: 1.90 GB/s durable \
                    (pwrite prealloc 1MiB t1 end); tied with pwritev prealloc 1MiB x1 t1 end (p = 0.40)";
        result.answer = vec![Recommendation {
            goal: "durable-at-end".into(),
            text: text.into(),
            best,
            runner_up: None,
            naive: None,
            tied: true,
            verdict: None,
            fastest: None,
            crash_checked: None,
            glance: None,
        }];
        result
    }

    fn rendered(result: &ResultFile) -> String {
        let mut out = Vec::new();
        render(result, &mut out, Paint::PLAIN, View::default()).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn header(result: &ResultFile) -> String {
        let mut out = Vec::new();
        render_header(result, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn glance(certainty: Certainty) -> Glance {
        let figure = Shown {
            value: 1.9e9,
            low: Some(1.8e9),
            high: Some(2.0e9),
            unit: "bytes/s".into(),
            runs: 5,
            well_measured: true,
        };
        let naive = Alternative {
            low99: None,
            runs: 5,
            case: "write empty 4KiB t1 end".into(),
            action: "write 4 KiB".into(),
            value: 1.2e9,
            factor: 1.58,
            low: 1.4,
            high: 1.8,
            p_value: 0.001,
        };
        Glance {
            action: "pwrite in 1 MiB calls into a preallocated file, then one fsync".into(),
            figure,
            certainty,
            gain: Some(naive),
            naive_itself: false,
            not_applicable: None,
            caveats: vec!["counting its fallocate: 1.70 GB/s".into()],
            warnings: Vec::new(),
        }
    }

    fn next(factor: f64, low: f64, high: f64) -> Alternative {
        Alternative {
            low99: None,
            runs: 5,
            case: "writev prealloc 64KiB x128 t1 end".into(),
            action: "writev 64 KiB × 128".into(),
            value: 1.5e9,
            factor,
            low,
            high,
            p_value: 0.01,
        }
    }

    #[test]
    fn recommendations_wrap_and_at_most_five_observations_show() {
        let text = rendered(&result(11));
        assert!(text.starts_with("\n## Answer\n\nOne big file, durable at the end:\n  pwrite in 1 MiB"), "{text}");
        assert!(text.lines().all(|line| line.chars().count() <= WIDTH), "{text}");
        assert!(text.contains("(p = 0.40)"), "a result saved before glances shows its sentence: {text}");
        assert!(text.contains("Observations (the first 5 of 11; all of them in the exports):"), "{text}");
        assert!(text.contains("  - observation 4\n") && !text.contains("observation 5"), "{text}");
        assert!(text.contains("(case ids: method"), "a legend wherever ids may appear: {text}");
        let few = rendered(&result(2));
        assert!(few.contains("\nObservations:\n  - observation 0\n  - observation 1\n"), "{few}");
    }

    /// Each goal at a glance: its action and figure with its range, how sure, the gain
    /// over the naive way; three lines, whatever the certainty.
    #[test]
    fn a_goal_at_a_glance_is_three_lines_in_plain_words() {
        let mut one = result(0);
        let cases = [
            (
                Certainty::Clear { next: next(1.3, 1.2, 1.4), against: vec![next(1.3, 1.2, 1.4)] },
                "  clearly the fastest: 1.30x the next, writev 64 KiB × 128 (1.50 GB/s)",
            ),
            (
                Certainty::Leads { next: next(1.02, 1.01, 1.03), margin: 0.05, against: Vec::new() },
                "  the fastest; writev 64 KiB × 128 is within 5 % (1.02x, 1.50 GB/s): either will do",
            ),
            (
                Certainty::AsFast { other: next(0.98, 0.96, 1.0), margin: 0.05, against: Vec::new() },
                "  fastest measured: writev 64 KiB × 128, 1.50 GB/s; this one is within 5 % and simpler",
            ),
            (
                Certainty::AsFast { other: next(1.01, 0.97, 1.04), margin: 0.05, against: Vec::new() },
                "  as fast as writev 64 KiB × 128 (1.50 GB/s), within 5 %: either will do",
            ),
            (
                Certainty::NotSettled {
                    other: next(1.02, 0.85, 1.2),
                    up_to: Some(0.18),
                    settle: Some("--budget 1m".into()),
                    against: Vec::new(),
                },
                "  not settled: writev 64 KiB × 128 may be up to 18 % faster (--budget 1m)",
            ),
            (Certainty::Alone, "  the only strategy measured for this goal"),
        ];
        for (certainty, second) in cases {
            one.answer[0].glance = Some(glance(certainty));
            let text = rendered(&one);
            let lines: Vec<&str> =
                text.lines().skip_while(|l| !l.starts_with("One big file")).skip(1).take(3).collect();
            assert_eq!(
                lines[0],
                "  pwrite in 1 MiB calls into a preallocated file, then one fsync: 1.90 GB/s (1.80–2.00)"
            );
            assert_eq!(lines[1], second);
            assert_eq!(lines[2], "  1.58x (1.40–1.80x) faster than the naive way (write 4 KiB: 1.20 GB/s)");
            assert!(!text.contains("p = 0.40"), "the sentence waits for --explain: {text}");
        }
        let mut out = Vec::new();
        render(&one, &mut out, Paint::PLAIN, View { explain: true, pointer: true }).unwrap();
        let explained = String::from_utf8(out).unwrap();
        assert!(explained.contains("    - why: pwrite in 1 MiB calls"), "{explained}");
        assert!(explained.contains("    - counting its fallocate: 1.70 GB/s"), "{explained}");
        assert!(explained.contains("Every case: --table"), "{explained}");
    }

    /// A warning that undoes the figure is on the goal's own lines, after the three.
    #[test]
    fn a_warning_follows_its_goals_lines() {
        let mut one = result(0);
        let mut warned = glance(Certainty::Alone);
        warned.warnings = vec!["above this disk's direct write rate of 2.50 GB/s: …".into()];
        one.answer[0].glance = Some(warned);
        let text = rendered(&one);
        let lines: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("One big file")).skip(1).take(4).collect();
        assert_eq!(lines[3], "  warning: above this disk's direct write rate of 2.50 GB/s: …", "{text}");
    }

    #[test]
    fn a_durable_goal_on_memory_says_it_does_not_apply_and_nothing_else() {
        let mut one = result(0);
        let mut not = glance(Certainty::Alone);
        not.not_applicable = Some("not applicable here: nothing on tmpfs survives a power loss".into());
        one.answer[0].glance = Some(not);
        let text = rendered(&one);
        assert!(text.contains("One big file, durable at the end:\n  not applicable here: nothing on tmpfs"), "{text}");
        assert!(!text.contains("GB/s"), "no durable figure: {text}");
    }

    #[test]
    fn a_long_observation_wraps_under_its_dash() {
        let mut long = result(1);
        long.observations[0].text = "pwrite 1 MiB ".repeat(12).trim_end().to_string();
        let text = rendered(&long);
        let lines: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("  - ")).collect();
        assert!(lines.len() >= 2 && lines[1].starts_with("    pwrite"), "{text}");
        assert!(lines.iter().all(|line| line.chars().count() <= WIDTH), "{text}");
    }

    #[test]
    fn an_empty_result_says_so_and_tmpfs_is_noted_in_the_header() {
        let mut empty = result(0);
        empty.answer.clear();
        empty.target.fs_type = "tmpfs".into();
        let text = rendered(&empty);
        assert!(header(&empty).contains("note: tmpfs keeps files in memory"), "{}", header(&empty));
        assert!(text.contains("No goal answered"), "{text}");
        assert!(text.contains("  none: no case differed significantly"), "{text}");
    }

    #[test]
    fn a_filesystem_over_ram_is_noted_by_what_holds_its_data() {
        let mut ext4 = result(1);
        ext4.target.fs_type = "ext4".into();
        assert!(!header(&ext4).contains("note:"), "a backing not recorded says nothing");
        ext4.target.backing = context::backing::Backing::Ram;
        ext4.target.backing_chain = "ext4 on /dev/loop3, a file on tmpfs".into();
        let text = header(&ext4);
        let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            joined.contains(
                "note: ext4 here keeps its data in memory (ext4 on /dev/loop3, a file on tmpfs); a sync there \
                 measures the filesystem's own work, not a device"
            ),
            "{text}"
        );
        assert!(text.lines().all(|line| line.chars().count() <= WIDTH), "{text}");
        ext4.target.backing = context::backing::Backing::Device;
        assert!(!header(&ext4).contains("note:"), "on a device: no note");
    }
}
