//! A run while another process keeps a CPU busy says so; the same run on a quiet
//! machine does not. Its own test binary: the busy loop must not slow other tests.

mod common;

use std::process::{Child, Command};

use common::{Tmpfs, case_line, run_result};

/// A shell busy-looping until dropped.
struct Hog(Child);

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn one_byte_calls(dir: &std::path::Path) -> (serde_json::Value, String) {
    // About 0.6 s per run: long enough for /proc/stat's 10 ms ticks.
    let args = ["--methods", "pwrite", "--chunks", "1B", "--states", "overwrite", "--threads", "1"];
    let (result, stdout) =
        run_result(dir, &[&args[..], &["--durability", "none", "--size", "1MiB", "--repeat", "3"]].concat());
    (result["cases"][0].clone(), case_line(&stdout))
}

#[test]
fn a_busy_neighbour_is_seen_and_a_quiet_machine_is_not() {
    let tmpfs = Tmpfs::mount("16m");
    let (case, line) = one_byte_calls(&tmpfs.path());
    for run in case["runs"].as_array().unwrap() {
        let share = run["others_cpu_share"].as_f64().expect("every run has others' CPU share");
        assert!(share < 0.5, "a quiet machine, yet others used {share} of a CPU: {line}");
    }
    assert!(!line.contains("another process"), "{line}");

    let _hog = Hog(Command::new("sh").args(["-c", "while :; do :; done"]).spawn().expect("sh runs"));
    std::thread::sleep(std::time::Duration::from_millis(200));
    let (case, line) = one_byte_calls(&tmpfs.path());
    for run in case["runs"].as_array().unwrap() {
        let share = run["others_cpu_share"].as_f64().unwrap();
        assert!(share > 0.7, "a busy loop ran beside it, yet others used only {share} of a CPU");
    }
    assert!(line.contains("another process busy on CPU (up to"), "{line}");
}
