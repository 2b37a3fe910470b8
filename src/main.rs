//! `writebench`: parse the command line, run the plan, render the results.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::json;

use writebench::analysis::advice;
use writebench::cli::calibrate::CalibrateArgs;
use writebench::cli::latency::LatencyArgs;
use writebench::cli::report::ReportArgs;
use writebench::cli::{Cli, Command, CompareArgs, RunArgs, UsageError, plain};
use writebench::context;
use writebench::export::text::Paint;
use writebench::export::{self, write_atomically};
use writebench::measure::peak::peak_rss_bytes;
use writebench::measure::runner::prepare_case;
use writebench::measure::scheduler::{self, Schedule};
use writebench::measure::source::Source;
use writebench::measure::target::Scratch;
use writebench::measure::{estimate, signals};
use writebench::result::{ResultFile, SCHEMA, Status, Tool};

#[cfg(feature = "mpi")]
mod mpi_run;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            if matches!(error.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
                || error.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            {
                let _ = error.print();
                return ExitCode::from(if error.use_stderr() { 2 } else { 0 });
            }
            // clap explains at length; the user gets the one line that matters.
            let text = error.render().to_string();
            let first = text.lines().next().unwrap_or("invalid command line").trim_start_matches("error: ");
            eprintln!("writebench: {first}");
            return ExitCode::from(2);
        }
    };
    let outcome = match cli.command {
        Command::Run(args) => run(&args),
        Command::Latency(args) => latency(&args),
        Command::Report(args) => report(&args),
        Command::Compare(args) => compare(&args),
        Command::Calibrate(args) => calibrate(&args),
        Command::Lab(args) => lab(&args),
        Command::Completions(args) => {
            use clap::CommandFactory;
            let mut command = Cli::command();
            clap_complete::generate(args.shell, &mut command, "writebench", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => Ok(if manual(&mut std::io::stdout()).is_ok() { ExitCode::SUCCESS } else { ExitCode::from(1) }),
        Command::Clean(args) => clean(&args),
    };
    match outcome {
        Ok(code) => code,
        Err(UsageError(message)) => {
            eprintln!("writebench: {message}");
            ExitCode::from(2)
        }
    }
}

/// `writebench clean`: the scratch directories in PATH, then the leftovers of a killed
/// lab (mounts, md arrays, loop devices, backing files), wherever PATH is.
fn clean(args: &writebench::cli::CleanArgs) -> Result<ExitCode, UsageError> {
    // PATH is checked first (bad input says so before anything is listed).
    let scratch_done = writebench::measure::clean::clean_command(&args.path, args.yes).map_err(UsageError)?;
    let lab_done = writebench::lab::leftovers::clean(args.yes).map_err(UsageError)?;
    Ok(ExitCode::from(if lab_done && scratch_done { 0 } else { 1 }))
}

/// `writebench lab`: checks everything, then builds, measures and tears down each
/// filesystem in turn, and compares them.
fn lab(args: &writebench::cli::lab::LabArgs) -> Result<ExitCode, UsageError> {
    // The command line after `lab`, as typed: its run options go to each run.
    let argv: Vec<String> = std::env::args().skip_while(|arg| arg != "lab").skip(1).collect();
    let plan = args.plan(&argv)?;
    match writebench::lab::driver::run(&plan) {
        writebench::lab::driver::Outcome::Done(code) => Ok(ExitCode::from(code)),
        writebench::lab::driver::Outcome::Refused(why) => Err(UsageError(why)),
    }
}

/// `writebench compare`: reads the results, prints the comparison, writes the exports.
fn compare(args: &CompareArgs) -> Result<ExitCode, UsageError> {
    let results = args.load()?;
    // Results from different filesystems get the lab's comparison across them (columns
    // by filesystem, "Across the files", the side-by-side chart); others a plain one.
    let compared = writebench::analysis::compare::across::compare_saved_filesystems(&results)
        .unwrap_or_else(|| writebench::analysis::compare::compare(&results));
    let mut stdout = std::io::stdout().lock();
    let _ = export::compare::render(&compared, &mut stdout).and_then(|()| stdout.flush());
    let mut all_written = true;
    for (file, render) in [
        (&args.export_markdown, export::compare::render_markdown as fn(&_, &mut dyn Write) -> std::io::Result<()>),
        (&args.export_html, export::compare_html::render),
        (&args.export_json, export::compare::render_json),
    ] {
        if let Some(file) = file {
            if let Err(error) = write_atomically(file, |out| render(&compared, out)) {
                eprintln!("writebench: could not write {}: {}", file.display(), plain(&error));
                all_written = false;
            }
        }
    }
    Ok(if all_written { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// `writebench latency`: every pattern under every mode, one case each, their loops
/// in rounds.
fn latency(args: &LatencyArgs) -> Result<ExitCode, UsageError> {
    let plan = args.plan()?;
    args.check_paths()?;
    let (scratch, target) = start_in(&args.path)?;
    let cases = plan.cases();
    let total = cases.len();
    let sizes: Vec<String> = plan.sizes.iter().map(|&bytes| format!("{bytes} B")).collect();
    eprintln!(
        "writebench: latency of {} x {} loops of {} operations of {} on {} ({})",
        total,
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
    let progress = progress_bar(total as u64 * u64::from(plan.loops));
    // Loops warm themselves (their first operations are untimed): no warm-up rounds.
    let schedule = Schedule::fixed(plan.loops, 0, scheduler::Order::Interleaved, plan.seed);
    let mut queue = scheduler::Queue::default();
    for (index, (unit, durability)) in cases.iter().enumerate() {
        let case = writebench::plan::latency::case_of(&plan, unit, *durability);
        queue.add(case, writebench::measure::latency::prepare(index, &plan, unit, *durability, &scratch));
    }
    let results = queue.run(&schedule, &mut |tick| show_tick(&progress, &tick));
    progress.finish_and_clear();
    drop(scratch);
    signals::forget_scratch();
    let any_ok = results.iter().any(|r| r.status == Status::Ok);
    let mut result = ResultFile {
        schema: SCHEMA.to_string(),
        tool: Tool::this(),
        host: context::host(swap_before),
        target,
        options: {
            let mut options = json!({
                "command": "latency",
                "runtime_toolchains": writebench::measure::runtimes::toolchains(),
                "argv": std::env::args().collect::<Vec<_>>(),
            });
            if let (Some(options), serde_json::Value::Object(applied)) = (options.as_object_mut(), plan.applied()) {
                options.extend(applied);
            }
            options
        },
        cases: results,
        observations: Vec::new(),
        observation_tests: None,
        answer: Vec::new(),
        calibration: None,
        complete: true,
    };
    draw_conclusions(&mut result);
    let mut stdout = std::io::stdout().lock();
    let _ = writebench::export::latency::render(&result, &mut stdout)
        .and_then(|()| export::answer::render(&result, &mut stdout, Paint::for_stdout()))
        .and_then(|()| stdout.flush());
    let exported = export_files(
        &result,
        &[(args.export_json.as_deref(), Format::Json), (args.export_csv.as_deref(), Format::Csv)],
    );
    Ok(if any_ok && exported { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn run(args: &RunArgs) -> Result<ExitCode, UsageError> {
    if args.mpi.mpi {
        #[cfg(feature = "mpi")]
        return mpi_run::run(args);
        #[cfg(not(feature = "mpi"))]
        return Err(UsageError(writebench::cli::mpi::NOT_BUILT.to_string()));
    }
    let mut suite = args.suite()?;
    args.check_paths()?;
    let settings = args.settings(&suite);
    let schedule = args.schedule(&suite)?;
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
        // --size itself must fit; a larger case of a suite (the seed suite's 4 GiB file
        // creation) is skipped instead of refusing the whole run.
        writebench::measure::space::check_up_front(&args.path, suite.reference_size).map_err(UsageError)?;
    }
    let (mut scratch, target) = start_in(&args.path)?;
    let verify = settings.verify.is_some();
    let calibrates = !args.no_calibrate;
    announce(&cases, suite.latency.as_ref(), &schedule, &target, &scratch, (verify, calibrates));
    let calibration = (!args.no_calibrate).then(|| {
        let sizes: Vec<u64> = cases.iter().map(|case| case.bytes).collect();
        let effort = writebench::measure::calibrate::Effort::SHORT;
        let calibration = calibrate_in(&scratch, effort, &sizes, settings.seed);
        // The copy buffers are freed: the peak the result records is the cases' own.
        writebench::measure::peak::reset_peak_rss();
        eprintln!(
            "writebench: calibrated in {:.1} s; {}",
            calibration.seconds,
            export::calibration::summary_line(&calibration)
        );
        calibration
    });

    let latency_cases: Vec<_> = suite
        .latency
        .iter()
        .flat_map(|plan| plan.cases().into_iter().map(move |(unit, mode)| (plan, unit, mode)))
        .collect();
    let runs_per_case = u64::from(schedule.warmup + schedule.max_runs);
    let swap_before = context::swapped_out_pages();
    let progress = progress_bar((cases.len() + latency_cases.len()) as u64 * runs_per_case);
    let mut queue = scheduler::Queue::default();
    for (index, case) in cases.iter().enumerate() {
        // A case that does not fit is skipped with the numbers, and the run goes on.
        // Creation cases check for themselves (ftruncate needs no space at all).
        let creates = writebench::plan::catalog::by_name(&case.method).is_some_and(|m| m.creation.is_some());
        let too_big = if args.no_space_check || creates {
            None
        } else {
            writebench::measure::space::shortfall(scratch.path(), case.bytes)
        };
        let prepared = match too_big {
            Some(reason) => Err((Status::Skipped, reason)),
            None => prepare_case(index, case, &scratch, &source, &settings),
        };
        queue.add(case.clone(), prepared);
    }
    // The latency cases' loops join the same rounds (docs/measurement.md); their results
    // come after the others', as their table section does.
    for (number, (plan, unit, mode)) in latency_cases.iter().enumerate() {
        let case = writebench::plan::latency::case_of(plan, unit, *mode);
        queue.add(case, writebench::measure::latency::prepare(cases.len() + number, plan, unit, *mode, &scratch));
    }
    let done = queue.run(&schedule, &mut |tick| show_tick(&progress, &tick));
    progress.finish_and_clear();
    if settings.keep_files {
        signals::forget_scratch();
        scratch.keep();
        eprintln!("writebench: kept scratch directory {}", scratch.path().display());
    }
    drop(scratch);
    signals::forget_scratch();

    // Built once the cases are done, so that peak_rss_bytes covers the whole run.
    let mut result = ResultFile {
        schema: SCHEMA.to_string(),
        tool: Tool::this(),
        host: context::host(swap_before),
        target,
        options: options_json(&suite, &settings, &schedule, args.equivalence),
        cases: done,
        observations: Vec::new(),
        observation_tests: None,
        answer: Vec::new(),
        calibration,
        complete: true,
    };
    draw_conclusions(&mut result);
    Ok(show_and_export(&result, args, Paint::for_stdout()))
}

/// A run's result on stdout (the table unless `--quiet`, the per-rank section of an
/// `--mpi` run, the Answer) and in the files asked for. 0 when a case was measured and
/// every file was written, else 1.
fn show_and_export(result: &ResultFile, args: &RunArgs, paint: Paint) -> ExitCode {
    let any_ok = result.cases.iter().any(|r| r.status == Status::Ok);
    let mut stdout = std::io::stdout().lock();
    let table = if args.quiet { Ok(()) } else { export::table::render(result, &mut stdout, args.style.style(), paint) };
    let _ = table
        .and_then(|()| export::ranks::render(result, &mut stdout))
        .and_then(|()| export::answer::render(result, &mut stdout, paint))
        .and_then(|()| stdout.flush());
    let exported = export_files(
        result,
        &[
            (args.export_json.as_deref(), Format::Json),
            (args.export_csv.as_deref(), Format::Csv),
            (args.export_markdown.as_deref(), Format::Markdown),
            (args.export_html.as_deref(), Format::Html),
        ],
    );
    if any_ok && exported { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

/// `writebench calibrate`: this machine's ceilings on PATH, printed and exported.
fn calibrate(args: &CalibrateArgs) -> Result<ExitCode, UsageError> {
    let size = args.check()?;
    writebench::measure::space::check_up_front(&args.path, size).map_err(UsageError)?;
    let (scratch, target) = start_in(&args.path)?;
    let swap_before = context::swapped_out_pages();
    let calibration = calibrate_in(&scratch, writebench::measure::calibrate::Effort::full(size), &[], args.seed);
    drop(scratch);
    signals::forget_scratch();
    let result = ResultFile {
        schema: SCHEMA.to_string(),
        tool: Tool::this(),
        host: context::host(swap_before),
        target,
        options: json!({
            "command": "calibrate",
            "size": size,
            "seed": args.seed,
            "argv": std::env::args().collect::<Vec<_>>(),
        }),
        cases: Vec::new(),
        observations: Vec::new(),
        observation_tests: None,
        answer: Vec::new(),
        calibration: Some(calibration),
        complete: true,
    };
    let mut stdout = std::io::stdout().lock();
    let _ = export::calibration::render(&result, &mut stdout).and_then(|()| stdout.flush());
    let exported = export_files(&result, &[(args.export_json.as_deref(), Format::Json)]);
    Ok(if exported { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// The manual page: the command's own page, then each subcommand's synopsis,
/// description and options in sections of their own, so that one page has them all.
fn manual(out: &mut dyn Write) -> std::io::Result<()> {
    use clap::CommandFactory;
    let command = Cli::command();
    clap_mangen::Man::new(command.clone()).render(out)?;
    for sub in command.get_subcommands().filter(|sub| sub.get_name() != "help") {
        let name = format!("writebench {}", sub.get_name());
        let sub = sub.clone().bin_name(name.clone());
        writeln!(out, ".SH \"{}\"", name.to_uppercase())?;
        let man = clap_mangen::Man::new(sub);
        man.render_synopsis_section(out)?;
        man.render_description_section(out)?;
        man.render_options_section(out)?;
    }
    Ok(())
}

/// Signal handling, then the scratch directory in `path` and the facts of its
/// filesystem: the start of every command that writes. Signals come first, before any
/// other thread starts, so that every thread inherits the blocked mask.
fn start_in(path: &Path) -> Result<(Scratch, context::TargetInfo), UsageError> {
    signals::install().map_err(|e| UsageError(format!("cannot set up signal handling: {}", plain(&e))))?;
    let scratch = signals::create_scratch(|| Scratch::create(path), Scratch::path)
        .map_err(|e| UsageError(format!("cannot create a scratch directory in {}: {}", path.display(), plain(&e))))?;
    let target = context::target(path, Some(&probe_file(&scratch)));
    Ok((scratch, target))
}

/// The calibration, with a spinner on a terminal (nothing otherwise) saying its step.
fn calibrate_in(
    scratch: &Scratch,
    effort: writebench::measure::calibrate::Effort,
    case_sizes: &[u64],
    seed: u64,
) -> context::calibration::Calibration {
    let spinner = if std::io::stderr().is_terminal() {
        let spinner = ProgressBar::new_spinner();
        spinner.enable_steady_tick(std::time::Duration::from_millis(120));
        spinner
    } else {
        ProgressBar::hidden()
    };
    let calibration = writebench::measure::calibrate::calibrate(scratch, effort, case_sizes, seed, &mut |step| {
        spinner.set_message(format!("calibrating: {step}"))
    });
    spinner.finish_and_clear();
    calibration
}

/// `writebench report`: a saved result rendered again, from the file alone.
fn report(args: &ReportArgs) -> Result<ExitCode, UsageError> {
    let mut result = args.load().map_err(UsageError)?;
    // The stored Answer and observations are a cache: drawn again from the cases, by
    // this writebench's rules (a file from before the advice stored none at all). Where
    // the stored ones differ, the derived ones are shown, and that is said.
    let (stored_answer, stored_observations) = (result.answer.clone(), result.observations.clone());
    draw_conclusions(&mut result);
    if let Some(note) = advice::stored_differs(&stored_answer, &stored_observations, &result) {
        eprintln!("writebench: note: {note}");
    }
    let files = [
        (args.export_markdown.as_deref(), Format::Markdown),
        (args.export_html.as_deref(), Format::Html),
        (args.export_json.as_deref(), Format::Json),
        (args.export_csv.as_deref(), Format::Csv),
    ];
    if files.iter().all(|(file, _)| file.is_none()) {
        let mut stdout = std::io::stdout().lock();
        let command = result.options.get("command").and_then(|c| c.as_str());
        if command == Some("calibrate") {
            let _ = export::calibration::render(&result, &mut stdout).and_then(|()| stdout.flush());
            return Ok(ExitCode::SUCCESS);
        }
        let latency_only = command == Some("latency");
        let printed = if latency_only {
            export::latency::render(&result, &mut stdout)
        } else {
            export::table::render(&result, &mut stdout, args.style.style(), Paint::for_stdout())
                .and_then(|()| export::ranks::render(&result, &mut stdout))
        };
        let printed = printed.and_then(|()| export::answer::render(&result, &mut stdout, Paint::for_stdout()));
        let _ = printed.and_then(|()| stdout.flush());
        return Ok(ExitCode::SUCCESS);
    }
    Ok(if export_files(&result, &files) { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Fills each case's share of its ceilings, the observations and the answer, from the
/// cases and the calibration alone.
fn draw_conclusions(result: &mut ResultFile) {
    writebench::analysis::ceilings::apply(result);
    let (observations, tests) = advice::counted_observations(result);
    (result.observations, result.observation_tests) = (observations, Some(tests));
    result.answer = advice::recommendations(result);
}

#[derive(Debug, Clone, Copy)]
enum Format {
    Json,
    Csv,
    Markdown,
    Html,
}

/// Writes the files asked for, each atomically; false if one failed (said on stderr).
fn export_files(result: &ResultFile, files: &[(Option<&Path>, Format)]) -> bool {
    let mut all_written = true;
    for &(file, format) in files {
        let Some(file) = file else { continue };
        let render: fn(&ResultFile, &mut dyn Write) -> std::io::Result<()> = match format {
            Format::Json => export::json::render,
            Format::Csv => export::csv::render,
            Format::Markdown => export::markdown::render,
            Format::Html => export::html::render,
        };
        if let Err(error) = write_atomically(file, |out| render(result, out)) {
            eprintln!("writebench: could not write {}: {}", file.display(), plain(&error));
            all_written = false;
        }
    }
    all_written
}

/// The run's options exactly as they were applied, and the command line.
fn options_json(
    suite: &writebench::plan::suites::Suite,
    settings: &writebench::measure::runner::RunSettings,
    schedule: &Schedule,
    equivalence_pct: f64,
) -> serde_json::Value {
    let mut options = json!({
        "command": "run",
        "suite": suite.name,
        "size": suite.reference_size,
        "repeat": schedule.min_runs,
        "warmup": schedule.warmup,
        "target_ci": schedule.target_ci,
        "min_runs": schedule.min_runs,
        "max_runs": schedule.max_runs,
        "order": schedule.order.name(),
        "seed": settings.seed,
        "verify": settings.verify.is_some(),
        "drop_cache": settings.drop_cache,
        // What "tied" means in the Answer (analysis::significance, docs/answer.md).
        "equivalence_pct": equivalence_pct,
        "executor": writebench::measure::executor::InProcess::OVERHEAD,
        // Each file's data (measure::source): the seed's pattern with a period of at most
        // this, every 4 KiB block stamped for its file and run.
        "source_period_bytes": writebench::measure::source::PERIOD,
        "source_writers_budget_bytes": writebench::measure::source::WRITERS_BUDGET,
        // What the mapped methods ask of the kernel: nothing but mmap-populate's
        // MADV_POPULATE_WRITE, issued by each thread inside the timed span.
        "mmap_advice": {"madv_sequential": false, "map_populate": false, "mmap-populate": "MADV_POPULATE_WRITE, timed"},
        // The cases' peak: the calibration's (freed) copy buffers are in
        // calibration.peak_rss_bytes, and the mark was reset after them.
        "peak_rss_bytes": peak_rss_bytes(),
        // The runners that ran (or could not), with their toolchains' version lines.
        "runtime_toolchains": writebench::measure::runtimes::toolchains(),
        "runtime_executor": writebench::measure::runtimes::External::OVERHEAD,
        "argv": std::env::args().collect::<Vec<_>>(),
    });
    let applied = serde_json::to_value(suite.applied()).expect("plain data serializes");
    if let (Some(options), serde_json::Value::Object(applied)) = (options.as_object_mut(), applied) {
        options.extend(applied);
    }
    options
}

/// One line on stderr before the work starts: what will run, and about how long: the
/// cases' runs with what they cost outside their timed spans (`verify`: the read-back),
/// the latency cases, and the calibration first (`calibrates`).
fn announce(
    cases: &[writebench::plan::Case],
    latency: Option<&writebench::plan::latency::Plan>,
    schedule: &Schedule,
    target: &context::TargetInfo,
    scratch: &Scratch,
    (verify, calibrates): (bool, bool),
) {
    let (least, most) = (schedule.warmup + schedule.min_runs, schedule.warmup + schedule.max_runs);
    let runs = if least == most { format!("{most} runs") } else { format!("{least} to {most} runs") };
    let latency_cases: Vec<(bool, writebench::plan::Durability)> = latency
        .map(|plan| plan.cases().into_iter().map(|(unit, mode)| (unit.pattern.is_save(), mode)).collect())
        .unwrap_or_default();
    let latency_text =
        if latency_cases.is_empty() { String::new() } else { format!(" and {} latency cases", latency_cases.len()) };
    let mut line =
        format!("writebench: {} cases x {runs}{latency_text} on {} ({})", cases.len(), target.path, target.fs_type);
    if let Some(probe) = estimate::probe(scratch, verify) {
        let operations = latency.map_or(0, |plan| plan.operations());
        let mut fixed = estimate::estimate_latency(&latency_cases, operations, &probe);
        if calibrates {
            let effort = writebench::measure::calibrate::Effort::SHORT;
            let device = target.block_device.is_some();
            fixed += estimate::estimate_calibration(effort.file_bytes, effort.file_runs, device, &probe);
        }
        let (low, high) = (estimate::estimate(cases, least, &probe), estimate::estimate(cases, most, &probe));
        let (low, high) = (estimate::human(low + fixed), estimate::human(high + fixed));
        let about = if low == high { high } else { format!("{low} to {high}") };
        line += &format!(
            ", about {about} (probe: {:.2} GB/s, {:.2} GB/s with fsync, {:.2} µs per call, {:.1} µs per commit)",
            probe.buffered_bytes_per_second / 1e9,
            probe.durable_bytes_per_second / 1e9,
            probe.seconds_per_call * 1e6,
            probe.seconds_per_commit * 1e6
        );
    }
    eprintln!("{line}");
}

/// A throw-away file in the scratch directory, to ask statx for O_DIRECT alignment
/// (the answer is per file, and directories do not give it).
fn probe_file(scratch: &Scratch) -> std::path::PathBuf {
    let path = scratch.path().join("probe");
    let _ = std::fs::File::create(&path);
    path
}

/// Where the rounds stand, on the progress bar.
fn show_tick(progress: &ProgressBar, tick: &scheduler::Tick) {
    progress.set_length(tick.planned);
    progress.set_position(tick.done);
    progress.set_message(tick.case.id.clone());
}

fn progress_bar(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{wide_bar}] {pos}/{len} runs, eta {eta}  {msg}")
            .expect("the template is valid")
            .progress_chars("=> "),
    );
    bar
}
