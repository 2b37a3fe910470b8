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
use crate::lab::interrupt;
use crate::lab::names::{Names, SHM};
use crate::lab::objects::{Object, Objects};
use crate::result::Tool;
use crate::result::crash::{CRASH_SCHEMA, CrashReport};

pub(super) fn crash(args: &CrashArgs) -> Result<ExitCode, UsageError> {
    let plan = args.plan()?;
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
    for (fs, _) in &plan.configs {
        if let Some(why) = fs.missing() {
            return Err(UsageError(format!("crash cannot check {}: {why}", fs.name)));
        }
    }
    interrupt::install()
        .map_err(|e| UsageError(format!("cannot install signal handlers: {}", crate::error::plain(&e))))?;
    let names = Names::this_process();
    let mut objects = Objects::default();
    let made = |path: &Path, objects: &mut Objects| -> Result<(), UsageError> {
        std::fs::create_dir(path)
            .map_err(|e| UsageError(format!("cannot create {}: {}", path.display(), crate::error::plain(&e))))?;
        objects.push(Object::Dir(path.to_path_buf()));
        Ok(())
    };
    made(&names.mount_root(), &mut objects)?;
    made(&names.mount_point("crash-state"), &mut objects)?;
    objects.push(Object::Image(names.image("crash-state", 0)));

    let budget = Budget { states: plan.states, seed: plan.seed };
    let total = plan.configs.len() * plan.workloads.len();
    let started = Instant::now();
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
    let mut failed = false;
    let stop = || interrupt::received().map(|signal| format!("interrupted by {}", interrupt::name(signal)));
    eprintln!(
        "writebench crash: {total} recordings ({} filesystem configurations × {} workloads), at most {} states each",
        plan.configs.len(),
        plan.workloads.len(),
        plan.states
    );
    'all: for (fs, options) in &plan.configs {
        for workload in &plan.workloads {
            if stop().is_some() {
                report.complete = false;
                break 'all;
            }
            let shown = if options.is_empty() { "defaults" } else { options };
            match check(fs, options, workload, &budget, names, &stop, &mut |_, _| {}) {
                Ok(entry) => {
                    let done = report.crash.len() + 1;
                    let per = started.elapsed().as_secs_f64() / done as f64;
                    let eta = per * (total - done) as f64;
                    let what = match &entry.refused {
                        Some(why) => format!("not run: {why}"),
                        None => format!("{} states, {} broken", entry.states, entry.broken),
                    };
                    eprintln!(
                        "[{done}/{total}] {} ({shown}) {}: {what}{}",
                        fs.name,
                        workload.name,
                        left(eta, done, total)
                    );
                    report.crash.push(entry);
                }
                Err(error) => {
                    eprintln!("writebench: crash check of {} ({shown}) {}: {error}", fs.name, workload.name);
                    if stop().is_some() {
                        report.complete = false;
                        break 'all;
                    }
                    failed = true;
                }
            }
        }
    }
    let mut teardown_failed = false;
    if let Err(failures) = objects.teardown() {
        for failure in failures {
            eprintln!("writebench: crash teardown: {failure}");
        }
        teardown_failed = true;
    }
    // What a signal cut short between creating an object and noting it.
    let own = names.pid;
    if let Err(failures) = crate::lab::leftovers::find_where(|pid| pid == own).remove() {
        for failure in failures {
            eprintln!("writebench: crash teardown: {failure}");
        }
        teardown_failed = true;
    }
    let mut stdout = std::io::stdout().lock();
    let _ = crate::export::crash::render_text(&report, &mut stdout);
    let written = crate::export::write_files(crate::export::CRASH_FORMATS, &report, &args.export.paths());
    if let Some(signal) = interrupt::received() {
        return Ok(ExitCode::from(128 + signal as u8));
    }
    Ok(ExitCode::from(if failed || teardown_failed || !written { 1 } else { 0 }))
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
