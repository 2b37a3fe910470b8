//! `run --mpi`'s options and its plan: the cases every rank runs, made by rank 0 from
//! the same options as a run of one process, each written by every rank of the job.

use serde::{Deserialize, Serialize};

use crate::cli::run::RunArgs;
pub use crate::cli::run::{MpiArgs, THREAD_LAYOUT};
use crate::cli::usage::UsageError;
use crate::executors::case_runs::RunSettings;
use crate::plan::catalog;
use crate::plan::units::split_list;
use crate::plan::{Case, RankLayout};
use crate::rounds::scheduler::{Order, Schedule};

/// What a binary built without the `mpi` feature says to `--mpi`: one line.
pub const NOT_BUILT: &str = "--mpi needs a build with MPI support: cargo install --path . --features mpi \
     (with an MPI library and libclang installed, e.g. Debian's libopenmpi-dev and libclang-dev)";

/// What rank 0 sends every rank: the cases, in order, and how to run them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MpiPlan {
    pub cases: Vec<Case>,
    /// One line each: the combinations the options name that give no case under --mpi.
    pub notes: Vec<String>,
    pub layouts: Vec<RankLayout>,
    pub repeat: u32,
    pub warmup: u32,
    pub min_runs: u32,
    pub max_runs: u32,
    pub target_ci: Option<f64>,
    pub grouped: bool,
    pub seed: u64,
    pub verify: bool,
    pub drop_cache: bool,
    pub keep: bool,
    /// `--stonewall`, for every rank's writers.
    #[serde(default)]
    pub stonewall: Option<std::time::Duration>,
    /// `--source`, for every rank's writers.
    #[serde(default)]
    pub source: crate::plan::data_source::DataSource,
}

impl MpiPlan {
    /// Rank 0's plan from the command line, for a job of `ranks` ranks.
    pub fn make(args: &RunArgs, ranks: u32) -> Result<MpiPlan, UsageError> {
        let layouts = rank_layouts(args.layout.as_deref(), args.mpi.mpi_local)?;
        let suite = args.suite()?;
        let settings = args.settings(&suite);
        let schedule = args.schedule(&suite)?;
        let mut notes = args.dropped_notes(&suite);
        let mut cases = Vec::new();
        for case in suite.cases() {
            let method = catalog::by_name(&case.method);
            if case.runtime != catalog::NATIVE || method.is_none_or(|m| m.creation.is_some()) {
                note(&mut notes, format!("{} under --mpi: only the native write methods run", case.method));
                continue;
            }
            let shares = method.is_some_and(|m| m.shares_file);
            for &layout in &layouts {
                let writers = if layout == RankLayout::SharedFile { ranks * case.threads } else { case.threads };
                if writers > 1 && !shares {
                    let reason =
                        format!("{} writes at the file position, so writers cannot share one file", case.method);
                    note(&mut notes, format!("{} in the {} layout: {reason}", case.method, layout.name()));
                    continue;
                }
                if u64::from(ranks * case.threads) > case.bytes.div_ceil(case.chunk_bytes) {
                    note(&mut notes, format!("{}: fewer calls than writers", case.id));
                    continue;
                }
                cases.push(case.clone().with_ranks(ranks, layout));
            }
        }
        if cases.is_empty() {
            return Err(UsageError(format!("the options select no case under --mpi ({})", notes.join("; "))));
        }
        Ok(MpiPlan {
            cases,
            notes,
            layouts,
            repeat: settings.repeat,
            warmup: schedule.warmup,
            min_runs: schedule.min_runs,
            max_runs: schedule.max_runs,
            target_ci: schedule.target_ci,
            grouped: schedule.order == Order::Grouped,
            seed: settings.seed,
            verify: settings.verify.is_some(),
            drop_cache: settings.drop_cache,
            keep: settings.keep_files,
            stonewall: settings.stonewall,
            source: settings.source,
        })
    }

    pub fn schedule(&self) -> Schedule {
        let order = if self.grouped { Order::Grouped } else { Order::Interleaved };
        Schedule {
            warmup: self.warmup,
            min_runs: self.min_runs,
            max_runs: self.max_runs,
            target_ci: self.target_ci,
            order,
            seed: self.seed,
            // Ranks do not race: each would judge its own runs, and the rounds of all
            // ranks must stay the same (docs/racing.md).
            race: None,
        }
    }

    pub fn settings(&self, ranks: crate::executors::ranks::Ranks) -> RunSettings {
        RunSettings {
            repeat: self.repeat,
            warmup: self.warmup,
            seed: self.seed,
            keep_files: self.keep,
            verify: self.verify.then_some(crate::measure::verify::Verify { corrupt: None, first_only: false }),
            space_check: true,
            drop_cache: self.drop_cache,
            ranks: Some(ranks),
            stonewall: self.stonewall,
            source: self.source,
        }
    }
}

fn note(notes: &mut Vec<String>, line: String) {
    if !notes.contains(&line) {
        notes.push(line);
    }
}

/// `--layout` under --mpi: shared-file and/or file-per-rank [default: both; with
/// --mpi-local, file-per-rank, since ranks on different nodes cannot share a file there].
pub fn rank_layouts(list: Option<&str>, local: bool) -> Result<Vec<RankLayout>, UsageError> {
    let Some(list) = list else {
        return Ok(if local { vec![RankLayout::FilePerRank] } else { RankLayout::ALL.to_vec() });
    };
    let mut layouts = Vec::new();
    for item in split_list(list).map_err(|e| UsageError(format!("--layout: {e}")))? {
        let layout: RankLayout = item.parse().map_err(|e| UsageError(format!("--layout: {e}")))?;
        if local && layout == RankLayout::SharedFile {
            return Err(UsageError(
                "--layout shared-file needs a PATH every rank sees; --mpi-local gives each rank its own".into(),
            ));
        }
        if !layouts.contains(&layout) {
            layouts.push(layout);
        }
    }
    Ok(layouts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn plan(extra: &[&str], ranks: u32) -> Result<MpiPlan, UsageError> {
        let mut argv = vec!["writebench", "run", "--mpi"];
        argv.extend_from_slice(extra);
        let Command::Run(args) = Cli::try_parse_from(argv).unwrap().command else { unreachable!() };
        MpiPlan::make(&args, ranks)
    }

    #[test]
    fn every_case_is_written_by_every_rank_in_the_layouts_asked_for() {
        let plan =
            plan(&["--methods", "pwrite,write", "--states", "prealloc", "--chunks", "1MiB", "--size", "8MiB"], 2)
                .unwrap();
        let ids: Vec<&str> = plan.cases.iter().map(|c| c.id.as_str()).collect();
        // write has no offsets: a file per rank only; pwrite in both layouts.
        assert!(ids.iter().all(|id| !id.starts_with("write") || id.contains(" f2 ")), "{ids:?}");
        assert!(ids.contains(&"write prealloc 1MiB r2 t1 f2 end"), "{ids:?}");
        assert!(plan.notes.iter().any(|n| n.contains("write in the shared-file layout")), "{:?}", plan.notes);
        let case = |id: &str| plan.cases.iter().find(|c| c.id == id).unwrap();
        assert_eq!(case("pwrite prealloc 1MiB r2 t1 end").rank_layout(), Some(RankLayout::SharedFile));
        let per_rank = case("pwrite prealloc 1MiB r2 t1 f2 end");
        assert_eq!(per_rank.rank_layout(), Some(RankLayout::FilePerRank));
        assert!(per_rank.label().contains("2 ranks, a file per rank"), "{}", per_rank.label());
        let threads = case("pwrite prealloc 1MiB r2 t2 f2 end");
        assert!(threads.label().contains("2 ranks x 2 threads, a file per rank"), "{}", threads.label());
    }

    #[test]
    fn mpi_layouts_are_checked_in_one_line() {
        let error = plan(&["--layout", "one-file"], 2).unwrap_err().0;
        assert!(error.contains("unknown layout 'one-file' under --mpi"), "{error}");
        let error = plan(&["--mpi-local", "--layout", "shared-file"], 2).unwrap_err().0;
        assert!(error.contains("needs a PATH every rank sees"), "{error}");
        let local = plan(&["--mpi-local", "--methods", "pwrite", "--size", "1MiB", "--chunks", "64KiB"], 3).unwrap();
        assert!(local.cases.iter().all(|c| c.rank_layout() == Some(RankLayout::FilePerRank) && c.files == 3));
    }
}
