//! The crash recorder and the built-in workloads (docs/crash.md) on real parts: its FUSE
//! file written directly, and real ext4 and xfs on a loop device over it.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::process::Command;

use super::{LAB_NAMES, Loop, Mounted, crash_command, leftovers_of, run};

use writebench::crash::recorder::{Entry, Pace, Recorder};

fn flushes(entries: &[Entry]) -> usize {
    entries.iter().filter(|e| **e == Entry::Flush).count()
}

#[test]
fn writes_zeroes_and_syncs_of_the_image_arrive_in_the_log_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let recorder = Recorder::start(dir.path(), 1 << 20).expect("the recorder mounts (root and /dev/fuse needed)");
    let image = OpenOptions::new().read(true).write(true).open(recorder.image_path()).unwrap();
    assert_eq!(image.metadata().unwrap().len(), 1 << 20);

    image.write_all_at(&[b'a'; 4096], 0).unwrap();
    image.write_all_at(&[b'b'; 100], 5000).unwrap();
    image.sync_all().unwrap();
    image.write_all_at(&[b'c'; 10], 8192).unwrap();
    image.sync_data().unwrap();
    // A punched hole, as loop sends a discard.
    let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
    // SAFETY: fallocate on a descriptor this test owns.
    assert_eq!(unsafe { libc::fallocate(image.as_raw_fd(), mode, 0, 2048) }, 0);
    drop(image);

    let expected = vec![
        Entry::Write { offset: 0, data: vec![b'a'; 4096] },
        Entry::Write { offset: 5000, data: vec![b'b'; 100] },
        Entry::Flush,
        Entry::Write { offset: 8192, data: vec![b'c'; 10] },
        Entry::Flush,
        Entry::Zero { offset: 0, len: 2048 },
    ];
    assert_eq!(recorder.entries(0), expected, "every write, flush and zeroing, in order; a close is no flush");
    assert_eq!(recorder.position(), expected.len());
    let held = recorder.image();
    assert_eq!(held.read(0, 4096), [vec![0; 2048], vec![b'a'; 2048]].concat());
    assert_eq!(held.read(5000, 100), vec![b'b'; 100]);
    let mut back = vec![0; 10];
    File::open(recorder.image_path()).unwrap().read_exact_at(&mut back, 8192).unwrap();
    assert_eq!(back, [b'c'; 10]);
    recorder.stop().unwrap();
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none(), "unmounted: the directory is empty again");
}

/// `--device slow`: from `start_log` on, each write and flush is answered no sooner than
/// its drawn delay (a lower bound, which a busy machine only lengthens), the delays are
/// drawn from the seed, and the log holds the same records as a fast device's.
#[test]
fn a_slow_recorder_answers_each_write_and_flush_after_its_delay() {
    let dir = tempfile::tempdir().unwrap();
    let recorder = Recorder::start(dir.path(), 1 << 20).expect("the recorder mounts (root and /dev/fuse needed)");
    let image = OpenOptions::new().read(true).write(true).open(recorder.image_path()).unwrap();
    image.write_all_at(&[b's'; 4096], 0).unwrap();
    let pace = Pace::Slow { seed: 7 };
    recorder.start_log(pace);
    let delays: Vec<std::time::Duration> = pace.delays().take(60).collect();
    assert!(delays.iter().all(|d| *d <= writebench::crash::recorder::SLOW_DELAY), "{delays:?}");
    assert!(delays.windows(2).any(|w| w[0] != w[1]), "drawn, not one constant: {delays:?}");
    assert_eq!(delays, pace.delays().take(60).collect::<Vec<_>>(), "the same seed, the same delays");
    let started = std::time::Instant::now();
    for n in 0..30u64 {
        image.write_all_at(&[n as u8; 4096], n * 4096).unwrap();
        image.sync_data().unwrap();
    }
    let took = started.elapsed();
    let owed: std::time::Duration = delays.iter().sum();
    assert!(took >= owed, "60 answers took {took:?}, less than their delays' {owed:?}");
    let entries = recorder.entries(0);
    assert_eq!(entries.len(), 60, "30 writes and 30 flushes, nothing of the set-up: {}", entries.len());
    assert_eq!(entries[58], Entry::Write { offset: 29 * 4096, data: vec![29; 4096] });
    assert_eq!(entries[59], Entry::Flush);
    assert!(Pace::Fast.delays().take(10).all(|d| d.is_zero()));
    drop(image);
    recorder.stop().unwrap();
}

/// ext4 on a loop device over the recorder's image: what it writes reaches the log, and
/// so do its flushes, on syncfs and fsync; mounted `barrier=0`, it sends none.
#[test]
fn ext4_on_a_loop_device_over_the_image_sends_its_writes_and_flushes() {
    let dir = tempfile::tempdir().unwrap();
    let served = dir.path().join("served");
    let mounted = dir.path().join("mounted");
    std::fs::create_dir_all(&served).unwrap();
    std::fs::create_dir_all(&mounted).unwrap();
    let recorder = Recorder::start(&served, 64 << 20).expect("the recorder mounts");
    let flushed_with = |options: &str| {
        let device = Loop::over(&recorder.image_path());
        // No lazy initialisation: it would write and flush in the background, later.
        run("mkfs.ext4", &["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", &device.0]);
        let mount = Mounted::of(&device.0, &mounted, options);
        let pattern: Vec<u8> = (0..1u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
        let before = recorder.position();
        std::fs::write(mount.0.join("data"), &pattern).unwrap();
        let file = File::open(mount.0.join("data")).unwrap();
        // SAFETY: syncfs on a descriptor this test owns (sync -f, not a global sync).
        assert_eq!(unsafe { libc::syncfs(file.as_raw_fd()) }, 0);
        let after_syncfs = recorder.entries(before);
        let written = after_syncfs
            .iter()
            .any(|e| matches!(e, Entry::Write { data, .. } if data.windows(4096).any(|w| w == &pattern[..4096])));
        assert!(written, "the file's data reached the device ({} records)", after_syncfs.len());
        let before_fsync = recorder.position();
        let other = OpenOptions::new().create(true).truncate(true).write(true).open(mount.0.join("other")).unwrap();
        other.write_all_at(b"committed", 0).unwrap();
        other.sync_all().unwrap();
        let after_fsync = recorder.entries(before_fsync);
        drop((file, other, mount, device));
        (flushes(&after_syncfs), flushes(&after_fsync))
    };
    let (syncfs, fsync) = flushed_with("rw");
    assert!(syncfs >= 1 && fsync >= 1, "ext4's journal commits flush: {syncfs} on syncfs, {fsync} on fsync");
    let (syncfs, fsync) = flushed_with("barrier=0");
    assert_eq!((syncfs, fsync), (0, 0), "barrier=0: no flush reaches the device");
    recorder.stop().unwrap();
}

/// The expectations, on real ext4 and xfs: fsync-based workloads and `replace`
/// keep their promises on ext4's defaults in every state (100 and more); `barrier=0`
/// makes `end` break its promise (fsync returns without a flush); `replace-unsafe`
/// breaks on xfs or on ext4 without `auto_da_alloc` (the rename is committed before the
/// data), while `replace` never does where flushes are sent. And nothing is left behind.
#[test]
fn ext4_keeps_fsync_promises_barrier_0_breaks_them_and_unsafe_replace_breaks_on_xfs() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("crash.json");
    let markdown = dir.path().join("crash.md");
    let html = dir.path().join("crash.html");
    let output = crash_command(&[
        "--fs",
        "ext4,xfs",
        "--mount-opt",
        "ext4=defaults",
        "--mount-opt",
        "ext4=barrier=0",
        "--mount-opt",
        "ext4=noauto_da_alloc",
        "--export-json",
        json.to_str().unwrap(),
        "--export-markdown",
        markdown.to_str().unwrap(),
        "--export-html",
        html.to_str().unwrap(),
    ])
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let pid = output.id();
    let output = output.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}\n{stdout}");
    assert_eq!(leftovers_of(pid), Vec::<String>::new());
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(report["schema"], "writebench.crash.v1");
    let entries = report["crash"].as_array().unwrap();
    assert_eq!(entries.len(), 4 * 18, "four configurations × every workload");
    let find = |fs: &str, options: &str, workload: &str| {
        entries
            .iter()
            .find(|e| e["fs"] == fs && e["mount_options"] == options && e["workload"] == workload)
            .unwrap_or_else(|| panic!("{fs} {options} {workload} in the JSON"))
    };
    let count = |e: &serde_json::Value, field: &str| e[field].as_u64().unwrap();
    let mut kept = 0;
    for entry in entries.iter().filter(|e| e["fs"] == "ext4" && e["mount_options"] == "") {
        if entry["workload"] == "replace-unsafe" || entry.get("refused").is_some() {
            continue;
        }
        assert_eq!(count(entry, "broken"), 0, "ext4 keeps {}: {entry}", entry["workload"]);
        assert!(count(entry, "flushes") > 0, "{entry}");
        kept += count(entry, "states");
    }
    assert!(kept >= 100, "{kept} states checked on ext4's defaults");
    let end = find("ext4", "barrier=0", "end");
    assert!(count(end, "broken") >= 1 && count(end, "flushes") == 0, "{end}");
    // Among its findings (a state that did not mount, corrupt, comes first).
    let examples = end["examples"].as_array().unwrap();
    assert!(examples.iter().any(|e| e.as_str().unwrap().contains("the fsync at the end returned, but data")), "{end}");
    let unsafe_broken = count(find("xfs", "", "replace-unsafe"), "broken")
        + count(find("ext4", "noauto_da_alloc", "replace-unsafe"), "broken");
    assert!(unsafe_broken >= 1, "replace-unsafe breaks on xfs or ext4 noauto_da_alloc");
    for (fs, options) in [("ext4", ""), ("ext4", "noauto_da_alloc"), ("xfs", "")] {
        for workload in ["replace", "replace-tmpfile"] {
            let entry = find(fs, options, workload);
            assert!(count(entry, "states") > 0 && count(entry, "broken") == 0, "{entry}");
        }
    }
    // The table and its verdicts on the terminal, and the same in the files.
    assert!(stdout.contains("ext4 (defaults): no broken promise found in"), "{stdout}");
    assert!(stdout.contains("ext4 (barrier=0): promises broken by"), "{stdout}");
    assert!(std::fs::read_to_string(&markdown).unwrap().contains("| ext4 | barrier=0 | end |"));
    assert!(std::fs::read_to_string(&html).unwrap().contains("<tr class=\"broken\">"));
    assert!(stderr.contains("[72/72]"), "progress on stderr: {stderr}");
}

/// `--show-log` on ext4 and xfs: a write of the last save's data is named by the file it
/// belongs to at the end (its temporary file was renamed over `settings.json`), the
/// journal's writes as the journal; and every state's "after flush K of N (log record R)"
/// is the log's line R, "flush K".
#[test]
fn the_log_names_the_file_of_each_block_and_its_flush_numbers_are_the_states() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("crash.json");
    let output = crash_command(&["--fs", "ext4,xfs", "--workloads", "replace", "--show-log"])
        .args(["--export-json", json.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}\n{stdout}", String::from_utf8_lossy(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    for entry in report["crash"].as_array().unwrap() {
        let log: Vec<&str> = entry["log"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
        let fs = entry["fs"].as_str().unwrap();
        let shown = log.join("\n");
        assert_eq!(log[0], "each block named by what it belongs to as the recording ended", "{fs}:\n{shown}");
        assert!(
            log.iter().any(|l| l.contains(": save 3's content (settings.json)")),
            "{fs}: a write of the saved data named by its file:\n{shown}"
        );
        assert!(log.iter().any(|l| l.ends_with(": journal")), "{fs}: the journal's writes:\n{shown}");
        assert!(!log.iter().any(|l| l.contains("metadata or journal")), "{fs}: every block named:\n{shown}");
        let states = entry["all_states"].as_array().unwrap();
        let mut labelled = 0;
        for state in states {
            let words = state["state"].as_str().unwrap();
            let Some(rest) = words.split("after flush ").nth(1) else { continue };
            let flush: usize = rest.split(' ').next().unwrap().parse().unwrap();
            let record: usize = rest.split("(log record ").nth(1).unwrap().split(')').next().unwrap().parse().unwrap();
            let line = format!("{record:>6}  flush {flush}");
            assert!(log.contains(&line.as_str()), "{fs}: {words}: no line \"{line}\" in\n{shown}");
            labelled += 1;
        }
        assert!(labelled > 0, "{fs}: states after a flush: {states:?}");
    }
    assert!(stdout.contains("log of ext4 (defaults) replace:") && stdout.contains("log of xfs (defaults) replace:"));
}

/// Waits until the child's stderr says a recording was checked, then returns it (and the
/// rest of stderr, read on by a thread).
fn first_progress(child: &mut std::process::Child) -> std::thread::JoinHandle<String> {
    use std::io::{BufRead, BufReader};
    let mut reader = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        assert!(reader.read_line(&mut line).unwrap() > 0, "ended before any progress: {seen}");
        seen.push_str(&line);
        if line.starts_with("[1/") {
            break;
        }
    }
    std::thread::spawn(move || {
        let mut rest = seen;
        let _ = std::io::Read::read_to_string(&mut reader, &mut rest);
        rest
    })
}

#[test]
fn sigint_tears_everything_down_and_says_what_was_done() {
    let mut child = crash_command(&["--fs", "ext4", "--states", "400"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let stderr = first_progress(&mut child);
    // SAFETY: kill of our own child.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    let stderr = stderr.join().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stdout.contains("interrupted: the entries above are those done before it"), "{stdout}");
    assert_eq!(leftovers_of(pid), Vec::<String>::new());
}

/// After SIGKILL nothing can tear down: the recorder's FUSE mount, the filesystem on the
/// loop device over it and the state image stay; `writebench clean` finds and removes
/// them once the process is gone.
#[test]
fn after_sigkill_clean_removes_the_recorder_the_loop_device_and_the_mounts() {
    let mut child = crash_command(&["--fs", "ext4", "--states", "400", "--workloads", "odsync,append+odsync,osync"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let _turn = LAB_NAMES.lock().unwrap_or_else(|p| p.into_inner());
    let pid = child.id();
    let stderr = first_progress(&mut child);
    // Into a later recording: stopped (SIGSTOP) while its filesystem is mounted on the
    // recorder, then killed, so that the recorder's mount is surely among what is left.
    let recording = || leftovers_of(pid).iter().any(|l| l.contains("-mnt/rec") && l.contains(" fuse "));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        assert!(std::time::Instant::now() < deadline, "the recorder never mounted: {:?}", leftovers_of(pid));
        if recording() {
            // SAFETY: signals to our own child.
            unsafe { libc::kill(pid as i32, libc::SIGSTOP) };
            std::thread::sleep(std::time::Duration::from_millis(20));
            if recording() {
                break;
            }
            // SAFETY: as above.
            unsafe { libc::kill(pid as i32, libc::SIGCONT) };
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    drop(stderr.join());
    let left = leftovers_of(pid);
    assert!(left.iter().any(|l| l.contains("fuse")), "the recorder is left mounted: {left:?}");
    let clean = Command::new(env!("CARGO_BIN_EXE_writebench")).args(["clean", "/tmp", "--yes"]).output().unwrap();
    let said = String::from_utf8_lossy(&clean.stdout);
    assert!(clean.status.success(), "{said}{}", String::from_utf8_lossy(&clean.stderr));
    assert!(said.contains(&format!("mount /dev/shm/writebench-lab-{pid}-mnt/rec")), "{said}");
    assert_eq!(leftovers_of(pid), Vec::<String>::new(), "{said}{}", String::from_utf8_lossy(&clean.stderr));
}

#[test]
fn crash_needs_root_and_says_so_in_one_line() {
    let output = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", env!("CARGO_BIN_EXE_writebench"), "crash"])
        .current_dir("/")
        .output()
        .expect("setpriv (util-linux) is needed for this test");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("writebench: crash needs root"), "{stderr}");
}

/// The checker runs on each state: a clean image passes it, an image whose group
/// descriptors were overwritten does not, and its complaint is kept.
#[test]
fn a_state_with_broken_metadata_is_reported_by_the_checker() {
    use writebench::crash::filesystems;
    use writebench::crash::image::Image;
    use writebench::crash::replay::Replayer;
    use writebench::lab::names::Names;
    let _turn = LAB_NAMES.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let file = dir.path().join("ext4.img");
    File::create(&file).unwrap().set_len(64 << 20).unwrap();
    run("mkfs.ext4", &["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", file.to_str().unwrap()]);
    let bytes = std::fs::read(&file).unwrap();
    let mut image = Image::new(bytes.len() as u64);
    for (n, page) in bytes.chunks(4096).enumerate() {
        if page.iter().any(|&b| b != 0) {
            image.write(n as u64 * 4096, page);
        }
    }
    let names = Names::this_process();
    let root = names.mount_root();
    std::fs::create_dir_all(names.mount_point("crash-state")).unwrap();
    let ext4 = filesystems::by_name("ext4").unwrap();
    let replayer = Replayer::new(ext4, "", names);
    let nothing_promised = |_: &std::path::Path| Ok(writebench::crash::replay::Judged::default());
    let clean = replayer.check(&image, &nothing_promised);
    let mut broken = image.clone();
    broken.write(4096, &[0xa5; 4096]);
    let corrupt = replayer.check(&broken, &nothing_promised);
    let _ = std::fs::remove_file(&replayer.image);
    let _ = std::fs::remove_dir(names.mount_point("crash-state"));
    let _ = std::fs::remove_dir(&root);
    assert_eq!(
        clean.unwrap(),
        writebench::crash::replay::Outcome {
            repair: None,
            broken: None,
            failed: None,
            corrupt: false,
            key: None,
            promises: Vec::new()
        }
    );
    let corrupt = corrupt.unwrap();
    assert!(corrupt.repair.as_deref().is_some_and(|r| r.contains("e2fsck")), "{corrupt:?}");
    let said = corrupt.repair.unwrap();
    eprintln!("the checker said: {said}");
    assert!(!said.contains("no message"), "{said}");
}

/// `run --crash-check` on a filesystem of its own (ext4 on a loop device, mounted
/// `noauto_da_alloc`): the crash checks of the durable modes measured are in the result,
/// checked with the target's mount options; the durable recommendation says what they
/// found, and `report` says it again; the Markdown report has the table.
#[test]
fn run_with_crash_check_puts_the_checks_in_the_result_and_the_answer() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let image = dir.path().join("ext4.img");
    File::create(&image).unwrap().set_len(256 << 20).unwrap();
    let device = Loop::over(&image);
    run("mkfs.ext4", &["-q", "-F", &device.0]);
    let target = dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let mounted = Mounted::of(&device.0, &target, "noauto_da_alloc");
    let json = dir.path().join("result.json");
    let markdown = dir.path().join("result.md");
    let output = Command::new(env!("CARGO_BIN_EXE_writebench"))
        .args(["run", target.to_str().unwrap(), "--crash-check", "--methods", "pwrite", "--chunks", "1MiB"])
        .args(["--durability", "none,end,odsync", "--states", "empty", "--threads", "1", "--size", "4MiB"])
        .args(["--repeat", "3", "--no-calibrate", "--export-json", json.to_str().unwrap()])
        .args(["--export-markdown", markdown.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}\n{stdout}", String::from_utf8_lossy(&output.stderr));
    let result: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let crash = result["crash"].as_array().expect("a crash list in the result");
    let workloads: Vec<&str> = crash.iter().map(|c| c["workload"].as_str().unwrap()).collect();
    assert_eq!(workloads, ["end", "odsync"], "the durable modes measured, once each");
    for check in crash {
        assert_eq!(check["fs"], "ext4");
        assert!(check["mount_options"].as_str().unwrap().contains("noauto_da_alloc"), "{check}");
        assert!(check["states"].as_u64().unwrap() > 0 && check["broken"] == 0, "{check}");
    }
    let durable = result["answer"].as_array().unwrap().iter().find(|r| r["goal"] == "durable-at-end").unwrap();
    assert!(durable["text"].as_str().unwrap().contains("; crash-checked on ext4 ("), "{durable}");
    assert_eq!(durable["crash_checked"]["broken"], 0);
    assert!(stdout.contains("crash-checked: "), "{stdout}");
    assert!(std::fs::read_to_string(&markdown).unwrap().contains("## Crash checks"));
    let report =
        Command::new(env!("CARGO_BIN_EXE_writebench")).args(["report", json.to_str().unwrap()]).output().unwrap();
    assert!(String::from_utf8_lossy(&report.stdout).contains("crash-checked: "));
    drop(mounted);
    drop(device);
}

#[test]
fn crash_check_of_a_tmpfs_is_refused_in_one_line_before_anything_is_measured() {
    let output = Command::new(env!("CARGO_BIN_EXE_writebench"))
        .args(["run", "/dev/shm", "--crash-check", "--methods", "pwrite"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        "writebench: --crash-check checks ext4, xfs and btrfs; /dev/shm is on tmpfs: a sync there makes nothing durable"
    );
    assert!(output.stdout.is_empty());
}
