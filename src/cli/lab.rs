//! `writebench lab`: its arguments, checked before anything is built, and the `run`
//! options handed on to each filesystem's run exactly as typed.

use std::path::{Path, PathBuf};

use clap::Args;

use crate::cli::run::RunArgs;
use crate::cli::usage::UsageError;
use crate::lab::driver::{Choice, LabPlan};
use crate::lab::filesystems;

pub const EXAMPLES: &str = "\
Examples:
  writebench lab                                        the six filesystems, quick suite
  writebench lab --fs ext4,xfs --suite quick --size 256MiB --export-html fs.html
  writebench lab --fs ext4 --mkfs-opt ext4='-E lazy_itable_init=0' --mount-opt ext4=noatime
  writebench lab --fs ext4,xfs,btrfs-raid0 --crash              and each durable mode crash-checked
  writebench clean --yes                                after a killed lab: its leftovers

Filesystems: tmpfs, ext4, xfs, btrfs-raid0 (two devices, data RAID-0, metadata RAID-1),
ext4-md-raid0 (md RAID-0 of four devices, 512 KiB chunks), fuse (bindfs over a tmpfs),
ext4-nojournal, f2fs, and glusterfs-distribute, glusterfs-disperse, glusterfs-replica (a
GlusterFS volume over three hosts made of namespaces, bricks on tmpfs, run from host 1).
Each is built in RAM (loop devices over files in /dev/shm, or tmpfs), measured, and torn
down; a missing tool skips its filesystem with the package to install.
Needs root. See docs/lab.md.";

#[derive(Debug, Args)]
pub struct LabArgs {
    /// Filesystems to build and measure, comma-separated, or `all`
    /// [default: tmpfs,ext4,xfs,btrfs-raid0,ext4-md-raid0,fuse].
    #[arg(long, value_name = "LIST")]
    pub fs: Option<String>,

    /// Directory for the results: one FS.json per filesystem, and comparison.json,
    /// comparison.md and comparison.html (created if missing).
    #[arg(long, value_name = "DIR", default_value = "lab-results")]
    pub out_dir: PathBuf,

    /// mkfs options for one filesystem, replacing its defaults, e.g.
    /// `ext4='-E lazy_itable_init=0'` or `btrfs-raid0='-d raid0 -m raid0'` (repeatable).
    #[arg(long, value_name = "FS=OPTS")]
    pub mkfs_opt: Vec<String>,

    /// Mount options for one filesystem, e.g. `ext4=noatime,nobarrier`; for fuse, bindfs's
    /// `-o` options; tmpfs keeps its size= (repeatable).
    #[arg(long, value_name = "FS=OPTS")]
    pub mount_opt: Vec<String>,

    /// Check the durable modes on ext4, xfs and btrfs against simulated power losses
    /// (each run with --crash-check; tmpfs and fuse have nothing to check): the
    /// comparison gets their crash table (docs/crash.md).
    #[arg(long)]
    pub crash: bool,

    #[command(flatten)]
    pub run: RunArgs,
}

/// Flags of the lab itself, or that it hands on only where they apply.
const OWN_FLAGS: [&str; 2] = ["--crash", "--crash-check"];

/// Options of the lab itself: not handed on to the runs. Each takes a value.
const OWN: [&str; 8] = [
    "--fs",
    "--out-dir",
    "--mkfs-opt",
    "--mount-opt",
    "--export-markdown",
    "--export-html",
    "--export-json",
    "--export-csv",
];

impl LabArgs {
    /// The plan, or one line on the first problem. `argv` is the command line after
    /// `lab`, as typed: the `run` options in it are handed on unchanged.
    pub fn plan(&self, argv: &[String]) -> Result<LabPlan, UsageError> {
        if self.run.path != Path::new(".") {
            return Err(UsageError(format!(
                "lab takes no PATH ({}): it measures the filesystems it builds",
                self.run.path.display()
            )));
        }
        if self.run.export.get("csv").is_some() {
            return Err(UsageError(
                "lab has no --export-csv: each filesystem's result is in --out-dir (writebench report DIR/FS.json --export-csv FILE)".into(),
            ));
        }
        // Every run option is checked here, before anything is built.
        let suite = self.run.suite()?;
        self.run.schedule(&suite)?;
        let cases = suite.cases();
        if cases.is_empty() {
            return Err(UsageError("the options select no case".into()));
        }
        let names: Vec<String> = match self.fs.as_deref() {
            None => filesystems::DEFAULT.iter().map(|s| s.to_string()).collect(),
            Some("all") => filesystems::names().iter().map(|s| s.to_string()).collect(),
            Some(list) => crate::plan::units::split_list(list).map_err(|e| UsageError(format!("--fs: {e}")))?,
        };
        let mut chosen: Vec<Choice> = Vec::new();
        for name in &names {
            let fs = filesystems::by_name(name).ok_or_else(|| {
                UsageError(format!("--fs: unknown filesystem '{name}' (known: {})", filesystems::names().join(", ")))
            })?;
            if !chosen.iter().any(|c| c.fs.name == fs.name) {
                chosen.push(Choice {
                    fs,
                    mkfs_options: fs.mkfs_options.to_string(),
                    mount_options: fs.mount_options.to_string(),
                    crash_check: (self.crash || self.run.crash_check)
                        && crate::crash::filesystems::by_name(fs.kernel_type).is_some(),
                });
            }
        }
        for (option, values) in [("--mkfs-opt", &self.mkfs_opt), ("--mount-opt", &self.mount_opt)] {
            for value in values {
                let (name, options) = value
                    .split_once('=')
                    .ok_or_else(|| UsageError(format!("{option}: '{value}' is not FS=OPTIONS")))?;
                let Some(choice) = chosen.iter_mut().find(|c| c.fs.name == name) else {
                    return Err(UsageError(format!("{option}: '{name}' is not one of the filesystems in --fs")));
                };
                if option == "--mkfs-opt" {
                    if choice.fs.mkfs.is_empty() {
                        return Err(UsageError(format!("{option}: {name} has no mkfs")));
                    }
                    choice.mkfs_options = options.to_string();
                } else {
                    if options.contains(char::is_whitespace) {
                        return Err(UsageError(format!("{option}: mount options are comma-separated, without spaces")));
                    }
                    choice.mount_options = options.to_string();
                }
            }
        }
        self.run.export.check()?;
        if self.out_dir.exists() && !self.out_dir.is_dir() {
            return Err(UsageError(format!("--out-dir {} is not a directory", self.out_dir.display())));
        }
        Ok(LabPlan {
            filesystems: chosen,
            need: need(&cases, suite.reference_size),
            out_dir: self.out_dir.clone(),
            run_args: run_args(argv),
            exports: self.run.export.files().to_vec(),
        })
    }
}

/// Bytes the suite may have on a filesystem at once: the largest run's files, a second
/// copy's worth (a prepared file beside the run's, or the run before it whose removed
/// files a filesystem frees late), and room for the filesystem's metadata.
fn need(cases: &[crate::plan::Case], reference_size: u64) -> u64 {
    let largest = cases.iter().map(|case| case.bytes).max().unwrap_or(0).max(reference_size);
    2 * largest + (32 << 20)
}

/// The command line without the lab's own options (and their values): what each run
/// gets. clap has already accepted it, so every token is an option, its value, or the
/// `.` that stands for no PATH.
fn run_args(argv: &[String]) -> Vec<String> {
    let mut kept = Vec::new();
    let mut tokens = argv.iter();
    while let Some(token) = tokens.next() {
        if OWN.contains(&token.as_str()) {
            tokens.next();
            continue;
        }
        if OWN.iter().any(|own| token.starts_with(&format!("{own}=")))
            || token == "."
            || OWN_FLAGS.contains(&token.as_str())
        {
            continue;
        }
        kept.push(token.clone());
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn args(extra: &[&str]) -> LabArgs {
        let argv = ["writebench", "lab"].iter().chain(extra);
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Lab(args) => args,
            _ => unreachable!("the argv says lab"),
        }
    }

    fn plan(extra: &[&str]) -> Result<LabPlan, UsageError> {
        let argv: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        args(extra).plan(&argv)
    }

    #[test]
    fn the_run_options_are_handed_on_and_the_labs_own_are_not() {
        let narrowed = plan(&[
            "--fs=ext4,xfs",
            "--suite",
            "quick",
            "--size",
            "32MiB",
            "--out-dir",
            "/tmp/x",
            "--mkfs-opt",
            "ext4=-O ^has_journal",
            "--methods=pwrite",
            "--export-html",
            "/tmp/x.html",
        ])
        .unwrap();
        assert_eq!(narrowed.run_args, ["--suite", "quick", "--size", "32MiB", "--methods=pwrite"]);
        assert_eq!(narrowed.filesystems.iter().map(|c| c.fs.name).collect::<Vec<_>>(), ["ext4", "xfs"]);
        assert_eq!(narrowed.filesystems[0].mkfs_options, "-O ^has_journal");
        assert_eq!(narrowed.need, (64 + 32) << 20);
        assert_eq!(narrowed.exports, [("html", PathBuf::from("/tmp/x.html"))]);
        assert_eq!(plan(&[]).unwrap().filesystems.len(), filesystems::DEFAULT.len());
        assert_eq!(plan(&["--fs", "all"]).unwrap().filesystems.len(), filesystems::ALL.len());
    }

    /// The lab's GlusterFS test narrowed as it runs (tests/lab.rs): each brick holds two
    /// runs of the largest case, the one running and the one before it not yet freed,
    /// with the metadata margin the run's own check counts, above GlusterFS's reserve.
    #[test]
    fn a_brick_holds_two_of_the_largest_runs_the_lab_makes() {
        let narrowed = [
            "--fs=glusterfs-distribute,glusterfs-disperse,glusterfs-replica",
            "--size",
            "16MiB",
            "--suite",
            "quick",
            "--methods",
            "pwrite",
            "--chunks",
            "1MiB",
            "--states",
            "empty,prealloc",
        ];
        for extra in [&narrowed[..], &narrowed[..1], &["--fs=glusterfs-disperse", "--size", "16MiB"]] {
            let lab = plan(extra).unwrap();
            let suite = args(extra).run.suite().unwrap();
            let largest = suite.cases().iter().map(|case| case.bytes).max().unwrap();
            let run = crate::measure::space::needed_for(largest) as f64;
            for choice in &lab.filesystems {
                let filesystems::Kind::Gluster { volume } = choice.fs.kind else { panic!("{}", choice.fs.name) };
                let brick = choice.fs.device_bytes(lab.need) as f64;
                let usable = brick * 0.99 - (64 << 20) as f64;
                let holds = usable / filesystems::brick_share(volume);
                assert!(
                    holds >= 2.0 * run,
                    "{}: {brick} bytes hold {holds}, two runs need {}",
                    choice.fs.name,
                    2.0 * run
                );
            }
        }
        assert_eq!(filesystems::brick_share("disperse"), 0.5, "2 data fragments and 1 of parity");
        assert_eq!(filesystems::brick_share("replica"), 1.0);
    }

    #[test]
    fn crash_checks_go_to_the_runs_of_filesystems_the_crash_check_knows_only() {
        for flag in ["--crash", "--crash-check"] {
            let crash = plan(&["--fs", "tmpfs,ext4,btrfs-raid0,fuse", flag, "--methods", "pwrite"]).unwrap();
            assert_eq!(crash.run_args, ["--methods", "pwrite"], "{flag} is not handed on as typed");
            let checked: Vec<&str> = crash.filesystems.iter().filter(|c| c.crash_check).map(|c| c.fs.name).collect();
            assert_eq!(checked, ["ext4", "btrfs-raid0"], "{flag}");
        }
        assert!(plan(&["--fs", "ext4"]).unwrap().filesystems.iter().all(|c| !c.crash_check));
    }

    #[test]
    fn bad_values_are_one_line_errors_naming_the_option() {
        for (extra, expected) in [
            (&["--fs", "zfs"][..], "unknown filesystem 'zfs'"),
            (&["--fs", "ext4,,xfs"][..], "--fs"),
            (&["--fs", "ext4", "--mkfs-opt", "xfs=-K"][..], "not one of the filesystems"),
            (&["--mkfs-opt", "ext4"][..], "not FS=OPTIONS"),
            (&["--mkfs-opt", "tmpfs=x"][..], "has no mkfs"),
            (&["--mount-opt", "ext4=a b"][..], "comma-separated"),
            (&["--size", "12XB"][..], "--size"),
            (&["--methods", "nope"][..], "unknown method"),
            (&["/mnt"][..], "lab takes no PATH"),
            (&["--export-csv", "x.csv"][..], "no --export-csv"),
        ] {
            let error = plan(extra).err().unwrap_or_else(|| panic!("{extra:?} was accepted")).0;
            assert!(error.contains(expected), "{extra:?}: {error}");
            assert!(!error.contains('\n'));
        }
    }
}
