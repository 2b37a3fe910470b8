//! With `kernel.io_uring_disabled = 2` no process may create a ring: the io_uring cases
//! are `unsupported`, with a reason that names the switch, and the other cases still
//! run. A test binary of its own because it flips a machine-wide switch, so no other
//! test of this binary runs meanwhile. It needs root and Linux 6.6+ (CI has both) and
//! fails loudly, never skips, when it cannot set the switch.

mod common;

use common::{read_json, stderr_of, writebench};

const SYSCTL: &str = "/proc/sys/kernel/io_uring_disabled";

/// Holds the sysctl at a value and puts the saved value back when dropped, also when
/// the test panics.
struct Sysctl {
    saved: String,
}

impl Sysctl {
    fn set(value: &str) -> Sysctl {
        let saved = std::fs::read_to_string(SYSCTL)
            .unwrap_or_else(|e| panic!("read {SYSCTL}: {e} (the switch needs Linux 6.6 or later)"));
        let guard = Sysctl { saved: saved.trim().to_string() };
        std::fs::write(SYSCTL, value)
            .unwrap_or_else(|e| panic!("write {value} to {SYSCTL}: {e} (this test needs root)"));
        let now = std::fs::read_to_string(SYSCTL).unwrap_or_else(|e| panic!("read {SYSCTL} back: {e}"));
        assert_eq!(now.trim(), value, "{SYSCTL} did not take the value");
        guard
    }
}

impl Drop for Sysctl {
    fn drop(&mut self) {
        if let Err(error) = std::fs::write(SYSCTL, &self.saved) {
            let message = format!("could not restore {SYSCTL} to {}: {error}", self.saved);
            // A second panic while unwinding would abort and hide the first one.
            if std::thread::panicking() {
                eprintln!("{message}");
            } else {
                panic!("{message}");
            }
        }
    }
}

#[test]
fn disabled_io_uring_is_unsupported_with_the_reason_and_pwrite_still_runs() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let sysctl = Sysctl::set("2");
    let output = writebench(&[
        "run",
        dir.path().to_str().unwrap(),
        "--methods",
        "io_uring,pwrite",
        "--states",
        "empty",
        "--chunks",
        "64KiB",
        "--size",
        "1MiB",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--threads",
        "1",
        "--qd",
        "1",
        // The quick suite's durability part (direct+end, odsync) would add cases.
        "--durability",
        "end",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    // Put the machine back as soon as the binary is done, before judging its output.
    drop(sysctl);

    assert_eq!(output.status.code(), Some(0), "a case was measured: {}", stderr_of(&output));
    let result = read_json(&json);
    let cases = result["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2, "{cases:?}");
    let case =
        |method: &str| cases.iter().find(|c| c["method"] == method).unwrap_or_else(|| panic!("no {method} case"));

    let uring = case("io_uring");
    assert_eq!(uring["status"], "unsupported", "{uring}");
    let error = uring["error"].as_str().unwrap();
    assert!(error.contains("io_uring is not available"), "{error}");
    assert!(error.contains("kernel.io_uring_disabled = 2"), "{error}");
    assert!(uring["stats"].is_null() && uring["durable_stats"].is_null(), "{uring}");
    assert_eq!(uring["runs"].as_array().unwrap().len(), 0);

    let pwrite = case("pwrite");
    assert_eq!(pwrite["status"], "ok", "{pwrite}");
    assert!(pwrite["error"].is_null());
    assert!(pwrite["stats"].is_object(), "{pwrite}");
}
