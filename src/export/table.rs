//! The table on stdout, grouped like seed 003's sections: one section per file state,
//! one subsection per method family, one line per case with the buffered and the
//! durable throughput in decimal GB/s.

use std::io::{self, Write};

use crate::analysis::stats::{NOISY_CI, Summary, format_mean_sd, format_seed_style};
use crate::export::latency::{is_latency_case, render_cases as render_latency};
use crate::measure::methods;
use crate::plan::FileState;
use crate::plan::units::format_size;
use crate::result::{CaseResult, ResultFile, Status};

pub fn render(result: &ResultFile, out: &mut dyn Write) -> io::Result<()> {
    let target = &result.target;
    writeln!(out, "# writebench on {} ({}, {})", target.path, target.fs_type, target.device)?;
    let usual_size = most_common_size(result);
    writeln!(
        out,
        "{} per run unless a line says otherwise; GB/s as ( min: a, mean ± sd, max: b ) over {}; durable includes the sync (— where the mode never syncs)",
        format_size(usual_size),
        runs_wording(&result.options)
    )?;
    if let Some(note) = crate::export::document::target_note(result) {
        writeln!(out, "note: {note}")?;
    }
    if let Some(calibration) = &result.calibration {
        writeln!(out, "{}; \"% of\" a ceiling is the median's", crate::export::calibration::summary_line(calibration))?;
    }
    match &target.block_device {
        None => writeln!(out, "note: no block device under {}: no device figures", target.path)?,
        Some(name) => {
            let on = target.block_device_parents.join(", ");
            let on = if on.is_empty() { String::new() } else { format!(", on {on}") };
            writeln!(
                out,
                "device: {name}{on}; \"to device\" is what it was asked to write during write + sync (median run)"
            )?
        }
    }
    for state in FileState::ALL {
        let in_state: Vec<&CaseResult> =
            result.cases.iter().filter(|c| c.case.state == state && !is_latency_case(&c.case)).collect();
        if in_state.is_empty() {
            continue;
        }
        writeln!(out, "\n## Write into {}", state.description())?;
        let mut families: Vec<_> = in_state.iter().map(|c| family_of(c)).collect();
        families.sort();
        families.dedup();
        for family in families {
            writeln!(out, "\n### {}\n", family.title())?;
            let rows: Vec<[String; 4]> =
                in_state.iter().filter(|c| family_of(c) == family).map(|c| row(c, usual_size)).collect();
            write_aligned(out, &rows)?;
        }
    }
    if result.cases.iter().any(|c| is_latency_case(&c.case)) {
        writeln!(out, "\n## Small writes, one at a time (latency)\n")?;
        render_latency(&result.cases, out)?;
    }
    Ok(())
}

/// The subsection of a case: its method's family, except that plain and vectored calls
/// from several threads go under "Parallel writing", as in seed 003.
fn family_of(case: &CaseResult) -> methods::Family {
    use methods::Family;
    let family = methods::by_name(&case.case.method).map(|m| m.family()).unwrap_or(Family::Simple);
    match family {
        Family::Simple | Family::Vectored if case.case.threads > 1 => Family::Parallel,
        other => other,
    }
}

/// The size most cases write; lines of other sizes name theirs.
pub fn most_common_size(result: &ResultFile) -> u64 {
    let mut sizes: Vec<(u64, usize)> = Vec::new();
    for case in &result.cases {
        match sizes.iter_mut().find(|(size, _)| *size == case.case.bytes) {
            Some((_, count)) => *count += 1,
            None => sizes.push((case.case.bytes, 1)),
        }
    }
    sizes.iter().max_by_key(|(_, count)| *count).map(|(size, _)| *size).unwrap_or(0)
}

/// Mean over runs of (slowest thread - fastest thread) / slowest thread.
fn thread_spread(result: &CaseResult) -> Option<f64> {
    let spreads: Vec<f64> = result
        .runs
        .iter()
        .filter(|run| run.thread_seconds.len() > 1)
        .map(|run| {
            let slowest = run.thread_seconds.iter().cloned().fold(f64::MIN, f64::max);
            let fastest = run.thread_seconds.iter().cloned().fold(f64::MAX, f64::min);
            (slowest - fastest) / slowest
        })
        .collect();
    (!spreads.is_empty()).then(|| spreads.iter().sum::<f64>() / spreads.len() as f64)
}

fn row(result: &CaseResult, usual_size: u64) -> [String; 4] {
    // Creation labels name their size already.
    let creates = methods::by_name(&result.case.method).is_some_and(|m| m.creation().is_some());
    let size = if result.case.bytes == usual_size || creates {
        String::new()
    } else {
        format!(", {}", format_size(result.case.bytes))
    };
    let label = format!("{}{size}, sync {}:", result.case.label(), result.case.durability);
    match (result.status, result.stats) {
        (Status::Ok, Some(buffered)) => {
            let durable = match result.durable_stats {
                Some(durable) => durable_text(&durable.scaled(1e-9)),
                // Nothing was made durable, so there is no durable figure to show.
                None => "durable —".to_string(),
            };
            [label, format!("{} GB/s", format_seed_style(&buffered.scaled(1e-9))), durable, notes(result).join(", ")]
        }
        (status, _) => {
            let reason = result.error.clone().unwrap_or_default();
            [label, format!("{}: {reason}", status.name()), String::new(), String::new()]
        }
    }
}

/// What a reader should know about a measured case's figure: noisy, outlying runs,
/// stragglers among its threads. The Markdown and HTML reports say the same.
pub fn notes(result: &CaseResult) -> Vec<String> {
    let mut notes: Vec<String> = noise_note(result).into_iter().collect();
    notes.extend(outlier_note(result));
    if let Some(spread) = thread_spread(result) {
        notes.push(format!("threads spread {:.0} %", 100.0 * spread));
    }
    notes.extend(cpu_note(result));
    notes.extend(sqpoll_note(result));
    notes.extend(dirty_note(result));
    notes.extend(others_note(result));
    notes.extend(device_note(result));
    notes.extend(result.ceiling.as_ref().map(crate::export::calibration::share_note));
    notes.extend(resident_note(result));
    notes
}

/// "another process busy on CPU (up to 98 % of one CPU in 3 runs)": the figures
/// shared the machine.
fn others_note(result: &CaseResult) -> Option<String> {
    let busy: Vec<f64> = result
        .runs
        .iter()
        .filter_map(|run| run.others_cpu_share)
        .filter(|&share| share >= crate::result::OTHERS_BUSY)
        .collect();
    let most = busy.iter().copied().reduce(f64::max)?;
    let runs = if busy.len() == 1 { "1 run".to_string() } else { format!("{} runs", busy.len()) };
    Some(format!("another process busy on CPU (up to {:.0} % of one CPU in {runs})", 100.0 * most))
}

/// "page cache kept 3 % of the file": the median run's residency once durable, for the
/// pwritev2 methods, where RWF_DONTCACHE and the default policy sit side by side.
fn resident_note(result: &CaseResult) -> Option<String> {
    if !result.case.method.starts_with("pwritev2") || result.case.bytes == 0 {
        return None;
    }
    let shares: Vec<f64> =
        result.runs.iter().filter_map(|run| run.resident_bytes).map(|b| b as f64 / result.case.bytes as f64).collect();
    if shares.is_empty() {
        return None;
    }
    let share = crate::analysis::stats::median(&shares);
    Some(format!("page cache kept {:.0} % of the file", 100.0 * share.min(1.0)))
}

/// "to device 64.0 MiB, 35 % busy" for the median run by bytes written.
fn device_note(result: &CaseResult) -> Option<String> {
    let mut io: Vec<crate::context::device::DeviceIo> = result.runs.iter().filter_map(|run| run.device).collect();
    if io.is_empty() {
        return None;
    }
    io.sort_by_key(|io| io.bytes_written);
    let median = io[io.len() / 2];
    if median.bytes_written == 0 {
        return Some("to device 0 B: page cache only".to_string());
    }
    Some(format!("to device {}, {:.0} % busy", format_size(median.bytes_written), median.util_pct))
}

/// "2 runs started with 310 MiB dirty": earlier work's writeback overlapped them.
fn dirty_note(result: &CaseResult) -> Option<String> {
    let bytes = result.case.bytes;
    let dirty: Vec<&crate::result::Run> = result.runs.iter().filter(|run| run.started_dirty(bytes)).collect();
    let most =
        dirty.iter().map(|run| run.dirty_before_bytes.unwrap_or(0) + run.writeback_before_bytes.unwrap_or(0)).max()?;
    let runs = if dirty.len() == 1 { "1 run".to_string() } else { format!("{} runs", dirty.len()) };
    Some(format!("{runs} started with up to {} dirty (earlier writeback overlapped)", format_size(most)))
}

/// "CPU-bound (writers on CPU 97 % of the time)": the calls and copies, not the
/// device, set such a case's pace.
fn cpu_note(result: &CaseResult) -> Option<String> {
    if !result.cpu_bound {
        return None;
    }
    let shares: Vec<f64> = result.runs.iter().map(|run| run.cpu_share).collect();
    let share = crate::analysis::stats::median(&shares);
    Some(format!("CPU-bound (writers on CPU {:.0} % of the time)", 100.0 * share.min(1.0)))
}

/// "SQPOLL thread CPU 0.120 s a run, not in the CPU figures": the kernel thread that
/// polls an io_uring-sqpoll ring is no writer, so getrusage of the writers misses it.
fn sqpoll_note(result: &CaseResult) -> Option<String> {
    let seconds: Vec<f64> =
        result.runs.iter().filter_map(|run| run.ring.as_ref().and_then(|ring| ring.sqpoll_cpu_seconds)).collect();
    if seconds.is_empty() {
        return None;
    }
    let median = crate::analysis::stats::median(&seconds);
    Some(format!("SQPOLL thread CPU {median:.3} s a run, not in the CPU figures"))
}

/// "5 runs", or with `--target-ci` "5 to 7 runs (...)": read from the options applied.
pub fn runs_wording(options: &serde_json::Value) -> String {
    let number = |key: &str| options.get(key).and_then(|v| v.as_u64()).unwrap_or(0);
    match options.get("target_ci").and_then(|v| v.as_f64()) {
        Some(pct) => format!(
            "{} to {} runs, until the 95 % CI of the mean is within ±{pct} % (noisy: not reached)",
            number("min_runs"),
            number("max_runs")
        ),
        None => {
            format!("{} runs (noisy: the 95 % CI of the mean wider than ±{:.0} %)", number("repeat"), 100.0 * NOISY_CI)
        }
    }
}

/// "noisy" only where the case missed its `--target-ci`, or, without one, where the
/// 95 % CI of the mean time is wider than ±5 %; the interval is stated either way.
fn noise_note(result: &CaseResult) -> Option<String> {
    match result.target_ci {
        Some(target) if !target.met => Some(match target.reached_pct {
            Some(reached) => format!("noisy: CI ±{reached:.1} % after {} runs", target.runs),
            None => format!("noisy: no CI from {} run", target.runs),
        }),
        Some(_) => None,
        None => {
            let ci = result.ci_relative()?;
            (ci > NOISY_CI).then(|| format!("noisy: CI ±{:.1} %", 100.0 * ci))
        }
    }
}

/// The outlying runs by number; a first run among them suggests too short a warm-up.
fn outlier_note(result: &CaseResult) -> Option<String> {
    if result.outliers.is_empty() {
        return None;
    }
    let numbers: Vec<String> = result.outliers.iter().map(u32::to_string).collect();
    let plural = if numbers.len() > 1 { "s" } else { "" };
    let warmup = if result.first_run_outlier { " (first run: warm-up too short?)" } else { "" };
    Some(format!("outlier run{plural} {}{warmup}", numbers.join(", ")))
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
    use crate::plan::{Case, FileState};
    use crate::result::{Run, TargetCi};

    fn measured(mode: &str, times: &[f64]) -> CaseResult {
        let method = methods::by_name("pwrite").unwrap();
        let case = Case::new(method, FileState::Empty, 1 << 20, 1, mode.parse().unwrap(), 1 << 30);
        let runs = times.iter().map(|&t| Run { write_seconds: t, sync_seconds: 0.1, ..Run::default() }).collect();
        CaseResult::measured(case, runs)
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
        let ci = 100.0 * wide.ci_relative().unwrap();
        assert_eq!(row(&wide, 1 << 30)[3], format!("noisy: CI ±{ci:.1} %"));
        let mut met = wide.clone();
        met.target_ci = Some(TargetCi { pct: 50.0, met: true, runs: 4, reached_pct: Some(ci) });
        assert_eq!(row(&met, 1 << 30)[3], "", "a met target is not noisy, however wide");
        let mut missed = quiet.clone();
        missed.target_ci = Some(TargetCi { pct: 0.1, met: false, runs: 4, reached_pct: Some(1.23) });
        assert_eq!(row(&missed, 1 << 30)[3], "noisy: CI ±1.2 % after 4 runs");
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
