//! `writebench compare A.json B.json [C.json …]`: its arguments, and the checks that turn
//! bad input into one line before anything is printed.

use std::path::PathBuf;

use clap::Args;

use crate::cli::usage::{UsageError, same_file};
use crate::result::ResultFile;

pub const EXAMPLES: &str = "\
Examples:
  writebench compare monday.json tuesday.json          the same machine on two days
  writebench compare tmpfs.json ext4.json xfs.json     three filesystems against the first
  writebench compare a.json b.json --export-markdown ab.md --export-html ab.html";

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Result files written by `run --export-json` (or `latency --export-json`); the
    /// first is the baseline every other file is compared with.
    #[arg(value_name = "RESULT.json")]
    pub files: Vec<PathBuf>,

    #[command(flatten)]
    pub export: crate::cli::export::ExportArgs<crate::cli::export::CompareExports>,
}

impl CompareArgs {
    /// The results, each named as the user named it; one line on the first problem.
    pub fn load(&self) -> Result<Vec<(String, ResultFile)>, UsageError> {
        match self.files.len() {
            0 => return Err(UsageError("compare needs at least two result files (the first is the baseline)".into())),
            1 => {
                return Err(UsageError(format!(
                    "compare needs at least two result files (the first is the baseline); only {} was given",
                    self.files[0].display()
                )));
            }
            _ => {}
        }
        for (option, file) in self.export.options() {
            crate::export::check_destination(&option, file).map_err(UsageError)?;
            // Writing the comparison over one of its inputs would lose a result.
            if let Some(input) = self.files.iter().find(|input| same_file(input, file)) {
                return Err(UsageError(format!("{option}: {} is one of the files compared", input.display())));
            }
        }
        self.files
            .iter()
            .map(|file| Ok((file.display().to_string(), ResultFile::load(file).map_err(UsageError)?)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn args(extra: &[&str]) -> CompareArgs {
        let argv = ["writebench", "compare"].iter().chain(extra);
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Compare(args) => args,
            _ => unreachable!("the argv says compare"),
        }
    }

    #[test]
    fn fewer_than_two_files_and_an_export_over_an_input_are_refused_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        std::fs::write(&a, "{}").unwrap();
        let a = a.to_str().unwrap();
        for (extra, expected) in [
            (vec![], "at least two result files"),
            (vec![a], "only"),
            (vec![a, a, "--export-json", a], "is one of the files compared"),
            (vec![a, a, "--export-markdown", "/nonexistent/x.md"], "does not exist"),
            (vec!["/nonexistent/b.json", a], "cannot read /nonexistent/b.json"),
            (vec![a, a], "no schema field"),
        ] {
            let error = args(&extra).load().err().unwrap_or_else(|| panic!("{extra:?} was accepted")).0;
            assert!(error.contains(expected), "{extra:?}: {error}");
            assert!(!error.contains('\n'), "{error}");
        }
    }
}
