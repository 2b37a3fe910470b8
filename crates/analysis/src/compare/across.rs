//! Across files: what the lab says about filesystems (or any set of results measured
//! with the same cases). `compare` sets every file against the first; here each file is
//! read on its own too, so that an effect (preallocating, say) is measured inside each
//! file and the files' effects are set side by side: "preallocation helps on ext4 (×1.4)
//! but not on xfs (tied)". And per goal, which file and which of its strategies is the
//! fastest of all, tested against the best of the other files.
//!
//! An effect inside one file is a set of pairs of cases that differ in that one
//! dimension only (`pwrite prealloc 1MiB t1 end` against `pwrite empty 1MiB t1 end`),
//! each tested with Welch's t on the run times (the durable times where the case syncs:
//! what a program that keeps its data pays), Holm-corrected over the pairs of that
//! effect in that file. Its factor is the geometric mean of the pairs' factors.

use super::{CompareResult, CrossObservation, Effect, Fastest, Sizes, compare};
use crate::advice::Figures;
use crate::advice::words;
use plan::FileState;
use result::{CaseResult, ResultFile, Status};
use stats::significance::{self, ALPHA, EQUIVALENCE, Verdict};

/// The filesystem each result was measured on: the lab's name for it where the lab
/// built it (`options.lab.filesystem`: "btrfs-raid0", "ext4-md-raid0"), else its type
/// (`target.fs_type`). None unless every result has a filesystem of its own, so that
/// one filesystem on two days stays a plain comparison.
pub fn filesystem_names(results: &[(String, ResultFile)]) -> Option<Vec<String>> {
    let names: Vec<String> = results
        .iter()
        .map(|(_, result)| {
            let lab = result.options.lab_filesystem();
            lab.map_or_else(|| result.target.fs_type.clone(), str::to_string)
        })
        .collect();
    let distinct: std::collections::BTreeSet<&str> = names.iter().map(String::as_str).collect();
    (results.len() >= 2 && distinct.len() == names.len() && !distinct.contains("")).then_some(names)
}

/// The comparison of saved results across their filesystems, as the lab makes it:
/// columns headed by the filesystems, each file named by its path (`results`' names),
/// and of the differences in context only those that tell the filesystems apart, not
/// the lab's own mount points, devices and commands, which differ by construction.
/// None where [`filesystem_names`] is.
pub fn compare_saved_filesystems(results: &[(String, ResultFile)]) -> Option<CompareResult> {
    let names = filesystem_names(results)?;
    let named: Vec<(String, ResultFile)> =
        names.into_iter().zip(results).map(|(name, (_, result))| (name, result.clone())).collect();
    let mut compared = compare_filesystems(&named);
    for (file, (path, _)) in compared.files.iter_mut().zip(results) {
        file.name = path.clone();
    }
    compared.differences.retain(|difference| {
        let field = difference.field.as_str();
        let lab_detail = field.starts_with("options.lab.")
            && !matches!(field, "options.lab.mkfs_options" | "options.lab.mount_options");
        !(lab_detail || field == "target.path")
    });
    Some(compared)
}

/// `compare` of results named by their filesystems (or whatever `name` says), with the
/// names as column headings and the observations across them.
pub fn compare_filesystems(results: &[(String, ResultFile)]) -> CompareResult {
    let mut compared = compare(results);
    for (file, (name, _)) in compared.files.iter_mut().zip(results) {
        file.label = name.clone();
    }
    let names: Vec<&str> = results.iter().map(|(name, _)| name.as_str()).collect();
    let files: Vec<&ResultFile> = results.iter().map(|(_, result)| result).collect();
    compared.memory_note = super::memory::note(&names, &files.iter().map(|result| &result.target).collect::<Vec<_>>());
    for state in [FileState::Prealloc, FileState::Sparse, FileState::Overwrite] {
        if let Some(observation) = state_effect(state, &files, &names) {
            compared.across.push(observation);
        }
    }
    if let Some(observation) = durability_cost(&compared, &names) {
        compared.across.push(observation);
    }
    compared.fastest = fastest(&compared, &files);
    compared
}

/// The times a case is judged on: write + sync where it syncs, else the write.
fn judged_times(case: &CaseResult) -> Option<Vec<f64>> {
    if case.status != Status::Ok || case.runs.len() < 2 {
        return None;
    }
    Some(if case.case.durability.syncs() {
        case.runs.iter().map(|run| run.durable_time()).collect()
    } else {
        case.runs.iter().map(|run| run.write_time()).collect()
    })
}

/// The id with its state word replaced: the key of the case's twin in another state.
fn without_state(case: &CaseResult) -> String {
    let state = case.case.state.name();
    case.case.id.split(' ').map(|word| if word == state { "*" } else { word }).collect::<Vec<_>>().join(" ")
}

fn state_words(state: FileState) -> &'static str {
    match state {
        FileState::Prealloc => "fallocate to the final size before writing, against a new empty file",
        FileState::Sparse => "ftruncate to the final size before writing, against a new empty file",
        FileState::Overwrite => "writing over a file written before, against a new empty file",
        FileState::Empty => "a new empty file",
    }
}

fn state_effect(state: FileState, files: &[&ResultFile], names: &[&str]) -> Option<CrossObservation> {
    let effects: Vec<Option<Effect>> = files
        .iter()
        .map(|result| {
            let mut tests = Vec::new();
            for case in result.cases.iter().filter(|c| c.case.state == state) {
                let key = (without_state(case), case.case.bytes);
                let twin = result
                    .cases
                    .iter()
                    .find(|c| c.case.state == FileState::Empty && c.case.bytes == key.1 && without_state(c) == key.0);
                let (Some(twin), Some(with)) = (twin, judged_times(case)) else { continue };
                let Some(without) = judged_times(twin) else { continue };
                // factor(a, b) = mean(a) / mean(b): with the change's rate over without's.
                if let Some(factor) = significance::factor(&without, &with) {
                    tests.push(factor);
                }
            }
            if tests.is_empty() {
                return None;
            }
            let holm = significance::holm(&tests.iter().map(|t| t.p).collect::<Vec<_>>());
            let significant = |i: usize| holm[i] < ALPHA;
            let log_mean = tests.iter().map(|t| t.factor.ln()).sum::<f64>() / tests.len() as f64;
            Some(Effect {
                factor: log_mean.exp(),
                pairs: tests.len(),
                faster: (0..tests.len()).filter(|&i| significant(i) && tests[i].factor > 1.0).count(),
                slower: (0..tests.len()).filter(|&i| significant(i) && tests[i].factor < 1.0).count(),
            })
        })
        .collect();
    if effects.iter().all(Option::is_none) {
        return None;
    }
    let subject = match state {
        FileState::Prealloc => "preallocation",
        FileState::Sparse => "a sparse file",
        FileState::Overwrite => "overwriting",
        FileState::Empty => "an empty file",
    };
    let text =
        format!("{} ({}; durable rates where the case syncs)", sentence(subject, &effects, names), state_words(state));
    Some(CrossObservation { kind: format!("state:{}", state.name()), text, files: effects })
}

/// "preallocation helps on ext4 (×1.40) but not on xfs (×1.01, no pair significant); it
/// hurts on fuse (×0.70)".
fn sentence(subject: &str, effects: &[Option<Effect>], names: &[&str]) -> String {
    let group = |verdict: &str| -> Vec<String> {
        effects
            .iter()
            .zip(names)
            .filter_map(|(effect, name)| effect.filter(|e| e.verdict() == verdict).map(|e| (e, name)))
            .map(|(e, name)| {
                if verdict == "none" {
                    format!("{name} (×{:.2}, no pair significant)", e.factor)
                } else {
                    format!(
                        "{name} (×{:.2}, {} of {} pairs)",
                        e.factor,
                        if verdict == "hurts" { e.slower } else { e.faster },
                        e.pairs
                    )
                }
            })
            .collect()
    };
    let (helps, hurts, mixed, tied) = (group("helps"), group("hurts"), group("mixed"), group("none"));
    let mut parts = Vec::new();
    if !helps.is_empty() {
        parts.push(format!("helps on {}", helps.join(", ")));
    }
    if !tied.is_empty() {
        let lead = if helps.is_empty() { "makes no significant difference on" } else { "but not on" };
        parts.push(format!("{lead} {}", tied.join(", ")));
    }
    let mut text = format!("{subject} {}", parts.join(" "));
    if parts.is_empty() {
        text = subject.to_string();
    }
    if !hurts.is_empty() {
        let lead = if parts.is_empty() { " hurts on" } else { "; it hurts on" };
        text += &format!("{lead} {}", hurts.join(", "));
    }
    if !mixed.is_empty() {
        text += &format!("; mixed (faster in some pairs, slower in others) on {}", mixed.join(", "));
    }
    let missing: Vec<&str> =
        effects.iter().zip(names).filter(|(effect, _)| effect.is_none()).map(|(_, name)| *name).collect();
    if !missing.is_empty() {
        text += &format!("; not measured on {}", missing.join(", "));
    }
    text
}

/// What making the data durable costs on each file: the median, over the cases that
/// sync, of the durable rate over the buffered rate of the same runs.
fn durability_cost(compared: &CompareResult, names: &[&str]) -> Option<CrossObservation> {
    let mut effects = Vec::new();
    for file in 0..compared.files.len() {
        let mut ratios: Vec<f64> = compared
            .cases
            .iter()
            .filter_map(|case| case.files[file].as_ref())
            .filter_map(|side| Some(side.durable_median? / side.median?))
            .filter(|ratio| ratio.is_finite() && *ratio > 0.0)
            .collect();
        if ratios.is_empty() {
            effects.push(None);
            continue;
        }
        ratios.sort_by(f64::total_cmp);
        let median = ratios[ratios.len() / 2];
        effects.push(Some(Effect { factor: median, pairs: ratios.len(), faster: 0, slower: 0 }));
    }
    if effects.iter().all(Option::is_none) {
        return None;
    }
    let mut ranked: Vec<(f64, &str, usize)> =
        effects.iter().zip(names).filter_map(|(e, name)| e.map(|e| (e.factor, *name, e.pairs))).collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
    let list: Vec<String> = ranked.iter().map(|(factor, name, _)| format!("{name} ×{factor:.2}")).collect();
    let text = format!(
        "making the data durable (the syncs the cases ask for, against the same runs' buffered rate; median over the cases that sync) keeps: {}",
        list.join(", ")
    );
    Some(CrossObservation { kind: "durability-cost".into(), text, files: effects })
}

/// Lower is better for latencies; higher for rates.
fn metric_text(metric: &str, value: f64) -> String {
    result::metric::reading(metric, value).text(|v| format!("{v:.3}"))
}

/// The case a pick names.
fn pick_case<'a>(result: &'a ResultFile, case: &str) -> Option<&'a CaseResult> {
    result.cases.iter().find(|c| c.case.id == case && c.status == Status::Ok)
}

/// The times behind a pick's metric, where it has them (the rates in bytes/s).
fn pick_times(found: &CaseResult, metric: &str) -> Option<Vec<f64>> {
    use crate::advice::Metric;
    Metric::ALL.into_iter().find(|m| m.name() == metric)?.times(found)
}

fn fastest(compared: &CompareResult, files: &[&ResultFile]) -> Vec<Fastest> {
    let mut found = Vec::new();
    for goal in &compared.answers {
        let mut ranked: Vec<(usize, &super::Pick)> =
            goal.picks.iter().enumerate().filter_map(|(file, pick)| pick.as_ref().map(|p| (file, p))).collect();
        // A goal about durability cannot be won on tmpfs, whose syncs return at once, nor
        // by a filesystem over RAM against one whose syncs reach something else.
        let durable_goal = goal.goal.contains("durable");
        let left_out: Vec<String> = if durable_goal {
            let targets: Vec<&context::TargetInfo> = files.iter().map(|result| &result.target).collect();
            let candidates: Vec<usize> = ranked.iter().map(|(file, _)| *file).collect();
            let out = super::memory::left_out_of_durable(&targets, &candidates);
            ranked.retain(|(file, _)| !out.contains(file));
            out.iter().map(|&file| compared.files[file].label.clone()).collect()
        } else {
            Vec::new()
        };
        let Some(metric) = ranked.first().map(|(_, pick)| pick.metric.clone()) else { continue };
        // Only picks of the same metric can be ranked against each other.
        ranked.retain(|(_, pick)| pick.metric == metric);
        ranked.sort_by(|a, b| {
            let order = a.1.median.total_cmp(&b.1.median);
            if result::metric::lower_is_better(&metric) { order } else { order.reverse() }
        });
        let (best_file, best) = ranked[0];
        let name = |file: usize| compared.files[file].label.clone();
        let mut text =
            format!("{}: {} with {} ({})", goal.goal, name(best_file), best.case, metric_text(&metric, best.median));
        let mut fastest = Fastest {
            goal: goal.goal.clone(),
            text: String::new(),
            file: best_file,
            case: best.case.clone(),
            metric: metric.clone(),
            median: best.median,
            runner_up: None,
            factor: None,
            p: None,
        };
        if let Some(&(second_file, second)) = ranked.get(1) {
            fastest.runner_up = Some(second_file);
            let cases = pick_case(files[best_file], &best.case).zip(pick_case(files[second_file], &second.case));
            // The factor compares mean times: of the same bytes only (see `compare`).
            let different_sizes = cases
                .filter(|(best, second)| best.case.bytes != second.case.bytes)
                .map(|(best, second)| Sizes { baseline: best.case.bytes, other: second.case.bytes });
            let test = cases
                .filter(|_| different_sizes.is_none())
                .and_then(|(best, second)| pick_times(best, &metric).zip(pick_times(second, &metric)))
                .and_then(|(best_times, second_times)| significance::factor(&second_times, &best_times));
            let against =
                format!("{}'s best, {} ({})", name(second_file), second.case, metric_text(&metric, second.median));
            match (test, different_sizes) {
                // Tied only where the interval shows the two the same within ±δ; where
                // it shows neither a difference nor that, undecided (docs/answer.md).
                (Some(test), _) => {
                    let low = words::factor(test.low);
                    let interval = format!("{}–{}", low.trim_end_matches('x'), words::factor(test.high));
                    text += &match test.verdict(EQUIVALENCE) {
                        Verdict::Faster => {
                            format!(
                                "; {} faster than {against} ({interval}, {})",
                                words::factor(test.factor),
                                words::p_value(test.p)
                            )
                        }
                        Verdict::Slower => format!(
                            "; {} slower than {against} by mean time ({interval}, {}): its median is higher, its mean lower",
                            words::factor(1.0 / test.factor),
                            words::p_value(test.p)
                        ),
                        Verdict::Tied => {
                            format!("; tied with {against} ({interval}, within ±{:.0} %)", EQUIVALENCE * 100.0)
                        }
                        Verdict::Undecided => {
                            format!("; undecided against {against} ({interval}): more runs would tell")
                        }
                    }
                }
                (None, Some(sizes)) => text += &format!("; then {against}, no factor: {}", sizes.reason()),
                (None, None) => text += &format!("; then {against}"),
            }
            if let Some(test) = test {
                fastest.factor = Some(test.factor);
                fastest.p = Some(test.p);
            }
        }
        if !left_out.is_empty() {
            text += &format!(" ({} left out: a sync there makes nothing durable)", left_out.join(", "));
        }
        fastest.text = text;
        found.push(fastest);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn real() -> ResultFile {
        serde_json::from_str(include_str!("../../../../tests/data/v1-result.json")).unwrap()
    }

    /// A copy of `result` whose prealloc runs take `slower` times as long.
    fn with_prealloc_times(result: &ResultFile, slower: f64) -> ResultFile {
        let mut copy = result.clone();
        for case in copy.cases.iter_mut().filter(|c| c.case.state == FileState::Prealloc) {
            for (i, run) in case.runs.iter_mut().enumerate() {
                // A little spread of its own, so that the test has a variance.
                run.write_seconds *= slower * (1.0 + 0.001 * i as f64);
                run.sync_seconds *= slower;
            }
        }
        copy
    }

    #[test]
    fn saved_results_from_different_filesystems_are_compared_across_them() {
        let on = |fs: &str, lab: Option<&str>| {
            let mut result = real();
            result.target.fs_type = fs.to_string();
            if let Some(name) = lab {
                let lab = serde_json::json!({"filesystem": name, "mount_options": "noatime"});
                result.options.other.insert("lab".into(), lab);
            }
            (format!("/saved/{fs}.json"), result)
        };
        let results = [on("tmpfs", None), on("btrfs", Some("btrfs-raid0")), on("xfs", None)];
        assert_eq!(filesystem_names(&results).unwrap(), ["tmpfs", "btrfs-raid0", "xfs"], "the lab's name first");
        let compared = compare_saved_filesystems(&results).unwrap();
        let labels: Vec<&str> = compared.files.iter().map(|f| f.label.as_str()).collect();
        assert_eq!(labels, ["tmpfs", "btrfs-raid0", "xfs"]);
        assert_eq!(compared.files[2].name, "/saved/xfs.json");
        assert!(compared.differences.iter().all(|d| d.field != "options.lab.filesystem"), "lab details are left out");
        // One filesystem twice (a machine on two days), or one without a type: plain.
        assert_eq!(filesystem_names(&[on("ext4", None), on("ext4", None)]), None);
        assert_eq!(filesystem_names(&[on("ext4", None), on("", None)]), None);
        assert_eq!(compare_saved_filesystems(&[on("ext4", None)]).map(|c| c.files.len()), None);
    }

    #[test]
    fn an_effect_in_one_file_and_not_in_another_is_said_with_both() {
        let base = real();
        if !base.cases.iter().any(|c| c.case.state == FileState::Prealloc) {
            return;
        }
        let files = vec![("ext4".to_string(), with_prealloc_times(&base, 0.25)), ("xfs".to_string(), base.clone())];
        let compared = compare_filesystems(&files);
        assert_eq!(compared.files[0].label, "ext4");
        let prealloc = compared.across.iter().find(|o| o.kind == "state:prealloc").expect("a prealloc observation");
        let ext4 = prealloc.files[0].expect("ext4 has pairs");
        assert!(ext4.factor > 3.0, "{ext4:?}");
        assert!(prealloc.text.starts_with("preallocation helps on ext4 (×"), "{}", prealloc.text);
        assert!(prealloc.files[1].is_some());
    }

    #[test]
    fn a_filesystem_in_memory_wins_no_durability_goal() {
        let mut tmpfs = real();
        tmpfs.target.fs_type = "tmpfs".to_string();
        for run in tmpfs.cases.iter_mut().flat_map(|c| c.runs.iter_mut()) {
            run.write_seconds *= 0.5;
            run.sync_seconds *= 0.01;
        }
        let mut ext4 = real();
        ext4.target.fs_type = "ext4".to_string();
        tmpfs.answer = crate::advice::recommendations(&tmpfs);
        ext4.answer = crate::advice::recommendations(&ext4);
        let compared = compare_filesystems(&[("tmpfs".to_string(), tmpfs), ("ext4".to_string(), ext4)]);
        let durable: Vec<&Fastest> = compared.fastest.iter().filter(|f| f.goal.contains("durable")).collect();
        assert!(!durable.is_empty(), "{:?}", compared.fastest);
        for goal in durable {
            assert_eq!(goal.file, 1, "{goal:?}");
            assert!(goal.text.ends_with("(tmpfs left out: a sync there makes nothing durable)"), "{}", goal.text);
        }
        let fastest = compared.fastest.iter().find(|f| f.goal == "fastest").expect("a fastest goal");
        assert_eq!(fastest.file, 0, "tmpfs may still be the fastest: {fastest:?}");
    }

    #[test]
    fn a_filesystem_over_ram_wins_no_durability_goal_beside_a_device_but_does_among_its_peers() {
        use context::backing::Backing;
        let on = |fs: &str, backing: Backing, faster: f64| {
            let mut result = real();
            result.target.fs_type = fs.to_string();
            result.target.backing = backing;
            for run in result.cases.iter_mut().flat_map(|c| c.runs.iter_mut()) {
                run.write_seconds /= faster;
                run.sync_seconds /= faster;
            }
            result.answer = crate::advice::recommendations(&result);
            (fs.to_string(), result)
        };
        let beside_a_disk = compare_filesystems(&[on("ext4", Backing::Ram, 4.0), on("xfs", Backing::Device, 1.0)]);
        let durable: Vec<&Fastest> = beside_a_disk.fastest.iter().filter(|f| f.goal.contains("durable")).collect();
        assert!(!durable.is_empty(), "{:?}", beside_a_disk.fastest);
        for goal in durable {
            assert_eq!(goal.file, 1, "{goal:?}");
            assert!(goal.text.ends_with("(ext4 left out: a sync there makes nothing durable)"), "{}", goal.text);
        }
        let note = beside_a_disk.memory_note.as_deref().unwrap();
        assert!(note.starts_with("ext4 keeps its data in memory"), "{note}");
        // The lab: every filesystem over RAM, tmpfs alone left out.
        let lab = compare_filesystems(&[
            on("tmpfs", Backing::Ram, 8.0),
            on("ext4", Backing::Ram, 4.0),
            on("xfs", Backing::Ram, 1.0),
        ]);
        let durable = lab.fastest.iter().find(|f| f.goal.contains("durable")).expect("a durable goal");
        assert_eq!(durable.file, 1, "{durable:?}");
        assert!(durable.text.ends_with("(tmpfs left out: a sync there makes nothing durable)"), "{}", durable.text);
        assert!(lab.memory_note.unwrap().starts_with("every file keeps its data in memory (tmpfs, ext4, xfs; "));
    }

    #[test]
    fn the_sentence_groups_files_by_verdict() {
        let effect = |factor, faster, slower| Some(Effect { factor, pairs: 2, faster, slower });
        let text = sentence(
            "preallocation",
            &[effect(1.4, 2, 0), effect(1.01, 0, 0), effect(0.7, 0, 2), None],
            &["ext4", "xfs", "fuse", "tmpfs"],
        );
        assert_eq!(
            text,
            "preallocation helps on ext4 (×1.40, 2 of 2 pairs) but not on xfs (×1.01, no pair significant); it hurts on fuse (×0.70, 2 of 2 pairs); not measured on tmpfs"
        );
    }
}
