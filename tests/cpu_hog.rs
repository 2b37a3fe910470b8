//! A run while another process keeps a CPU busy says so; a run on a machine found quiet
//! does not. The test makes the conditions it asserts about: its own busy neighbour,
//! whose CPU time it reads from /proc, and its own measure of how busy the rest of the
//! machine was, from /proc/stat, around the same run; it never assumes an idle machine.
//! Its own test binary: the busy loop must not slow other tests.

mod common;

use std::process::{Child, Command};

use common::{Tmpfs, case_line, process_seconds, run_result, with_others_cpu};

/// A shell busy-looping until dropped.
struct Hog(Child);

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One case of 1-byte calls (about 0.6 s a run: long enough for /proc/stat's ticks):
/// the case, its table line, and how many CPUs' worth everything but writebench used
/// while it ran, by this test's own measure.
fn one_byte_calls(dir: &std::path::Path) -> (serde_json::Value, String, f64) {
    let args = ["--methods", "pwrite", "--chunks", "1B", "--states", "overwrite", "--threads", "1"];
    let ((result, stdout), others) = with_others_cpu(|| {
        run_result(dir, &[&args[..], &["--durability", "none", "--size", "1MiB", "--repeat", "3"]].concat())
    });
    (result["cases"][0].clone(), case_line(&stdout), others)
}

/// The runs' shares of other processes' CPU, and the table's note agreeing with them.
fn shares_and_note(case: &serde_json::Value, line: &str) -> Vec<f64> {
    let shares: Vec<f64> = case["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|run| run["others_cpu_share"].as_f64().expect("every run has others' CPU share"))
        .collect();
    let busy = shares.iter().any(|&share| share >= 0.5);
    assert_eq!(line.contains("another process busy on CPU (up to"), busy, "{shares:?}: {line}");
    shares
}

#[test]
fn a_busy_neighbour_is_seen_and_a_quiet_machine_is_not() {
    let tmpfs = Tmpfs::mount("16m");
    // Without a neighbour of ours: where the machine was quiet by our own measure, no
    // run may see a busy neighbour; where something else kept it busy, the note must
    // still agree with the figures.
    let (case, line, others) = one_byte_calls(&tmpfs.path());
    let shares = shares_and_note(&case, &line);
    if others < 0.1 {
        assert!(shares.iter().all(|&share| share < 0.5), "a quiet machine ({others:.2} CPUs), yet {shares:?}");
    } else {
        eprintln!("the machine was busy ({others:.2} CPUs of other work): the quiet half checked the note only");
    }

    // With our own neighbour: writebench must count at least most of what it used.
    let hog = Hog(Command::new("sh").args(["-c", "while :; do :; done"]).spawn().expect("sh runs"));
    std::thread::sleep(std::time::Duration::from_millis(200));
    let (hog_before, start) = (process_seconds(hog.0.id()), std::time::Instant::now());
    let (case, line, _) = one_byte_calls(&tmpfs.path());
    let hog_share = (process_seconds(hog.0.id()) - hog_before) / start.elapsed().as_secs_f64();
    let shares = shares_and_note(&case, &line);
    // A busy loop on a machine of two CPUs or more gets most of one: the run sees it.
    assert!(hog_share > 0.3, "the busy loop itself got only {hog_share:.2} of a CPU");
    let least = shares.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(least > 0.7 * hog_share, "a busy loop used {hog_share:.2} of a CPU beside it, yet a run saw {least:.2}");
}
