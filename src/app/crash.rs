//! `writebench crash` (docs/crash.md): checks what it needs, then for each filesystem ×
//! mount options × workload records, simulates power losses and checks the promises
//! (`crash::check`), tears everything down (also after SIGINT, SIGTERM or SIGHUP, which
//! are seen between states), prints the table and writes the exports.

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use crate::cli::UsageError;
use crate::cli::crash::CrashArgs;
use crate::crash::check::{Budget, check};
use crate::crash::filesystems::CrashFs;
use crate::crash::recorder::{Pace, SLOW_DELAY, SLOW_QUEUE};
use crate::crash::subject::Subject;
use crate::crash::workloads::Workload;
use crate::error::interrupt;
use crate::lab::names::{Names, SHM};
use crate::lab::objects::{Object, Objects};
use crate::result::Tool;
use crate::result::crash::{CRASH_SCHEMA, CrashCheck, CrashReport};

pub(super) fn crash(args: &CrashArgs) -> Result<ExitCode, UsageError> {
    let plan = args.plan()?;
    preflight(&plan.configs)?;
    let budget =
        Budget { states: plan.states, seed: plan.seed, show_log: plan.show_log, linger: plan.linger, pace: plan.pace };
    let mut report = CrashReport {
        schema: CRASH_SCHEMA.to_string(),
        tool: Tool::this(),
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_string(),
        seed: plan.seed,
        states_per_check: plan.states,
        command: std::env::args().collect::<Vec<_>>().join(" "),
        crash: Vec::new(),
        complete: true,
    };
    let checked = check_all(&plan.configs, &plan.subjects, &budget)?;
    report.crash = checked.entries;
    report.complete = checked.complete;
    if report.crash.is_empty() && checked.failed {
        // Said on stderr, in one line: an empty table would add nothing.
        return Ok(ExitCode::from(1));
    }
    // A checker that could judge no state of a filesystem checked nothing there: an
    // error, not a pass, and the report is not complete.
    let mut unjudged = false;
    for entry in report.crash.iter().filter(|e| e.states > 0 && e.checker_failed == e.states) {
        let why = entry.checker_failure.as_deref().unwrap_or_default();
        eprintln!("writebench: your checker judged none of the {} states on {}: {why}", entry.states, entry.fs);
        unjudged = true;
    }
    report.complete &= !unjudged;
    let mut stdout = std::io::stdout().lock();
    let _ = crate::export::crash::render_text(&report, &mut stdout);
    if args.show_states {
        let _ = crate::export::crash::states_text(&report.crash, &mut stdout);
    }
    let written = crate::export::write_files(crate::export::CRASH_FORMATS, &report, &args.export.paths());
    if let Some(signal) = interrupt::received() {
        return Ok(ExitCode::from(128 + signal as u8));
    }
    Ok(ExitCode::from(if checked.failed || !written || unjudged { 1 } else { 0 }))
}

/// ", about 1 min 20 s left" from the time per recording so far (none before the first
/// is done, nor after the last).
fn left(seconds: f64, done: usize, total: usize) -> String {
    if done == 0 || done >= total {
        return String::new();
    }
    let seconds = seconds.round() as u64;
    if seconds >= 60 {
        format!(", about {} min {} s left", seconds / 60, seconds % 60)
    } else {
        format!(", about {seconds} s left")
    }
}

/// What [`check_all`] did.
pub(super) struct Checked {
    pub entries: Vec<CrashCheck>,
    /// False when a signal stopped it.
    pub complete: bool,
    /// True when a recording or the teardown failed (each said on stderr).
    pub failed: bool,
}

/// Checks every workload (or the user's program) on every configuration, with progress
/// on stderr; tears everything down (also after SIGINT, SIGTERM or SIGHUP, seen between
/// states). The user's program that cannot be checked (not found, failed before its
/// first promise, past its limit) stops it all: it would fail the same way on every
/// filesystem.
pub(super) fn check_all(
    configs: &[(&'static CrashFs, String)],
    subjects: &[Subject],
    budget: &Budget,
) -> Result<Checked, UsageError> {
    interrupt::install()
        .map_err(|e| UsageError(format!("cannot install signal handlers: {}", crate::error::plain(&e))))?;
    let names = Names::this_process();
    let mut objects = Objects::default();
    objects.make_dir(&names.mount_root()).map_err(UsageError)?;
    objects.make_dir(&names.mount_point("crash-state")).map_err(UsageError)?;
    objects.push(Object::Image(names.image("crash-state", 0)));

    let total = configs.len() * subjects.len();
    let started = Instant::now();
    let mut checked = Checked { entries: Vec::new(), complete: true, failed: false };
    let stop = || interrupt::received().map(|signal| format!("interrupted by {}", interrupt::name(signal)));
    let plural = |n: usize, word: &str| {
        format!("{} {word}{}", crate::plan::numbers::thousands(n as u64), if n == 1 { "" } else { "s" })
    };
    let linger = if budget.linger.is_zero() {
        String::new()
    } else {
        format!(", recording {} after each ends (--linger)", crate::plan::numbers::seconds(budget.linger.as_secs_f64()))
    };
    let device = match budget.pace {
        Pace::Fast => String::new(),
        Pace::Slow { .. } => {
            format!(
                ", on a slow device (each write and flush answered after up to {} ms, {} requests at a time)",
                SLOW_DELAY.as_millis(),
                SLOW_QUEUE
            )
        }
    };
    eprintln!(
        "writebench crash: {} ({} x {}), at most {} each{linger}{device}",
        plural(total, "recording"),
        plural(configs.len(), "filesystem configuration"),
        plural(
            subjects.len(),
            if matches!(subjects.first(), Some(Subject::Program(_))) { "program" } else { "workload" }
        ),
        plural(budget.states, "state")
    );
    'all: for (fs, options) in configs {
        for subject in subjects {
            if stop().is_some() {
                checked.complete = false;
                break 'all;
            }
            let shown = if options.is_empty() { "defaults" } else { options };
            match check(fs, options, subject, budget, names, &stop) {
                Ok(entry) => {
                    let done = checked.entries.len() + 1;
                    let per = started.elapsed().as_secs_f64() / done as f64;
                    let eta = per * total.saturating_sub(done) as f64;
                    let what = match &entry.refused {
                        Some(why) => format!("not run: {why}"),
                        None => format!("{} states, {} broken", entry.states, entry.broken),
                    };
                    eprintln!(
                        "[{done}/{total}] {} ({shown}) {}: {what}{}",
                        fs.name,
                        subject.shown(),
                        left(eta, done, total)
                    );
                    checked.entries.push(entry);
                }
                Err(error) => {
                    eprintln!("writebench: crash check of {} ({shown}) {}: {error}", fs.name, subject.shown());
                    if stop().is_some() {
                        checked.complete = false;
                        break 'all;
                    }
                    checked.failed = true;
                    if matches!(subject, Subject::Program(_)) {
                        break 'all;
                    }
                }
            }
        }
    }
    let states: usize = checked.entries.iter().map(|e| e.states).sum();
    eprintln!(
        "writebench crash: {} checked in {:.1} s",
        plural(states, "crash state"),
        started.elapsed().as_secs_f64()
    );
    if let Err(failures) = objects.teardown() {
        for failure in failures {
            eprintln!("writebench: crash teardown: {failure}");
        }
        checked.failed = true;
    }
    // What a signal cut short between creating an object and noting it.
    let own = names.pid;
    if let Err(failures) = crate::lab::leftovers::find_where(|pid| pid == own).remove() {
        for failure in failures {
            eprintln!("writebench: crash teardown: {failure}");
        }
        checked.failed = true;
    }
    Ok(checked)
}

/// Why the crash check cannot run here, if it cannot: root, /dev/fuse, RAM in /dev/shm,
/// and each filesystem's tools and kernel support.
pub(super) fn preflight(configs: &[(&'static CrashFs, String)]) -> Result<(), UsageError> {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Err(UsageError(
            "crash needs root: it mounts its recorder (FUSE), loop devices and filesystems (run it as root, e.g. with sudo)"
                .into(),
        ));
    }
    if !Path::new("/dev/fuse").exists() {
        return Err(UsageError("crash needs /dev/fuse for its recorder (modprobe fuse)".into()));
    }
    if !Path::new(SHM).is_dir() {
        return Err(UsageError(format!("crash needs {SHM} (RAM for its crash states)")));
    }
    for (fs, _) in configs {
        if let Some(why) = fs.missing() {
            return Err(UsageError(format!("crash cannot check {}: {why}", fs.name)));
        }
    }
    Ok(())
}

/// The filesystem `run --crash-check` checks for PATH: a new one of PATH's type with
/// PATH's mount options, less those that name something of that filesystem only (a
/// btrfs subvolume) or make it read-only. Refused in one line where it cannot be done.
pub(super) fn run_target(path: &Path) -> Result<(&'static CrashFs, String), UsageError> {
    let target = crate::context::target(path, None);
    let Some(fs) = crate::crash::filesystems::by_name(&target.fs_type) else {
        let why = if target.fs_type == "tmpfs" { ": a sync there makes nothing durable" } else { "" };
        return Err(UsageError(format!(
            "--crash-check checks ext4, xfs and btrfs; {} is on {}{why}",
            path.display(),
            if target.fs_type.is_empty() { "an unknown filesystem" } else { &target.fs_type }
        )));
    };
    let own = |option: &&str| {
        !["rw", "ro", "seclabel"].contains(option) && !option.starts_with("subvol=") && !option.starts_with("subvolid=")
    };
    let options: Vec<&str> = target.mount_options.split(',').filter(|o| !o.is_empty()).filter(own).collect();
    let config = (fs, options.join(","));
    preflight(std::slice::from_ref(&config)).map_err(|UsageError(why)| UsageError(format!("--crash-check: {why}")))?;
    Ok(config)
}

/// `run --crash-check`: the workload of each durable mode the cases measured, checked on
/// `config` (24 states each).
pub(super) fn check_cases(
    config: (&'static CrashFs, String),
    cases: &[crate::result::CaseResult],
    seed: u64,
) -> Result<Vec<CrashCheck>, UsageError> {
    let mut workloads: Vec<Workload> = Vec::new();
    for case in cases.iter().filter(|c| c.status == crate::result::Status::Ok) {
        let Some(name) = crate::plan::crash::workload_of(&case.case) else { continue };
        match crate::crash::workloads::by_name(&name) {
            Some(workload) if !workloads.contains(&workload) => workloads.push(workload),
            _ => {}
        }
    }
    if workloads.is_empty() {
        eprintln!("writebench: --crash-check: no case measured a durable mode; nothing to check");
        return Ok(Vec::new());
    }
    let budget = Budget { states: 24, seed, show_log: false, linger: std::time::Duration::ZERO, pace: Pace::Fast };
    let subjects: Vec<Subject> = workloads.into_iter().map(Subject::Workload).collect();
    let checked = check_all(&[config], &subjects, &budget)?;
    if let Some(signal) = interrupt::received() {
        eprintln!("writebench: the crash check was interrupted by {}", interrupt::name(signal));
    }
    Ok(checked.entries)
}
