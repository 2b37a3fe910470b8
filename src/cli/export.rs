//! The `--export-FORMAT FILE` options, declared once for every subcommand. Each
//! subcommand offers some of the formats of the export table (`export::RESULT_FORMATS`,
//! `export::COMPARISON_FORMATS`), each with its own words in the help: a new format is
//! its file in `export/`, its line in that table, and its line here (docs/code.md).

use std::fmt;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};

use crate::cli::usage::UsageError;

/// Every format's option: the format's name in the export table, clap's id for the
/// option (what `mut_arg` names), and the option itself.
const OPTIONS: &[(&str, &str, &str)] = &[
    ("json", "export_json", "export-json"),
    ("csv", "export_csv", "export-csv"),
    ("markdown", "export_markdown", "export-markdown"),
    ("html", "export_html", "export-html"),
];

/// The formats a subcommand offers, in the order of its help, which is also the order
/// its files are written in; each with its help line.
pub trait Offers {
    const OFFERS: &'static [(&'static str, &'static str)];
}

/// `run` (and the lab, which renames some of them).
#[derive(Debug)]
pub struct RunExports;
impl Offers for RunExports {
    const OFFERS: &'static [(&'static str, &'static str)] = &[
        ("json", "Write the full result as JSON (schema writebench.v3)"),
        ("csv", "Write one row per run as CSV (loads with DuckDB's read_csv_auto)"),
        (
            "markdown",
            "Write a report in Markdown: the sections of rapidgzip's benchmarkIOWrite write-ups, observations, \
             the answer and the context",
        ),
        ("html", "Write a self-contained HTML report with charts (nothing fetched; printable)"),
    ];
}

/// `latency`.
#[derive(Debug)]
pub struct LatencyExports;
impl Offers for LatencyExports {
    const OFFERS: &'static [(&'static str, &'static str)] = &[
        ("json", "Write the full result as JSON (schema writebench.v3; latency_ns per case)"),
        ("csv", "Write one row per case as CSV"),
    ];
}

/// `report`.
#[derive(Debug)]
pub struct ReportExports;
impl Offers for ReportExports {
    const OFFERS: &'static [(&'static str, &'static str)] = &[
        ("markdown", "Write the report in Markdown"),
        ("html", "Write the report as one self-contained HTML page with charts"),
        ("json", "Write the result again as JSON (in this writebench's schema)"),
        ("csv", "Write one row per run as CSV"),
    ];
}

/// `compare`: the comparison's formats.
#[derive(Debug)]
pub struct CompareExports;
impl Offers for CompareExports {
    const OFFERS: &'static [(&'static str, &'static str)] = &[
        ("markdown", "Also write the comparison as Markdown"),
        (
            "html",
            "Also write the comparison as one self-contained HTML page with a chart of the ratios and their 95 % \
             intervals",
        ),
        ("json", "Also write the comparison as JSON (schema writebench.compare.v1)"),
    ];
}

/// `crash`.
#[derive(Debug)]
pub struct CrashExports;
impl Offers for CrashExports {
    const OFFERS: &'static [(&'static str, &'static str)] = &[
        ("json", "Write the crash table as JSON (schema writebench.crash.v1: a `crash` list)"),
        ("markdown", "Write the crash table in Markdown"),
        ("html", "Write the crash table as one self-contained HTML page"),
    ];
}

/// `trace`.
#[derive(Debug)]
pub struct TraceExports;
impl Offers for TraceExports {
    const OFFERS: &'static [(&'static str, &'static str)] = &[
        ("json", "Write the pattern of each file as JSON (schema writebench.trace.v1)"),
        ("markdown", "Write the patterns in Markdown"),
        ("html", "Write the patterns as one self-contained HTML page"),
    ];
}

/// `calibrate`.
#[derive(Debug)]
pub struct CalibrateExports;
impl Offers for CalibrateExports {
    const OFFERS: &'static [(&'static str, &'static str)] =
        &[("json", "Write the calibration, with the host and target, as JSON")];
}

/// The export files asked for, each with its format's name, in the subcommand's order.
pub struct ExportArgs<O> {
    files: Vec<(&'static str, PathBuf)>,
    offers: PhantomData<O>,
}

impl<O> fmt::Debug for ExportArgs<O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.files).finish()
    }
}

impl<O> Clone for ExportArgs<O> {
    fn clone(&self) -> Self {
        ExportArgs { files: self.files.clone(), offers: PhantomData }
    }
}

fn option_of(format: &str) -> (&'static str, &'static str) {
    let &(_, id, long) =
        OPTIONS.iter().find(|(name, _, _)| *name == format).expect("every offered format has an option");
    (id, long)
}

impl<O> ExportArgs<O> {
    /// Every file asked for: (format, file).
    pub fn files(&self) -> &[(&'static str, PathBuf)] {
        &self.files
    }

    /// Every file asked for, borrowed: (format, file), as `export::write_files` takes them.
    pub fn paths(&self) -> Vec<(&'static str, &Path)> {
        self.files.iter().map(|(format, file)| (*format, file.as_path())).collect()
    }

    /// The file asked for in `format`, if any.
    pub fn get(&self, format: &str) -> Option<&Path> {
        self.files.iter().find(|(name, _)| *name == format).map(|(_, file)| file.as_path())
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Each file with its option as typed (`--export-json`), for one-line errors.
    pub fn options(&self) -> Vec<(String, &Path)> {
        self.files.iter().map(|(format, file)| (format!("--{}", option_of(format).1), file.as_path())).collect()
    }

    /// Every destination can be created (not a directory, in a directory that exists).
    pub fn check(&self) -> Result<(), UsageError> {
        for (option, file) in self.options() {
            crate::export::check_destination(&option, file).map_err(UsageError)?;
        }
        Ok(())
    }
}

impl<O: Offers> FromArgMatches for ExportArgs<O> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let files = O::OFFERS
            .iter()
            .filter_map(|(format, _)| {
                matches.get_one::<PathBuf>(option_of(format).0).map(|file| (*format, file.clone()))
            })
            .collect();
        Ok(ExportArgs { files, offers: PhantomData })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl<O: Offers> Args for ExportArgs<O> {
    fn augment_args(command: Command) -> Command {
        O::OFFERS.iter().fold(command, |command, (format, help)| {
            let (id, long) = option_of(format);
            command
                .arg(Arg::new(id).long(long).value_name("FILE").value_parser(clap::value_parser!(PathBuf)).help(*help))
        })
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_offered_format_has_an_option_and_a_renderer() {
        let offered = [RunExports::OFFERS, LatencyExports::OFFERS, ReportExports::OFFERS, CalibrateExports::OFFERS];
        for offers in offered {
            for (format, _) in offers {
                option_of(format);
                assert!(crate::export::RESULT_FORMATS.iter().any(|f| f.name == *format), "{format}");
            }
        }
        for (format, _) in TraceExports::OFFERS {
            assert!(crate::export::TRACE_FORMATS.iter().any(|f| f.name == *format), "{format}");
        }
        for (format, _) in CompareExports::OFFERS {
            assert!(crate::export::COMPARISON_FORMATS.iter().any(|f| f.name == *format), "{format}");
        }
    }

    #[test]
    fn files_come_in_the_subcommands_order_whatever_the_command_line() {
        let command = ExportArgs::<ReportExports>::augment_args(Command::new("report"));
        let matches = command.try_get_matches_from(["report", "--export-csv", "r.csv", "--export-markdown", "r.md"]);
        let exports = ExportArgs::<ReportExports>::from_arg_matches(&matches.unwrap()).unwrap();
        let files: Vec<_> = exports.files().iter().map(|(format, file)| (*format, file.to_str().unwrap())).collect();
        assert_eq!(files, [("markdown", "r.md"), ("csv", "r.csv")]);
        assert_eq!(exports.get("csv"), Some(Path::new("r.csv")));
        assert_eq!(exports.options()[0].0, "--export-markdown");
        let refused = ExportArgs::<CompareExports>::augment_args(Command::new("compare")).try_get_matches_from([
            "compare",
            "--export-csv",
            "r.csv",
        ]);
        assert!(refused.is_err(), "compare has no CSV");
    }
}
