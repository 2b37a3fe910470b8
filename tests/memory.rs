//! Memory stays bounded whatever the case (docs/design.md §2.5): the source buffer is sized by
//! the write cases' chunks, not by a file creation case's size; and on a machine with
//! free page reporting (CI's), the memory the settle step warms before the 256 MiB
//! pwrite case is left out of writebench's own peak (a test in-process could not tell
//! it from the other tests' allocations).

mod common;

use common::{Tmpfs, read_json, stderr_of, writebench};

#[test]
fn a_256_mib_file_creation_case_does_not_make_a_256_mib_source_buffer() {
    let fs = Tmpfs::mount("400M");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let output = writebench(&[
        "run",
        fs.path().to_str().unwrap(),
        "--methods",
        "pwrite,ftruncate",
        "--size",
        "256MiB",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--chunks",
        "1MiB",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let result = read_json(&json);
    assert!(result["cases"].as_array().unwrap().iter().any(|c| c["method"] == "ftruncate" && c["status"] == "ok"));
    let peak = result["options"]["peak_rss_bytes"].as_u64().unwrap();
    assert!(peak < 64 << 20, "peak RSS {} MiB", peak >> 20);
}
