//! A new file is judged on one span a program pays (docs/answer.md, "One span a program
//! pays"): from its `open(O_CREAT)`, already with the mode's flags, through its
//! `ftruncate`/`fallocate` (no fsync of its own) and the writes, to the sync and the
//! directory's fsync; the durable goal's figure is the bytes over the mean of that span.

use crate::common;

use common::{LoopFs, Traced, read_json};

/// The calls of case `case`'s first run's file (`case0000-run0-f0.dat` for case 0), from its
/// creating open on, the directory's fsync included, as strace printed them.
fn calls_of_run(calls: &[Traced], case: usize) -> Vec<&str> {
    let name = format!("case{case:04}-run0-f0.dat");
    let first = calls.iter().position(|c| c.line.starts_with("openat(") && c.line.contains(&name)).expect("its open");
    let mut seen = Vec::new();
    for call in &calls[first..] {
        // The run's own calls and the fsync of the scratch directory after them; the
        // untimed steps after the run (its read-back, its unlink) end it.
        if call.line.contains(&name) || (call.line.starts_with("fsync(") && call.line.contains(".writebench-")) {
            seen.push(call.line.as_str());
        }
        if call.line.starts_with("fsync(") && !call.line.contains(&name) && call.line.contains(".writebench-") {
            break;
        }
    }
    seen
}

#[test]
fn a_new_file_is_one_span_from_its_create_to_the_directory_fsync() {
    // ext4, where the syncs do what they say (tmpfs has no durable goal).
    let fs = LoopFs::make("ext4", 64);
    let dir = fs.path();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let args = [
        "run",
        dir.to_str().unwrap(),
        "--methods",
        "pwrite",
        "--states",
        "prealloc",
        "--chunks",
        "64KiB",
        "--threads",
        "1",
        "--size",
        "1MiB",
        "--durability",
        "end,odsync",
        "--repeat",
        "3",
        "--warmup",
        "0",
        "--no-verify",
        "--export-json",
        json.to_str().unwrap(),
    ];
    let (calls, output) = common::strace("openat,fallocate,pwrite64,fsync,fdatasync", &args);
    assert!(output.status.success(), "{}", common::stderr_of(&output));
    let result = read_json(&json);
    let cases = result["cases"].as_array().unwrap();
    let index =
        |mode: &str| cases.iter().position(|c| c["durability"] == mode).unwrap_or_else(|| panic!("no {mode} case"));
    for mode in ["end", "odsync"] {
        let seen = calls_of_run(&calls, index(mode));
        // Created with the mode's flags at once (no second open to add them), sized,
        // written, synced as the mode says, then the directory: nothing in between.
        let open = seen[0];
        assert!(open.contains("O_CREAT") && open.contains("O_EXCL"), "{open}");
        assert_eq!(open.contains("O_DSYNC"), mode == "odsync", "{open}");
        assert_eq!(seen.iter().filter(|c| c.starts_with("openat(")).count(), 1, "{seen:#?}");
        assert!(seen[1].starts_with("fallocate("), "{seen:#?}");
        let writes = seen.iter().take_while(|c| !c.starts_with("fsync(")).skip(2).count();
        assert_eq!(writes, 16, "the writes follow the fallocate with no fsync between: {seen:#?}");
        let syncs: Vec<&&str> = seen.iter().filter(|c| c.starts_with("fsync(")).collect();
        let file_sync = usize::from(mode == "end");
        assert_eq!(syncs.len(), file_sync + 1, "{mode}: {seen:#?}");
        assert!(syncs.last().unwrap().contains(".writebench-") && !syncs.last().unwrap().contains(".dat"));
    }
    let goal = result["answer"].as_array().unwrap().iter().find(|g| g["goal"] == "durable-at-end").unwrap();
    let mut best_checked = false;
    for case in cases {
        let bytes = case["bytes"].as_f64().unwrap();
        let mut spans = Vec::new();
        for run in case["runs"].as_array().unwrap() {
            let seconds = |key: &str| run[key].as_f64().unwrap_or_else(|| panic!("{key} in {run}"));
            let (new_file, durable) = (seconds("new_file_seconds"), seconds("new_file_durable_seconds"));
            // The span holds the preparation and the writes, and the durable one the sync.
            assert!(new_file >= seconds("prepare_seconds") + seconds("write_seconds"), "{run}");
            assert!(durable >= new_file + seconds("sync_seconds"), "{run}");
            assert!(run.get("prepare_sync_seconds").is_none(), "a new file's preparation has no fsync: {run}");
            spans.push(durable);
        }
        // The durable goal ranks on the span: its figure is the bytes over its mean.
        if goal["best"]["case"] == case["id"] {
            let mean = spans.iter().sum::<f64>() / spans.len() as f64;
            assert_eq!(goal["best"]["metric"], "new-file-durable");
            let shown = goal["best"]["mean"].as_f64().unwrap();
            assert!((shown - bytes / mean).abs() <= 1e-9 * shown, "{shown} against {}", bytes / mean);
            best_checked = true;
        }
    }
    assert!(best_checked, "the goal's best is one of the cases: {goal}");
}
