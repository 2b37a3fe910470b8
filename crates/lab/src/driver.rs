//! The lab: for each filesystem, build it, measure it with `writebench run` as a child
//! process, record how it was built in its result, tear it down; then compare them all
//! with `compare`'s machinery. A filesystem that cannot be built here (a tool or kernel
//! support missing) is skipped with the reason; one that fails is torn down and the lab
//! goes on. A signal stops the lab after the teardown of what exists.
//!
//! Why a child process per filesystem and not the run in this process: the run's signal
//! handlers end the process at once (they can only remove files), while the lab must
//! still unmount, stop arrays and detach devices, which needs ordinary code and a
//! filesystem nobody has files open on. The child is the same binary, so the run is
//! exactly `writebench run` with the same options; it dies with the lab (PDEATHSIG).

use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::filesystems::{self, Filesystem, Request};
use super::names::Names;
use super::objects::Objects;
use analysis::compare;
use context::backing;
use error::interrupt;
use error::plain;
use export::write_atomically;
use result::ResultFile;

/// One filesystem as the user asked for it.
#[derive(Debug, Clone)]
pub struct Choice {
    pub fs: &'static Filesystem,
    pub mkfs_options: String,
    pub mount_options: String,
    /// `lab --crash` on a filesystem the crash check knows: its run gets `--crash-check`.
    pub crash_check: bool,
}

/// Everything the lab needs, validated by the command line.
#[derive(Debug, Clone)]
pub struct LabPlan {
    pub filesystems: Vec<Choice>,
    /// Bytes the suite may have on a filesystem at once.
    pub need: u64,
    pub out_dir: PathBuf,
    /// The `run` options, passed to each run as given.
    pub run_args: Vec<String>,
    /// The comparison's files asked for: (format, file), formats of
    /// `export::COMPARISON_FORMATS`.
    pub exports: Vec<(&'static str, PathBuf)>,
}

/// How the lab ended.
pub enum Outcome {
    /// Exit status: 0 when every filesystem built was measured and torn down.
    Done(u8),
    /// A refusal before anything was built: one line, exit status 2.
    Refused(String),
}

/// Refuses unless the lab can work safely here: root, and the kernel's own lists of loop
/// devices and mounts readable (without them it could not tell its objects from others').
pub fn preflight() -> Result<(), String> {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Err(
            "lab needs root: it creates loop devices, md arrays and mounts (run it as root, e.g. with sudo)".into()
        );
    }
    if std::fs::read_dir("/sys/block").is_err() || std::fs::read_to_string("/proc/self/mounts").is_err() {
        return Err("lab cannot read /sys/block or /proc/self/mounts, so it could not tell its own loop devices and mounts from others': refusing to start".into());
    }
    if !std::path::Path::new(super::names::SHM).is_dir() {
        return Err(format!("lab needs {} (RAM-backed files for its devices)", super::names::SHM));
    }
    Ok(())
}

/// What holds the data of the filesystems the lab builds, said once before it builds
/// them: its loop devices rest on files in /dev/shm, which is memory where /dev/shm is
/// tmpfs (and each result's `target.backing` records what it found); tmpfs and fuse are
/// on tmpfs mounts of the lab's own. Where the files are RAM, a sync measures the
/// filesystems' own work, not a device (docs/lab.md).
/// `on_tmpfs`: the filesystems of the list built on tmpfs mounts of the lab's own (tmpfs,
/// fuse, a GlusterFS row's bricks), named only where they are in it.
fn where_the_data_is(devices: bool, shm: &backing::Found, on_tmpfs: &[&str]) -> String {
    let own_work = "durability there measures the filesystems' own work, not a device";
    if !devices {
        return format!("what it builds keeps its data in memory (tmpfs mounts of its own): {own_work}");
    }
    let names = on_tmpfs.join(", ");
    let (are, keep, their) = if on_tmpfs.len() == 1 { ("is", "keeps", "its") } else { ("are", "keep", "their") };
    match shm.backing {
        backing::Backing::Ram => {
            let also = if on_tmpfs.is_empty() { String::new() } else { format!(", and {names} {are} on tmpfs") };
            format!(
                "its devices are RAM-backed (loop devices over files in {}, which is {}){also}: {own_work}",
                super::names::SHM,
                shm.chain
            )
        }
        other => {
            let also =
                if on_tmpfs.is_empty() { String::new() } else { format!("; {names} {keep} {their} data in memory") };
            format!(
                "its loop devices rest on files in {}, which is {} ({}), not memory: durability on them includes \
                 that storage's work{also}",
                super::names::SHM,
                shm.chain,
                other.word()
            )
        }
    }
}

/// MemAvailable from /proc/meminfo, in bytes.
fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

pub fn run(plan: &LabPlan) -> Outcome {
    if let Err(why) = preflight() {
        return Outcome::Refused(why);
    }
    if let Err(e) = interrupt::install() {
        return Outcome::Refused(format!("cannot set up signal handling: {}", plain(&e)));
    }
    // Tools and kernel support first: a filesystem that cannot be built is skipped.
    let mut buildable = Vec::new();
    for choice in &plan.filesystems {
        match choice.fs.check() {
            Ok(()) => buildable.push(choice),
            Err(why) => eprintln!("writebench: lab: {} skipped: {why}", choice.fs.name),
        }
    }
    if buildable.is_empty() {
        eprintln!("writebench: lab: no filesystem of the list can be built here");
        return Outcome::Done(1);
    }
    let devices = buildable.iter().any(|choice| choice.fs.devices > 0);
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let shm = backing::of_path(&backing::Live::new(mountinfo), super::names::SHM);
    let on_tmpfs: Vec<&str> = buildable.iter().filter(|c| c.fs.devices == 0).map(|c| c.fs.name).collect();
    eprintln!("writebench: lab: {}", where_the_data_is(devices, &shm, &on_tmpfs));
    if buildable.iter().any(|choice| matches!(choice.fs.kind, filesystems::Kind::Gluster { .. })) {
        eprintln!(
            "writebench: lab: each GlusterFS brick is a tmpfs on this machine and the network between its 3 hosts a \
             bridge between namespaces: those figures measure the filesystem's own work (placement, erasure coding, \
             replication, FUSE round trips), not disks or wires"
        );
    }
    // One filesystem exists at a time: the largest must fit in memory, with the run's
    // own buffers beside it.
    let largest = buildable.iter().map(|c| c.fs.memory_bytes(plan.need)).max().unwrap_or(0);
    let wanted = largest + plan.need;
    if let Some(available) = available_memory() {
        if available < wanted {
            return Outcome::Refused(format!(
                "lab needs about {} of free memory for its RAM-backed devices, and {} is available: use a smaller --size",
                plan::units::format_size(wanted),
                plan::units::format_size(available)
            ));
        }
    }
    if let Err(e) = std::fs::create_dir_all(&plan.out_dir) {
        return Outcome::Refused(format!("--out-dir {}: {}", plan.out_dir.display(), plain(&e)));
    }
    // The runs are given it as an absolute path: a GlusterFS row's run enters host 1's
    // mount namespace, and entering one starts at its root, not at the lab's directory.
    let out_dir = match std::fs::canonicalize(&plan.out_dir) {
        Ok(absolute) => absolute,
        Err(e) => return Outcome::Refused(format!("--out-dir {}: {}", plan.out_dir.display(), plain(&e))),
    };
    let plan = &LabPlan { out_dir, ..plan.clone() };
    let names = Names::this_process();
    // Each result read once, by its path, for the check below and the comparison.
    let mut results: Vec<(String, ResultFile)> = Vec::new();
    let mut unreadable = false;
    let mut failed = 0;
    for choice in buildable {
        match measure_one(choice, plan, names).map(|path| (ResultFile::load(&path), path)) {
            Ok((Ok(result), path)) => {
                // The lab made this filesystem for the suite: a case that failed or did
                // not fit on it is the lab's failure, not a finding to pass over.
                if let Some(why) = cases_not_measured(&result) {
                    eprintln!("writebench: lab: {}: {why}", choice.fs.name);
                    failed += 1;
                }
                results.push((path.display().to_string(), result));
            }
            Ok((Err(why), _)) => {
                eprintln!("writebench: lab: {why}");
                unreadable = true;
            }
            Err(why) => {
                eprintln!("writebench: lab: {}: {why}", choice.fs.name);
                failed += 1;
            }
        }
        if let Some(signal) = interrupt::received() {
            eprintln!("writebench: lab interrupted by {}; everything it built is torn down", interrupt::name(signal));
            return Outcome::Done(128u8.wrapping_add(signal as u8));
        }
    }
    let compared_ok = !unreadable && compare_all(&results, plan);
    Outcome::Done(if failed == 0 && compared_ok { 0 } else { 1 })
}

/// What a filesystem's result says of cases that failed or were skipped for lack of
/// space: "every one of its 10 cases failed (pwrite empty 1MiB t1 end: create …: No space
/// left on device …)", or "3 of its 10 cases failed (…)"; None when every case ran.
fn cases_not_measured(result: &ResultFile) -> Option<String> {
    use result::Status;
    let lost: Vec<_> = result.cases.iter().filter(|c| matches!(c.status, Status::Failed | Status::Skipped)).collect();
    let first = lost.first()?;
    let how_many = if result.cases.len() == 1 {
        "its one case".to_string()
    } else if lost.len() == result.cases.len() {
        format!("every one of its {} cases", lost.len())
    } else {
        format!("{} of its {} cases", lost.len(), result.cases.len())
    };
    let why = first.error.as_deref().unwrap_or("no reason recorded");
    Some(format!("{how_many} failed or did not fit (the first, {}: {why})", first.case.id))
}

/// Builds one filesystem, runs the suite on it, tears it down: the result's path.
fn measure_one(choice: &Choice, plan: &LabPlan, names: Names) -> Result<PathBuf, String> {
    let fs = choice.fs;
    let request = Request {
        fs,
        names,
        mkfs_options: choice.mkfs_options.clone(),
        mount_options: choice.mount_options.clone(),
        need: plan.need,
    };
    eprintln!("writebench: lab: building {} ({})", fs.name, fs.what);
    let mut objects = Objects::default();
    let outcome = build_and_run(&request, plan, &mut objects, choice.crash_check);
    let torn = objects.teardown();
    // Anything of this lab that the teardown did not know of (a step cut short by a
    // signal) is found by name and removed too.
    let stray = super::leftovers::find_where(|pid| pid == names.pid);
    let stray_lines = stray.lines();
    let swept = stray.remove();
    let leftover: Vec<String> = match swept {
        Ok(()) => Vec::new(),
        Err(_) => stray_lines,
    };
    match (outcome, torn) {
        (Ok(path), Ok(())) if leftover.is_empty() => {
            eprintln!("writebench: lab: {} torn down", fs.name);
            Ok(path)
        }
        (outcome, torn) => {
            let mut why = Vec::new();
            if let Err(e) = outcome {
                why.push(e);
            }
            if let Err(failures) = torn {
                why.push(format!("teardown: {}", failures.join("; ")));
            }
            if !leftover.is_empty() {
                why.push(format!("still there: {}", leftover.join(", ")));
            }
            Err(why.join("; "))
        }
    }
}

fn build_and_run(
    request: &Request,
    plan: &LabPlan,
    objects: &mut Objects,
    crash_check: bool,
) -> Result<PathBuf, String> {
    let fs = request.fs;
    let built = filesystems::build(request, objects)?;
    if interrupt::received().is_some() {
        return Err("interrupted".into());
    }
    let json = plan.out_dir.join(format!("{}.json", fs.name));
    // An older result of the same name must not pass for this run's.
    let _ = std::fs::remove_file(&json);
    let stdout = std::io::stderr().as_fd().try_clone_to_owned().map_err(|e| plain(&e))?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the writebench binary: {}", plain(&e)))?;
    // A distributed row's volume is mounted inside its hosts only: the suite runs in
    // host 1's namespaces, through its client (nsenter execs the run in its place).
    let mut command = match built.enter {
        Some(host) => {
            let mut command = Command::new("nsenter");
            command.args(["-t", &host.to_string(), "-n", "-u", "-m", "--"]).arg(exe);
            command
        }
        None => Command::new(exe),
    };
    command.arg("run").arg(&built.mount).args(&plan.run_args).arg("--export-json").arg(&json);
    // A new filesystem of the same type and mount options is crash-checked (one device:
    // the RAID layouts' own ordering is not what is checked).
    if crash_check {
        command.arg("--crash-check");
    }
    // The run's table goes to stderr with the progress: stdout is the comparison's.
    command.stdout(Stdio::from(stdout)).stdin(Stdio::null());
    // SAFETY: prctl in the child before exec, async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            // If the lab dies (SIGKILL), the run ends too, removing its scratch
            // directory, so that `writebench clean` finds the filesystem idle.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    let mut child = command.spawn().map_err(|e| format!("cannot start writebench run: {}", plain(&e)))?;
    interrupt::set_child(child.id());
    let status = child.wait();
    interrupt::set_child(0);
    let status = status.map_err(|e| plain(&e))?;
    if let Some(signal) = interrupt::received() {
        return Err(format!("interrupted by {}", interrupt::name(signal)));
    }
    if !json.exists() {
        return Err(format!("writebench run ended with {status} and wrote no result"));
    }
    record_build(&json, request, &built)?;
    Ok(json)
}

/// Adds how the filesystem was built to its result: `options.lab`.
fn record_build(json: &std::path::Path, request: &Request, built: &filesystems::Built) -> Result<(), String> {
    let text = std::fs::read_to_string(json).map_err(|e| format!("cannot read {}: {}", json.display(), plain(&e)))?;
    let mut value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", json.display()))?;
    let fs = request.fs;
    let lab = serde_json::json!({
        "filesystem": fs.name,
        "description": fs.what,
        "mkfs_options": if fs.mkfs.is_empty() { serde_json::Value::Null } else { request.mkfs_options.clone().into() },
        "mount_options": request.mount_options,
        "commands": built.commands,
        "devices": built.devices,
        "images": built.images,
        "device_bytes": built.device_bytes,
    });
    // A client cannot see what holds a GlusterFS volume's bricks (its result says
    // "unknown"); the lab built them on tmpfs, so its syncs make nothing durable, and the
    // comparison must treat the row as it treats any filesystem in memory.
    if matches!(fs.kind, filesystems::Kind::Gluster { .. }) {
        if let Some(target) = value.get_mut("target").and_then(|t| t.as_object_mut()) {
            target.insert("backing".into(), context::backing::Backing::Ram.word().into());
            target.insert("backing_chain".into(), "GlusterFS bricks on tmpfs, one on each namespace host".into());
        }
    }
    match value.get_mut("options").and_then(|o| o.as_object_mut()) {
        Some(options) => {
            options.insert("lab".to_string(), lab);
        }
        None => return Err(format!("{} has no options object", json.display())),
    }
    write_atomically(json, |out| {
        serde_json::to_writer_pretty(&mut *out, &value).map_err(std::io::Error::other)?;
        out.write_all(b"\n")
    })
    .map_err(|e| format!("cannot write {}: {}", json.display(), plain(&e)))
}

/// The comparison across the filesystems: stdout, and the files. False if one failed.
fn compare_all(loaded: &[(String, ResultFile)], plan: &LabPlan) -> bool {
    if loaded.len() < 2 {
        eprintln!(
            "writebench: lab: {} filesystem{} measured: nothing to compare",
            loaded.len(),
            if loaded.len() == 1 { "" } else { "s" }
        );
        return loaded.len() == 1;
    }
    // Each result names the filesystem the lab built (`options.lab.filesystem`).
    let Some(compared) = compare::across::compare_saved_filesystems(loaded) else {
        eprintln!("writebench: lab: the results do not name one filesystem each");
        return false;
    };
    let mut stdout = std::io::stdout().lock();
    let _ = export::compare::render(&compared, &mut stdout).and_then(|()| stdout.flush());
    let own = [
        ("json", plan.out_dir.join("comparison.json")),
        ("markdown", plan.out_dir.join("comparison.md")),
        ("html", plan.out_dir.join("comparison.html")),
    ];
    let files: Vec<(&str, &Path)> =
        own.iter().chain(&plan.exports).map(|(format, file)| (*format, file.as_path())).collect();
    export::write_files(export::COMPARISON_FORMATS, &compared, &files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lab_says_what_holds_its_devices_data() {
        let found = |backing, chain: &str| backing::Found { backing, chain: chain.to_string() };
        let ram = where_the_data_is(true, &found(backing::Backing::Ram, "tmpfs"), &["tmpfs", "fuse"]);
        assert!(ram.starts_with("its devices are RAM-backed (loop devices over files in /dev/shm, which is tmpfs)"));
        assert!(ram.contains(", and tmpfs, fuse are on tmpfs: "), "{ram}");
        assert!(ram.ends_with("durability there measures the filesystems' own work, not a device"), "{ram}");
        // Only what the list has is named.
        let ext4 = where_the_data_is(true, &found(backing::Backing::Ram, "tmpfs"), &[]);
        assert!(!ext4.contains("fuse"), "{ext4}");
        // A /dev/shm that is a directory on a disk: the devices are not in memory.
        let disk = where_the_data_is(true, &found(backing::Backing::Device, "ext4 on /dev/vda, a device"), &["fuse"]);
        assert!(disk.contains("which is ext4 on /dev/vda, a device (device), not memory"), "{disk}");
        assert!(!disk.contains("RAM-backed") && disk.ends_with("; fuse keeps its data in memory"), "{disk}");
        let none = where_the_data_is(false, &found(backing::Backing::Device, "ext4 on /dev/vda, a device"), &[]);
        assert!(none.starts_with("what it builds keeps its data in memory"), "{none}");
    }
}
