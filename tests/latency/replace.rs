//! `writebench latency --patterns replace,replace-tmpfile,replace-unsafe`: crash-safe
//! saves of a whole file. strace shows each save's calls in their order; on ext4 over a
//! loop device every save pattern and size gives its percentiles, and the unsafe one is
//! said to be not durable in the JSON, the table and the observations.

use crate::common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{LoopFs, assert_usage_error, entries, read_json, stderr_of, strace, writebench};

/// What a traced call does to the save, or `None` for the calls around the saves.
fn event(line: &str) -> Option<&'static str> {
    if !line.contains(".writebench-") {
        return None;
    }
    // `-y` names each descriptor: `fsync(3</p/.writebench-1-ab>)` is the directory.
    let named = line.split_once('<').and_then(|(_, rest)| rest.split_once('>')).map_or("", |(path, _)| path);
    let directory = named.rsplit('/').next().is_some_and(|last| last.starts_with(".writebench-"));
    let temp = named.contains("-f1.dat") || named.contains("/#");
    let call = line.split('(').next().unwrap_or("");
    match call {
        "openat" if line.contains("O_TMPFILE") => Some("open O_TMPFILE"),
        "openat" if line.contains("-f1.dat\"") && line.contains("O_CREAT") => Some("create temp"),
        "write" | "pwrite64" if temp => Some("write temp"),
        "fsync" | "fdatasync" if directory => Some("fsync dir"),
        "fsync" | "fdatasync" if temp => Some("fsync temp"),
        "fsync" | "fdatasync" => Some("fsync other"),
        "linkat" => Some("linkat"),
        "rename" | "renameat" | "renameat2" => Some("rename onto target"),
        _ => None,
    }
}

/// The calls of one pattern's saves, from the first save's first call on.
fn traced_saves(pattern: &str, saves: usize) -> Vec<&'static str> {
    let dir = tempfile::tempdir().unwrap();
    let count = (saves - 1).to_string();
    let argv = ["latency", dir.path().to_str().unwrap(), "--patterns", pattern, "--bytes", "4KiB"];
    let (calls, output) = strace(
        "openat,write,pwrite64,fsync,fdatasync,rename,renameat,renameat2,linkat",
        // One loop: its saves one after another, then its removal.
        &[&argv[..], &["--count", &count, "--warmup", "1", "--repeat", "1"]].concat(),
    );
    assert!(output.status.success(), "{pattern}: {}", stderr_of(&output));
    let events: Vec<&'static str> = calls.iter().filter_map(|c| event(&c.line)).collect();
    // The first save starts at its new file (the O_TMPFILE probe before it writes nothing).
    let start = (0..events.len())
        .find(|&i| {
            (events[i] == "create temp" || events[i] == "open O_TMPFILE") && events.get(i + 1) == Some(&"write temp")
        })
        .unwrap_or_else(|| panic!("{pattern}: no save in {events:?}"));
    events[start..].to_vec()
}

fn assert_saves(pattern: &str, one_save: &[&str]) {
    let saves = 4;
    let events = traced_saves(pattern, saves);
    let expected: Vec<&str> = one_save.iter().copied().cycle().take(one_save.len() * saves).collect();
    assert!(events.len() >= expected.len(), "{pattern}: {events:?}");
    assert_eq!(events[..expected.len()], expected[..], "{pattern}: every save's calls in order");
    // After the last save: the target is read back, removed, the removal committed.
    let after = &events[expected.len()..];
    assert!(after.iter().all(|e| *e == "fsync dir" || *e == "fsync other"), "{pattern}: after the saves {after:?}");
}

#[test]
fn strace_shows_each_save_in_order() {
    assert_saves("replace", &["create temp", "write temp", "fsync temp", "rename onto target", "fsync dir"]);
    assert_saves(
        "replace-tmpfile",
        &["open O_TMPFILE", "write temp", "fsync temp", "linkat", "rename onto target", "fsync dir"],
    );
    // No sync of any kind in the unsafe saves.
    assert_saves("replace-unsafe", &["create temp", "write temp", "rename onto target"]);
}

#[test]
fn saves_on_ext4_give_percentiles_and_the_unsafe_one_is_not_durable() {
    let fs = LoopFs::make("ext4", 256);
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let output = writebench(&[
        "latency",
        fs.path().to_str().unwrap(),
        "--patterns",
        "replace,replace-tmpfile,replace-unsafe",
        "--bytes",
        "4KiB,1MiB",
        "--count",
        "50",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{stdout}\n{}", stderr_of(&output));
    let result = read_json(&json);
    let cases = result["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 6, "each pattern once per size, not once per mode: {cases:?}");
    for (pattern, durability) in
        [("replace", "fsync-file+dir"), ("replace-tmpfile", "fsync-file+dir"), ("replace-unsafe", "none")]
    {
        for size in ["4KiB", "1MiB"] {
            let label = if durability == "none" { " not-durable" } else { "" };
            let id = format!("latency {pattern} {size}{label}");
            let case = cases.iter().find(|c| c["id"] == id.as_str()).unwrap_or_else(|| panic!("{id} in {cases:?}"));
            // ok also means the target held exactly the last save's bytes afterwards.
            assert_eq!(case["status"], "ok", "{id}: {}", case["error"]);
            assert_eq!(case["durability"], durability, "{id}");
            for key in ["count", "mean", "p50", "p90", "p99", "max"] {
                assert!(case["latency_ns"][key].is_number(), "{id}: latency_ns.{key}");
            }
            assert!(case["latency_ns"]["p999"].is_null(), "{id}: 50 saves have no p99.9");
            assert_eq!(case["latency_ns"]["count"], 50);
            assert!(case["ops_per_second"].as_f64().unwrap() > 0.0, "{id}");
            let line = stdout.lines().find(|l| l.trim_start().starts_with(&id["latency ".len()..]));
            assert!(line.is_some(), "{id}'s line in:\n{stdout}");
        }
    }
    assert!(stdout.contains("not-durable: replace-unsafe makes no fsync"), "{stdout}");
    // Observations say so too, and nothing recommends the unsafe saves.
    let observations = result["observations"].as_array().unwrap();
    let saves: Vec<&str> =
        observations.iter().filter_map(|o| o["text"].as_str()).filter(|t| t.contains("save")).collect();
    assert!(!saves.is_empty() && saves.iter().all(|t| t.contains("replace-unsafe (not durable)")), "{saves:?}");
    let answer = result["answer"].as_array().unwrap();
    let goals: Vec<&str> = answer.iter().filter_map(|r| r["goal"].as_str()).collect();
    assert_eq!(goals, ["crash-safe-saves", "crash-safe-saves"], "one per size: {answer:?}");
    assert!(answer.iter().all(|r| !r["text"].as_str().unwrap().contains("replace-unsafe")), "{answer:?}");
    assert!(stdout.contains("Crash-safe saves of a whole file:"), "{stdout}");
    let scratch_left = std::fs::read_dir(fs.path())
        .unwrap()
        .filter_map(Result::ok)
        .any(|e| e.file_name().to_string_lossy().starts_with(".writebench-"));
    assert!(!scratch_left, "the scratch directory is removed");
}

#[test]
fn saves_are_native_only() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let output = writebench(&[
        "latency",
        dir.path().to_str().unwrap(),
        "--patterns",
        "replace,append",
        "--runtimes",
        "native,c",
        "--durability",
        "none",
        "--count",
        "5",
        "--bytes",
        "4KiB",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    let stderr = stderr_of(&output);
    assert!(stderr.contains("replace are native only: no such case for c"), "{stderr}");
    let result = read_json(&json);
    let ids: Vec<&str> = result["cases"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert!(ids.contains(&"latency replace 4KiB"), "{ids:?}");
    assert!(ids.iter().any(|id| id.starts_with("latency c ")), "the runner's append case stays: {ids:?}");
    assert!(!ids.iter().any(|id| id.starts_with("latency c ") && id.contains("replace")), "{ids:?}");
}

#[test]
fn bad_save_options_exit_2_with_one_line() {
    for (args, expected) in [
        (&["--patterns", "replace", "--bytes", "0"][..], "--bytes"),
        (&["--patterns", "replace,rewrite"][..], "unknown pattern 'rewrite'"),
        (&["--patterns", "replace", "--bytes", "4KiB,128MiB"][..], "too large for a save"),
        (&["--durability", "fsync-file+dir"][..], "not a mode"),
        (&["--bytes", "4KiB,,1MiB"][..], "empty item"),
    ] {
        let mut argv = vec!["latency", "."];
        argv.extend_from_slice(args);
        assert_usage_error(&argv, expected);
    }
}

#[test]
fn ctrl_c_mid_save_leaves_nothing_behind() {
    for (patterns, delay_ms) in [("replace", 300), ("replace-tmpfile", 700), ("replace-unsafe,replace", 1200)] {
        let dir = tempfile::tempdir().unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_writebench"))
            .args(["latency", dir.path().to_str().unwrap(), "--patterns", patterns])
            .args(["--bytes", "1MiB,64KiB", "--count", "100000"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the writebench binary starts");
        let deadline = Instant::now() + Duration::from_secs(20);
        while entries(dir.path()).is_empty() {
            assert!(Instant::now() < deadline, "no scratch directory appeared");
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(delay_ms));
        // SAFETY: kill(2) on our own child.
        assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(130), "{patterns}: {}", stderr_of(&output));
        assert_eq!(
            entries(dir.path()),
            Vec::<String>::new(),
            "{patterns} after {delay_ms} ms: no temp file, no target"
        );
    }
}
