//! `--export-csv`: one row per run, with the case's dimensions, for DuckDB's
//! `read_csv_auto` and the IO Playground's `group by`. A case without runs (failed,
//! unsupported, skipped) gets one row with its status and empty numbers, so it is
//! not lost from the file. A latency case's rows are its loops, each with its own
//! percentiles in the `latency_*_ns` columns (a result from before loops: its one run
//! with the case's), empty for throughput cases. `new_file_seconds` and
//! `new_file_durable_seconds` are a new file's one span from its `open(O_CREAT)`;
//! `prepare_seconds` is inside it (a fully written file's: untimed); `settle_seconds` and
//! `after` are untimed: what the run cost outside its span.

use std::io::{self, Write};

use result::ResultFile;

const HEADER: [&str; 42] = [
    "id",
    "runtime",
    "method",
    "state",
    "chunk_bytes",
    "iov",
    "queue_depth",
    "threads",
    "files",
    "durability",
    "pages",
    "status",
    "run",
    "round",
    "sequence",
    "bytes",
    "write_seconds",
    "sync_seconds",
    "throughput_bytes_per_s",
    "durable_bytes_per_s",
    "call_us",
    "durable_call_us",
    "user_seconds",
    "sys_seconds",
    "cpu_share",
    "new_file_seconds",
    "new_file_durable_seconds",
    "prepare_seconds",
    "prepare_sync_seconds",
    "settle_seconds",
    "after",
    "latency_p50_ns",
    "latency_p90_ns",
    "latency_p99_ns",
    "latency_p999_ns",
    "latency_max_ns",
    "latency_mean_ns",
    "ring_linked_fsyncs",
    "ring_fsyncs",
    "sqpoll_cpu_seconds",
    "io_wq_cpu_seconds",
    "error",
];

/// The keys of `latency_ns` that get a column each, in the order of [`HEADER`].
const LATENCY_KEYS: [&str; 6] = ["p50", "p90", "p99", "p999", "max", "mean"];

pub fn render(result: &ResultFile, out: &mut dyn Write) -> io::Result<()> {
    let mut writer = csv::Writer::from_writer(out);
    writer.write_record(HEADER)?;
    for case_result in &result.cases {
        let case = &case_result.case;
        let dimensions = [
            case.id.clone(),
            case.runtime.clone(),
            case.method.clone(),
            case.state.name().to_string(),
            case.chunk_bytes.to_string(),
            case.iov.to_string(),
            case.queue_depth.map(|q| q.to_string()).unwrap_or_default(),
            case.threads.to_string(),
            case.files.to_string(),
            case.durability.name().to_string(),
            case.pages.name().to_string(),
            case_result.status.name().to_string(),
        ];
        if case_result.runs.is_empty() {
            let mut row = dimensions.to_vec();
            row.resize(HEADER.len() - 1, String::new());
            row.push(case_result.error.clone().unwrap_or_default());
            writer.write_record(&row)?;
            continue;
        }
        let syncs = case.durability.syncs();
        let creation = case.kind == plan::CaseKind::Creation;
        for (number, run) in case_result.runs.iter().enumerate() {
            // A latency loop's own percentiles; a result from before loops had one run,
            // whose percentiles were the case's.
            let percentiles = run.latency_ns.as_ref().or(case_result.latency_ns.as_ref());
            let latency = LATENCY_KEYS.iter().map(|key| {
                percentiles.and_then(|latency| latency.get(*key)).map(|v| v.to_string()).unwrap_or_default()
            });
            // A stonewalled run's own bytes (docs/scale.md).
            let bytes = run.bytes_written(case.bytes) as f64;
            let mut row = dimensions.to_vec();
            row.extend([
                (number + 1).to_string(),
                run.round.to_string(),
                run.sequence.to_string(),
                run.bytes_written(case.bytes).to_string(),
                run.write_seconds.to_string(),
                run.sync_seconds.to_string(),
                // A file creation moves no data: no rate, its µs per call instead.
                if creation { String::new() } else { (bytes / run.write_seconds).to_string() },
                // Empty where nothing was made durable (docs/design.md §2.10).
                if syncs && !creation { (bytes / run.durable_seconds()).to_string() } else { String::new() },
                if creation { (run.write_seconds * 1e6).to_string() } else { String::new() },
                if creation && syncs { (run.durable_seconds() * 1e6).to_string() } else { String::new() },
                // An empty cell where the CPU time was not read (DuckDB reads NULL).
                run.user_seconds.map(|s| s.to_string()).unwrap_or_default(),
                run.sys_seconds.map(|s| s.to_string()).unwrap_or_default(),
                run.cpu_share.map(|s| s.to_string()).unwrap_or_default(),
                // A new file's one span (docs/answer.md), where the run timed it.
                run.new_file_seconds.map(|s| s.to_string()).unwrap_or_default(),
                run.new_file_durable_seconds.map(|s| s.to_string()).unwrap_or_default(),
                // The file's preparation (in a new file's span, not in the write span;
                // a fully written file's untimed), the settle step before the run, and
                // the case whose run came just before (empty where not recorded).
                run.prepare_seconds.map(|s| s.to_string()).unwrap_or_default(),
                run.prepare_sync_seconds.map(|s| s.to_string()).unwrap_or_default(),
                run.settle_seconds.map(|s| s.to_string()).unwrap_or_default(),
                run.after.clone().unwrap_or_default(),
            ]);
            row.extend(latency);
            // io_uring only: what strace cannot show (the linked fsyncs are SQEs), and
            // the SQPOLL thread's CPU, which is in no writer's user/sys seconds.
            let ring = run.ring.as_ref();
            row.extend([
                ring.map(|ring| ring.linked_fsyncs.to_string()).unwrap_or_default(),
                ring.map(|ring| ring.fsyncs.to_string()).unwrap_or_default(),
                ring.and_then(|ring| ring.sqpoll_cpu_seconds).map(|s| s.to_string()).unwrap_or_default(),
                ring.and_then(|ring| ring.io_wq_cpu_seconds).map(|s| s.to_string()).unwrap_or_default(),
            ]);
            row.push(String::new());
            writer.write_record(&row)?;
        }
    }
    writer.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::tests::{measured, result};
    use plan::{FileState, Layout};

    /// The CPU columns of each row, as text.
    fn cpu_cells(result: &ResultFile) -> Vec<[String; 3]> {
        let mut out = Vec::new();
        render(result, &mut out).unwrap();
        let mut reader = csv::Reader::from_reader(out.as_slice());
        let at = |name: &str| HEADER.iter().position(|h| *h == name).unwrap();
        let (user, sys, share) = (at("user_seconds"), at("sys_seconds"), at("cpu_share"));
        reader
            .records()
            .map(|row| row.unwrap())
            .map(|row| [&row[user], &row[sys], &row[share]].map(String::from))
            .collect()
    }

    #[test]
    fn cpu_time_not_read_is_an_empty_cell_not_a_zero() {
        let mut case = measured("write", FileState::Empty, 4096, "none", 1, Layout::OneFile, &[1.0, 1.0]);
        case.runs[0].user_seconds = Some(0.25);
        case.runs[0].sys_seconds = Some(0.5);
        case.runs[0].cpu_share = Some(0.75);
        let cells = cpu_cells(&result(vec![case]));
        assert_eq!(cells[0], ["0.25", "0.5", "0.75"]);
        assert_eq!(cells[1], ["", "", ""], "a run with no CPU time read");
    }
}
