use super::*;
use crate::charts::tests::{measured, result};
use plan::{Case, Layout};
use result::{Observation, Recommendation, Run};

fn render_to_string(result: &ResultFile) -> String {
    let mut out = Vec::new();
    render(result, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn headings(markdown: &str) -> Vec<&str> {
    markdown.lines().filter(|line| line.starts_with('#')).collect()
}

fn latency_case() -> CaseResult {
    let method = catalog::by_name("pwrite").unwrap();
    let mut case = Case::new(method, FileState::Overwrite, 8, 1, "odsync".parse().unwrap(), 8);
    case.id = "latency overwrite0 8B odsync".into();
    case.kind = plan::CaseKind::Latency(plan::pattern::Pattern::Overwrite0);
    let mut result = analysis::advice::testkit::measured(case, vec![Run { write_seconds: 1.0, ..Run::default() }], 1);
    result.latency_ns = Some(serde_json::json!({"count": 1000, "mean": 900.0, "p50": 800.0, "p90": 850.0,
        "p99": 1200.0, "p999": 5000.0, "max": 9000.0}));
    result.ops_per_second = Some(1111.0);
    result
}

/// One case of each place, in an order unlike the document's.
fn every_kind_of_case() -> ResultFile {
    let t = &[1.0, 1.1, 0.9];
    let mut uring = measured("io_uring", FileState::Empty, 4096, "end", 1, Layout::OneFile, t);
    uring.case = uring.case.clone().with_queue_depth(32);
    let mut failed = measured("write", FileState::Sparse, 1 << 20, "end", 1, Layout::OneFile, t);
    failed.status = Status::Failed;
    failed.error = Some("write: No space left on device\n## not a heading".into());
    failed.stats = None;
    let mut unknown = measured("write", FileState::Empty, 4096, "end", 1, Layout::OneFile, t);
    unknown.case.method = "write-someday".into();
    unknown.case.id = "write-someday empty 4KiB t1 end".into();
    result(vec![
        measured("pwrite", FileState::Prealloc, 1 << 20, "end", 1, Layout::OneFile, t),
        latency_case(),
        uring,
        measured("writev", FileState::Empty, 4096, "end", 1, Layout::OneFile, t),
        measured("pwrite", FileState::Empty, 1 << 20, "end", 2, Layout::OneFile, t),
        measured("pwrite", FileState::Empty, 1 << 20, "end", 2, Layout::FilePerThread, t),
        measured("write", FileState::Empty, 4096, "none", 1, Layout::OneFile, t),
        measured("mmap-maps", FileState::Sparse, 1 << 20, "end", 2, Layout::OneFile, t),
        measured("fallocate", FileState::Empty, 1 << 30, "end", 1, Layout::OneFile, t),
        failed,
        unknown,
        measured("write", FileState::Overwrite, 4096, "end", 1, Layout::OneFile, t),
    ])
}

#[test]
fn sections_follow_the_documents_layout_and_every_case_has_its_line() {
    let result = every_kind_of_case();
    let markdown = render_to_string(&result);
    assert_eq!(
        headings(&markdown),
        vec![
            "# writebench on /data (ext4)",
            // The Answer first, right after the header, then the observations: what to
            // do before the evidence, as on the terminal.
            "## Answer",
            "## Observations",
            "## File Creation",
            "## Mmap Write",
            "## Write into an emptied file",
            "### Vectorized Writing",
            "### Parallel Writing",
            "### Simple Writing",
            "## Write into a sparsely allocated file",
            "### Simple Writing",
            "## Write into a preallocated file",
            "### Simple Writing",
            "## Write into a fully written file (overwrite)",
            "### Simple Writing",
            "## More Cases",
            "### Asynchronous Writing (io_uring)",
            "### Small Writes, One at a Time (latency)",
            "### Other Cases",
            "## Context",
        ],
        "{markdown}"
    );
    let case_lines = markdown.lines().filter(|line| line.starts_with("    ") && line.contains(": ")).count();
    assert_eq!(case_lines, result.cases.len(), "{markdown}");
}

#[test]
fn lines_read_like_the_documents() {
    let markdown = render_to_string(&every_kind_of_case());
    let line = |start: &str| {
        markdown.lines().find(|line| line.starts_with(start)).unwrap_or_else(|| panic!("{start} in {markdown}"))
    };
    let writev = line("    writev 1 GiB into an emptied file in 4 KiB chunks (x1), sync end: ( min: ");
    assert!(writev.contains(" GB/s; durable "), "{writev}");
    let parallel =
        line("    Use pwrite to write 1 GiB into an emptied file in 1 MiB chunks using  2 threads, sync end: ( min: ");
    assert!(parallel.contains(") GB/s"), "{parallel}");
    line("    Use pwrite to write 1 GiB into one file per thread in 1 MiB chunks using  2 threads, sync end: ( min: ");
    line("    ftruncate + mmap write 1 GiB in 1 MiB chunks using  2 threads and maps, sync end: ( min: ");
    // A creation in µs per call: 1 GiB in 0.9-1.1 s would be about 1 GB/s, which it is not.
    let creation = line("    fallocate file sized 1 GiB, sync end: ( min: ");
    assert!(creation.contains(") µs per call; durable ") && !creation.contains("GB/s"), "{creation}");
    line("    io_uring 1 GiB into an emptied file in 4 KiB chunks, 32 in flight, sync end: ( min: ");
    line(
        "    overwrite0 8B odsync: 1000 operations, mean 0.90 µs, p50 0.80 µs, p90 0.85 µs, p99 1.20 µs, p99.9 5.00 µs, max 9.00 µs, 1111 per second",
    );
    line("    write-someday empty 4KiB t1 end, sync end: ( min: ");
    // No durable figure where nothing was synced.
    let unsynced = line("    write 1 GiB into an emptied file in 4 KiB chunks, sync none: ( min: ");
    assert!(!unsynced.contains("durable"), "{unsynced}");
    // A failure keeps its reason, on its line.
    let failed =
        line("    write 1 GiB into a sparsely allocated file in 1 MiB chunks, sync end: failed: write: No space");
    assert!(failed.ends_with("## not a heading"), "{failed}");
}

#[test]
fn observations_answer_and_context_as_stored_and_escaped() {
    let mut result = every_kind_of_case();
    let empty = render_to_string(&result);
    assert!(empty.contains("## Observations\n\nNone: this result holds no observation"), "{empty}");
    assert!(empty.contains("## Answer\n\nNone: this result holds no recommendation"), "{empty}");
    assert!(empty.contains("- filesystem: ext4\n"), "{empty}");
    assert!(empty.contains("```bash\nwritebench run /data\n```"), "{empty}");
    result.observations = vec![
        Observation {
            kind: "knee".into(),
            text: "write needs 64 KiB".into(),
            figures: vec![],
            comparison: None,
            numbers: Default::default(),
        },
        Observation {
            kind: "state".into(),
            text: "<script>alert(1)</script> [link](http://x) *bold*".into(),
            figures: vec![],
            comparison: None,
            numbers: Default::default(),
        },
    ];
    let best = result::Figure {
        case: "pwrite prealloc 1MiB t1 end".into(),
        metric: "durable".into(),
        median: 1.9e9,
        mean: 1.9e9,
        ci95_low: None,
        ci95_high: None,
    };
    result.answer = vec![Recommendation {
        goal: "durable-at-end".into(),
        text: "pwrite in 1 MiB calls into a preallocated file, then one fdatasync: 1.9 GB/s durable".into(),
        best,
        runner_up: None,
        naive: None,
        tied: true,
        verdict: None,
        fastest: None,
        crash_checked: None,
        glance: None,
    }];
    result.options.argv.as_mut().expect("the result has its command line")[0] =
        "/build/target/release/writebench".into();
    result.options.other.insert("note".into(), "````".into());
    let markdown = render_to_string(&result);
    assert!(
        markdown
            .contains("\n 1. write needs 64 KiB\n 2. \\<script>alert(1)\\</script> \\[link\\](http://x) \\*bold\\*\n"),
        "{markdown}"
    );
    assert!(markdown.contains("- **One big file, durable at the end** (tied): pwrite in 1 MiB calls"), "{markdown}");
    assert!(markdown.contains("```bash\nwritebench run /data\n```"), "argv[0] shortened: {markdown}");
    assert!(markdown.contains("\n`````json\n"), "a fence longer than the options' backticks: {markdown}");
}
