//! `--source` (docs/measurement.md, "The source of the data"): where the data written
//! comes from is said in the header and the JSON, the data from memory is still each
//! file's stream, and a runner that cannot write from memory is refused with the reason.

use crate::common;

use common::{Tmpfs, read_json, stderr_of, writebench};

fn run(dir: &std::path::Path, source: Option<&str>, extra: &[&str]) -> (serde_json::Value, String) {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let mut args = vec!["run", dir.to_str().unwrap(), "--methods", "write,pwrite,io_uring", "--states", "empty"];
    args.extend_from_slice(&["--chunks", "256KiB", "--size", "8MiB", "--threads", "1,2", "--repeat", "2"]);
    args.extend_from_slice(&["--verify", "--no-calibrate", "--export-json", json.to_str().unwrap()]);
    if let Some(source) = source {
        args.extend_from_slice(&["--source", source]);
    }
    args.extend_from_slice(extra);
    let output = writebench(&args);
    assert!(output.status.success(), "{}", stderr_of(&output));
    (read_json(&json), String::from_utf8(output.stdout).unwrap())
}

#[test]
fn data_from_memory_is_said_read_back_whole_and_refused_where_a_runner_cannot() {
    let fs = Tmpfs::mount("256M");
    // Every run read back (--verify): the buffers as long as the parts, flushed from
    // the caches, hold each file's stream.
    let (result, stdout) = run(&fs.path(), Some("memory"), &["--runtimes", "native,c"]);
    assert_eq!(result["options"]["source"], "memory");
    assert!(stdout.contains("data: streamed from memory"), "{stdout}");
    for case in result["cases"].as_array().unwrap() {
        if case["runtime"] == "native" {
            assert_eq!(case["status"], "ok", "{}: {}", case["id"], case["error"]);
        } else {
            assert_eq!(case["status"], "unsupported", "{}", case["id"]);
            let error = case["error"].as_str().unwrap();
            assert!(
                error.starts_with("--source memory: the c runner writes from the source writebench hands it"),
                "{error}"
            );
        }
    }
    // The default: cached, said as such.
    let (result, stdout) = run(&fs.path(), None, &[]);
    assert_eq!(result["options"]["source"], "cached");
    assert!(stdout.contains("data: each writer reuses an 8 MiB buffer"), "{stdout}");
}
