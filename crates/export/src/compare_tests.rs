//! Tests of the terminal and Markdown renderings of `compare`.

use super::*;
use result::compare::{BaselineTest, Difference, FileInfo, PairSummary, Pick, Sizes, Tested, Unmatched, Versus};

fn side(status: Status, median: Option<f64>, durable_median: Option<f64>) -> Option<FileCase> {
    Some(FileCase { bytes: 64 << 20, status, error: None, runs: 5, median, durable_median, ops_per_second: None })
}

fn test(base: f64, other: f64, factor: f64, significant: bool) -> Option<BaselineTest> {
    let tested = Tested { factor, low: factor * 0.9, high: factor * 1.1, p: 0.01, p_holm: 0.02, significant };
    Some(BaselineTest { baseline_median: base, other_median: other, tested: Some(tested) })
}

fn pick(case: &str, median: f64) -> Option<Pick> {
    Some(Pick { case: case.into(), metric: "throughput".into(), median, tied: false })
}

fn fixture() -> CompareResult {
    let file = |label: &str, answer_stored| FileInfo {
        name: format!("{label}.json"),
        label: label.into(),
        schema: "writebench.v2".into(),
        complete: true,
        answer_stored,
    };
    let end = "pwrite prealloc 1MiB t1 end";
    CompareResult {
        schema: "writebench.compare.v1".into(),
        files: vec![file("A", true), file("B", true), file("C", false)],
        alpha: 0.05,
        correction: "Holm".into(),
        differences: vec![Difference {
            field: "target.fs_type".into(),
            values: vec![Some("tmpfs".into()), Some("ext4".into()), None],
        }],
        cases: vec![
            CaseComparison {
                kind: plan::CaseKind::Throughput,
                id: end.into(),
                bytes: 64 << 20,
                files: vec![
                    side(Status::Ok, Some(2e9), Some(1.9e9)),
                    side(Status::Ok, Some(2.05e9), Some(0.5e9)),
                    side(Status::Failed, None, None),
                ],
                versus: vec![
                    Some(Versus {
                        write: test(2e9, 2.05e9, 1.02, false),
                        durable: test(1.9e9, 0.5e9, 0.26, true),
                        different_sizes: None,
                    }),
                    Some(Versus { write: None, durable: None, different_sizes: None }),
                ],
            },
            CaseComparison {
                kind: plan::CaseKind::Throughput,
                id: "write empty 4KiB t1 none".into(),
                bytes: 64 << 20,
                files: vec![side(Status::Ok, Some(1e9), None), side(Status::Ok, Some(0.5e9), None), None],
                versus: vec![
                    Some(Versus {
                        write: Some(BaselineTest { baseline_median: 1e9, other_median: 0.5e9, tested: None }),
                        durable: None,
                        different_sizes: None,
                    }),
                    None,
                ],
            },
        ],
        unmatched: vec![Unmatched { id: "mmap sparse 1MiB t1 end".into(), bytes: 64 << 20, in_files: vec![1] }],
        answers: vec![
            GoalComparison {
                goal: "fastest".into(),
                record_bytes: None,
                picks: vec![pick(end, 2e9), pick(end, 2.05e9), None],
                same_strategy: Some(true),
            },
            GoalComparison {
                goal: "durable-at-end".into(),
                record_bytes: None,
                picks: vec![pick(end, 1.9e9), pick("pwritev prealloc 1MiB x128 t1 end", 0.6e9), None],
                same_strategy: Some(false),
            },
        ],
        summary: vec![
            PairSummary {
                file: 1,
                cases_tested: 1,
                cases_significant: 1,
                cases_untested: 1,
                tests: 2,
                tests_significant: 1,
            },
            PairSummary {
                file: 2,
                cases_tested: 0,
                cases_significant: 0,
                cases_untested: 1,
                tests: 0,
                tests_significant: 0,
            },
        ],
        across: Vec::new(),
        fastest: Vec::new(),
        memory_note: None,
        crash: Vec::new(),
    }
}

fn terminal(compared: &CompareResult) -> String {
    let mut out = Vec::new();
    render(compared, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn context_first_then_cases_answer_and_summary() {
    let text = terminal(&fixture());
    let at = |needle: &str| text.find(needle).unwrap_or_else(|| panic!("{needle} missing:\n{text}"));
    assert!(at("## Context differences") < at("## Cases"));
    assert!(at("## Cases") < at("## Answer") && at("## Answer") < at("Summary: B vs A"));
    let fs_line = text.lines().find(|l| l.contains("target.fs_type")).unwrap();
    assert!(fs_line.contains("tmpfs") && fs_line.contains("ext4") && fs_line.contains("(absent)"), "{fs_line}");
    assert!(
        text.contains(
            "\nSummary: B vs A: 1 of 1 cases differ significantly (1 of 2 tests, Holm, α = 0.05), 1 untested\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "\nSummary: C vs A: 0 of 0 cases differ significantly (0 of 0 tests, Holm, α = 0.05), 1 untested\n"
        ),
        "{text}"
    );
}

#[test]
fn only_a_significant_difference_is_marked_and_lines_fit_100_columns() {
    let text = terminal(&fixture());
    let line = |start: &str| text.lines().find(|l| l.trim_start().starts_with(start)).unwrap().to_string();
    let write = line("pwrite prealloc 1MiB t1 end");
    assert!(write.contains("2.05") && write.contains("×1.02 [0.918, 1.12]") && !write.contains('*'), "{write}");
    assert!(write.contains("failed"), "C's case failed: {write}");
    let durable = line("durable");
    assert!(durable.contains("×0.260 [0.234, 0.286] *"), "{durable}");
    let untested = line("write empty 4KiB");
    assert!(untested.contains("×0.500 (no test: one run)") && untested.contains("absent"), "{untested}");
    assert!(text.contains("mmap sparse 1MiB t1 end (64 MiB): only in B"), "{text}");
    for line in text.lines() {
        assert!(line.chars().count() <= WIDTH, "{} columns: {line}", line.chars().count());
    }
}

#[test]
fn the_answer_says_same_or_different_and_which_file_has_none() {
    let text = terminal(&fixture());
    let same = "  fastest: the same strategy, pwrite prealloc 1MiB t1 end\n      A  2 GB/s\n      B  2.05 GB/s\n";
    assert!(text.contains(same), "{text}");
    let different = "  durable-at-end: different strategies\n      A  pwrite prealloc 1MiB t1 end, 1.9 GB/s\n      \
                     B  pwritev prealloc 1MiB x128 t1 end, 0.6 GB/s\n";
    assert!(text.contains(different), "{text}");
    assert!(text.contains("C: no answer stored"), "{text}");
}

#[test]
fn long_context_values_go_one_file_per_line() {
    let mut compared = fixture();
    compared.differences[0].values = vec![Some("x".repeat(60)), Some("y".repeat(60)), None];
    let text = terminal(&compared);
    assert!(
        text.contains(&format!(
            "\n  target.fs_type\n      A  {}\n      B  {}\n      C  (absent)\n",
            "x".repeat(60),
            "y".repeat(60)
        )),
        "{text}"
    );
}

#[test]
fn markdown_has_the_same_content_as_tables() {
    let mut out = Vec::new();
    render_markdown(&fixture(), &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("| field | A | B | C |\n|---|---|---|---|\n| target.fs\\_type | tmpfs | ext4 | (absent) |"),
        "{text}"
    );
    assert!(text.contains("| case | A | B | B/A | C | C/A |\n|---|---:|---:|---:|---:|---:|\n"), "{text}");
    assert!(text.contains("| ↳ durable | 1.9 | 0.5 | ×0.260 [0.234, 0.286] \\* | failed | — |"), "{text}");
    assert!(text.contains("- C: no answer stored"), "{text}");
    assert!(
        text.contains("- durable-at-end: different strategies\n  - A: pwrite prealloc 1MiB t1 end, 1.9 GB/s\n"),
        "{text}"
    );
    assert!(text.contains("Summary: B vs A: 1 of 1 cases"), "{text}");
}

#[test]
fn a_case_table_too_wide_for_the_terminal_becomes_a_block_per_case() {
    // Five filesystems with long names: one line per case would pass 100 columns.
    let mut compared = fixture();
    let names = ["tmpfs", "ext4", "xfs", "btrfs-raid0", "ext4-md-raid0"];
    compared.files = names
        .iter()
        .map(|name| FileInfo {
            name: format!("{name}.json"),
            label: name.to_string(),
            schema: "writebench.v2".into(),
            complete: true,
            answer_stored: true,
        })
        .collect();
    for case in &mut compared.cases {
        let (first, versus) = (case.files[0].clone(), case.versus[0].clone());
        case.files = vec![first; 5];
        case.versus = vec![versus; 4];
    }
    let text = terminal(&compared);
    let cases = &text[text.find("## Cases").unwrap()..text.find("## Answer").unwrap()];
    assert!(cases.lines().all(|line| line.chars().count() <= WIDTH), "{cases}");
    let lines: Vec<&str> = cases.lines().collect();
    let at = lines.iter().position(|l| l.trim() == "pwrite prealloc 1MiB t1 end").expect(cases);
    assert!(lines[at + 1].trim_start().starts_with("tmpfs") && lines[at + 1].trim_end().ends_with('2'), "{cases}");
    assert!(lines[at + 5].trim_start().starts_with("ext4-md-raid0") && lines[at + 5].contains("×1.02"), "{cases}");
    assert_eq!(lines[at + 6].trim(), "durable", "{cases}");
    assert!(lines[at + 8].contains("×0.26") && lines[at + 8].ends_with(" *"), "the durable factor, marked: {cases}");
    // Three files still fit one line each case.
    assert!(terminal(&fixture()).contains("  case "), "the plain table stays where it fits");
}

#[test]
fn cases_of_different_sizes_show_both_figures_and_why_there_is_no_factor() {
    let mut compared = fixture();
    let case = &mut compared.cases[1];
    let other = case.files[1].as_mut().unwrap();
    (other.bytes, other.median) = (256 << 20, Some(4e9));
    case.versus[0] = Some(Versus {
        write: Some(BaselineTest { baseline_median: 1e9, other_median: 4e9, tested: None }),
        durable: None,
        different_sizes: Some(Sizes { baseline: 64 << 20, other: 256 << 20 }),
    });
    let text = terminal(&compared);
    let line = text.lines().find(|l| l.trim_start().starts_with("write empty 4KiB t1 none")).unwrap();
    assert!(line.contains("write empty 4KiB t1 none, 64 MiB"), "the line says which size is the baseline's: {line}");
    assert!(line.contains(" 1 ") && line.contains(" 4 "), "both figures: {line}");
    assert!(line.contains("different sizes: 64 MiB vs 256 MiB") && !line.contains('×'), "{line}");
}
