//! The "Answer" section on the terminal: the recommendation for each goal, then the
//! first observations, each one line with its numbers. It renders what the result
//! holds (`answer`, `observations`) and derives nothing.

use std::io::{self, Write};

use crate::export::text::{Paint, WIDTH, wrap};
use crate::result::ResultFile;

/// Observations shown on the terminal; the JSON export holds them all.
pub const SHOWN: usize = 8;

pub fn render(result: &ResultFile, out: &mut dyn Write, paint: Paint) -> io::Result<()> {
    writeln!(out, "\n{}\n", paint.heading("## Answer"))?;
    let fs_type = result.target.fs_type.as_str();
    if result.target.memory_filesystem() {
        writeln!(out, "note: {fs_type} keeps files in memory; a sync there makes nothing durable\n")?;
    } else if let Some(note) = crate::export::document::ram_backed(&result.target) {
        // Named by what holds the data, not by the filesystem's name (docs/results.md).
        for line in wrap(&format!("note: {note}"), WIDTH) {
            writeln!(out, "{line}")?;
        }
        writeln!(out)?;
    }
    if result.answer.is_empty() {
        writeln!(
            out,
            "No goal answered: no measured case writes one file from one writer or from several, commits small \
             writes or saves a file durably (a file per thread or per rank answers none of them)."
        )?;
    }
    for recommendation in &result.answer {
        let title = format!("{}:", crate::export::document::goal_title(&recommendation.goal));
        writeln!(out, "{}", paint.heading(&title))?;
        for line in wrap(&recommendation.text, WIDTH - 4) {
            writeln!(out, "    {line}")?;
        }
    }
    let total = result.observations.len();
    let shown = total.min(SHOWN);
    // The raw count of tests, said once: every p and interval below is corrected over it.
    let corrected = match result.observation_tests {
        Some(tests) if tests > 1 => format!(", Holm-corrected over {tests} tests"),
        _ => String::new(),
    };
    if total > shown {
        writeln!(out, "\nObservations (the first {shown} of {total}{corrected}; all of them in the JSON export):")?;
    } else if corrected.is_empty() {
        writeln!(out, "\nObservations:")?;
    } else {
        writeln!(out, "\nObservations ({}):", corrected.trim_start_matches(", "))?;
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
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Figure, Observation, Recommendation};

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
        }];
        result
    }

    fn rendered(result: &ResultFile) -> String {
        let mut out = Vec::new();
        render(result, &mut out, Paint::PLAIN).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn recommendations_wrap_and_at_most_eight_observations_show() {
        let text = rendered(&result(11));
        assert!(text.starts_with("\n## Answer\n\nOne big file, durable at the end:\n    pwrite in 1 MiB"), "{text}");
        assert!(text.lines().all(|line| line.chars().count() <= WIDTH), "{text}");
        assert!(text.contains("(p = 0.40)"), "{text}");
        assert!(text.contains("Observations (the first 8 of 11; all of them in the JSON export):"), "{text}");
        assert!(text.contains("  - observation 7\n") && !text.contains("observation 8"), "{text}");
        let few = rendered(&result(2));
        assert!(few.contains("\nObservations:\n  - observation 0\n  - observation 1\n"), "{few}");
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
    fn an_empty_result_says_so_and_tmpfs_is_noted() {
        let mut empty = result(0);
        empty.answer.clear();
        empty.target.fs_type = "tmpfs".into();
        let text = rendered(&empty);
        assert!(text.contains("note: tmpfs keeps files in memory"), "{text}");
        assert!(text.contains("No goal answered"), "{text}");
        assert!(text.contains("  none: no case differed significantly"), "{text}");
    }

    #[test]
    fn a_filesystem_over_ram_is_noted_by_what_holds_its_data() {
        let mut ext4 = result(1);
        ext4.target.fs_type = "ext4".into();
        assert!(!rendered(&ext4).contains("note:"), "a backing not recorded says nothing");
        ext4.target.backing = crate::context::backing::Backing::Ram;
        ext4.target.backing_chain = "ext4 on /dev/loop3, a file on tmpfs".into();
        let text = rendered(&ext4);
        let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            joined.contains(
                "note: ext4 here keeps its data in memory (ext4 on /dev/loop3, a file on tmpfs); a sync there \
                 measures the filesystem's own work, not a device"
            ),
            "{text}"
        );
        assert!(text.lines().all(|line| line.chars().count() <= WIDTH), "{text}");
        ext4.target.backing = crate::context::backing::Backing::Device;
        assert!(!rendered(&ext4).contains("note:"), "on a device: no note");
    }
}
