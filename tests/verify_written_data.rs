//! Every method in every state writes exactly the generated data: the files that
//! `--keep` leaves behind are read back, their length and every byte checked.

mod common;

use common::{entries, read_json, writebench};
use writebench::source::{PERIOD, fill_pattern, first_mismatch};

/// Runs every method over `states` with `chunks` and `iov`, keeping the files, and
/// checks each kept file's length and every byte against the pattern for the seed.
fn check_round_trip(size: u64, chunks: &str, iov: &str, states: &str) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let size_arg = size.to_string();
    let output = writebench(&[
        "run",
        dir.path().to_str().unwrap(),
        "--size",
        &size_arg,
        "--chunks",
        chunks,
        "--iov",
        iov,
        "--states",
        states,
        "--repeat",
        "1",
        "--warmup",
        "1",
        "--seed",
        "42",
        "--keep",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    let result = read_json(&json);
    let cases = result["cases"].as_array().unwrap();
    let (n_chunks, n_iov, n_states) = (
        chunks.split(',').count(),
        iov.split(',').count(),
        states.split(',').count(),
    );
    // 3 plain methods x chunks + 2 vectored x chunks x iov, per state.
    assert_eq!(
        cases.len(),
        n_states * (3 * n_chunks + 2 * n_chunks * n_iov)
    );
    for case in cases {
        assert_eq!(case["status"], "ok", "{}: {}", case["id"], case["error"]);
        assert_eq!(case["bytes"], size);
    }

    let scratch: Vec<_> = entries(dir.path())
        .into_iter()
        .filter(|n| n.starts_with(".writebench-"))
        .collect();
    assert_eq!(scratch.len(), 1, "one scratch directory, kept");
    let scratch = dir.path().join(&scratch[0]);
    let files = entries(&scratch);
    assert_eq!(
        files.iter().filter(|n| n.ends_with(".dat")).count(),
        cases.len(),
        "{files:?}"
    );

    let mut pattern = vec![0u8; PERIOD];
    fill_pattern(42, &mut pattern);
    for (index, case) in cases.iter().enumerate() {
        let data = std::fs::read(scratch.join(format!("case{index:04}-run1.dat"))).unwrap();
        assert_eq!(data.len() as u64, size, "{}", case["id"]);
        assert_eq!(first_mismatch(&pattern, 0, &data), None, "{}", case["id"]);
    }
    std::fs::remove_dir_all(&scratch).unwrap();
}

#[test]
fn every_method_and_state_writes_every_byte() {
    // Not a multiple of any chunk, so every case ends in a short call; 3 iovecs so
    // the last vectored call is partial too. Includes 1-byte calls.
    check_round_trip(
        200_007,
        "1B,4KiB,100KiB",
        "1,3",
        "empty,sparse,prealloc,overwrite",
    );
}

#[test]
fn data_stays_right_across_the_source_period() {
    // Larger than the 8 MiB source period with a chunk that does not divide it, so
    // calls straddle the point where the pattern repeats.
    check_round_trip(
        PERIOD as u64 + 12_345,
        "100KiB,3MiB",
        "1,5",
        "empty,overwrite",
    );
}

#[test]
fn without_keep_nothing_is_left_behind() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("users-file"), b"precious").unwrap();
    let output = writebench(&[
        "run",
        dir.path().to_str().unwrap(),
        "--size",
        "64KiB",
        "--chunks",
        "4KiB",
        "--repeat",
        "2",
        "--warmup",
        "1",
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(entries(dir.path()), vec!["users-file"]);
    assert_eq!(
        std::fs::read(dir.path().join("users-file")).unwrap(),
        b"precious"
    );
}
