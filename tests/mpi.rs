//! `writebench run --mpi` under Open MPI's mpirun: per-rank figures, a shared file
//! written once, and a rank killed mid-run. Built only with `--features mpi`; mpirun
//! must be there (CI installs openmpi-bin), else these fail loudly. CI runs as root,
//! hence --allow-run-as-root; --oversubscribe lets 2 ranks run on a 1-CPU runner.

#![cfg(feature = "mpi")]

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{assert_file_holds_its_stream, entries, read_json};
use writebench::measure::source::Source;

fn mpirun() -> Command {
    let found = Command::new("mpirun").arg("--version").output();
    assert!(
        found.is_ok_and(|output| output.status.success()),
        "mpirun is needed by tests/mpi.rs: install Open MPI (apt-get install openmpi-bin libopenmpi-dev)"
    );
    let mut command = Command::new("mpirun");
    command.args(["--allow-run-as-root", "--oversubscribe", "-np"]);
    command
}

/// `mpirun -np RANKS writebench run --mpi DIR ARGS`.
fn run_mpi(ranks: u32, dir: &Path, args: &[&str]) -> Output {
    let mut command = mpirun();
    command.arg(ranks.to_string()).arg(env!("CARGO_BIN_EXE_writebench"));
    command.args(["run", "--mpi", dir.to_str().unwrap()]).args(args);
    command.output().expect("mpirun runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn file_per_rank_gives_per_rank_figures_and_report_and_compare_read_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let csv = out.path().join("r.csv");
    let size = 8 << 20;
    let output = run_mpi(
        2,
        dir.path(),
        &[
            "--methods",
            "pwrite",
            "--states",
            "prealloc",
            "--chunks",
            "1MiB",
            "--size",
            "8MiB",
            "--layout",
            "file-per-rank",
            "--threads",
            "1",
            "--durability",
            "end",
            "--repeat",
            "3",
            "--export-json",
            json.to_str().unwrap(),
            "--export-csv",
            csv.to_str().unwrap(),
        ],
    );
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert!(output.status.success(), "{stdout}\n{stderr}");
    // Rank 0 prints, once.
    assert_eq!(stdout.matches("Per rank").count(), 1, "{stdout}");
    assert!(stdout.contains("rank 1 on ") && stdout.contains("slowest: rank"), "{stdout}");
    let result = read_json(&json);
    let mpi = &result["host"]["mpi"];
    assert!(mpi["library_version"].as_str().unwrap().contains("MPI"), "{mpi}");
    assert_eq!(mpi["ranks"].as_array().unwrap().len(), 2);
    assert!(
        mpi["ranks"][1]["hostname"].as_str().is_some_and(|h| !h.is_empty()) && mpi["ranks"][1]["kernel"].is_string()
    );
    assert_eq!(result["options"]["mpi"]["ranks"], 2);
    let case = &result["cases"][0];
    assert_eq!(
        (case["id"].as_str().unwrap(), case["status"].as_str().unwrap()),
        ("pwrite prealloc 1MiB r2 t1 f2 end", "ok")
    );
    assert_eq!((case["ranks"].as_u64(), case["files"].as_u64()), (Some(2), Some(2)));
    let runs = case["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    for run in runs {
        let ranks = run["ranks"].as_array().unwrap();
        assert_eq!(ranks.len(), 2, "{run}");
        let bytes: u64 = ranks.iter().map(|r| r["bytes"].as_u64().unwrap()).sum();
        assert_eq!(bytes, size, "the ranks wrote the size together");
        let f = |r: &serde_json::Value, key: &str| r[key].as_f64().unwrap();
        let earliest = ranks.iter().map(|r| f(r, "start_seconds")).fold(f64::INFINITY, f64::min);
        let latest = ranks.iter().map(|r| f(r, "end_seconds")).fold(0.0, f64::max);
        assert_eq!(earliest, 0.0, "the axis starts at the earliest rank's start");
        // IOR's rule: the run's write time is the earliest start to the latest end.
        assert!((f(run, "write_seconds") - latest).abs() < 1e-9, "{run}");
        let synced = ranks.iter().map(|r| f(r, "synced_seconds")).fold(0.0, f64::max);
        assert!((f(run, "write_seconds") + f(run, "sync_seconds") - synced).abs() < 1e-9, "{run}");
        assert!(
            ranks
                .iter()
                .all(|r| f(r, "start_seconds") <= f(r, "end_seconds") && f(r, "end_seconds") <= f(r, "synced_seconds"))
        );
    }
    // The exports, report and compare take it as any result.
    assert!(std::fs::read_to_string(&csv).unwrap().lines().count() == 4);
    let report =
        Command::new(env!("CARGO_BIN_EXE_writebench")).args(["report", json.to_str().unwrap()]).output().unwrap();
    assert!(report.status.success() && text(&report.stdout).contains("Per rank"), "{}", text(&report.stderr));
    let compare = Command::new(env!("CARGO_BIN_EXE_writebench"))
        .args(["compare", json.to_str().unwrap(), json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(compare.status.success(), "{}", text(&compare.stderr));
    assert_eq!(entries(dir.path()), Vec::<String>::new(), "the scratch directory is gone");
}

#[test]
fn the_shared_file_layout_writes_every_byte_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    // Not a multiple of the chunk: the last rank's last call is short.
    let size = (3 << 20) + 12345;
    let output = run_mpi(
        3,
        dir.path(),
        &[
            "--methods",
            "pwrite",
            "--states",
            "prealloc",
            "--chunks",
            "64KiB",
            "--size",
            &format!("{size}B"),
            "--layout",
            "shared-file",
            "--threads",
            "2",
            "--durability",
            "end",
            "--repeat",
            "1",
            "--warmup",
            "0",
            "--verify",
            "--keep",
            "--export-json",
            json.to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "{}\n{}", text(&output.stdout), text(&output.stderr));
    let result = read_json(&json);
    let case = &result["cases"][0];
    assert_eq!(case["status"], "ok", "{}", case["error"]);
    assert_eq!((case["ranks"].as_u64(), case["threads"].as_u64(), case["files"].as_u64()), (Some(3), Some(2), Some(1)));
    let bytes: Vec<u64> =
        case["runs"][0]["ranks"].as_array().unwrap().iter().map(|r| r["bytes"].as_u64().unwrap()).collect();
    assert_eq!(bytes.iter().sum::<u64>(), size, "{bytes:?}");
    // One kept file, written by 6 writers in 3 processes: read back, every byte is the
    // stream's (a range nobody wrote would read as the preallocated zeros).
    let scratch = entries(dir.path());
    assert_eq!(scratch.len(), 1, "{scratch:?}");
    let kept = dir.path().join(&scratch[0]);
    let files: Vec<String> = entries(&kept).into_iter().filter(|name| name.ends_with(".dat")).collect();
    assert_eq!(files, ["case0000-run0-f0.dat"]);
    let mut whole = case.clone();
    // The stream of a shared file has the period of all its writers (6 here).
    whole["threads"] = serde_json::json!(6);
    let data = assert_file_holds_its_stream(
        &Source::new(result["options"]["seed"].as_u64().unwrap()),
        &kept,
        &whole,
        &files[0],
    );
    assert_eq!(data.len() as u64, size);
    std::fs::remove_dir_all(kept).unwrap();
}

#[test]
fn a_rank_killed_mid_run_ends_the_job_at_once_and_leaves_no_scratch_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = mpirun();
    command.arg("2").arg(env!("CARGO_BIN_EXE_writebench"));
    command.args(["run", "--mpi", dir.path().to_str().unwrap()]);
    // Long enough to be killed mid-run: 4 KiB calls, many runs.
    command.args(["--methods", "pwrite", "--states", "prealloc", "--chunks", "4KiB", "--size", "64MiB"]);
    command.args(["--layout", "shared-file", "--threads", "1", "--durability", "none", "--repeat", "1000"]);
    let mut job = command.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    wait_until_writing(&mut job, dir.path());
    let ranks = children_running_writebench(job.id());
    assert_eq!(ranks.len(), 2, "{ranks:?}");
    // SAFETY: kill(2) of a rank this test started.
    assert_eq!(unsafe { libc::kill(ranks[1], libc::SIGKILL) }, 0);
    let killed = Instant::now();
    let stderr = failed_within_20_s(&mut job, "a rank died");
    assert!(killed.elapsed() < Duration::from_secs(10), "ended {:?} after the kill", killed.elapsed());
    // The surviving rank's signal handler removed the shared scratch directory.
    assert_eq!(entries(dir.path()), Vec::<String>::new(), "{stderr}");
}

/// Waits up to 20 s for the job to end after `why`, asserts that it failed, and gives
/// its stderr.
fn failed_within_20_s(job: &mut std::process::Child, why: &str) -> String {
    let status = common::ended_within(job, Duration::from_secs(20), why);
    let mut stderr = String::new();
    std::io::Read::read_to_string(job.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(!status.success(), "{stderr}");
    stderr
}

/// Waits until the job's ranks are writing: a run's file is in a scratch directory in `dir`.
fn wait_until_writing(job: &mut std::process::Child, dir: &Path) {
    let started = Instant::now();
    let writing =
        || entries(dir).iter().any(|scratch| entries(&dir.join(scratch)).iter().any(|name| name.contains("-run")));
    while !writing() {
        assert!(started.elapsed() < Duration::from_secs(60), "the ranks never started writing");
        assert!(job.try_wait().unwrap().is_none(), "the job ended before it was killed");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Where no rank's signal handler can run (SIGKILL; Open MPI's own abort ends a rank with
/// `_exit`), each rank's watcher removes its node-local scratch directory.
#[test]
fn ranks_killed_where_no_handler_runs_still_leave_no_node_local_scratch_directory() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = mpirun();
    command.arg("2").arg(env!("CARGO_BIN_EXE_writebench"));
    command.args(["run", "--mpi", dir.path().to_str().unwrap(), "--mpi-local"]);
    command.args(["--methods", "pwrite", "--states", "prealloc", "--chunks", "4KiB", "--size", "64MiB"]);
    command.args(["--layout", "file-per-rank", "--threads", "1", "--durability", "none", "--repeat", "1000"]);
    let mut job = command.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    wait_until_writing(&mut job, dir.path());
    let ranks = children_running_writebench(job.id());
    assert_eq!(ranks.len(), 2, "{ranks:?}");
    assert_eq!(entries(dir.path()).len(), 2, "each rank has a directory of its own");
    for rank in ranks {
        // SAFETY: kill(2) of a rank this test started.
        assert_eq!(unsafe { libc::kill(rank, libc::SIGKILL) }, 0);
    }
    let stderr = failed_within_20_s(&mut job, "both ranks died");
    let ended = Instant::now();
    while !entries(dir.path()).is_empty() && ended.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(entries(dir.path()), Vec::<String>::new(), "10 s after the job ended: {stderr}");
}

/// The processes whose parent is `parent` and that run writebench: mpirun's ranks.
fn children_running_writebench(parent: u32) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else { continue };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Field 4, after the command in parentheses, is the parent's pid.
        let ppid = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if ppid == Some(parent) && String::from_utf8_lossy(&cmdline).contains("writebench") {
            found.push(pid);
        }
    }
    found.sort_unstable();
    found
}

/// A CPU-bandwidth group of the kernel's cpu controller of our own, which lets its
/// processes run `percent` % of one CPU at most, whatever else the machine runs; removed
/// when dropped. The machine's own settings are untouched: the group is a new leaf
/// (cgroup v1's cpu hierarchy, or v2 where the root hands the cpu controller down).
struct CpuQuota(std::path::PathBuf);

impl CpuQuota {
    fn new(percent: u64) -> CpuQuota {
        let name = format!("writebench-test-{}", std::process::id());
        let v1 = Path::new("/sys/fs/cgroup/cpu");
        let v2_control = std::fs::read_to_string("/sys/fs/cgroup/cgroup.subtree_control").unwrap_or_default();
        let period = 20_000;
        let quota = period * percent / 100;
        if v1.join("cpu.cfs_quota_us").exists() {
            let dir = v1.join(name);
            std::fs::create_dir(&dir).expect("a cpu cgroup of our own (as root)");
            std::fs::write(dir.join("cpu.cfs_period_us"), period.to_string()).unwrap();
            std::fs::write(dir.join("cpu.cfs_quota_us"), quota.to_string()).unwrap();
            CpuQuota(dir)
        } else if v2_control.split_whitespace().any(|c| c == "cpu") {
            let dir = Path::new("/sys/fs/cgroup").join(name);
            std::fs::create_dir(&dir).expect("a cgroup of our own (as root)");
            std::fs::write(dir.join("cpu.max"), format!("{quota} {period}")).unwrap();
            CpuQuota(dir)
        } else {
            panic!("this test needs the kernel's cpu controller (cgroup v1's /sys/fs/cgroup/cpu, or cpu in v2's root)")
        }
    }

    /// `sh -c` words that put the shell into the group, then exec the rest in its place.
    fn enter(&self) -> [String; 3] {
        let procs = self.0.join("cgroup.procs");
        ["sh".into(), "-c".into(), format!("echo $$ > {} && exec \"$0\" \"$@\"", procs.display())]
    }
}

impl Drop for CpuQuota {
    fn drop(&mut self) {
        // Empty once the job has ended; its processes may take a moment to be reaped.
        for _ in 0..100 {
            if std::fs::remove_dir(&self.0).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

/// Rank 1 runs in a group capped at a fifth of one CPU; rank 0 is not held back. The
/// test makes its own slow rank: pinning rank 1 beside a busy loop on CPU 0 assumed
/// CPU 1 free for rank 0, and failed while another test ran there. At most 20 % of a
/// CPU, rank 1 writes well under 0.8 of rank 0's bytes unless rank 0 gets less than a
/// quarter of a CPU, which two cores shared with another busy program still give.
#[test]
fn under_stonewall_a_slowed_rank_writes_fewer_bytes_and_the_job_figure_is_what_all_wrote() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let slow = CpuQuota::new(20);
    let bin = env!("CARGO_BIN_EXE_writebench");
    let args = [
        "run",
        "--mpi",
        // The stonewall's note on the ranks' bytes is the table's.
        "--table",
        dir.path().to_str().unwrap(),
        "--methods",
        "pwrite",
        "--states",
        "sparse",
        "--chunks",
        "1MiB",
        "--size",
        "4GiB",
        "--layout",
        "file-per-rank",
        "--threads",
        "1",
        "--durability",
        "end",
        "--budget",
        "none",
        "--repeat",
        "3",
        "--stonewall",
        "200ms",
        "--export-json",
        json.to_str().unwrap(),
    ];
    let mut command = mpirun();
    command.args(["1", "--bind-to", "none", bin]).args(args);
    command.args([":", "-np", "1"]).args(slow.enter()).arg(bin).args(args);
    let output = command.output().expect("mpirun runs");
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", text(&output.stderr));
    let result = read_json(&json);
    let case = &result["cases"][0];
    assert_eq!(case["status"], "ok", "{}", case["error"]);
    let mut shares = Vec::new();
    let mut rates = Vec::new();
    for run in case["runs"].as_array().unwrap() {
        let ranks: Vec<u64> = run["ranks"].as_array().unwrap().iter().map(|r| r["bytes"].as_u64().unwrap()).collect();
        let wall = &run["stonewall"];
        assert_eq!(wall["bytes"].as_u64().unwrap(), ranks.iter().sum::<u64>(), "{run}");
        assert_eq!(wall["stopped"], 2, "both ranks stopped at the wall: {wall}");
        shares.push(ranks[1] as f64 / ranks[0] as f64);
        rates.push(wall["bytes"].as_f64().unwrap() / run["write_seconds"].as_f64().unwrap());
    }
    shares.sort_by(f64::total_cmp);
    assert!(shares[1] < 0.8, "the slowed rank wrote {shares:?} of the other's bytes");
    // The job's figure: every rank's bytes over the earliest start to the latest end.
    rates.sort_by(f64::total_cmp);
    let median = case["stats"]["median"].as_f64().unwrap();
    assert!((median / rates[1] - 1.0).abs() < 1e-9, "{median} against {rates:?}");
    let words = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("the ranks' bytes") && words.contains("rank 1 the least"), "{stdout}");
    assert!(words.contains("by the wall") && words.contains("slowest: rank 1"), "{stdout}");
}
