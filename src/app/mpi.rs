//! `writebench run --mpi` (cargo feature `mpi`), under `mpirun -np N` or `srun`: every
//! rank runs this. Rank 0 plans and sends every rank the plan; the scratch directory is
//! rank 0's on a PATH every rank sees (or each rank's own with `--mpi-local`); every
//! rank runs its share of every case through the rank executor, in the same order; rank
//! 0 prints and writes the result. Every step that can fail on one rank is agreed with
//! the others, so a failure fails everywhere and no rank waits for one that gave up;
//! a rank that dies ends the job through MPI (Open MPI's mpirun kills the others, whose
//! signal handlers remove the scratch directory).

use std::process::ExitCode;

use serde_json::json;

use super::conclude::{assemble, draw_conclusions};
use super::measure_all::{Setup, measure_all, prepare_all};
use super::progress::progress_bar;
use super::run::{options_json, show_and_export};
use super::start::probe_file;
use crate::cli::mpi::MpiPlan;
use crate::cli::{RunArgs, UsageError, plain};
use crate::context::{self, MpiHosts, RankHost};
use crate::executors::ranks::Ranks;
use crate::executors::ranks::aggregate::clock_of;
use crate::executors::ranks::collective::{Collective, agree, broadcast, gather};
use crate::executors::ranks::executor::{Agreed, RankExecutor};
use crate::executors::ranks::mpi::Mpi;
use crate::export::text::Paint;
use crate::measure::death_watch;
use crate::measure::runs::CaseRuns;
use crate::measure::signals;
use crate::measure::source::Source;
use crate::measure::target::Scratch;
use crate::result::Status;

pub(super) fn run(args: &RunArgs) -> Result<ExitCode, UsageError> {
    // Before MPI_Init: the MPI library may end this rank where no signal handler runs
    // (measure::death_watch), and forking later would share its state.
    if let Err(error) = death_watch::start() {
        eprintln!(
            "writebench: cannot start the watcher that removes this rank's scratch directory should the rank \
             be killed: {}",
            plain(&error)
        );
    }
    let Some(mpi) = Mpi::init() else {
        return Err(UsageError("MPI_Init failed (is MPI already initialised?)".into()));
    };
    let code = run_ranks(args, mpi.world());
    // Every rank reaches MPI_Finalize, also after a refusal: Open MPI counts a rank
    // that exits without it as a failed one.
    drop(mpi);
    code
}

/// Says `message` once (on rank 0) and ends with status 2 on every rank.
fn refused(rank: usize, message: &str) -> Result<ExitCode, UsageError> {
    if rank == 0 {
        eprintln!("writebench: {message}");
    }
    Ok(ExitCode::from(2))
}

fn run_ranks(args: &RunArgs, comm: &'static dyn Collective) -> Result<ExitCode, UsageError> {
    let (rank, size) = (comm.rank(), comm.size());
    let me = RankHost { rank: rank as u32, hostname: context::hostname(), kernel: context::host(None).kernel };
    let hosts: Vec<RankHost> = gather(comm, &me);
    let names: Vec<String> = hosts.iter().map(|host| host.hostname.clone()).collect();
    let ranks = Ranks {
        comm,
        host: Box::leak(me.hostname.clone().into_boxed_str()),
        hosts: Box::leak(names.clone().into_boxed_slice()),
    };
    let name = |error: String, rank: usize, host: &str| format!("rank {rank} on {host}: {error}");

    // Rank 0 plans; every rank gets its plan (or its refusal).
    let planned: Result<MpiPlan, String> =
        if rank == 0 { MpiPlan::make(args, size as u32).map_err(|e| e.0) } else { Err(String::new()) };
    let plan = match broadcast(comm, &planned) {
        Ok(plan) => plan,
        Err(message) => return refused(rank, &message),
    };
    if let Err(message) = agree(comm, ranks.host, args.check_paths().map_err(|e| e.0), name) {
        return refused(rank, &message);
    }
    let signals = signals::install().map_err(|e| format!("cannot set up signal handling: {}", plain(&e)));
    if let Err(message) = agree(comm, ranks.host, signals, name) {
        return refused(rank, &message);
    }

    // The scratch directory: rank 0's, joined by the others, or each rank's own.
    let scratch = make_scratch(args, comm, args.mpi.mpi_local);
    let local = scratch.as_ref().map(|_| ()).map_err(Clone::clone);
    if let Err(message) = agree(comm, ranks.host, local, name) {
        return refused(rank, &message);
    }
    let mut scratch = scratch.expect("agreed");
    let target = (rank == 0).then(|| context::target(&args.path, Some(&probe_file(&scratch))));
    if let Some(target) = &target {
        for note in &plan.notes {
            eprintln!("writebench: no case for {note}");
        }
        let hosts = names.iter().collect::<std::collections::BTreeSet<_>>().len();
        eprintln!(
            "writebench: {} cases x {} to {} runs, each by {size} MPI ranks on {hosts} host(s), on {} ({})",
            plan.cases.len(),
            plan.warmup + plan.min_runs,
            plan.warmup + plan.max_runs,
            target.path,
            target.fs_type
        );
    }

    let source = Source::new(plan.seed);
    let settings = plan.settings(ranks);
    let mut schedule = plan.schedule();
    let swap_before = context::swapped_out_pages();
    let setup = Setup {
        scratch: &scratch,
        source: &source,
        settings: &settings,
        space_check: !args.no_space_check,
        // On a shared PATH all of the case lands on one filesystem; node-local, a share.
        split: if args.mpi.mpi_local { size as u64 } else { 1 },
    };
    // Each case's preparation is agreed by every rank: one that fails anywhere is
    // skipped everywhere, with the rank and host that failed.
    let prepared = prepare_all(&plan.cases, &setup, &mut |prepared| {
        let local = prepared.as_ref().map(|_| ()).map_err(Clone::clone);
        let named = |(status, text): (Status, String), rank: usize, host: &str| (status, name(text, rank, host));
        agree(comm, ranks.host, local, named)?;
        Ok(Box::new(Agreed { runs: prepared?, ranks }) as Box<dyn CaseRuns>)
    });
    let total = plan.cases.len() as u64 * u64::from(schedule.warmup + schedule.max_runs);
    let progress = if rank == 0 { progress_bar(total) } else { indicatif::ProgressBar::hidden() };
    let cases = measure_all(prepared, &mut schedule, None, &progress);
    let any_ok = cases.iter().any(|r| r.status == Status::Ok);
    // Every rank is done with the scratch directory before its owner removes it.
    comm.barrier();
    if plan.keep {
        scratch.keep();
        if rank == 0 || args.mpi.mpi_local {
            eprintln!("writebench: kept scratch directory {}", scratch.path().display());
        }
    }
    drop(scratch);
    signals::forget_scratch();
    let Some(target) = target else {
        return Ok(if any_ok { ExitCode::SUCCESS } else { ExitCode::from(1) });
    };

    let suite = args.suite()?;
    let mut options = options_json(&suite, &settings, &schedule, args.margin());
    {
        let options = &mut options.other;
        options.insert("executor".into(), json!(RankExecutor::OVERHEAD));
        options.insert(
            "mpi".into(),
            json!({
                "ranks": size,
                "layouts": plan.layouts.iter().map(|l| l.name()).collect::<Vec<_>>(),
                "local": args.mpi.mpi_local,
                "threads_per_rank_share_its_file": true,
                "calibration": "none under --mpi: each rank would measure the others' load",
            }),
        );
    }
    let mut host = context::host(swap_before);
    host.mpi = Some(MpiHosts {
        library_version: Mpi::library_version(),
        clock: clock_of(&names.iter().map(String::as_str).collect::<Vec<_>>()).to_string(),
        local: args.mpi.mpi_local,
        ranks: hosts,
    });
    let mut result = assemble(host, target, options, cases, None);
    draw_conclusions(&mut result);
    // Plain: Open MPI gives each rank a pseudo-terminal for stdout whatever mpirun's own
    // stdout is (a file, a pipe), so a rank cannot tell whether colour would be seen.
    Ok(show_and_export(&result, args, Paint::PLAIN))
}

/// Rank 0's scratch directory, made and sent to the others, who join it; or with
/// `--mpi-local` each rank's own. Every rank registers it for removal on a signal.
fn make_scratch(args: &RunArgs, comm: &dyn Collective, local: bool) -> Result<Scratch, String> {
    let failed = |error: std::io::Error| {
        format!("cannot create a scratch directory in {}: {}", args.path.display(), plain(&error))
    };
    if local {
        return signals::create_scratch(|| Scratch::create(&args.path), Scratch::path).map_err(failed);
    }
    let made = (comm.rank() == 0)
        .then(|| signals::create_scratch(|| Scratch::create(&args.path), Scratch::path).map_err(failed));
    let path: Result<std::path::PathBuf, String> = match &made {
        Some(made) => made.as_ref().map(|scratch| scratch.path().to_path_buf()).map_err(Clone::clone),
        None => Err(String::new()),
    };
    let path = broadcast(comm, &path)?;
    match made {
        Some(made) => made,
        None => signals::create_scratch(|| Scratch::join_dir(&path), Scratch::path).map_err(|error| {
            format!(
                "cannot open rank 0's scratch directory {} (is PATH shared by every rank? else --mpi-local): {}",
                path.display(),
                plain(&error)
            )
        }),
    }
}
