//! `writebench run`: the suite narrowed by the options, a short calibration, every case
//! (and the suite's latency cases) in rounds, then the table, the Answer and the files
//! asked for. Under `--mpi`, every rank runs `mpi::run` instead, which shares the
//! options, the output and the files with this one.

use crate::plan::data_source::DataSource;
use std::io::Write;
use std::process::ExitCode;

use serde_json::json;

use super::calibrate::{kept_short, measure_short};
use super::conclude::{argv, assemble, draw_conclusions};
use super::measure_all::{Setup, measure_all, prepare_all, prepare_latency};
use super::progress::progress_bar;
use super::start::{finish, start_in};
use crate::cli::{RunArgs, UsageError};
use crate::context::{self, TargetInfo};
use crate::executors::case_runs::RunSettings;
use crate::export::wording::seconds_words;
use crate::export::{self, text::Paint};
use crate::measure::peak::{peak_rss_bytes, reset_peak_rss};
use crate::measure::source::Source;
use crate::measure::target::Scratch;
use crate::plan::suites::Suite;
use crate::plan::{Case, Durability};
use crate::result::options::RunOptions;
use crate::result::{ResultFile, Status};
use crate::rounds::calibrate::Effort;
use crate::rounds::estimate::{self, ReadBack};
use crate::rounds::race::GoalReferee;
use crate::rounds::scheduler::{BudgetDecided, Referee, Schedule};

pub(super) fn run(args: &RunArgs) -> Result<ExitCode, UsageError> {
    let mut suite = args.suite()?;
    args.check_paths()?;
    let settings = args.settings(&suite);
    let mut schedule = args.schedule(&suite)?;
    if let Some(latency) = &mut suite.latency {
        // A latency case has as many loops as the others have runs: --count split over them.
        latency.loops = schedule.min_runs;
    }
    let dropped = args.dropped_notes(&suite);
    let cases = suite.cases();
    if cases.is_empty() {
        let why = if dropped.is_empty() { String::new() } else { format!(" ({})", dropped.join("; ")) };
        return Err(UsageError(format!("the options select no case{why}")));
    }
    for note in &dropped {
        eprintln!("writebench: no case for {note}");
    }
    // The seed's pattern; each run's writers get buffers of their own from it, sized
    // for that case's calls (file creation cases write no data and get none).
    let source = Source::new(settings.seed);
    if !args.no_space_check {
        // --size itself must fit; a larger case of a suite (the full suite's 4 GiB file
        // creation) is skipped instead of refusing the whole run.
        crate::measure::space::check_up_front(&args.path, suite.reference_size).map_err(UsageError)?;
    }
    let crash_target = if args.crash_check { Some(super::crash::run_target(&args.path)?) } else { None };
    let (scratch, target) = start_in(&args.path)?;
    let verify = match settings.verify {
        None => ReadBack::None,
        Some(verify) if verify.first_only => ReadBack::First,
        Some(_) => ReadBack::Every,
    };
    let slow_path = if args.budget.is_none() { (suite.slow_path_budget, suite.slow_path_rounds) } else { (None, None) };
    let plan = (&cases[..], suite.latency.as_ref());
    let sizes: Vec<u64> = cases.iter().map(|case| case.bytes).collect();
    let kept = (!args.no_calibrate && !args.recalibrate).then(|| kept_short(&target, &sizes)).flatten();
    let calibrates = !args.no_calibrate && kept.is_none();
    let untimed = (verify, calibrates, settings.stonewall, settings.source);
    announce(plan, &mut schedule, slow_path, &target, &scratch, untimed);
    let calibration = match kept {
        Some(calibration) => {
            eprintln!(
                "writebench: calibration kept from an earlier run (--recalibrate measures it again); {}",
                export::calibration::summary_line(&calibration)
            );
            Some(calibration)
        }
        None if calibrates => {
            let calibration = measure_short(&scratch, &target, &sizes, settings.seed);
            // The copy buffers are freed: the peak the result records is the cases' own.
            reset_peak_rss();
            eprintln!(
                "writebench: calibrated in {:.1} s; {}",
                calibration.seconds,
                export::calibration::summary_line(&calibration)
            );
            Some(calibration)
        }
        None => None,
    };

    let latency_units = suite.latency.as_ref().map(|plan| plan.cases()).unwrap_or_default();
    let runs_per_case = u64::from(schedule.warmup + schedule.max_runs);
    let swap_before = context::swapped_out_pages();
    let progress = progress_bar((cases.len() + latency_units.len()) as u64 * runs_per_case);
    let setup =
        Setup { scratch: &scratch, source: &source, settings: &settings, space_check: !args.no_space_check, split: 1 };
    let mut prepared = prepare_all(&cases, &setup, &mut |ready| ready);
    // The latency cases' loops join the same rounds (docs/measurement.md); their results
    // come after the others', as their table section does.
    if let Some(plan) = &suite.latency {
        prepared.extend(prepare_latency(plan, &latency_units, cases.len(), &scratch));
    }
    let mut referee =
        schedule.race.map(|race| GoalReferee::new(schedule.min_runs, schedule.max_runs, args.margin(), race));
    let done = measure_all(prepared, &mut schedule, referee.as_mut().map(|r| r as &mut dyn Referee), &progress);
    finish(scratch, settings.keep_files);
    let race = referee.map(|referee| {
        let budget = schedule.race.and_then(|race| race.budget).map(|budget| budget.as_secs_f64());
        referee.report(&done, budget)
    });

    // Built once the cases are done, so that peak_rss_bytes covers the whole run.
    let options = options_json(&suite, &settings, &schedule, args.margin());
    let mut result = assemble(context::host(swap_before), target, options, done, calibration);
    result.race = race;
    if let Some(config) = crash_target {
        result.crash = super::crash::check_cases(config, &result.cases, settings.seed)?;
    }
    draw_conclusions(&mut result);
    Ok(show_and_export(&result, args, Paint::for_stdout()))
}

/// A run's result on stdout (a header, or the table with `--table`; the per-rank section of an
/// `--mpi` run, the Answer) and in the files asked for. 0 when a case was measured and
/// every file was written, else 1.
pub(super) fn show_and_export(result: &ResultFile, args: &RunArgs, paint: Paint) -> ExitCode {
    let any_ok = result.cases.iter().any(|r| r.status == Status::Ok);
    let mut stdout = std::io::stdout().lock();
    let view = export::answer::View { explain: args.explain, pointer: !args.table };
    let head = if args.table {
        export::table::render(result, &mut stdout, args.style.style(), paint)
    } else if args.quiet {
        Ok(())
    } else {
        export::answer::render_header(result, &mut stdout)
    };
    let _ = head
        .and_then(|()| export::ranks::render(result, &mut stdout))
        .and_then(|()| export::answer::render(result, &mut stdout, paint, view))
        .and_then(|()| stdout.flush());
    let exported = export::write_files(export::RESULT_FORMATS, result, &args.export.paths());
    if any_ok && exported { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

/// The run's options exactly as they were applied, and the command line.
pub(super) fn options_json(suite: &Suite, settings: &RunSettings, schedule: &Schedule, margin: f64) -> RunOptions {
    let mut options = RunOptions {
        command: Some("run".into()),
        suite: Some(suite.name.to_string()),
        size: Some(suite.reference_size),
        repeat: Some(schedule.min_runs),
        warmup: Some(u64::from(schedule.warmup)),
        target_ci: schedule.target_ci,
        min_runs: Some(schedule.min_runs),
        max_runs: Some(schedule.max_runs),
        order: Some(schedule.order.name().into()),
        budget_seconds: schedule.race.and_then(|race| race.budget).map(|budget| budget.as_secs_f64()),
        race: Some(schedule.races()),
        stonewall_seconds: settings.stonewall.map(|wall| wall.as_secs_f64()),
        seed: Some(settings.seed),
        drop_cache: Some(settings.drop_cache),
        source: Some(settings.source),
        equivalence_pct: Some(100.0 * margin),
        argv: Some(argv()),
        other: serde_json::Map::new(),
    };
    let json = json!({
        "verify": settings.verify.is_some(),
        // Which runs were read back: every one (--verify), or each case's first measured one.
        "verify_runs": settings.verify.as_ref().map(|v| if v.first_only { "first" } else { "every" }),
        "executor": crate::measure::executor::InProcess::OVERHEAD,
        // Each file's data (measure::source): the seed's pattern with a period of at most
        // this, every 4 KiB block stamped for its file and run.
        "source_period_bytes": crate::measure::source::PERIOD,
        "source_writers_budget_bytes": crate::measure::source::WRITERS_BUDGET,
        // What the mapped methods ask of the kernel: nothing but mmap-populate's
        // MADV_POPULATE_WRITE, issued by each thread inside the timed span.
        "mmap_advice": {"madv_sequential": false, "map_populate": false, "mmap-populate": "MADV_POPULATE_WRITE, timed"},
        // The cases' peak: the calibration's (freed) copy buffers are in
        // calibration.peak_rss_bytes, and the mark was reset after them.
        "peak_rss_bytes": peak_rss_bytes(),
        // The runners that ran (or could not), with their toolchains' version lines.
        "runtime_toolchains": crate::executors::runtimes::toolchains(),
        "runtime_executor": crate::executors::runtimes::External::OVERHEAD,
    });
    if let serde_json::Value::Object(json) = json {
        options.extend(json);
    }
    if let serde_json::Value::Object(applied) = serde_json::to_value(suite.applied()).expect("plain data serializes") {
        options.extend(applied);
    }
    options
}

/// One line on stderr before the work starts: what will run, and about how long: the
/// cases' runs with what they cost outside their timed spans (`verify`: which runs are
/// read back),
/// the latency cases, and the calibration first (`calibrates`). On a path with a device
/// behind it, `slow_path` (the suite's, unless `--budget` was given) applies and is said:
/// a race whose first runs alone would pass its budget races within the slower path's
/// budget instead, and the rounds after the first runs get at least the floor, the
/// budget stretched when they end. Memory (tmpfs) keeps its budget: there a slow
/// estimate is a busy machine, not a slow path.
fn announce(
    (cases, latency): (&[Case], Option<&crate::plan::latency::LatencyPlan>),
    schedule: &mut Schedule,
    (slow_path_budget, rounds_floor): (Option<std::time::Duration>, Option<std::time::Duration>),
    target: &TargetInfo,
    scratch: &Scratch,
    (verify, calibrates, wall, source): (ReadBack, bool, Option<std::time::Duration>, DataSource),
) {
    let (least, most) = (schedule.warmup + schedule.min_runs, schedule.warmup + schedule.max_runs);
    let runs = if least == most { format!("{most} runs") } else { format!("{least} to {most} runs") };
    let latency_cases: Vec<(bool, Durability)> = latency
        .map(|plan| plan.cases().into_iter().map(|(unit, mode)| (unit.pattern.is_save(), mode)).collect())
        .unwrap_or_default();
    let latency_text =
        if latency_cases.is_empty() { String::new() } else { format!(" and {} latency cases", latency_cases.len()) };
    let mut estimated = String::new();
    if let Some(mut probe) = estimate::probe(scratch, verify != ReadBack::None) {
        probe.source = source;
        let operations = latency.map_or(0, |plan| plan.operations());
        let mut fixed = estimate::estimate_latency(&latency_cases, operations, &probe);
        if calibrates {
            let effort = Effort::SHORT;
            let device = target.block_device.is_some();
            fixed += estimate::estimate_calibration(effort.file_bytes, effort.file_runs, device, &probe);
        }
        let (low, high) = (
            estimate::estimate(cases, least, verify, &probe, wall),
            estimate::estimate(cases, most, verify, &probe, wall),
        );
        let probed = format!(
            "probe: {:.2} GB/s, {:.2} GB/s with fsync, {:.2} µs per call, {:.1} µs per commit",
            probe.buffered_bytes_per_second / 1e9,
            probe.durable_bytes_per_second / 1e9,
            probe.seconds_per_call * 1e6,
            probe.seconds_per_commit * 1e6
        );
        match schedule.race.as_mut() {
            Some(race) => {
                // What every case's first runs cost, from now: the budget counts from
                // the start, and the probe and the calibration are already part of it.
                let first = race.start.elapsed() + low + fixed;
                estimated = format!("; the first runs take about {} ({probed})", estimate::human(first));
                let device = target.block_device.is_some();
                let decided =
                    race.decide_budget(first, slow_path_budget.filter(|_| device), rounds_floor.filter(|_| device));
                let floor = match race.rounds_floor {
                    Some(floor) if race.budget.is_some() => format!(
                        ", and at least {} of rounds after the first runs however long they take",
                        seconds_words(floor.as_secs_f64())
                    ),
                    _ => String::new(),
                };
                let budget = race.budget.unwrap_or(std::time::Duration::MAX);
                match decided {
                    BudgetDecided::SlowerPath { was } => {
                        estimated += &format!(
                            "; that is over two thirds of {}, so the race gets {} on this path{floor} (--budget \
                             sets another)",
                            seconds_words(was.as_secs_f64()),
                            seconds_words(budget.as_secs_f64())
                        );
                    }
                    BudgetDecided::PastBudget => {
                        estimated += &format!(
                            "; that is past the budget, so only goals clear after the first runs will be decided \
                             (give --budget {}m to race them)",
                            (2.0 * first.as_secs_f64() / 60.0).ceil() as u64
                        );
                    }
                    BudgetDecided::Kept if !floor.is_empty() => {
                        estimated +=
                            &format!("; on this path the race gets {}{floor}", seconds_words(budget.as_secs_f64()))
                    }
                    BudgetDecided::Kept => {}
                }
            }
            None => {
                let (low, high) = (estimate::human(low + fixed), estimate::human(high + fixed));
                let about = if low == high { high } else { format!("{low} to {high}") };
                estimated = format!(", about {about} ({probed})");
            }
        }
    }
    let line = match schedule.race.and_then(|race| race.budget) {
        Some(budget) => format!(
            "writebench: {} cases{latency_text} on {} ({}), raced for the Answer's goals within {}: {}{} runs each, \
             then rounds only for the cases still in contention, up to {} runs, and what is left for the \
             observations not yet settled",
            cases.len(),
            target.path,
            target.fs_type,
            seconds_words(budget.as_secs_f64()),
            warm_ups(schedule.warmup),
            schedule.min_runs,
            schedule.max_runs
        ),
        None => {
            format!("writebench: {} cases x {runs}{latency_text} on {} ({})", cases.len(), target.path, target.fs_type)
        }
    };
    eprintln!("{line}{estimated}");
}

/// "a warm-up and ", "3 warm-ups and ", or nothing under `--warmup 0`.
fn warm_ups(count: u32) -> String {
    match count {
        0 => String::new(),
        1 => "a warm-up and ".to_string(),
        n => format!("{n} warm-ups and "),
    }
}

#[cfg(test)]
mod tests {
    use super::warm_ups;

    #[test]
    fn the_announcement_counts_the_warm_ups_asked_for() {
        assert_eq!(format!("{}2 runs", warm_ups(0)), "2 runs");
        assert_eq!(format!("{}2 runs", warm_ups(1)), "a warm-up and 2 runs");
        assert_eq!(format!("{}2 runs", warm_ups(3)), "3 warm-ups and 2 runs");
    }
}
