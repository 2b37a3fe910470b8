//! The user's own program under the crash check (`crash --run CMD --check CMD`,
//! docs/crash.md): its lines stamped as promises where the device's log was, the
//! checker's environment, a checker that crashes, the time limits, the teardown, bad
//! input, and the examples that ship (`examples/crash/`) on ext4 and xfs.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::Value;

use super::{crash_command, leftovers_of};

/// What a `crash --run` call left.
struct Checked {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// The JSON export (Null when none was written).
    json: Value,
    pid: u32,
}

impl Checked {
    fn entries(&self) -> &Vec<Value> {
        self.json["crash"].as_array().unwrap_or_else(|| panic!("entries in the JSON: {}", self.stderr))
    }

    fn entry(&self, fs: &str) -> &Value {
        let found = self.entries().iter().find(|e| e["fs"] == fs);
        found.unwrap_or_else(|| panic!("{fs} in {}\n{}", self.json, self.stderr))
    }
}

fn count(entry: &Value, field: &str) -> u64 {
    entry[field].as_u64().unwrap_or(0)
}

/// `writebench crash --run RUN --check CHECK ARGS --export-json`, from /; `--linger 0`
/// unless ARGS say otherwise (what the kernel writes after the program exits is tested
/// on its own, for CI's time).
fn crash_run(run: &str, check: &str, args: &[&str]) -> Checked {
    let linger: &[&str] = if args.contains(&"--linger") { &[] } else { &["--linger", "0"] };
    crash_run_lingering(run, check, &[linger, args].concat())
}

/// [`crash_run`] with `--linger` as ARGS say, by default its default.
fn crash_run_lingering(run: &str, check: &str, args: &[&str]) -> Checked {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("crash.json");
    let child = crash_command(&["--run", run, "--check", check, "--export-json", json.to_str().unwrap()])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let output = child.wait_with_output().unwrap();
    let json = std::fs::read(&json).ok().map_or(Value::Null, |bytes| serde_json::from_slice(&bytes).unwrap());
    Checked {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        json,
        pid,
    }
}

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/crash").join(name)
}

/// A file in the test's temporary directory, out of the recorded filesystem, where a
/// command notes what it saw.
fn note(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

/// A `sleep` command no other test runs (its argument names this test process and
/// `base`), so that [`still_running`] finds this one only.
fn unique_sleep(base: u32) -> String {
    let pid = std::process::id();
    format!("sleep {}.{pid}", base + pid % 1000)
}

fn still_running(command: &str) -> bool {
    let found = std::process::Command::new("pgrep").args(["-f", command]).output().expect("pgrep (procps)");
    !found.stdout.is_empty()
}

/// Waits (up to 30 s) until the program has made `started`.
fn wait_until_started(started: &Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !started.exists() {
        assert!(std::time::Instant::now() < deadline, "the program never started");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// A program that makes a file durable (fsync of the file and of the directory) and
/// then says so, three times; a checker that notes its environment and what it sees,
/// then checks the promised files. On ext4's defaults nothing is broken; the k-th line sits
/// after at least k flushes in the log; the checker sees its promises as said before
/// the power went, runs in the recovered filesystem's root, and neither the program nor the
/// checker can see the recorder's images.
#[test]
fn promises_sit_after_their_flush_and_the_checker_sees_its_environment() {
    let out = tempfile::tempdir().unwrap();
    let saw = note(out.path(), "program-saw");
    let log = note(out.path(), "checker.log");
    let run = format!(
        "d=$(dirname \"$WB_CRASH_DIR\"); ls -A $d/rec*/ | wc -l > {saw}; pwd >> {saw}; echo \"$WB_CRASH_DIR\" >> {saw}; \
         ls -d $d/rec* | wc -l >> {saw}; \
         for i in 1 2 3; do echo $i > f$i; sync f$i; sync .; echo \"wrote f$i\"; done"
    );
    let check = format!(
        "echo \"$WB_CRASH_STATE|$WB_CRASH_PROMISE|$(wc -l < \"$WB_CRASH_PROMISES\")|$(tail -n 1 \"$WB_CRASH_PROMISES\")\
         |$PWD|$WB_CRASH_DIR|$(wc -c < ${{WB_CRASH_DIR%-mnt/*}}-crash-state-0.img)\" >> {log}; \
         while read -r word file; do [ \"$(cat $file 2>/dev/null)\" = \"${{file#f}}\" ] || {{ echo \"$file lost\"; exit 1; }}; \
         done < \"$WB_CRASH_PROMISES\""
    );
    let checked = crash_run(&run, &check, &["--fs", "ext4", "--states", "40", "--show-log"]);
    assert_eq!(checked.code, Some(0), "{}\n{}", checked.stderr, checked.stdout);
    assert_eq!(leftovers_of(checked.pid), Vec::<String>::new());
    let entry = checked.entry("ext4");
    assert_eq!(entry["workload"], "run");
    assert_eq!(entry["command"], run.as_str());
    assert_eq!(entry["check_command"], check.as_str());
    assert_eq!(entry["program_exit"], "exit status 0");
    assert_eq!(count(entry, "promises"), 3, "{entry}");
    assert_eq!(count(entry, "broken"), 0, "{entry}");
    assert_eq!(count(entry, "checker_failed"), 0, "{entry}");

    // The program ran in the filesystem's root and saw nothing of the recorder.
    let saw = std::fs::read_to_string(out.path().join("program-saw")).unwrap();
    let saw: Vec<&str> = saw.lines().collect();
    assert_eq!(saw[0], "0", "the recorder's directory is empty to the program");
    assert_eq!(saw[3], "1", "and it is there (writebench's own, named by its pid in WB_CRASH_DIR)");
    assert!(saw[1].ends_with("/crash-ext4") && saw[1] == saw[2], "{saw:?}");

    // The k-th line said sits after at least k flushes: each was said after its own
    // fsync returned, so it cannot be stamped before that fsync's flush. A line is
    // stamped when writebench reads it, which on a busy machine can be after the next
    // file's flushes too (it is then judged in fewer states, never in more), so the
    // count is a floor, not "one flush between two lines".
    let lines: Vec<&str> = entry["log"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    let mut flushes = 0;
    let mut said = 0;
    for line in &lines {
        if line.contains("<- the program said \"wrote f") {
            said += 1;
            assert!(flushes >= said, "promise {said} after only {flushes} flushes:\n{}", lines.join("\n"));
        } else if line.contains(" flush ") {
            flushes += 1;
        }
    }
    assert_eq!(said, 3, "{}", lines.join("\n"));
    // Each file's block is named by the file (ext4, the log named from the image at the end).
    for file in ["f1", "f2", "f3"] {
        let named = |l: &&str| l.contains(" write ") && l.rsplit(": ").next().unwrap().split(", ").any(|w| w == file);
        assert!(lines.iter().any(named), "{file}'s data:\n{}", lines.join("\n"));
    }

    // The checker ran once per state, in the recovered filesystem's root, with the
    // promises said before the power went, and could not read the state's image.
    let seen = std::fs::read_to_string(out.path().join("checker.log")).unwrap();
    let seen: Vec<Vec<&str>> = seen.lines().map(|l| l.split('|').collect()).collect();
    assert_eq!(seen.len() as u64, count(entry, "states"), "{seen:?}");
    for fields in &seen {
        let [state, last, made, tail, pwd, dir, image] = fields[..] else { panic!("{fields:?}") };
        assert!(state.starts_with("after flush ") || state.starts_with("before the first flush"), "{state}");
        assert_eq!(last, tail, "WB_CRASH_PROMISE is the last line of WB_CRASH_PROMISES");
        let made: usize = made.trim().parse().unwrap();
        assert_eq!(last.is_empty(), made == 0, "{fields:?}");
        assert!(pwd.ends_with("/crash-state") && pwd == dir, "{fields:?}");
        assert_eq!(image.trim(), "0", "the state's image is hidden from the checker");
    }
    assert!(seen.iter().any(|f| f[1].is_empty()), "a state before any promise");
    assert!(seen.iter().any(|f| f[1] == "wrote f3"), "a state after the last promise");
}

/// Without a sync, what a program says it wrote is lost: the checker's words are the
/// example's, with the last promise made; a checker that crashes is reported as such and
/// counted neither kept nor broken.
#[test]
fn a_broken_promise_is_told_in_the_checker_s_words_and_a_crashing_checker_is_no_verdict() {
    let run = "for i in 1 2 3; do echo $i > f$i; echo \"wrote f$i\"; done";
    let check = "n=$(wc -l < \"$WB_CRASH_PROMISES\"); found=$(ls f* 2>/dev/null | wc -l); \
                 [ $found -ge $n ] || { echo \"$found files, $n promised\"; exit 1; }";
    let checked = crash_run(run, check, &["--fs", "ext4"]);
    assert_eq!(checked.code, Some(0), "{}", checked.stderr);
    let entry = checked.entry("ext4");
    assert!(count(entry, "broken") >= 1, "{entry}");
    let example = entry["examples"][0].as_str().unwrap();
    assert!(example.starts_with("power lost "), "{example}");
    assert!(example.contains("after \"wrote f3\", the checker said: 0 files, 3 promised"), "{example}");
    assert!(checked.stdout.contains("the program's promises broken in"), "{}", checked.stdout);

    let synced = "for i in 1 2 3; do echo $i > f$i; sync f$i; echo \"wrote f$i\"; done";
    let crashing = crash_run(synced, "kill -SEGV $$", &["--fs", "ext4", "--states", "3"]);
    let entry = crashing.entry("ext4");
    assert_eq!(count(entry, "broken"), 0, "{entry}");
    assert_eq!(count(entry, "states"), 3, "{entry}");
    assert_eq!(count(entry, "checker_failed"), 3, "{entry}");
    assert!(entry["checker_failure"].as_str().unwrap().contains("killed by signal 11"), "{entry}");
    assert!(crashing.stdout.contains("your checker could not judge any of the 3 states"), "{}", crashing.stdout);
    assert_eq!(crashing.code, Some(1), "no state could be judged: {}", crashing.stderr);
    assert_eq!(leftovers_of(crashing.pid), Vec::<String>::new());
}

/// A program past --timeout, a command not found and a checker past --check-timeout:
/// one clear line (a checker's in the table), exit status 1, nothing left behind, and
/// no wait for what the program left running.
#[test]
fn time_limits_a_missing_command_and_a_background_writer_leave_nothing_behind() {
    let slow = crash_run("echo started; sleep 30", "true", &["--fs", "ext4", "--timeout", "1s"]);
    assert_eq!(slow.code, Some(1), "{}", slow.stderr);
    let error: Vec<&str> = slow.stderr.lines().filter(|l| l.starts_with("writebench: ")).collect();
    assert_eq!(error.len(), 1, "{}", slow.stderr);
    assert!(error[0].contains("the program did not finish within 1 s (--timeout), after 1 promises"), "{}", error[0]);
    assert!(slow.stdout.is_empty(), "no table without a recording: {}", slow.stdout);
    assert_eq!(leftovers_of(slow.pid), Vec::<String>::new());

    let missing = crash_run("no-such-program-of-writebench --flag", "true", &["--fs", "ext4"]);
    assert_eq!(missing.code, Some(1), "{}", missing.stderr);
    let error: Vec<&str> = missing.stderr.lines().filter(|l| l.starts_with("writebench: ")).collect();
    assert_eq!(error.len(), 1, "{}", missing.stderr);
    assert!(error[0].contains("the program ended with exit status 127 before its first promise"), "{}", error[0]);
    assert!(error[0].contains("not found"), "{}", error[0]);
    assert_eq!(leftovers_of(missing.pid), Vec::<String>::new());

    // A writer left running in the background holds the filesystem; the check ends it.
    let sleep = unique_sleep(300);
    let run = format!("setsid {sleep} & echo started");
    let checked = crash_run(&run, "sleep 30", &["--fs", "ext4", "--states", "2", "--check-timeout", "300ms"]);
    assert_eq!(checked.code, Some(1), "no state judged: {}", checked.stderr);
    let entry = checked.entry("ext4");
    assert!(count(entry, "states") >= 1 && count(entry, "checker_failed") == count(entry, "states"), "{entry}");
    assert!(entry["checker_failure"].as_str().unwrap().contains("did not finish within 0.3 s"), "{entry}");
    assert_eq!(checked.json["complete"], false, "nothing judged is not a complete check");
    assert!(
        checked.stdout.contains("not complete: your checker judged none of the states on ext4"),
        "{}",
        checked.stdout
    );
    assert_eq!(leftovers_of(checked.pid), Vec::<String>::new());
    assert!(!still_running(&sleep), "the background writer was ended");
}

#[test]
fn bad_options_are_refused_in_one_line() {
    for (args, expected) in [
        (vec!["--run", "true"], "were not provided: --check <CMD>"),
        (vec!["--run", "true", "--check", "true", "--workloads", "end"], "--workloads"),
        (vec!["--run", "true", "--check", "true", "--timeout", "soon"], "invalid duration 'soon'"),
        (vec!["--run", " ", "--check", "true"], "--run needs a command"),
    ] {
        let mut full = vec!["crash"];
        full.extend(args);
        super::common::assert_usage_error(&full, expected);
    }
}

/// The examples that ship, run as a user would: the save by rename without syncs is
/// caught on xfs (whose rename reaches the device before the data); with its syncs it
/// never is, on ext4 or xfs; the append-only log with fdatasync keeps its records.
#[test]
fn the_save_by_rename_and_log_examples_as_shipped() {
    let run = |args: &str| format!("sh {} {args}", example("save-by-rename.sh").display());
    let check = format!("sh {}", example("save-by-rename-check.sh").display());
    let unsafe_save = crash_run(&run("nosync"), &check, &["--fs", "xfs", "--states", "60"]);
    assert_eq!(unsafe_save.code, Some(0), "{}", unsafe_save.stderr);
    let xfs = unsafe_save.entry("xfs");
    assert!(count(xfs, "broken") >= 1, "the unsynced save is caught on xfs: {xfs}");
    eprintln!("save by rename without syncs on xfs: {}", xfs["examples"][0]);

    let safe = crash_run(&run("sync"), &check, &["--fs", "ext4,xfs", "--states", "60"]);
    assert_eq!(safe.code, Some(0), "{}", safe.stderr);
    for fs in ["ext4", "xfs"] {
        let entry = safe.entry(fs);
        assert!(count(entry, "states") >= 20 && count(entry, "broken") == 0, "{entry}");
        assert_eq!(count(entry, "promises"), 7, "save 0 to save 6: {entry}");
    }

    let log = crash_run(
        &format!("python3 {}", example("append-log.py").display()),
        &format!("python3 {}", example("append-log-check.py").display()),
        &["--fs", "ext4,xfs", "--states", "60"],
    );
    assert_eq!(log.code, Some(0), "{}", log.stderr);
    for fs in ["ext4", "xfs"] {
        let entry = log.entry(fs);
        assert!(count(entry, "broken") == 0 && count(entry, "promises") == 12, "{entry}");
    }
}

/// `--device slow` opens a window a fast device hides (docs/crash.md, "A slow device"):
/// the checkpoint that takes writeback started by `sync_file_range` in another thread for
/// durability keeps every page on the fast device, whose writeback of its 2000 pages ends
/// well within the second the program gives it, and loses pages on the slow one, where
/// the same writeback needs at least the sum of 2000 drawn delays (about 3 s) and the
/// commit's flush passes it. The same program, the same filesystem, the same seed.
#[test]
fn a_slow_device_shows_a_commit_passing_the_writeback_a_fast_one_finishes() {
    let run = format!("python3 {}", example("range-sync.py").display());
    let check = format!("python3 {}", example("range-sync-check.py").display());
    let on = |device: &str| {
        let checked = crash_run(&run, &check, &["--fs", "ext4", "--states", "30", "--device", device]);
        assert_eq!(checked.code, Some(0), "{device}: {}", checked.stderr);
        let entry = checked.entry("ext4").clone();
        assert_eq!(entry["device"], device, "{entry}");
        assert_eq!(count(&entry, "promises"), 1, "{device}: {entry}");
        assert!(count(&entry, "states") >= 10, "{device}: {entry}");
        entry
    };
    let fast = on("fast");
    assert_eq!(count(&fast, "broken"), 0, "the fast device wrote every page before the commit's flush: {fast}");
    let slow = on("slow");
    assert!(count(&slow, "broken") >= 1, "the slow device's commit passed the writeback: {slow}");
    let reason = slow["examples"][0].to_string();
    assert!(reason.contains("the checkpoint was committed, but"), "{reason}");
    eprintln!("the checkpoint on a slow device: {reason}");
}

/// The slow device's queue holds four requests, the fast one's what a loop device holds
/// by default (128): read by the program from its own filesystem's device. The loop
/// device keeps the setting after it is detached, so the teardown puts its own back.
#[test]
fn the_slow_device_takes_four_requests_at_a_time_and_gives_the_loop_device_back_as_it_was() {
    let out = tempfile::tempdir().unwrap();
    for (device, expected) in [("slow", "4"), ("fast", "128")] {
        let noted = note(out.path(), device);
        let run = format!(
            "name=$(basename $(findmnt -n -o SOURCE --target .)); \
             echo $name $(cat /sys/block/$name/queue/nr_requests) > {noted}; echo read"
        );
        let checked = crash_run(&run, "true", &["--fs", "ext4", "--states", "2", "--device", device]);
        assert_eq!(checked.code, Some(0), "{device}: {}", checked.stderr);
        let seen = std::fs::read_to_string(&noted).unwrap_or_else(|e| panic!("{device}: {e}\n{}", checked.stderr));
        let (name, depth) = seen.trim().split_once(' ').unwrap_or_else(|| panic!("{seen:?}"));
        assert_eq!(depth, expected, "{device}");
        let block = Path::new("/sys/block").join(name);
        // Unless another test has taken the device since (then it is theirs to set).
        if !block.join("loop/backing_file").exists() {
            let after = std::fs::read_to_string(block.join("queue/nr_requests")).unwrap();
            assert_eq!(after.trim(), "128", "{name} after the {device} recording");
        }
    }
}

/// SQLite from Python, one row per commit: `synchronous=OFF` loses promised rows on ext4;
/// `FULL` in WAL mode and `EXTRA` with the rollback journal keep every promised row on
/// ext4 and xfs (docs/crash.md has what each setting does).
#[test]
fn sqlite_loses_rows_without_syncs_and_keeps_them_with_full_wal_and_extra_rollback() {
    let run = |args: &str| format!("python3 {} {args}", example("sqlite-commit.py").display());
    let check = format!("python3 {}", example("sqlite-check.py").display());
    let off = crash_run(&run("delete off"), &check, &["--fs", "ext4", "--states", "40"]);
    assert_eq!(off.code, Some(0), "{}", off.stderr);
    let ext4 = off.entry("ext4");
    assert!(count(ext4, "broken") >= 1, "synchronous=OFF loses promised rows: {ext4}");
    eprintln!("synchronous=OFF on ext4: {}", ext4["examples"][0]);
    for setting in ["wal full", "delete extra"] {
        let kept = crash_run(&run(setting), &check, &["--fs", "ext4,xfs", "--states", "80"]);
        assert_eq!(kept.code, Some(0), "{setting}: {}", kept.stderr);
        for fs in ["ext4", "xfs"] {
            let entry = kept.entry(fs);
            assert!(count(entry, "states") >= 40, "{setting} {entry}");
            assert_eq!(count(entry, "broken"), 0, "{setting} keeps every promised row on {fs}: {entry}");
            assert_eq!(count(entry, "promises"), 16, "{entry}");
        }
    }
}

/// After SIGKILL nothing can tear down, but the program writebench was checking dies with
/// it, daemons included (its PID namespace ends with writebench): within a second no
/// process of it is left; `writebench clean` then removes the mounts, loop devices and
/// files as for the built-in workloads.
#[test]
fn after_sigkill_the_program_dies_with_writebench_and_clean_removes_the_rest() {
    let out = tempfile::tempdir().unwrap();
    let started = out.path().join("started");
    let (sleep, daemon) = (unique_sleep(600), unique_sleep(700));
    let run = format!("echo begun > data; sync data; setsid {daemon} & touch {}; {sleep}", started.display());
    // The turn first: the program must still be running when it is killed.
    let _turn = super::LAB_NAMES.lock().unwrap_or_else(|p| p.into_inner());
    let mut child = crash_command(&["--run", &run, "--check", "true", "--fs", "ext4", "--timeout", "5m"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    wait_until_started(&started);
    assert!(still_running(&sleep) && still_running(&daemon), "the program and its daemon run");
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    while (still_running(&sleep) || still_running(&daemon)) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(!still_running(&sleep), "the program died with writebench");
    assert!(!still_running(&daemon), "and the daemon it started");
    assert!(!leftovers_of(pid).is_empty(), "SIGKILL left the mounts for clean");
    let clean =
        std::process::Command::new(env!("CARGO_BIN_EXE_writebench")).args(["clean", "/tmp", "--yes"]).output().unwrap();
    let said = String::from_utf8_lossy(&clean.stdout);
    assert!(clean.status.success(), "{said}{}", String::from_utf8_lossy(&clean.stderr));
    assert_eq!(leftovers_of(pid), Vec::<String>::new(), "{said}{}", String::from_utf8_lossy(&clean.stderr));
}

/// SIGINT while the program runs: it is ended with whatever it started, everything is
/// torn down, and writebench says so and ends with 128 + 2.
#[test]
fn sigint_while_the_program_runs_ends_it_and_tears_everything_down() {
    let out = tempfile::tempdir().unwrap();
    let started = out.path().join("started");
    let sleep = unique_sleep(900);
    let run = format!("({sleep}) & touch {}; wait", started.display());
    let child = crash_command(&["--run", &run, "--check", "true", "--fs", "ext4", "--timeout", "5m"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    wait_until_started(&started);
    // SAFETY: kill of our own child.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted by SIGINT"), "{stderr}");
    assert_eq!(leftovers_of(pid), Vec::<String>::new());
    assert!(!still_running(&sleep), "what the program started was ended");
}

/// `--linger`: the recording goes on after the program exits, so what the kernel then
/// writes by itself is recorded and has crash states of its own. ext4 mounted
/// `commit=1` commits the new file's inode and name a second after; with `--linger 0`
/// nothing after the exit is recorded. SIGINT while it lingers ends the check at once.
#[test]
fn the_recording_lingers_after_the_program_exits() {
    let run = "head -c 65536 /dev/urandom > data; echo written";
    let args = ["--fs", "ext4", "--mount-opt", "ext4=commit=1", "--states", "40"];
    let lingered = crash_run(run, "true", &[&args[..], &["--linger", "6s"]].concat());
    assert_eq!(lingered.code, Some(0), "{}", lingered.stderr);
    assert!(lingered.stderr.contains("recording 6.00 s after each ends (--linger)"), "{}", lingered.stderr);
    let entry = lingered.entry("ext4");
    assert_eq!(entry["linger_seconds"], 6.0);
    let last = entry["last_write_after_end"].as_f64().unwrap_or_else(|| panic!("nothing after the exit: {entry}"));
    assert!(last > 0.0 && last < 6.0, "{entry}");
    let at_once = crash_run(run, "true", &args);
    let entry_at_once = at_once.entry("ext4");
    assert!(entry_at_once.get("last_write_after_end").is_none(), "{entry_at_once}");
    assert!(count(entry, "writes") > count(entry_at_once, "writes"), "{entry}\n{entry_at_once}");

    let child = crash_command(&["--run", run, "--check", "true", "--fs", "ext4", "--linger", "10m"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    std::thread::sleep(std::time::Duration::from_secs(3));
    // SAFETY: kill of our own child.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert_eq!(leftovers_of(pid), Vec::<String>::new());
}

/// Every distinct finding is told, not only the first: a checker that says two different
/// things (one corrupt, exit status 2; one a lost promise, with a number that differs
/// from state to state) gives two findings, the corrupt one first, with their counts; the
/// JSON holds every state.
#[test]
fn each_distinct_finding_is_told_with_its_count_corrupt_first() {
    let run = "echo x > a; sync a; echo one; echo y > b; sync b; echo two";
    let check = r#"if [ -e b ]; then echo "b is there at $(date +%N)"; exit 1; else echo "b missing"; exit 2; fi"#;
    let checked = crash_run(run, check, &["--fs", "ext4", "--show-states"]);
    assert_eq!(checked.code, Some(0), "{}", checked.stderr);
    let entry = checked.entry("ext4");
    let every = checked.stdout.lines().skip_while(|l| !l.starts_with("every state of ext4 (defaults)"));
    assert_eq!(
        every.skip(1).take_while(|l| l.starts_with("  ")).count() as u64,
        count(entry, "states"),
        "{}",
        checked.stdout
    );
    let findings = entry["findings"].as_array().unwrap();
    let shown: Vec<(&str, &str)> =
        findings.iter().map(|f| (f["kind"].as_str().unwrap(), f["pattern"].as_str().unwrap())).collect();
    assert_eq!(shown, [("corrupt", "b missing"), ("lost", "b is there at N")], "{entry}");
    let grouped: u64 = findings.iter().map(|f| f["states"].as_u64().unwrap()).sum();
    assert_eq!(grouped, count(entry, "broken"), "{entry}");
    let all = entry["all_states"].as_array().unwrap();
    assert_eq!(all.len() as u64, count(entry, "states"));
    assert!(all.iter().any(|s| s["found"] == "corrupt") && all.iter().any(|s| s["found"] == "lost"), "{entry}");
    assert!(checked.stdout.contains("2 distinct findings in"), "{}", checked.stdout);
    assert!(checked.stdout.contains("  - corrupt, in "), "{}", checked.stdout);
}

/// git's defaults, a program that exits right after its last commit: recorded as a
/// machine that keeps running (the default `--linger`), ext4's journal commits the new
/// objects' names before the kernel writes their data back, and the states between hold
/// empty object files (the well-known loose-object corruption), a finding of its own
/// listed first; recorded only until the
/// exit (`--linger 0`) the commits are lost, but nothing shows a corrupt repository.
#[test]
fn git_leaves_a_corrupt_repository_only_a_machine_that_keeps_running_shows() {
    let run = format!("sh {}", example("git-commit.sh").display());
    let check = format!("sh {}", example("git-check.sh").display());
    let lingered = crash_run_lingering(&run, &check, &["--fs", "ext4"]);
    assert_eq!(lingered.code, Some(0), "{}", lingered.stderr);
    let entry = lingered.entry("ext4");
    assert_eq!(entry["linger_seconds"], 40.0, "the default");
    let first = &entry["findings"][0];
    assert_eq!(first["kind"], "corrupt", "{entry}");
    let words = first["first"].as_str().unwrap();
    assert!(words.contains("error: object file .git/objects/") && words.ends_with(" is empty"), "{first}");
    assert_eq!(first["pattern"], "error: object file */*/*/* is empty");
    let at_once = crash_run(&run, &check, &["--fs", "ext4"]);
    let entry = at_once.entry("ext4");
    let findings = entry["findings"].as_array().unwrap();
    assert!(count(entry, "broken") > 0 && findings.iter().all(|f| f["kind"] == "lost"), "{entry}");
}

/// Promises that cannot be confused with the program's other output: with
/// `--promise-prefix` only the lines that start with it are promises; a program that
/// writes its promises to `WB_CRASH_PROMISE_FD` is judged on those lines alone.
#[test]
fn only_the_program_s_promises_are_promises() {
    let check = r#"case "$WB_CRASH_PROMISE" in "") ;; *"a written") [ -s a ] || { echo "a empty"; exit 1; } ;; *) echo "judged on: $WB_CRASH_PROMISE"; exit 1 ;; esac"#;
    let prefixed = "echo Initialized; echo x > a; sync a; echo 'promise: a written'; echo OK";
    let with_prefix = crash_run(prefixed, check, &["--fs", "ext4", "--promise-prefix", "promise:"]);
    assert_eq!(with_prefix.code, Some(0), "{}", with_prefix.stderr);
    let entry = with_prefix.entry("ext4");
    assert_eq!((count(entry, "promises"), count(entry, "broken")), (1, 0), "{entry}");
    let without = crash_run(prefixed, check, &["--fs", "ext4"]);
    let entry = without.entry("ext4");
    assert_eq!(count(entry, "promises"), 3, "every line, without the prefix: {entry}");
    assert!(count(entry, "broken") > 0, "judged on \"OK\": {entry}");

    let on_fd = r#"echo Initialized; echo x > a; sync a; echo 'a written' >&"$WB_CRASH_PROMISE_FD"; echo OK"#;
    let checked = crash_run(on_fd, check, &["--fs", "ext4"]);
    assert_eq!(checked.code, Some(0), "{}", checked.stderr);
    let entry = checked.entry("ext4");
    assert_eq!((count(entry, "promises"), count(entry, "broken")), (1, 0), "{entry}");
}

/// Promises counted as a reader counts them: which ones each filesystem lost, not ratios
/// of states (which differ with how often each flushed). The save by rename without
/// syncs keeps its promises on ext4's defaults and not on xfs; a program that never
/// syncs loses every promise on each.
#[test]
fn the_promises_each_filesystem_lost_are_named() {
    let run = format!("sh {} nosync", example("save-by-rename.sh").display());
    let check = format!("sh {}", example("save-by-rename-check.sh").display());
    let saves = crash_run(&run, &check, &["--fs", "ext4,xfs", "--states", "60"]);
    assert_eq!(saves.code, Some(0), "{}", saves.stderr);
    let lost = |checked: &Checked, fs: &str| -> Vec<String> {
        let entry = checked.entry(fs);
        entry["promises_broken"].as_array().unwrap().iter().map(|p| p.as_str().unwrap().to_string()).collect()
    };
    assert_eq!(lost(&saves, "ext4"), Vec::<String>::new());
    assert!(!lost(&saves, "xfs").is_empty(), "{}", saves.entry("xfs"));
    // The verdicts wrap at 100 columns, continued two spaces in.
    let unwrapped = |text: &str| text.replace("\n  ", " ");
    let said = unwrapped(&saves.stdout);
    assert!(said.contains("Promises lost, by filesystem: ext4 (defaults): none; xfs (defaults): \""), "{said}");

    let never = "for i in 1 2 3; do echo $i > f$i; echo \"file $i\"; done";
    let check = r#"n=${WB_CRASH_PROMISE#file }; [ -z "$WB_CRASH_PROMISE" ] && exit 0; for i in $(seq 1 $n); do [ -s f$i ] || { echo "f$i missing, $n promised"; exit 1; }; done"#;
    let unsynced = crash_run(never, check, &["--fs", "ext4,xfs"]);
    assert_eq!(unsynced.code, Some(0), "{}", unsynced.stderr);
    for fs in ["ext4", "xfs"] {
        assert_eq!(lost(&unsynced, fs), ["file 1", "file 2", "file 3"], "{}", unsynced.entry(fs));
    }
    let said = unwrapped(&unsynced.stdout);
    assert!(said.contains("promises ever broken: 3 of 3 (\"file 1\", \"file 2\", \"file 3\")"), "{said}");
}
