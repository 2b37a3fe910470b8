//! The data is not dedupable (docs/design.md §2.5): in the files a run leaves behind (`--keep`
//! keeps every run's), no two 4 KiB blocks are equal, within a file, across the files of
//! a run, or across two runs of a case.

use crate::common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::{Tmpfs, entries, stderr_of, writebench};

const BLOCK: usize = 4096;

/// Runs `writebench run DIR ARGS --keep` and returns the kept scratch directory.
fn kept_run(dir: &Path, args: &[&str]) -> PathBuf {
    let mut argv = vec!["run", dir.to_str().unwrap(), "--keep"];
    argv.extend_from_slice(args);
    let output = writebench(&argv);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let scratch: Vec<_> = entries(dir).into_iter().filter(|name| name.starts_with(".writebench-")).collect();
    assert_eq!(scratch.len(), 1, "one kept scratch directory");
    dir.join(&scratch[0])
}

/// Reads `names` from `dir` and fails on the first 4 KiB block that appeared before,
/// naming both places.
fn assert_no_block_repeats(dir: &Path, names: &[&str]) {
    let files: Vec<(&str, Vec<u8>)> = names
        .iter()
        .map(|name| (*name, std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))))
        .collect();
    let mut seen: HashMap<&[u8], (&str, usize)> = HashMap::new();
    for (name, data) in &files {
        assert!(data.len() >= BLOCK, "{name} is {} bytes", data.len());
        for (index, block) in data.chunks_exact(BLOCK).enumerate() {
            if let Some((first, at)) = seen.insert(block, (name, index * BLOCK)) {
                panic!("the block at {} of {name} equals the one at {at} of {first}", index * BLOCK);
            }
        }
    }
}

#[test]
fn kept_runs_of_64_mib_have_no_two_equal_blocks_and_differ_from_each_other() {
    let tmpfs = Tmpfs::mount("400M");
    let args = ["--methods", "pwrite", "--states", "empty", "--chunks", "1MiB", "--threads", "1", "--size", "64MiB"];
    let scratch = kept_run(&tmpfs.path(), &[&args[..], &["--repeat", "2", "--warmup", "0"]].concat());
    let runs = ["case0000-run0-f0.dat", "case0000-run1-f0.dat"];
    // The last run first: it is the one an older --keep kept.
    for run in runs.iter().rev() {
        assert_eq!(std::fs::metadata(scratch.join(run)).unwrap().len(), 64 << 20, "{run}");
        assert_no_block_repeats(&scratch, &[run]);
    }
    assert_ne!(std::fs::read(scratch.join(runs[0])).unwrap(), std::fs::read(scratch.join(runs[1])).unwrap());
    // Stronger: not one block of the first run is in the second.
    assert_no_block_repeats(&scratch, &runs);
}

#[test]
fn the_files_of_a_run_and_its_threads_share_no_block() {
    let tmpfs = Tmpfs::mount("400M");
    let scratch = kept_run(
        &tmpfs.path(),
        &[
            "--methods",
            "pwrite,io_uring",
            "--states",
            "empty,overwrite",
            "--chunks",
            "64KiB",
            "--threads",
            "3",
            "--layout",
            "one-file,file-per-thread",
            "--qd",
            "32",
            "--durability",
            "end",
            "--size",
            "12MiB",
            "--repeat",
            "1",
            "--warmup",
            "1",
        ],
    );
    let names: Vec<String> = entries(&scratch).into_iter().filter(|name| name.starts_with("case")).collect();
    let mut cases: Vec<&str> = names.iter().map(|name| &name[..8]).collect();
    cases.dedup();
    for &case in &cases {
        // Every file of both runs of the case: three threads into one file, or a file
        // each (the same offsets, from the same places of their buffers).
        let files: Vec<&str> = names.iter().filter(|name| name.starts_with(case)).map(String::as_str).collect();
        assert_no_block_repeats(&scratch, &files);
    }
    // pwrite and io_uring, each in two states and two layouts; both runs of each.
    assert_eq!(cases.len(), 8, "{names:?}");
    assert_eq!(names.len(), 4 * 2 + 4 * 6, "{names:?}");
}
