//! `writebench report RESULT.json`: the arguments, and the checks made before anything
//! is written. The result file is only read (`ResultFile::load`); nothing is measured.

use std::path::PathBuf;

use clap::Args;

use crate::cli::run::StyleName;
use crate::cli::usage::same_file;

use crate::result::Saved;

pub const EXAMPLES: &str = "\
Examples:
  writebench report q.json                          the answer again
  writebench report q.json --table --explain        every case, then the answer and the rule behind it
  writebench report q.json --export-html q.html     charts, observations, table and context in one page
  writebench report q.json --export-markdown q.md --export-csv q.csv";

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A result saved by `run`, `latency` or `calibrate` with --export-json (schema
    /// writebench.v1, v2 or v3), or a crash check's table (`crash --export-json`).
    #[arg(value_name = "RESULT.json")]
    pub result: PathBuf,

    #[command(flatten)]
    pub export: crate::cli::export::ExportArgs<crate::cli::export::ReportExports>,

    /// The table on stdout: compact (within 100 columns) or classic (( min, mean ± sd,
    /// max ) lines).
    #[arg(long, value_enum, default_value_t = StyleName::Compact)]
    pub style: StyleName,

    /// Print every case's figures before the Answer.
    #[arg(long)]
    pub table: bool,

    /// Under each goal of the Answer, the rule behind its pick.
    #[arg(long)]
    pub explain: bool,
}

impl ReportArgs {
    /// Reads the result after checking every destination, so that a typo in an export
    /// path is said before anything else. One line on any failure.
    pub fn load(&self) -> Result<Saved, String> {
        for (option, file) in self.export.options() {
            crate::export::check_destination(&option, file)?;
            if same_file(file, &self.result) {
                return Err(format!("{option}: {} is the result being read", file.display()));
            }
        }
        let saved = Saved::load(&self.result)?;
        if let (Saved::Crash(_), Some((option, _))) =
            (&saved, self.export.options().into_iter().find(|(o, _)| o == "--export-csv"))
        {
            return Err(format!("{option}: a crash check's table has no CSV form (JSON, Markdown or HTML)"));
        }
        Ok(saved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn args(argv: &[&str]) -> ReportArgs {
        let mut full = vec!["writebench", "report"];
        full.extend_from_slice(argv);
        match Cli::try_parse_from(full).unwrap().command {
            Command::Report(args) => args,
            _ => unreachable!("the argv says report"),
        }
    }

    #[test]
    fn destinations_are_checked_before_the_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.json");
        let bad = dir.path().join("no/such/dir/q.md");
        let error = args(&[missing.to_str().unwrap(), "--export-markdown", bad.to_str().unwrap()]).load().unwrap_err();
        assert!(error.starts_with("--export-markdown: directory"), "{error}");
        let error = args(&[missing.to_str().unwrap()]).load().unwrap_err();
        assert!(error.starts_with("cannot read"), "{error}");
    }

    #[test]
    fn an_export_may_not_overwrite_the_result_it_reads() {
        let dir = tempfile::tempdir().unwrap();
        let result = dir.path().join("q.json");
        std::fs::write(&result, "{}").unwrap();
        let path = result.to_str().unwrap();
        let error = args(&[path, "--export-json", path]).load().unwrap_err();
        assert_eq!(error, format!("--export-json: {path} is the result being read"));
    }
}
