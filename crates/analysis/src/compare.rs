//! `compare`: what changed between saved results. Pure (no I/O): the files are loaded
//! by the caller and the comparison is plain data that the exporters render.
//!
//! Cases are matched by what they measured: the case id (which names the method, state,
//! chunk, iov, queue depth, threads, layout and durability) plus the bytes per run; a
//! case the baseline has at one size and another file only at another is matched by its
//! id alone, and shown with both figures but no factor: a factor is a ratio of mean run
//! times, which is a ratio of rates only when both wrote the same bytes. The first file
//! is the baseline; every other file is compared with it, case by case, on
//! the run times (docs/design.md §2.9): the medians are shown, and the factor (the other file's
//! rate over the baseline's, from the mean times) with its 95 % interval and Welch's p
//! come from [`significance::factor`]. The write time is always tested; the write + sync
//! time too where the case's durability mode syncs (a mode that never syncs has no
//! durable figure, whatever an old file stored).
//!
//! Holm's correction runs over every test of one pair of files (baseline and one other),
//! write and durable tests together: the table marks both, so the family whose error
//! rate is held at α is everything the table marks for that pair. Separate families
//! would double the chance of one false mark; the price is a little power, which large
//! differences (the ones a user acts on) do not need.
//!
//! Applied options and the context (host, filesystem, tool version) are not matched on:
//! they are listed where they differ, first, so the reader knows what else changed.

use stats::Summarize;
use std::collections::HashMap;

pub mod across;
pub mod memory;

pub use result::compare::*;

use plan::units::format_size;
use result::{CaseResult, ResultFile, Run, Status};
use stats::Summary;
use stats::significance::{self, ALPHA};

/// Options that say nothing about what was measured: the command line as typed (its
/// applied values are the other options) and the memory the run itself took.
const IGNORED_OPTIONS: [&str; 2] = ["argv", "peak_rss_bytes"];

/// Compares `results` (named as the user named the files); the first is the baseline.
/// Expects at least two files (the command line refuses fewer).
pub fn compare(results: &[(String, ResultFile)]) -> CompareResult {
    let files: Vec<FileInfo> = results
        .iter()
        .enumerate()
        .map(|(index, (name, result))| FileInfo {
            name: name.clone(),
            label: label(index),
            schema: result.schema.clone(),
            complete: result.complete,
            answer_stored: !result.answer.is_empty(),
        })
        .collect();
    let only: Vec<&ResultFile> = results.iter().map(|(_, result)| result).collect();
    let labels: Vec<&str> = files.iter().map(|file| file.label.as_str()).collect();
    let memory_note = memory::note(&labels, &only.iter().map(|result| &result.target).collect::<Vec<_>>());
    let (mut cases, unmatched) = match_cases(&only);
    let summary = (1..only.len()).map(|file| correct(&mut cases, file)).collect();
    CompareResult {
        schema: SCHEMA.to_string(),
        files,
        alpha: ALPHA,
        correction: "Holm, over the write and durable tests of each file against the baseline".to_string(),
        differences: differences(&only),
        cases,
        unmatched,
        answers: answers(&only),
        summary,
        across: Vec::new(),
        fastest: Vec::new(),
        memory_note,
        crash: crash_checks(&only),
    }
}

/// Every file's crash checks; where two files checked the same filesystem, mount options
/// and workload (ext4 and ext4 on md RAID-0 in the lab), the first file's.
fn crash_checks(results: &[&ResultFile]) -> Vec<result::crash::CrashCheck> {
    let mut all: Vec<result::crash::CrashCheck> = Vec::new();
    for check in results.iter().flat_map(|result| &result.crash) {
        let same = |c: &result::crash::CrashCheck| {
            c.fs == check.fs && c.mount_options == check.mount_options && c.workload == check.workload
        };
        if !all.iter().any(same) {
            all.push(check.clone());
        }
    }
    all
}

/// A, B, …, Z, then F27, F28…: short column headings.
pub fn label(index: usize) -> String {
    match u8::try_from(index) {
        Ok(i) if i < 26 => char::from(b'A' + i).to_string(),
        _ => format!("F{}", index + 1),
    }
}

/// Cases keyed by (id, bytes, occurrence): the n-th case of a key in one file meets the
/// n-th of the same key in another, so a file that has a key twice loses neither. Then a
/// baseline case that a file lacks at its size takes that file's case of the same id at
/// another size, if one is left over (no baseline case of its size), so it is shown
/// beside it rather than as two unmatched lines.
fn match_cases(results: &[&ResultFile]) -> (Vec<CaseComparison>, Vec<Unmatched>) {
    let mut keys: Vec<(String, u64)> = Vec::new();
    let mut found: Vec<Vec<Option<&CaseResult>>> = Vec::new();
    let mut index: HashMap<(String, u64, usize), usize> = HashMap::new();
    for (file, result) in results.iter().enumerate() {
        let mut seen: HashMap<(&str, u64), usize> = HashMap::new();
        for case in &result.cases {
            let occurrence = seen.entry((case.case.id.as_str(), case.case.bytes)).or_insert(0);
            let key = (case.case.id.clone(), case.case.bytes, *occurrence);
            *occurrence += 1;
            let row = *index.entry(key).or_insert_with(|| {
                keys.push((case.case.id.clone(), case.case.bytes));
                found.push(vec![None; results.len()]);
                found.len() - 1
            });
            found[row][file] = Some(case);
        }
    }
    for row in 0..found.len() {
        if found[row][0].is_none() {
            continue;
        }
        for file in 1..results.len() {
            if found[row][file].is_some() {
                continue;
            }
            let spare = (0..found.len()).find(|&other| {
                found[other][0].is_none() && keys[other].0 == keys[row].0 && found[other][file].is_some()
            });
            if let Some(spare) = spare {
                found[row][file] = found[spare][file].take();
            }
        }
    }
    let mut cases = Vec::new();
    let mut unmatched = Vec::new();
    for ((id, bytes), row) in keys.into_iter().zip(found) {
        let in_files: Vec<usize> = (0..row.len()).filter(|&file| row[file].is_some()).collect();
        if in_files.is_empty() {
            // Every case of the row was matched with a baseline case of another size.
            continue;
        }
        let Some(baseline) = row[0].filter(|_| in_files.len() > 1) else {
            unmatched.push(Unmatched { id, bytes, in_files });
            continue;
        };
        let versus = row[1..].iter().map(|other| other.map(|other| versus(baseline, other))).collect();
        let kind = baseline.case.kind;
        cases.push(CaseComparison { id, kind, bytes, files: row.iter().map(|case| case.map(side)).collect(), versus });
    }
    (cases, unmatched)
}

fn write_times(runs: &[Run]) -> Vec<f64> {
    runs.iter().map(Run::write_time).collect()
}

fn durable_times(runs: &[Run]) -> Vec<f64> {
    runs.iter().map(Run::durable_time).collect()
}

/// Median throughput of runs that each wrote `bytes`, from their times.
fn median_rate(bytes: u64, times: &[f64]) -> Option<f64> {
    Summary::throughput(bytes as f64, times).map(|summary| summary.median)
}

/// The case's times: write, and write + sync where its mode syncs. Only a case that
/// ran (status ok) has any; recomputed from the runs, so v1 files (whose stored
/// statistics were means of rates, with a durable figure even without a sync) are
/// read the way v2 files are written.
fn times(case: &CaseResult) -> (Option<Vec<f64>>, Option<Vec<f64>>) {
    if case.status != Status::Ok || case.runs.is_empty() {
        return (None, None);
    }
    let durable = case.case.durability.syncs().then(|| durable_times(&case.runs));
    (Some(write_times(&case.runs)), durable)
}

fn side(case: &CaseResult) -> FileCase {
    let (write, durable) = times(case);
    FileCase {
        bytes: case.case.bytes,
        status: case.status,
        error: case.error.clone(),
        runs: case.runs.len(),
        median: write.and_then(|times| median_rate(case.case.bytes, &times)),
        durable_median: durable.and_then(|times| median_rate(case.case.bytes, &times)),
        ops_per_second: case.ops_per_second,
    }
}

fn versus(baseline: &CaseResult, other: &CaseResult) -> Versus {
    let (base_write, base_durable) = times(baseline);
    let (other_write, other_durable) = times(other);
    let different_sizes = (baseline.case.bytes != other.case.bytes)
        .then_some(Sizes { baseline: baseline.case.bytes, other: other.case.bytes });
    let test = |a: Option<Vec<f64>>, b: Option<Vec<f64>>| {
        let (a, b) = (a?, b?);
        Some(BaselineTest {
            baseline_median: median_rate(baseline.case.bytes, &a)?,
            other_median: median_rate(other.case.bytes, &b)?,
            // Holm's p is filled in once every test of the pair is known. The factor
            // compares mean times: of the same bytes only (see the module's comment).
            tested: significance::factor(&a, &b).filter(|_| different_sizes.is_none()).map(|f| Tested {
                factor: f.factor,
                low: f.low,
                high: f.high,
                p: f.p,
                p_holm: f.p,
                significant: false,
            }),
        })
    };
    Versus { write: test(base_write, other_write), durable: test(base_durable, other_durable), different_sizes }
}

/// Holm's correction over every test of `file` against the baseline, and its counts.
fn correct(cases: &mut [CaseComparison], file: usize) -> PairSummary {
    let slot = file - 1;
    let mut tests: Vec<&mut Tested> = cases
        .iter_mut()
        .filter_map(|case| case.versus[slot].as_mut())
        .flat_map(|versus| [versus.write.as_mut(), versus.durable.as_mut()])
        .flatten()
        .filter_map(|test| test.tested.as_mut())
        .collect();
    let raw: Vec<f64> = tests.iter().map(|t| t.p).collect();
    for (tested, adjusted) in tests.iter_mut().zip(significance::holm(&raw)) {
        tested.p_holm = adjusted;
        tested.significant = adjusted < ALPHA;
    }
    let tests_significant = tests.iter().filter(|t| t.significant).count();
    let mut summary = PairSummary {
        file,
        cases_tested: 0,
        cases_significant: 0,
        cases_untested: 0,
        tests: raw.len(),
        tests_significant,
    };
    for versus in cases.iter().filter_map(|case| case.versus[slot].as_ref()) {
        let tested = [&versus.write, &versus.durable].into_iter().flatten().filter(|t| t.tested.is_some()).count();
        if tested == 0 {
            summary.cases_untested += 1;
        } else {
            summary.cases_tested += 1;
            if [&versus.write, &versus.durable].into_iter().flatten().any(BaselineTest::significant) {
                summary.cases_significant += 1;
            }
        }
    }
    summary
}

/// How one context field is read from a result.
type Field = fn(&ResultFile) -> Option<String>;

/// The context fields and applied options whose values are not the same in every file.
fn differences(results: &[&ResultFile]) -> Vec<Difference> {
    let context: [(&str, Field); 14] = [
        ("tool.version", |r| Some(r.tool.version.clone())),
        ("schema", |r| Some(r.schema.clone())),
        ("complete", |r| Some(r.complete.to_string())),
        ("host.kernel", |r| Some(r.host.kernel.clone())),
        ("host.cpu_model", |r| Some(r.host.cpu_model.clone())),
        ("host.cpus", |r| Some(r.host.cpus.to_string())),
        ("host.memory_bytes", |r| Some(format!("{} ({})", r.host.memory_bytes, format_size(r.host.memory_bytes)))),
        ("target.path", |r| Some(r.target.path.clone())),
        ("target.fs_type", |r| Some(r.target.fs_type.clone())),
        ("target.backing", |r| Some(r.target.backing.word().to_string())),
        ("target.device", |r| Some(r.target.device.clone())),
        ("target.mount_options", |r| Some(r.target.mount_options.clone())),
        ("target.dio_mem_align", |r| r.target.dio_mem_align.map(|a| a.to_string())),
        ("target.dio_offset_align", |r| r.target.dio_offset_align.map(|a| a.to_string())),
    ];
    let mut found = Vec::new();
    for (field, value) in context {
        push_if_different(&mut found, field.to_string(), results.iter().map(|r| value(r)).collect());
    }
    let options: Vec<Vec<(String, String)>> = results.iter().map(|r| flatten_options(&r.options.to_json())).collect();
    let mut fields: Vec<&String> = Vec::new();
    for (field, _) in options.iter().flatten() {
        if !fields.contains(&field) {
            fields.push(field);
        }
    }
    for field in fields {
        let values = options
            .iter()
            .map(|file| file.iter().find(|(name, _)| name == field).map(|(_, value)| value.clone()))
            .collect();
        push_if_different(&mut found, field.clone(), values);
    }
    found
}

fn push_if_different(found: &mut Vec<Difference>, field: String, values: Vec<Option<String>>) {
    if values.iter().any(|value| *value != values[0]) {
        found.push(Difference { field, values });
    }
}

/// The options as (`options.a.b`, value) pairs: objects are walked, lists and scalars
/// are values (compact JSON; strings without their quotes).
fn flatten_options(options: &serde_json::Value) -> Vec<(String, String)> {
    fn walk(prefix: String, value: &serde_json::Value, out: &mut Vec<(String, String)>) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, value) in map {
                    if prefix == "options" && IGNORED_OPTIONS.contains(&key.as_str()) {
                        continue;
                    }
                    walk(format!("{prefix}.{key}"), value, out);
                }
            }
            serde_json::Value::String(text) => out.push((prefix, text.clone())),
            other => out.push((prefix, other.to_string())),
        }
    }
    let mut out = Vec::new();
    walk("options".to_string(), options, &mut out);
    out
}

/// The recommendations goal by goal, in the order the files first name the goals.
fn answers(results: &[&ResultFile]) -> Vec<GoalComparison> {
    // A latency goal is one question per record size: keyed by its pick's size.
    let record = |result: &ResultFile, recommendation: &result::Recommendation| {
        let case = result.cases.iter().find(|c| c.case.id == recommendation.best.case)?;
        plan::latency::is_latency_case(&case.case).then_some(case.case.chunk_bytes)
    };
    let mut goals: Vec<(&str, Option<u64>)> = Vec::new();
    for result in results {
        for recommendation in &result.answer {
            let key = (recommendation.goal.as_str(), record(result, recommendation));
            if !goals.contains(&key) {
                goals.push(key);
            }
        }
    }
    goals
        .into_iter()
        .map(|(goal, record_bytes)| {
            let picks: Vec<Option<Pick>> = results
                .iter()
                .map(|result| {
                    result.answer.iter().find(|r| r.goal == goal && record(result, r) == record_bytes).map(|r| Pick {
                        case: r.best.case.clone(),
                        metric: r.best.metric.clone(),
                        median: r.best.median,
                        tied: r.tied,
                    })
                })
                .collect();
            let named: Vec<&Pick> = picks.iter().flatten().collect();
            let same_strategy = (named.len() > 1).then(|| named.iter().all(|pick| pick.case == named[0].case));
            GoalComparison { goal: goal.to_string(), record_bytes, picks, same_strategy }
        })
        .collect()
}

#[cfg(test)]
mod tests;
