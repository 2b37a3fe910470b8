//! `writebench latency`: every pattern under every mode, one case each, their loops in
//! rounds, then the latency table and the Answer.

use std::io::Write;
use std::process::ExitCode;

use serde_json::json;

use super::conclude::{argv, assemble, draw_conclusions};
use super::measure_all::{measure_all, prepare_latency};
use super::progress::progress_bar;
use super::start::{finish, start_in};
use crate::cli::UsageError;
use crate::cli::latency::LatencyArgs;
use crate::context;
use crate::export::{self, text::Paint};
use crate::result::Status;
use crate::result::options::RunOptions;
use crate::rounds::scheduler::{Order, Schedule};

pub(super) fn latency(args: &LatencyArgs) -> Result<ExitCode, UsageError> {
    let plan = args.plan()?;
    args.check_paths()?;
    let (scratch, target) = start_in(&args.path)?;
    let units = plan.cases();
    let sizes: Vec<String> = plan.sizes.iter().map(|&bytes| format!("{bytes} B")).collect();
    eprintln!(
        "writebench: latency of {} x {} loops of {} operations of {} on {} ({})",
        units.len(),
        plan.loops,
        plan.per_loop(),
        sizes.join(", "),
        target.path,
        target.fs_type
    );
    if let Some((runtimes, saves)) = plan.native_only() {
        eprintln!("writebench: {} are native only: no such case for {}", saves.join(", "), runtimes.join(", "));
    }
    let swap_before = context::swapped_out_pages();
    let progress = progress_bar(units.len() as u64 * u64::from(plan.loops));
    // Loops warm themselves (their first operations are untimed): no warm-up rounds.
    let mut schedule = Schedule::fixed(plan.loops, 0, Order::Interleaved, plan.seed);
    let results = measure_all(prepare_latency(&plan, &units, 0, &scratch), &mut schedule, None, &progress);
    finish(scratch, false);
    let any_ok = results.iter().any(|r| r.status == Status::Ok);
    let mut options = RunOptions { command: Some("latency".into()), argv: Some(argv()), ..RunOptions::default() };
    options.other.insert("runtime_toolchains".into(), json!(crate::executors::runtimes::toolchains()));
    if let serde_json::Value::Object(applied) = plan.applied() {
        options.extend(applied);
    }
    let mut result = assemble(context::host(swap_before), target, options, results, None);
    draw_conclusions(&mut result);
    let mut stdout = std::io::stdout().lock();
    let _ = export::latency_table::render(&result, &mut stdout)
        .and_then(|()| {
            export::answer::render(&result, &mut stdout, Paint::for_stdout(), export::answer::View::default())
        })
        .and_then(|()| stdout.flush());
    let exported = export::write_files(export::RESULT_FORMATS, &result, &args.export.paths());
    Ok(if any_ok && exported { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
