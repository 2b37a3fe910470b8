//! CPU accounting: every run has its writers' CPU share, and a case whose writers were
//! busy on the CPU nearly all the time is flagged CPU-bound; one that waits for a
//! device is not.

mod common;

use common::{LoopFs, Tmpfs, case_line, run_result, with_others_cpu};

/// Runs one case on `dir` and returns its JSON result and the table's line for it.
fn one_case(dir: &std::path::Path, args: &[&str]) -> (serde_json::Value, String) {
    let mut all = vec!["--states", "overwrite", "--threads", "1", "--repeat", "3"];
    all.extend_from_slice(args);
    let (result, stdout) = run_result(dir, &all);
    let cases = result["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 1, "one case expected");
    (cases[0].clone(), case_line(&stdout))
}

/// Two million system calls and nothing to wait for: the writer never sleeps, and on a
/// machine this test found quiet it is on CPU the whole run. On a machine that other work
/// keeps busy the writer waits for a CPU too; then the flag must still agree with the
/// shares measured.
#[test]
fn one_byte_calls_on_tmpfs_are_cpu_bound() {
    let tmpfs = Tmpfs::mount("64m");
    let args = ["--methods", "pwrite", "--chunks", "1B", "--size", "2MiB", "--durability", "none"];
    let ((case, line), others) = with_others_cpu(|| one_case(&tmpfs.path(), &args));
    let shares: Vec<f64> = case["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|run| run["cpu_share"].as_f64().expect("every run has its CPU share"))
        .collect();
    assert!(shares.iter().all(|share| (0.0..=1.1).contains(share)), "{shares:?}");
    let bound = writebench::stats::median(&shares) >= writebench::result::CPU_BOUND;
    assert_eq!(case["cpu_bound"], bound, "{shares:?}");
    assert_eq!(line.contains("CPU-bound (writers on CPU"), bound, "{line}");
    if others < 0.1 {
        assert!(shares.iter().all(|share| (0.9..=1.1).contains(share)), "a quiet machine ({others:.2}), {shares:?}");
        assert_eq!(case["cpu_bound"], true);
    } else {
        eprintln!("the machine was busy ({others:.2} CPUs of other work): the flag was checked against the shares");
    }
}

#[test]
fn writes_that_wait_for_a_device_flush_are_not_cpu_bound() {
    // ext4 on a loop device over a file on the machine's disk: every fdatasync waits
    // for the device, and the writer sleeps meanwhile.
    let fs = LoopFs::make("ext4", 64);
    let args = ["--methods", "pwrite", "--chunks", "4KiB", "--size", "256KiB", "--durability", "every-fdatasync:1"];
    let (case, line) = one_case(&fs.path(), &args);
    for run in case["runs"].as_array().unwrap() {
        let share = run["cpu_share"].as_f64().expect("every run has its CPU share");
        assert!((0.0..0.9).contains(&share), "CPU share {share}");
    }
    assert_eq!(case["cpu_bound"], false);
    assert!(!line.contains("CPU-bound"), "{line}");
}
