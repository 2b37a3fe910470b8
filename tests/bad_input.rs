//! Bad input ends in exit status 2 and one clear line: never a panic, never a backtrace.

mod common;

use common::{assert_usage_error, writebench};

#[test]
fn bad_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    for (size, expected) in [
        ("12XB", "unknown unit 'XB'"),
        ("abc", "invalid size 'abc'"),
        ("0", "at least 1 byte"),
        ("1.5B", "whole number of bytes"),
        ("99999999999TiB", "too large"),
    ] {
        assert_usage_error(&["run", path, "--size", size], expected);
    }
    assert_usage_error(&["run", path, "--size=-5MiB"], "invalid size '-5MiB'");
    assert_usage_error(&["run", path, "--size", "-5MiB"], "unexpected argument '-5'");
    assert_usage_error(&["run", path, "--chunks", "4KiB,zz"], "invalid size 'zz'");
    assert_usage_error(&["run", path, "--chunks", "2MiB", "--size", "1MiB"], "larger than --size");
}

#[test]
fn unknown_methods_states_and_options() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    assert_usage_error(&["run", path, "--methods", "write,mmap_private"], "unknown method 'mmap_private'");
    assert_usage_error(&["run", path, "--methods", ""], "empty item");
    assert_usage_error(&["run", path, "--states", "full"], "unknown state 'full'");
    assert_usage_error(&["run", path, "--durability", "always"], "unknown durability 'always'");
    assert_usage_error(&["run", path, "--iov", "0"], "out of range");
    assert_usage_error(&["run", path, "--repeat", "many"], "invalid value 'many'");
    assert_usage_error(&["run", path, "--suite", "huge"], "invalid value 'huge'");
    assert_usage_error(&["run", path, "--source", "disk"], "unknown source 'disk' (known: cached, memory)");
    assert_usage_error(&["run", path, "--no-such-option"], "unexpected argument '--no-such-option'");
    assert_usage_error(&["fly"], "unrecognized subcommand 'fly'");
}

#[test]
fn missing_or_unusable_paths() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("does-not-exist");
    assert_usage_error(&["run", missing.to_str().unwrap()], "No such file or directory");
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    assert_usage_error(&["run", file.to_str().unwrap()], "is not a directory");
    let export = dir.path().join("no-dir").join("r.json");
    assert_usage_error(
        &["run", dir.path().to_str().unwrap(), "--export-json", export.to_str().unwrap()],
        "does not exist",
    );
    // Nothing was created while refusing.
    assert_eq!(common::entries(dir.path()), vec!["a-file"]);
}

#[test]
fn help_and_version_succeed() {
    let help = writebench(&["run", "--help"]);
    assert_eq!(help.status.code(), Some(0));
    let text = String::from_utf8_lossy(&help.stdout);
    assert!(text.contains("Examples:") && text.contains("--export-csv"), "{text}");
    let version = writebench(&["--version"]);
    assert_eq!(version.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("writebench "));
}

#[test]
fn run_help_names_every_method_of_the_catalogue() {
    let help = writebench(&["run", "--help"]);
    assert_eq!(help.status.code(), Some(0));
    let text = String::from_utf8_lossy(&help.stdout);
    // Whole words: `pwritev2` must be there itself, not only inside `pwritev2-atomic`.
    let words: Vec<&str> =
        text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).filter(|w| !w.is_empty()).collect();
    for name in writebench::plan::catalog::names() {
        assert!(words.contains(&name), "'{name}' is not in run --help:\n{text}");
    }
}

#[test]
fn malformed_command_lines_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let file = file.to_str().unwrap();
    let missing = dir.path().join("missing");
    let missing = missing.to_str().unwrap();
    let path_missing = format!("PATH {missing}: No such file or directory");
    let path_file = format!("PATH {file} is not a directory");
    let json_dir = format!("--export-json: {path} is a directory");
    let unexpected_path = format!("unexpected argument '{path}' found");
    // Each command line, and the part of its one line that says what is wrong with it.
    let table: &[(&[&str], &str)] = &[
        (&["run", path, "--size", ""], "--size: invalid size '': expected a number such as 4KiB"),
        (&["run", path, "--size", "MiB"], "--size: invalid size 'MiB': expected a number"),
        (&["run", path, "--size", "1..5MiB"], "--size: invalid size '1..5MiB': expected a number"),
        (&["run", path, "--size", "0.1B"], "--size: invalid size '0.1B': not a whole number of bytes"),
        (&["run", path, "--size", "18446744073709551616"], "--size: invalid size '18446744073709551616': too large"),
        (&["run", path, "--size", "17179869184GiB"], "--size: invalid size '17179869184GiB': too large"),
        (&["run", path, "--size", "1 PiB"], "--size: invalid size '1 PiB': unknown unit 'PiB'"),
        (&["run", path, "--size", "1e6"], "--size: invalid size '1e6': unknown unit 'e6'"),
        (&["run", path, "--chunks", ""], "--chunks: invalid list '': empty item"),
        (&["run", path, "--chunks", ","], "--chunks: invalid list ',': empty item"),
        (&["run", path, "--chunks", "4KiB,"], "--chunks: invalid list '4KiB,': empty item"),
        (&["run", path, "--chunks", "0B"], "--chunks: chunk '0B' is out of range (1B to 1GiB)"),
        (&["run", path, "--chunks", "1GiB,2GiB"], "--chunks: chunk '2GiB' is out of range (1B to 1GiB)"),
        (&["run", path, "--chunks", "8MiB", "--size", "4MiB"], "a chunk of 8 MiB is larger than --size 4 MiB"),
        (&["run", path, "--iov", "1025"], "--iov: 1025 is out of range (1 to 1024)"),
        (&["run", path, "--iov", "-1"], "unexpected argument '-1' found"),
        (&["run", path, "--iov", "1,2,x"], "--iov: 'x' is not a whole number"),
        (&["run", path, "--iov", "99999999999999999999999"], "--iov: '99999999999999999999999' is not a whole number"),
        (&["run", path, "--threads", "0"], "--threads: 0 is out of range (1 to 1024)"),
        (&["run", path, "--threads", "1025"], "--threads: 1025 is out of range (1 to 1024)"),
        (&["run", path, "--threads", "1.5"], "--threads: '1.5' is not a whole number"),
        (&["run", path, "--threads", ""], "--threads: invalid list '': empty item"),
        (&["run", path, "--qd", "4097"], "--qd: 4097 is out of range (1 to 4096)"),
        (&["run", path, "--qd", "0"], "--qd: 0 is out of range (1 to 4096)"),
        (&["run", path, "--qd", "32768"], "--qd: 32768 is out of range (1 to 4096)"),
        (
            &["run", path, "--layout", "one-file,striped"],
            "--layout: unknown layout 'striped' (known: one-file, file-per-thread)",
        ),
        (&["run", path, "--layout", ""], "--layout: invalid list '': empty item"),
        (&["run", path, "--methods", "WRITE"], "--methods: unknown method 'WRITE' (known: mmap,"),
        (&["run", path, "--methods", "write,,pwrite"], "--methods: invalid list 'write,,pwrite': empty item"),
        (&["run", path, "--methods", " , "], "--methods: invalid list ' , ': empty item"),
        (
            &["run", path, "--states", "empty,dense"],
            "--states: unknown state 'dense' (known: empty, sparse, prealloc, overwrite)",
        ),
        (
            &["run", path, "--durability", "fsync-each"],
            "--durability: unknown durability 'fsync-each' (known: none, end,",
        ),
        (&["run", path, "--repeat", "0"], "--repeat: must be between 1 and 1000000"),
        (&["run", path, "--repeat", "1000001"], "--repeat: must be between 1 and 1000000"),
        (&["run", path, "--repeat", "-3"], "unexpected argument '-3' found"),
        (&["run", path, "--repeat", "4294967296"], "invalid value '4294967296' for '--repeat <N>'"),
        (&["run", path, "--warmup", "1000001"], "--warmup: must be at most 1000000"),
        (&["run", path, "--warmup", "x"], "invalid value 'x' for '--warmup <N>'"),
        (&["run", path, "--seed", "-1"], "unexpected argument '-1' found"),
        (&["run", path, "--seed", "18446744073709551616"], "invalid value '18446744073709551616' for '--seed <N>'"),
        (&["run", path, "--suite", "slow"], "invalid value 'slow' for '--suite <SUITE>'"),
        (&["run", path, "--size"], "a value is required for '--size <SIZE>'"),
        (&["run", path, path], &unexpected_path),
        (&["run", file], &path_file),
        (&["run", missing], &path_missing),
        (&["run", "/proc/self/comm"], "PATH /proc/self/comm is not a directory"),
        (&["run", path, "--export-json", path], &json_dir),
        (
            &["run", path, "--export-csv", "/nonexistent-dir/r.csv"],
            "--export-csv: directory /nonexistent-dir does not exist",
        ),
        (&["run", path, "--export-json"], "a value is required for '--export-json <FILE>'"),
        (&["run", path, "--unknown"], "unexpected argument '--unknown' found"),
        (&["clean", file], &path_file),
        (&["clean", missing], &path_missing),
        (&["clean", path, "--force"], "unexpected argument '--force' found"),
        (&["walk"], "unrecognized subcommand 'walk'"),
    ];
    for (args, expected) in table {
        assert_usage_error(args, expected);
    }
    assert_eq!(common::entries(dir.path()), vec!["a-file"], "nothing created while refusing");
}

/// `--mpi` in a build without MPI says how to get one, in one line, exit 2; and such a
/// build does not link an MPI library at all. With `--features mpi`, its options are
/// checked like any other (tests/mpi.rs runs it under mpirun).
#[test]
fn mpi_without_the_feature_is_one_line_saying_how_to_build_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    let linked = std::process::Command::new("ldd").arg(env!("CARGO_BIN_EXE_writebench")).output();
    let links_mpi = linked.map(|o| String::from_utf8_lossy(&o.stdout).contains("libmpi")).ok();
    #[cfg(not(feature = "mpi"))]
    {
        assert_usage_error(
            &["run", path, "--mpi"],
            "--mpi needs a build with MPI support: cargo install --path . --features mpi",
        );
        assert_usage_error(&["run", path, "--mpi", "--layout", "file-per-rank"], "--features mpi");
        assert_ne!(links_mpi, Some(true), "the default build links no MPI library");
    }
    #[cfg(feature = "mpi")]
    {
        assert_usage_error(&["run", path, "--mpi", "--layout", "one-file"], "unknown layout 'one-file' under --mpi");
        assert_ne!(links_mpi, Some(false), "the mpi build links the MPI library");
    }
    assert_usage_error(&["run", path, "--mpi-local"], "--mpi-local is an option of --mpi");
}

#[test]
fn crash_refuses_unknown_filesystems_workloads_and_options_before_anything() {
    assert_usage_error(&["crash", "--fs", "ext4,zfs"], "unknown filesystem 'zfs' for --fs (known: ext4, xfs, btrfs)");
    assert_usage_error(&["crash", "--workloads", "end,sometimes"], "unknown workload 'sometimes' for --workloads");
    assert_usage_error(&["crash", "--mount-opt", "xfs=noatime"], "xfs is not among --fs ext4");
    assert_usage_error(&["crash", "--mount-opt", "noatime"], "--mount-opt takes FS=OPTS");
    assert_usage_error(&["crash", "--mount-opt", "ext4=a b"], "without spaces");
    assert_usage_error(&["crash", "--states", "0"], "--states must be at least 1");
    assert_usage_error(&["crash", "--states", "many"], "invalid value 'many'");
}
