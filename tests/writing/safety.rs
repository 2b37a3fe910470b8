//! docs/design.md §6: writebench touches nothing but its own scratch directory, removes it on
//! signals, refuses runs that cannot fit, and leaves what a killed run left behind to
//! `writebench clean`, which asks first.

use crate::common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{LoopFs, Tmpfs, entries, read_json, stderr_of, writebench};

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_writebench"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the writebench binary starts")
}

/// Waits until the child's scratch directory appears in `dir` and returns it.
fn scratch_in(dir: &Path, child: &Child) -> PathBuf {
    let deadline = Instant::now() + Duration::from_secs(20);
    let prefix = format!(".writebench-{}-", child.id());
    loop {
        if let Some(name) = entries(dir).into_iter().find(|n| n.starts_with(&prefix)) {
            return dir.join(name);
        }
        assert!(Instant::now() < deadline, "no scratch directory appeared in {}", dir.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn send(child: &Child, signal: i32) {
    // SAFETY: kill(2) on our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
}

/// A long run: far more work than any of the delays below.
const LONG: &[&str] =
    &["--size", "256MiB", "--methods", "write,pwrite", "--states", "empty", "--chunks", "4KiB", "--repeat", "200"];

/// A user's file and a symlink next to where writebench works.
fn plant_user_data(dir: &Path) -> (PathBuf, Vec<u8>) {
    let precious = dir.join("precious.txt");
    let content = b"the user's data\n".repeat(100);
    std::fs::write(&precious, &content).unwrap();
    std::os::unix::fs::symlink(&precious, dir.join("link-to-precious")).unwrap();
    (precious, content)
}

fn assert_user_data_intact(dir: &Path, precious: &Path, content: &[u8]) {
    assert_eq!(std::fs::read(precious).unwrap(), content);
    assert_eq!(std::fs::read_link(dir.join("link-to-precious")).unwrap(), precious);
}

#[test]
fn signals_mid_case_remove_the_scratch_directory_and_exit_128_plus_the_signal() {
    for (signal, delay_ms, code) in [
        (libc::SIGINT, 50, 130),
        (libc::SIGTERM, 400, 143),
        (libc::SIGINT, 1500, 130),
        (libc::SIGTERM, 2500, 143),
        (libc::SIGHUP, 800, 129),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let json = out.path().join("r.json");
        let (precious, content) = plant_user_data(dir.path());
        let mut args = vec!["run", dir.path().to_str().unwrap(), "--export-json", json.to_str().unwrap()];
        args.extend_from_slice(LONG);
        let child = spawn(&args);
        scratch_in(dir.path(), &child);
        std::thread::sleep(Duration::from_millis(delay_ms));
        send(&child, signal);
        let output = child.wait_with_output().unwrap();
        let stderr = stderr_of(&output);
        assert_eq!(output.status.code(), Some(code), "signal {signal} after {delay_ms} ms: {stderr}");
        assert!(stderr.contains("interrupted by"), "{stderr}");
        assert_eq!(entries(dir.path()), vec!["link-to-precious", "precious.txt"], "after {delay_ms} ms");
        assert_user_data_intact(dir.path(), &precious, &content);
        // An interrupted run writes no result file: not half a file, not a temporary one.
        assert_eq!(entries(out.path()), Vec::<String>::new(), "after {delay_ms} ms: {stderr}");
    }
}

#[test]
fn sigbus_during_a_mapped_write_removes_the_scratch_directory_and_exits_135() {
    // A real SIGBUS needs a file system that fills between mmap's space check and the
    // fault; this sends the signal instead, while mmap cases write (with 2 threads the
    // kernel may deliver it on a writer thread: the handler must work there too).
    for threads in ["1", "2"] {
        let dir = tempfile::tempdir().unwrap();
        let (precious, content) = plant_user_data(dir.path());
        let child = spawn(&[
            "run",
            dir.path().to_str().unwrap(),
            "--methods",
            "mmap,mmap-maps",
            "--states",
            "empty,sparse",
            "--chunks",
            "4KiB",
            "--size",
            "128MiB",
            "--threads",
            threads,
            "--repeat",
            "100",
        ]);
        scratch_in(dir.path(), &child);
        std::thread::sleep(Duration::from_millis(700));
        send(&child, libc::SIGBUS);
        let output = child.wait_with_output().unwrap();
        let stderr = stderr_of(&output);
        assert_eq!(output.status.code(), Some(135), "{threads} threads: {stderr}");
        assert!(stderr.contains("SIGBUS"), "{stderr}");
        assert_eq!(entries(dir.path()), vec!["link-to-precious", "precious.txt"], "{threads} threads");
        assert_user_data_intact(dir.path(), &precious, &content);
    }
}

#[test]
fn a_second_ctrl_c_exits_at_once_and_still_removes_the_scratch_directory() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["run", dir.path().to_str().unwrap()];
    args.extend_from_slice(LONG);
    let child = spawn(&args);
    scratch_in(dir.path(), &child);
    std::thread::sleep(Duration::from_millis(300));
    send(&child, libc::SIGINT);
    send(&child, libc::SIGINT);
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", stderr_of(&output));
    assert_eq!(entries(dir.path()), Vec::<String>::new());
}

#[test]
fn a_killed_runs_leftovers_are_listed_by_clean_and_removed_only_when_confirmed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    let (precious, content) = plant_user_data(dir.path());
    // Someone else's directory with a similar name, and one of ours that is in use.
    std::fs::create_dir(dir.path().join(".writebench-notapid-1")).unwrap();
    let mut args = vec!["run", path];
    args.extend_from_slice(LONG);
    let mut child = spawn(&args);
    let leftover = scratch_in(dir.path(), &child);
    std::thread::sleep(Duration::from_millis(500));
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    child.wait().unwrap();
    assert!(leftover.is_dir());

    // No terminal, no --yes: listed on stdout, nothing removed, exit 2 with one line.
    let listed = writebench(&["clean", path]);
    let stderr = stderr_of(&listed);
    assert_eq!(listed.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("none removed") && stderr.contains("--yes"), "{stderr}");
    let stdout = String::from_utf8_lossy(&listed.stdout);
    assert!(stdout.contains(leftover.to_str().unwrap()), "{stdout}");
    assert!(!stdout.contains("notapid"), "{stdout}");
    assert!(leftover.is_dir(), "never removed without confirmation");

    let removed = writebench(&["clean", path, "--yes"]);
    assert_eq!(removed.status.code(), Some(0), "{}", stderr_of(&removed));
    assert!(!leftover.exists());
    assert_eq!(entries(dir.path()), vec![".writebench-notapid-1", "link-to-precious", "precious.txt"]);
    assert_user_data_intact(dir.path(), &precious, &content);

    let nothing = writebench(&["clean", path]);
    assert_eq!(nothing.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&nothing.stdout).contains("no stale scratch"));
}

#[test]
fn a_symlink_planted_in_the_scratch_directory_during_a_run_is_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let (precious, content) = plant_user_data(dir.path());
    let child = spawn(&[
        "run",
        dir.path().to_str().unwrap(),
        "--size",
        "8MiB",
        "--methods",
        "write,pwrite,mmap",
        "--states",
        // Sized: a map cannot extend an empty file.
        "sparse,overwrite",
        "--chunks",
        "64KiB",
        "--durability",
        "end",
        "--repeat",
        "20",
        "--warmup",
        "0",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    let scratch = scratch_in(dir.path(), &child);
    // Links under the names later runs of cases 1, 2 and 5 will create (the run is still
    // probing the target when its scratch directory appears), and one of its own.
    let planted = ["case0001-run3-f0.dat", "case0002-run5-f0.dat", "case0005-run19-f0.dat", "planted"];
    for name in planted {
        std::os::unix::fs::symlink(&precious, scratch.join(name)).unwrap_or_else(|e| panic!("plant {name}: {e}"));
    }
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    assert_user_data_intact(dir.path(), &precious, &content);
    assert_eq!(entries(dir.path()), vec!["link-to-precious", "precious.txt"], "{}", stderr_of(&output));
    // The links were met, not followed: those cases failed at the name; the rest ran.
    let cases = read_json(&json)["cases"].as_array().unwrap().clone();
    assert_eq!(cases.len(), 14, "mmap 1 and 2 threads, write 1 and 2 files, pwrite 1, 2 and 2 files; 2 states");
    for (index, case) in cases.iter().enumerate() {
        if [1, 2, 5].contains(&index) {
            assert_eq!(case["status"], "failed", "{}", case["id"]);
            let error = case["error"].as_str().unwrap();
            assert!(error.contains(&format!("case{index:04}-run")) && error.contains("File exists"), "{error}");
        } else {
            assert_eq!(case["status"], "ok", "{}: {}", case["id"], case["error"]);
        }
    }
}

#[test]
fn a_run_that_cannot_fit_is_refused_up_front() {
    let tmpfs = Tmpfs::mount("16m");
    let output = writebench(&["run", tmpfs.path().to_str().unwrap(), "--size", "64MiB"]);
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--size 64 MiB does not fit") && stderr.contains("is free"), "{stderr}");
    assert_eq!(entries(&tmpfs.path()), Vec::<String>::new());
}

#[test]
fn a_case_that_fills_the_disk_fails_with_enospc_and_the_others_complete() {
    // The full suite scaled to 40 MiB has 40 MiB cases (benchmarkIOWrite's) and 15.3 MiB
    // ones (the IO Playground's); with a test file taking space, only the 40 MiB case cannot fit. The
    // free-space check would refuse the run; the hidden --no-space-check lets it meet ENOSPC.
    let fs = LoopFs::make("ext4", 48);
    let filler = fs.path().join("filler");
    let filler_content = vec![0x5au8; 12 << 20];
    std::fs::write(&filler, &filler_content).unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let output = writebench(&[
        "run",
        fs.path().to_str().unwrap(),
        "--suite",
        "seed",
        "--size",
        "40MiB",
        "--methods",
        "write,io_uring",
        "--threads",
        "1",
        "--qd",
        "1",
        "--chunks",
        "1MiB",
        "--states",
        "empty",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--no-space-check",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr_of(&output));
    let cases = read_json(&json)["cases"].as_array().unwrap().clone();
    let summary: Vec<_> = cases.iter().map(|c| (c["bytes"].as_u64().unwrap(), c["status"].clone())).collect();
    // write 15.26 MiB, write 40 MiB, io_uring 15.26 MiB: the second fills the disk.
    assert_eq!(cases.len(), 3, "{summary:?}");
    assert_eq!(cases[1]["bytes"], 40 << 20);
    assert_eq!(cases[1]["status"], "failed", "{summary:?}");
    assert!(cases[1]["error"].as_str().unwrap().contains("No space left on device"), "{}", cases[1]["error"]);
    for case in [&cases[0], &cases[2]] {
        assert_eq!(case["status"], "ok", "{summary:?}");
    }
    assert_eq!(entries(&fs.path()), vec!["filler", "lost+found"], "no file left behind");
    assert_eq!(std::fs::read(&filler).unwrap(), filler_content);
}

#[test]
fn a_read_only_mount_is_one_line_and_exit_2() {
    let fs = LoopFs::make("ext4", 16);
    let status = Command::new("mount").args(["-o", "remount,ro"]).arg(fs.path()).status().unwrap();
    assert!(status.success());
    let output = writebench(&["run", fs.path().to_str().unwrap(), "--size", "1MiB"]);
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("read-only file system"), "{stderr}");
}

#[test]
fn a_file_size_limit_fails_the_case_with_efbig_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    // A cache of its own: the calibration under the limit fails, and must not be kept
    // for the next hour's runs on this filesystem.
    let cache = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_writebench"));
    command.env("XDG_CACHE_HOME", cache.path());
    command.args([
        "run",
        dir.path().to_str().unwrap(),
        "--recalibrate",
        "--size",
        "4MiB",
        "--methods",
        "write,pwritev,io_uring",
        "--threads",
        "1",
        "--states",
        "empty",
        "--chunks",
        "64KiB",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    // SAFETY: setrlimit between fork and exec; writebench ignores SIGXFSZ itself.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit { rlim_cur: 2 << 20, rlim_max: 2 << 20 };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(1), "nothing fits under the limit: {}", stderr_of(&output));
    let cases = read_json(&json)["cases"].as_array().unwrap().clone();
    assert!(cases.len() >= 3);
    for case in &cases {
        assert_eq!(case["status"], "failed", "{}", case["id"]);
        assert!(case["error"].as_str().unwrap().contains("File too large"), "{}", case["error"]);
    }
    assert_eq!(entries(dir.path()), Vec::<String>::new());
    let stderr = stderr_of(&output);
    assert!(stderr.contains("the calibration is not kept for the next run"), "{stderr}");
    let kept = cache.path().join("writebench/calibration");
    assert!(!kept.exists() || entries(&kept).is_empty(), "a failed calibration was kept: {:?}", entries(&kept));
}
