//! Between runs, seen by strace: every run starts after the previous run's files were
//! synced, removed, and the removal committed (an fsync of the scratch directory);
//! `--drop-cache` advises the kernel to drop each prepared file's pages.

mod common;

use common::{Tmpfs, Traced, read_json, stderr_of};

/// The scratch directory's path as strace -y shows it (`<…/.writebench-…>`).
fn is_scratch_dir_fsync(line: &str) -> bool {
    line.starts_with("fsync(") && line.contains("/.writebench-") && !line.contains(".dat>")
}

/// A call that writes a run's data or makes its file (pwrite64, write, ftruncate).
fn is_run_write(line: &str) -> bool {
    ["pwrite64(", "write(", "ftruncate("].iter().any(|call| line.starts_with(call))
        && line.contains("-run")
        && line.contains(".dat>")
}

/// For every unlink of a run's file: a directory fsync follows it before the next
/// write of a run; the file itself was fsynced before it. Returns how many unlinks.
fn check_removals_are_committed(calls: &[Traced]) -> usize {
    let mut unlinks = 0;
    for (index, call) in calls.iter().enumerate() {
        if !(call.line.starts_with("unlinkat(") && call.line.contains("-run")) {
            continue;
        }
        unlinks += 1;
        let name = call.line.split('"').nth(1).unwrap();
        let later = &calls[index + 1..];
        let committed = later.iter().position(|c| is_scratch_dir_fsync(&c.line));
        let next_write = later.iter().position(|c| is_run_write(&c.line));
        assert!(committed.is_some(), "{name}: its removal is never committed");
        assert!(
            next_write.is_none_or(|write| committed < Some(write)),
            "{name}: the next run writes before the removal is committed"
        );
        let synced =
            calls[..index].iter().any(|c| c.line.starts_with("fsync(") && c.line.contains(&format!("{name}>")));
        assert!(synced, "{name}: removed without being synced");
    }
    unlinks
}

#[test]
fn every_run_of_every_kind_starts_after_the_previous_runs_removal_is_committed() {
    let fs = Tmpfs::mount("64M");
    let dir = fs.path();
    let dir = dir.to_str().unwrap();
    // A write case and a file creation case, without a sync of their own.
    let run = ["run", dir, "--methods", "pwrite,ftruncate", "--states", "empty", "--chunks", "64KiB"];
    let rest =
        ["--size", "1MiB", "--threads", "1", "--durability", "none", "--repeat", "2", "--warmup", "1", "--no-verify"];
    let (calls, output) = common::strace("unlinkat,fsync,pwrite64,ftruncate", &[&run[..], &rest].concat());
    assert!(output.status.success(), "{}", stderr_of(&output));
    // 2 cases x 3 runs, and before each ftruncate run its rehearsal on a throw-away file.
    assert_eq!(check_removals_are_committed(&calls), 2 * 3 + 3, "2 cases x 3 runs and 3 rehearsals");
    // Latency cases: each loop's file, in rounds.
    let latency = ["latency", dir, "--count", "50", "--warmup", "0", "--patterns", "append,overwrite0"];
    let (calls, output) = common::strace(
        "unlinkat,fsync,pwrite64,write",
        &[&latency[..], &["--durability", "none", "--repeat", "2"]].concat(),
    );
    assert!(output.status.success(), "{}", stderr_of(&output));
    assert_eq!(check_removals_are_committed(&calls), 2 * 2, "2 cases x 2 loops");
}

#[test]
fn drop_cache_advises_dontneed_on_each_prepared_file_and_is_recorded() {
    let fs = Tmpfs::mount("64M");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let dir = fs.path();
    let args = [
        "run",
        dir.to_str().unwrap(),
        "--methods",
        "pwrite",
        "--states",
        "overwrite",
        "--chunks",
        "64KiB",
        "--size",
        "1MiB",
        "--threads",
        "1",
        "--durability",
        "end",
        "--repeat",
        "2",
        "--warmup",
        "0",
        "--export-json",
        json.to_str().unwrap(),
    ];
    for drop_cache in [true, false] {
        let argv = if drop_cache { [&args[..], &["--drop-cache"]].concat() } else { args.to_vec() };
        let (calls, output) = common::strace("fadvise64", &argv);
        assert!(output.status.success(), "{}", stderr_of(&output));
        let advised: Vec<&Traced> = calls.iter().filter(|c| c.line.contains("-run")).collect();
        if drop_cache {
            assert_eq!(advised.len(), 2, "one per run");
            for (run, call) in advised.iter().enumerate() {
                assert!(call.line.contains(&format!("case0000-run{run}-f0.dat>")), "{}", call.line);
                assert!(call.line.contains("POSIX_FADV_DONTNEED"), "{}", call.line);
            }
        } else {
            assert!(advised.is_empty(), "only when asked");
        }
        assert_eq!(read_json(&json)["options"]["drop_cache"], drop_cache);
    }
}
