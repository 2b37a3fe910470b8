//! `--export-csv`: one row per run, with the case's dimensions, for DuckDB's
//! `read_csv_auto` and seed 004's `group by`. A case without runs (failed,
//! unsupported, skipped) gets one row with its status and empty numbers, so it is
//! not lost from the file.

use std::io::{self, Write};

use crate::result::ResultFile;

const HEADER: [&str; 20] = [
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
    "status",
    "run",
    "bytes",
    "write_seconds",
    "sync_seconds",
    "throughput_bytes_per_s",
    "durable_bytes_per_s",
    "user_seconds",
    "sys_seconds",
    "error",
];

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
            case_result.status.name().to_string(),
        ];
        if case_result.runs.is_empty() {
            let mut row = dimensions.to_vec();
            row.extend(std::iter::repeat_n(String::new(), 8));
            row.push(case_result.error.clone().unwrap_or_default());
            writer.write_record(&row)?;
            continue;
        }
        for (number, run) in case_result.runs.iter().enumerate() {
            let bytes = case.bytes as f64;
            let mut row = dimensions.to_vec();
            row.extend([
                (number + 1).to_string(),
                case.bytes.to_string(),
                run.write_seconds.to_string(),
                run.sync_seconds.to_string(),
                (bytes / run.write_seconds).to_string(),
                (bytes / (run.write_seconds + run.sync_seconds)).to_string(),
                run.user_seconds.to_string(),
                run.sys_seconds.to_string(),
                String::new(),
            ]);
            writer.write_record(&row)?;
        }
    }
    writer.flush()
}
