//! The "Answer" section on the terminal: the recommendation for each goal, then the
//! first observations, each one line with its numbers. It renders what the result
//! holds (`answer`, `observations`) and derives nothing.

use std::io::{self, Write};

use crate::result::ResultFile;

/// Observations shown on the terminal; the JSON export holds them all.
pub const SHOWN: usize = 8;

/// Columns a recommendation is wrapped to.
const WIDTH: usize = 100;

pub fn render(result: &ResultFile, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "\n## Answer\n")?;
    let fs_type = result.target.fs_type.as_str();
    if fs_type == "tmpfs" || fs_type == "ramfs" {
        writeln!(out, "note: {fs_type} keeps files in memory; a sync there makes nothing durable\n")?;
    }
    if result.answer.is_empty() {
        writeln!(
            out,
            "No goal answered: no case measured writes a file, commits small writes or saves a file durably."
        )?;
    }
    for recommendation in &result.answer {
        writeln!(out, "{}:", crate::export::document::goal_title(&recommendation.goal))?;
        for line in wrap(&recommendation.text, WIDTH - 4) {
            writeln!(out, "    {line}")?;
        }
    }
    let total = result.observations.len();
    let shown = total.min(SHOWN);
    if total > shown {
        writeln!(out, "\nObservations (the first {shown} of {total}; all of them in the JSON export):")?;
    } else {
        writeln!(out, "\nObservations:")?;
    }
    if total == 0 {
        writeln!(out, "  none: no case differed significantly from one it can be compared with")?;
    }
    for observation in &result.observations[..shown] {
        writeln!(out, "  - {}", observation.text)?;
    }
    Ok(())
}

/// Greedy word wrap; a word longer than `width` gets a line of its own.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
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
        }];
        result
    }

    fn rendered(result: &ResultFile) -> String {
        let mut out = Vec::new();
        render(result, &mut out).unwrap();
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
    fn an_empty_result_says_so_and_tmpfs_is_noted() {
        let mut empty = result(0);
        empty.answer.clear();
        empty.target.fs_type = "tmpfs".into();
        let text = rendered(&empty);
        assert!(text.contains("note: tmpfs keeps files in memory"), "{text}");
        assert!(text.contains("No goal answered"), "{text}");
        assert!(text.contains("  none: no case differed significantly"), "{text}");
    }
}
