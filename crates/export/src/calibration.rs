//! This machine's ceilings in words: the whole calibration for `writebench calibrate`,
//! one line for the head of a run's table, and a case's "% of ceiling".

use std::io::{self, Write};

use context::calibration::{Calibration, Ceiling, CeilingShare};
use plan::numbers::gbps;
use plan::units::{format_size, format_size_compact};
use result::ResultFile;

/// "40 s", "12 min": how old a reused calibration is.
fn age_words(seconds: f64) -> String {
    if seconds < 60.0 { format!("{seconds:.0} s") } else { format!("{:.0} min", (seconds / 60.0).floor()) }
}

/// `writebench calibrate`'s report.
pub fn render(result: &ResultFile, out: &mut dyn Write) -> io::Result<()> {
    let target = &result.target;
    writeln!(out, "# writebench calibrate on {} ({}, {})", target.path, target.fs_type, target.device)?;
    let Some(c) = &result.calibration else {
        return writeln!(out, "no calibration in this result");
    };
    let rows = [
        ("memory copy, 1 thread".to_string(), gbps(c.memcpy_bytes_per_s)),
        (format!("memory copy, {}", threads(c.memcpy_threads)), gbps(c.memcpy_all_bytes_per_s)),
        ("system call (getppid)".to_string(), format!("{:.0} ns", c.syscall_ns)),
        ("clock read (CLOCK_MONOTONIC)".to_string(), format!("{:.0} ns", c.clock_ns)),
        ("page-cache write ceiling".to_string(), ceiling(&c.page_cache)),
        ("device write rate (O_DIRECT)".to_string(), ceiling(&c.device)),
    ];
    let width = rows.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
    for (name, value) in rows {
        writeln!(out, "{name:<width$}  {value}")?;
    }
    if !c.memcpy_classes.is_empty() {
        let threads = threads(c.memcpy_threads);
        writeln!(out, "\nmemory copy by size (a case is held against the size at or above its own):")?;
        for class in &c.memcpy_classes {
            let size = format_size(class.bytes);
            let (one, all) = (gbps(class.bytes_per_s), gbps(class.all_bytes_per_s));
            writeln!(out, "  {size:>9}  {one:>10} (1 thread)  {all:>10} ({threads})")?;
        }
    }
    if c.memcpy_classes.is_empty() {
        // A result from before the classes: one copy into the large buffer.
        writeln!(
            out,
            "\nmemory copy: best of the passes copying {} (shared out among the threads) in 1 MiB pieces from an \
             8 MiB source",
            format_size(c.memcpy_bytes)
        )?;
    } else {
        writeln!(
            out,
            "\nmemory copy: best of the passes copying into a destination of each size (shared out among the \
             threads) from a source of up to 8 MiB, in pieces of up to 1 MiB, {} a pass, 16 MiB at least",
            format_size(c.memcpy_bytes)
        )?;
    }
    for (name, ceiling) in [("page cache", &c.page_cache), ("device", &c.device)] {
        if ceiling.bytes_per_s.is_some() {
            writeln!(out, "{name}: {}", ceiling.how)?;
        }
    }
    writeln!(out, "measured in {:.1} s", c.seconds)
}

fn threads(n: usize) -> String {
    if n == 1 { "1 thread".to_string() } else { format!("{n} threads") }
}

fn ceiling(ceiling: &Ceiling) -> String {
    match (ceiling.bytes_per_s, &ceiling.why_not) {
        (Some(rate), _) => gbps(rate),
        (None, Some(why)) => format!("none: {why}"),
        (None, None) => "none".to_string(),
    }
}

/// One line for the head of a run's table.
pub fn summary_line(c: &Calibration) -> String {
    let device = match (c.device.bytes_per_s, &c.device.why_not) {
        (Some(rate), _) => format!("device {} (O_DIRECT)", gbps(rate)),
        (None, Some(why)) => format!("device: none ({why})"),
        (None, None) => "device: none".to_string(),
    };
    // The smaller classes' copy on every CPU (the limit a figure is flagged above):
    // what a small file's "% of" is read against.
    let smaller: Vec<String> = c
        .memcpy_classes
        .iter()
        .filter(|class| class.bytes < c.memcpy_bytes)
        // Compact sizes, as in case ids: a wrapped line never parts a size from its unit.
        .map(|class| format!("{} {}", format_size_compact(class.bytes), gbps(class.all_bytes_per_s)))
        .collect();
    let smaller = if smaller.is_empty() {
        String::new()
    } else {
        format!(", at smaller sizes ({}) {}", threads(c.memcpy_threads), smaller.join(", "))
    };
    // A calibration reused from an earlier run says so: its figures are of that moment.
    let reused = c
        .reused_age_seconds
        .map(|age| format!("; measured {} ago on this path and reused", age_words(age)))
        .unwrap_or_default();
    format!(
        "ceilings: memory copy {} (1 thread), {} ({}){smaller}; {device}; syscall {:.0} ns{reused}",
        gbps(c.memcpy_bytes_per_s),
        gbps(c.memcpy_all_bytes_per_s),
        threads(c.memcpy_threads),
        c.syscall_ns
    )
}

/// "41 % of memory copy, durable 23 % of device": a case's medians against its ceilings.
pub fn share_note(share: &CeilingShare) -> String {
    let mut note = format!("{} of {}", percent(share.buffered_pct), share.buffered_of);
    if let (Some(pct), Some(of)) = (share.durable_pct, &share.durable_of) {
        note += &format!(", durable {} of {of}", percent(pct));
    }
    note
}

/// Whole percent; "<1 %" rather than a "0 %" that reads as nothing at all.
fn percent(pct: f64) -> String {
    if pct < 0.5 { "<1 %".to_string() } else { format!("{pct:.0} %") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use context::copy::CopyClass;

    #[test]
    fn a_share_names_each_ceiling() {
        let share = CeilingShare {
            buffered_pct: 41.2,
            buffered_of: "memory copy".into(),
            durable_pct: Some(23.0),
            durable_of: Some("device".into()),
        };
        assert_eq!(share_note(&share), "41 % of memory copy, durable 23 % of device");
        let buffered_only = CeilingShare { durable_pct: None, durable_of: None, ..share };
        assert_eq!(share_note(&buffered_only), "41 % of memory copy");
        let tiny = CeilingShare { buffered_pct: 0.3, ..buffered_only };
        assert_eq!(share_note(&tiny), "<1 % of memory copy");
    }

    #[test]
    fn a_missing_device_says_why() {
        let c = Calibration {
            memcpy_bytes_per_s: 9.81e9,
            memcpy_all_bytes_per_s: 14.2e9,
            memcpy_threads: 2,
            syscall_ns: 84.6,
            device: Ceiling::missing("", "no block device under the path".into()),
            ..Calibration::default()
        };
        assert_eq!(
            summary_line(&c),
            "ceilings: memory copy 9.81 GB/s (1 thread), 14.2 GB/s (2 threads); device: none (no block device \
             under the path); syscall 85 ns"
        );
        let kept = Calibration { reused_age_seconds: Some(750.0), ..c.clone() };
        assert!(summary_line(&kept).ends_with("syscall 85 ns; measured 12 min ago on this path and reused"));
        let classes = [(1 << 20, 30e9, 41.5e9), (16 << 20, 12e9, 20.3e9), (64 << 20, 9.81e9, 14.2e9)]
            .map(|(bytes, one, all)| CopyClass { bytes, bytes_per_s: one, all_bytes_per_s: all });
        let by_size = Calibration { memcpy_classes: classes.to_vec(), memcpy_bytes: 64 << 20, ..c };
        assert_eq!(
            summary_line(&by_size),
            "ceilings: memory copy 9.81 GB/s (1 thread), 14.2 GB/s (2 threads), at smaller sizes (2 threads) \
             1MiB 41.5 GB/s, 16MiB 20.3 GB/s; device: none (no block device under the path); syscall 85 ns"
        );
    }
}
