//! trace's words on doctored patterns (`export::trace`).

use plan::replay_changes::Change;
use result::trace::{
    Alternative, Cadence, IoUringUse, LeftOut, Mapped, Rename, Shown, SyncCalls, TRACE_SCHEMA, WriteCall, WriteCalls,
};
use result::{Summary, Tool};

use super::*;

fn same(value: u64, count: u64) -> Spread {
    Spread { count, min: value, p10: value, median: value, p90: value, max: value }
}

fn logger() -> FilePattern {
    FilePattern {
        path: "/data/<app>.log".into(),
        made: Made::New,
        open_flags: vec!["O_APPEND".into(), "O_CREAT".into()],
        opens: 1,
        bytes: 300_000,
        final_size: Some(300_000),
        sizes: same(300, 1000),
        calls: vec![WriteCalls {
            call: WriteCall::Write,
            calls: 1000,
            bytes: 300_000,
            sizes: same(300, 1000),
            buffers: None,
            flags: Vec::new(),
        }],
        offsets: Offsets { append: 1000, ..Offsets::default() },
        syncs: vec![SyncCalls { call: SyncCall::Fsync, calls: 1000 }],
        cadence: Some(Cadence { bytes: same(300, 1000), writes: same(1, 1000), unsynced_bytes: 0 }),
        threads: 1,
        processes: 1,
        ..FilePattern::default()
    }
}

fn report(files: Vec<FilePattern>) -> TraceReport {
    TraceReport {
        schema: TRACE_SCHEMA.into(),
        tool: Tool::this(),
        command: vec!["python3".into(), "log it.py".into()],
        directory: "/data".into(),
        tracer: "strace 6.1".into(),
        exit: Some("exited with 0".into()),
        seconds: 1.5,
        calls: 4012,
        files,
        left_out: LeftOut { unwritten_files: 12, pseudo_files: 2, pseudo_bytes: 24, unnamed_writes: 0 },
        io_uring: Some(IoUringUse { rings: 1, enters: 40 }),
        mapped: vec![Mapped { path: "/data/map".into(), bytes: 65536, msyncs: 3 }],
        whole_syncs: 0,
        complete: true,
        replay: None,
        crash: None,
    }
}

fn rendered(render: fn(&TraceReport, &mut dyn Write) -> io::Result<()>, report: &TraceReport) -> String {
    let mut out = Vec::new();
    render(report, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn a_logger_reads_as_what_it_does() {
    let text = rendered(render_text, &report(vec![logger()]));
    assert!(
        text.starts_with(
            "writebench trace: python3 'log it.py' under strace 6.1 (exited with 0): 4,012 calls in 1.50 s."
        ),
        "{text}"
    );
    assert!(text.contains("/data/<app>.log: 292.97 KiB in 1,000 write calls"), "{text}");
    assert!(text.contains("  made      new, or empty when opened (O_APPEND|O_CREAT); 292.97 KiB at the end"), "{text}");
    assert!(text.contains("  writes    write 1,000 calls of 300 B\n"), "{text}");
    assert!(text.contains("  offsets   all at the file's end (appends)\n"), "{text}");
    assert!(text.contains("  syncs     fsync 1,000; a sync after every write call (300 B)\n"), "{text}");
    assert!(text.contains("io_uring: 1 ring set up, 40 io_uring_enter calls"), "{text}");
    assert!(text.contains("/data/map is mapped shared and writable (64 KiB; msync 3)"), "{text}");
    assert!(text.contains("Left out: 12 files opened and never written; 2 pipes"), "{text}");
}

#[test]
fn spreads_cadences_renames_and_the_unsynced() {
    let mut file = logger();
    file.sizes = Spread { count: 10, min: 1, p10: 512, median: 4096, p90: 65536, max: 1 << 20 };
    file.calls[0].sizes = file.sizes.clone();
    file.calls[0].call = WriteCall::Pwritev2;
    file.calls[0].buffers = Some(same(8, 10));
    file.calls[0].flags = vec![("RWF_DSYNC".into(), 10)];
    file.offsets = Offsets { append: 6, sequential: 2, same_place: 1, random: 1, unknown: 0 };
    file.cadence = Some(Cadence { bytes: same(1 << 20, 3), writes: same(256, 3), unsynced_bytes: 4096 });
    file.rename =
        Some(Rename { from: "/data/x.tmp".into(), synced_before: true, directory_synced_after: false, times: 2 });
    file.threads = 3;
    file.processes = 2;
    let lines: Vec<(&str, String)> = lines(&file);
    let line = |label: &str| lines.iter().find(|(l, _)| *l == label).map(|(_, t)| t.clone()).unwrap();
    assert_eq!(
        line("writes"),
        "pwritev2 1,000 calls of median 4 KiB (10–90 %: 512 B–64 KiB; 1 B–1 MiB) in 8 buffers, RWF_DSYNC on 10"
    );
    assert_eq!(
        line("offsets"),
        "60 % at the file's end (appends); 20 % where an earlier write ended, inside the file (a stream of \
         overwrites); 10 % where the previous write began (the same bytes again); 10 % elsewhere (random)"
    );
    assert_eq!(
        line("syncs"),
        "fsync 1,000; between two syncs: 1 MiB in 256 write calls; 4 KiB written after the last sync"
    );
    assert!(line("saved").contains("(2 times); its directory not synced after the rename"), "{}", line("saved"));
    assert_eq!(line("by"), "3 threads of 2 processes");
    file.cadence = None;
    file.syncs = vec![SyncCalls { call: SyncCall::SyncFileRange, calls: 2 }];
    assert!(
        lines_of(&file, "syncs")
            .starts_with("never synced: all 292.97 KiB left to the kernel's writeback (sync_file_range")
    );
}

#[test]
fn the_answer_says_the_programs_way_the_best_same_promise_and_the_different_one() {
    let yours = ReplayFigures {
        on: "/data".into(),
        fs_type: "ext4".into(),
        runs: 5,
        files: 1,
        threads: 1,
        calls: 2000,
        bytes: 300_000,
        commits: 1000,
        cut: false,
        seconds: summary(0.5, None),
        bytes_per_second: summary(600_000.0, None),
        commits_per_second: Some(summary(2000.0, Some((1900.0, 2100.0)))),
        commit_p50: Some(0.0004),
        commit_p99: Some(0.0012),
        alternatives: vec![
            alternative(Change::Fdatasync, Shown::NotSettled, 0.9, 1.3),
            alternative(Change::Odsync, Shown::NotSettled, 0.95, 1.2),
            alternative(Change::Group(8), Shown::Faster, 6.0, 7.0),
            alternative(Change::SyncAtEnd, Shown::Faster, 40.0, 50.0),
        ],
        with_gaps: false,
    };
    let traced = TraceReport { replay: Some(yours.clone()), ..report(vec![logger()]) };
    assert_eq!(
        answer(&traced),
        [
            "Your way: 300 B appends to <app>.log (write), a new file, an fsync after each: 2000 (1900–2100) commits/s, \
             p99 1.20 ms, on /data (ext4).",
            "The same promise: none shown faster yet; fdatasync instead of fsync: not settled: 0.900–1.30x (more runs \
             would tell: --runs 20).",
            "A different promise: a sync after every 8th of its syncs only: 6.5x faster (6.00–7.00x); but a crash may \
             lose the last 7 commits the program had made durable.",
        ],
        "the open one named is the one with the largest possible gain; the least risky different promise"
    );
    let mut settled = yours;
    settled.alternatives[1] = alternative(Change::Odsync, Shown::Faster, 1.3, 1.5);
    settled.alternatives[0] = alternative(Change::Fdatasync, Shown::Faster, 1.1, 1.9);
    let report = TraceReport { replay: Some(settled), ..report(vec![logger()]) };
    assert_eq!(
        answer(&report)[1],
        "The same promise, faster: the file opened with O_DSYNC, no sync call after each write: 1.40x faster (1.30–1.50x).",
        "the surest gain"
    );
    assert!(answer(&TraceReport { replay: None, ..traced }).is_empty(), "no replay, no answer");
}

fn summary(mean: f64, range: Option<(f64, f64)>) -> Summary {
    Summary {
        n: 5,
        min: mean,
        max: mean,
        mean,
        stddev: 0.0,
        median: mean,
        ci95_low: range.map(|r| r.0),
        ci95_high: range.map(|r| r.1),
    }
}

fn alternative(change: Change, shown: Shown, low: f64, high: f64) -> Alternative {
    Alternative {
        change,
        same_promise: change.same_promise(),
        commits: 1,
        seconds: summary(1.0, None),
        factor: (low + high) / 2.0,
        low,
        high,
        shown,
    }
}

#[test]
fn alternatives_say_their_promise_and_what_the_race_showed() {
    assert_eq!(
        alternative_line(&alternative(Change::Fdatasync, Shown::Faster, 1.4, 1.6), 5),
        "fdatasync instead of fsync (the same promise): 1.50x faster (1.40–1.60x)"
    );
    assert_eq!(
        alternative_line(&alternative(Change::Odsync, Shown::NotSettled, 0.9, 1.2), 5),
        "the file opened with O_DSYNC, no sync call after each write (the same promise): not settled: \
         0.900–1.20x (more runs would tell: --runs 20)"
    );
    assert_eq!(
        alternative_line(&alternative(Change::Group(8), Shown::Faster, 6.0, 7.0), 5),
        "a sync after every 8th of its syncs only (a different promise: a crash may lose the last 7 commits \
         the program had made durable): 6.5x faster (6.00–7.00x)"
    );
    assert!(
        alternative_line(&alternative(Change::LargerCalls, Shown::AsFast, 0.98, 1.03), 5)
            .ends_with("as fast, within 5 % (0.980–1.03x)")
    );
    assert!(
        alternative_line(&alternative(Change::SyncAtEnd, Shown::Slower, 0.5, 0.7), 5)
            .contains("everything it wrote): slower: 0.60x")
    );
}

fn lines_of(file: &FilePattern, label: &str) -> String {
    lines(file).into_iter().find(|(l, _)| *l == label).unwrap().1
}

#[test]
fn markdown_and_html_hold_every_file_and_escape_it() {
    let many: Vec<FilePattern> = (0..12).map(|i| FilePattern { path: format!("/data/f{i:02}"), ..logger() }).collect();
    let text = rendered(render_text, &report(many.clone()));
    assert!(text.contains("/data/f09:") && !text.contains("/data/f10:"), "ten files on the terminal");
    assert!(text.contains("... and 2 more files (585.94 KiB in all)"), "{text}");
    let markdown = rendered(render_markdown, &report(many.clone()));
    assert!(markdown.starts_with("# How the program writes\n\nwritebench trace:"), "{markdown}");
    assert!(
        markdown.contains("## /data/f11:") && markdown.contains("| writes | write 1,000 calls of 300 B |"),
        "{markdown}"
    );
    let html = rendered(render_html, &report(vec![logger()]));
    assert!(html.contains("<h2>/data/&lt;app&gt;.log: 292.97 KiB in 1,000 write calls</h2>"), "{html}");
    assert!(
        html.contains("<tr><th>syncs</th><td>fsync 1,000; a sync after every write call (300 B)</td></tr>"),
        "{html}"
    );
    let empty = rendered(render_text, &TraceReport { complete: false, ..report(Vec::new()) });
    assert!(empty.contains("stopped by a signal") && empty.contains("The program wrote no file."), "{empty}");
}
