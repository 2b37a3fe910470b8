//! What the Markdown and the HTML reports both say, worded once: the title, the
//! context facts, the goals' names, figures and comparisons as text, and what to say
//! when a result holds no observations or no answer.

use context::TargetInfo;
use plan::units::format_size;
use result::Summary;
use result::{CaseResult, Comparison, Figure, Recommendation, ResultFile};

/// benchmarkIOWrite's line of a figure: "( min: 5.84402, 6.11 ± 0.13, max: 6.25867 )".
pub fn seed_style(figure: &Summary) -> String {
    plan::numbers::format_seed_style(figure.min, figure.mean, figure.stddev, figure.max)
}

/// "writebench on /dev/shm (tmpfs)".
pub fn title(result: &ResultFile) -> String {
    format!("writebench on {} ({})", one_line(&result.target.path), filesystem(&result.target))
}

/// The filesystem's type, with a distributed one's volume layout: "fuse.glusterfs:
/// GlusterFS disperse volume data, 1 x (2 + 1) = 3 bricks".
pub fn filesystem(target: &TargetInfo) -> String {
    match &target.volume {
        Some(volume) => format!("{}: {}", one_line(&target.fs_type), one_line(volume)),
        None => one_line(&target.fs_type),
    }
}

/// Where a run's data came from (`--source`), in the header's words: a result from
/// before the choice wrote from the cached buffer. None for latency's and calibration's
/// results, whose small writes are of data just produced.
pub fn data_source(result: &ResultFile) -> Option<&'static str> {
    match result.options.command.as_deref() {
        Some("latency" | "calibrate") => None,
        _ => Some(result.options.source.unwrap_or_default().description()),
    }
}

/// What a reader of a memory filesystem's figures must know (the table says the same).
pub fn target_note(result: &ResultFile) -> Option<String> {
    let fs_type = result.target.fs_type.as_str();
    if result.target.memory_filesystem() {
        return Some(format!(
            "{fs_type} keeps files in memory: fsync does nothing there, nothing is durable, and O_DIRECT is \
             accepted but bypasses no cache."
        ));
    }
    ram_backed(&result.target).map(|note| format!("{note}; nothing is durable."))
}

/// A filesystem that is not memory itself but whose data ends up there (a loop device
/// over a file on tmpfs, bindfs over a tmpfs directory): what holds the data, and what a
/// sync there measures (docs/durability.md). None for tmpfs and ramfs, which have their
/// own words, and for targets on a device or unknown.
pub fn ram_backed(target: &TargetInfo) -> Option<String> {
    if target.memory_filesystem() || !target.in_memory() {
        return None;
    }
    let chain =
        if target.backing_chain.is_empty() { String::new() } else { format!(" ({})", one_line(&target.backing_chain)) };
    Some(format!(
        "{} here keeps its data in memory{chain}; a sync there measures the filesystem's own work, not a device",
        one_line(&target.fs_type)
    ))
}

/// The command that made the result, as the user typed it (argv[0] shortened to its
/// file name, so a build path does not read as part of the command).
pub fn command_line(result: &ResultFile) -> Option<String> {
    let argv = result.options.argv.as_ref()?;
    let mut words: Vec<String> = argv.iter().map(|word| one_line(word)).collect();
    if let Some(first) = words.first_mut() {
        *first = first.rsplit('/').next().unwrap_or(first).to_string();
    }
    (!words.is_empty()).then(|| words.join(" "))
}

/// The facts a reader needs to trust the numbers (docs/design.md §2.11), as (name, value).
pub fn context_facts(result: &ResultFile) -> Vec<(&'static str, String)> {
    let host = &result.host;
    let target = &result.target;
    let mut facts = vec![
        ("writebench", format!("{} {}", one_line(&result.tool.name), one_line(&result.tool.version))),
        ("result schema", one_line(&result.schema)),
        ("kernel", one_line(&host.kernel)),
        ("CPU", format!("{} ({} CPUs)", one_line(&host.cpu_model), host.cpus)),
        ("memory", format_size(host.memory_bytes)),
        ("path", one_line(&target.path)),
        ("filesystem", one_line(&target.fs_type)),
        ("data held by", backing_fact(target)),
        ("device", one_line(&target.device)),
        ("mount point", one_line(&target.mount_point)),
        ("mount options", one_line(&target.mount_options)),
    ];
    if let Some(volume) = &target.volume {
        facts.push(("volume", one_line(volume)));
    }
    let alignment = match (target.dio_mem_align, target.dio_offset_align) {
        (Some(memory), Some(offset)) => format!("memory {memory} B, offset {offset} B"),
        _ => "unknown".to_string(),
    };
    let source = target.dio_align_source.as_deref().map(|s| format!(" ({})", one_line(s))).unwrap_or_default();
    facts.push(("O_DIRECT alignment", alignment + &source));
    if let Some(atomic) = target.atomic_write {
        let text = if atomic.supported {
            format!("{} B to {} B, up to {} segments", atomic.unit_min, atomic.unit_max, atomic.segments_max)
        } else {
            "not offered here".to_string()
        };
        facts.push(("atomic writes (statx)", text));
    }
    if let Some(compression) = &target.compression {
        facts.push(("compresses or dedups", one_line(compression)));
    }
    if let Some(calibration) = &result.calibration {
        let line = crate::calibration::summary_line(calibration);
        facts.push(("ceilings", line.trim_start_matches("ceilings: ").to_string()));
    }
    if let Some(command) = command_line(result) {
        facts.push(("command", command));
    }
    if !result.complete {
        facts.push(("complete", "no: the run was interrupted, this is what was done so far".to_string()));
    }
    facts
}

/// What holds the data, with the chain where it was recorded: "ram: ext4 on /dev/loop3,
/// a file on tmpfs".
fn backing_fact(target: &TargetInfo) -> String {
    let word = target.backing.word();
    if target.backing_chain.is_empty() {
        word.to_string()
    } else {
        format!("{word}: {}", one_line(&target.backing_chain))
    }
}

/// The options as applied, pretty-printed JSON.
pub fn options_json(result: &ResultFile) -> String {
    serde_json::to_string_pretty(&result.options).unwrap_or_default()
}

/// The question a recommendation answers.
pub fn goal_title(goal: &str) -> String {
    result::goals::by_key(goal).map_or_else(|| one_line(goal), |goal| goal.title.to_string())
}

/// The Answer's goals as a report shows them, each with its title: small durable commits
/// are answered per record size, so their titles name it ("Small durable commits of 512 B,
/// rewriting in place"). On the terminal (`once`) a goal not applicable here is said once,
/// whatever its sizes; the documents keep each.
pub fn shown_answers(result: &ResultFile, once: bool) -> Vec<(String, &Recommendation)> {
    let mut shown: Vec<(String, &Recommendation)> = Vec::new();
    for recommendation in &result.answer {
        let not_applicable = recommendation.glance.as_ref().is_some_and(|g| g.not_applicable.is_some());
        let said = |(_, other): &(String, &Recommendation)| {
            other.goal == recommendation.goal && other.glance.as_ref().is_some_and(|g| g.not_applicable.is_some())
        };
        let once = once && not_applicable;
        if once && shown.iter().any(said) {
            continue;
        }
        let record = result
            .cases
            .iter()
            .find(|c| c.case.id == recommendation.best.case)
            .map(|c| c.case.chunk_bytes)
            .filter(|_| !once && recommendation.goal.starts_with("small-durable-"));
        let title = goal_title(&recommendation.goal);
        let title = match record {
            Some(bytes) => {
                title.replacen("Small durable commits", &format!("Small durable commits of {}", format_size(bytes)), 1)
            }
            None => title,
        };
        shown.push((title, recommendation));
    }
    shown
}

/// What a run says when no goal could be answered.
pub fn no_goal() -> &'static str {
    "No goal answered: no measured case writes one file from one writer or from several, commits small \
     writes or saves a file durably (a file per thread or per rank answers none of them)."
}

/// How to read a case id, wherever ids appear (at most three lines, docs/usage.md).
pub const ID_LEGEND: &str =
    "  (case ids: method, state, chunk, xN buffers a call, qdN in flight, tN threads, fN files, mode)";

/// What to say when the result has no observations.
pub fn no_observations(result: &ResultFile) -> &'static str {
    if result.schema == "writebench.v1" {
        "None recorded: this result was saved by a writebench that did not yet draw observations."
    } else {
        "None: this result holds no observation (nothing that the advice could state with its numbers)."
    }
}

/// A file creation's figures, in µs per call: the call alone, and with its sync where
/// the case syncs. None for a case that writes data (its figures are GB/s): a creation
/// moves no data, and a 64 MiB ftruncate in 3 µs would read "24000 GB/s".
pub fn per_call(case: &CaseResult) -> Option<(Summary, Option<Summary>)> {
    Some((case.call_us?, case.durable_call_us))
}

/// What to say when the result has no recommendation.
pub fn no_answer(result: &ResultFile) -> &'static str {
    if result.schema == "writebench.v1" {
        "None recorded: this result was saved by a writebench that did not yet recommend a strategy."
    } else {
        "None: this result holds no recommendation (it measured no case that answers one of the goals)."
    }
}

/// "p99_ns" etc. as a value with its unit (the metric itself is named beside it).
fn with_unit(metric: &str, value: f64) -> String {
    let reading = result::metric::reading(metric, value);
    match reading.unit {
        "GB/s" => format!("{:.3} GB/s", reading.value),
        "µs" => format!("{:.2} µs", reading.value),
        "" => format!("{value}"),
        unit => format!("{:.0} {unit}", reading.value),
    }
}

/// "write empty 4KiB t1 end, throughput: median 1.930 GB/s, mean 1.900 GB/s (95 % CI 1.850 GB/s to 1.950 GB/s)".
pub fn figure_text(figure: &Figure) -> String {
    let metric = one_line(&figure.metric);
    let interval = match (figure.ci95_low, figure.ci95_high) {
        (Some(low), Some(high)) => format!(" (95 % CI {} to {})", with_unit(&metric, low), with_unit(&metric, high)),
        (Some(low), None) => format!(" (95 % CI from {}, no upper bound)", with_unit(&metric, low)),
        _ => String::new(),
    };
    format!(
        "{}, {metric}: median {}, mean {}{interval}",
        one_line(&figure.case),
        with_unit(&metric, figure.median),
        with_unit(&metric, figure.mean)
    )
}

/// "pwrite … vs write …: 1.30 times (95 % CI 1.10 to 1.50), p = 0.003, significant".
pub fn comparison_text(comparison: &Comparison) -> String {
    let verdict = if comparison.significant { "significant" } else { "not significant" };
    format!(
        "{} vs {}: {:.2} times (95 % CI {:.2} to {:.2}), {}, {verdict}",
        one_line(&comparison.better),
        one_line(&comparison.baseline),
        comparison.factor,
        comparison.low,
        comparison.high,
        p_value(comparison.p_value)
    )
}

fn p_value(p: f64) -> String {
    if p < 0.001 { "p < 0.001".to_string() } else { format!("p = {p:.3}") }
}

/// Text from the result file on one line: a line break in a case id or an error
/// message must not start a heading or end a code block in the report.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Small durable commits answered at two record sizes name the size in each title;
    /// where they do not apply, the goal is said once.
    #[test]
    fn each_record_size_has_its_title_and_a_goal_not_applicable_is_said_once() {
        use analysis::advice::recommendations;
        use analysis::advice::testkit::{Build, latency_sized};
        let mut result = Build::new()
            .loops(latency_sized("overwrite0", "odsync", 8), &[5000.0, 5100.0, 4900.0], 200_000)
            .loops(latency_sized("overwrite0", "every-fdatasync:1", 8), &[4000.0, 4100.0, 3900.0], 250_000)
            .loops(latency_sized("overwrite0", "odsync", 512), &[4500.0, 4600.0, 4400.0], 210_000)
            .loops(latency_sized("overwrite0", "every-fdatasync:1", 512), &[3000.0, 3100.0, 2900.0], 260_000)
            .done();
        result.answer = recommendations(&result);
        let titles: Vec<String> = shown_answers(&result, true).into_iter().map(|(title, _)| title).collect();
        assert_eq!(
            titles,
            ["Small durable commits of 8 B, rewriting in place", "Small durable commits of 512 B, rewriting in place"]
        );
        for recommendation in &mut result.answer {
            recommendation.glance.as_mut().unwrap().not_applicable = Some("nothing on tmpfs survives".into());
        }
        let titles: Vec<String> = shown_answers(&result, true).into_iter().map(|(title, _)| title).collect();
        assert_eq!(titles, ["Small durable commits, rewriting in place"]);
    }

    #[test]
    fn figures_and_comparisons_read_with_their_units() {
        let figure = Figure {
            case: "pwrite prealloc 1MiB t1 end".into(),
            metric: "durable".into(),
            median: 1.93e9,
            mean: 1.9e9,
            ci95_low: Some(1.85e9),
            ci95_high: None,
        };
        assert_eq!(
            figure_text(&figure),
            "pwrite prealloc 1MiB t1 end, durable: median 1.930 GB/s, mean 1.900 GB/s (95 % CI from 1.850 GB/s, no upper bound)"
        );
        let p99 =
            Figure { metric: "p99_ns".into(), median: 1500.0, mean: 1500.0, ci95_high: None, ci95_low: None, ..figure };
        assert!(figure_text(&p99).ends_with("p99_ns: median 1.50 µs, mean 1.50 µs"), "{}", figure_text(&p99));
        let comparison = Comparison {
            better: "a".into(),
            baseline: "b".into(),
            factor: 1.3,
            low: 1.1,
            high: 1.5,
            p_value: 0.0001,
            significant: true,
        };
        assert_eq!(comparison_text(&comparison), "a vs b: 1.30 times (95 % CI 1.10 to 1.50), p < 0.001, significant");
    }

    #[test]
    fn text_from_the_file_stays_on_one_line() {
        assert_eq!(one_line("write\n## injected\r\n  heading"), "write ## injected heading");
        assert_eq!(goal_title("fastest"), "One big file, fastest");
        assert_eq!(goal_title("a\nb"), "a b");
    }
}
