//! The golden corpus (docs/code.md, "The golden corpus"): real result files of every kind
//! writebench saves, each rendered by `report` in every way (the Answer, `--style
//! classic`, `--table --explain`, and every export format) and the pairs by `compare`,
//! against the renders committed beside them. A change that should move no figure and no
//! word (the floors' move into crates, a refactoring) must leave every render as it was;
//! a change that means to alter the output re-blesses them in the same commit, so the
//! diff shows what a user will see differently.
//!
//! `WRITEBENCH_BLESS=1 cargo test --release --test results golden` writes the renders
//! anew (only those that changed).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The corpus: each saved by a real run on this project's machine (docs/code.md says
/// which commands), gzipped to keep the repository small.
const CORPUS: [&str; 10] = [
    "tmpfs-run",          // run /dev/shm, the default suite
    "disk-run",           // run on an ext4 disk, the default suite, raced with its rounds' floor
    "disk-run-yesterday", // the same a day before, for a compare pair
    "latency-disk",       // latency on the disk
    "calibrate-disk",     // calibrate on the disk
    "runtimes-tmpfs",     // six runtimes side by side
    "mpi-ranks-tmpfs",    // two MPI ranks, shared file and file per rank
    "lab-ext4",           // lab's result for ext4 on a RAM-backed loop device
    "lab-xfs",            // and for xfs
    "crash-sqlite",       // crash --run of SQLite commits, ext4 and xfs
];

/// Compared pairs: the first the baseline.
const PAIRS: [(&str, &str); 2] = [("lab-ext4", "lab-xfs"), ("disk-run-yesterday", "disk-run")];

fn golden() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn bless() -> bool {
    std::env::var_os("WRITEBENCH_BLESS").is_some_and(|v| v == "1")
}

fn gunzip(path: &Path) -> Vec<u8> {
    let output = Command::new("gzip").arg("-dc").arg(path).output().expect("gzip runs (it is in every Debian)");
    assert!(output.status.success(), "gzip -dc {}: {}", path.display(), String::from_utf8_lossy(&output.stderr));
    output.stdout
}

/// Writes `bytes` gzipped as `path` (`NAME.gz`): gzip -n, so that the same bytes give
/// the same file.
fn gzip(bytes: &[u8], path: &Path) {
    let plain = path.with_extension("");
    std::fs::write(&plain, bytes).unwrap();
    let status = Command::new("gzip").args(["-9nf"]).arg(&plain).status().expect("gzip runs");
    assert!(status.success(), "gzip {}", plain.display());
}

/// One render against its golden file (`NAME.gz` for the large ones): the mismatches,
/// as a line each with the first lines that differ, or nothing.
struct Checker {
    mismatches: Vec<String>,
    blessed: usize,
    compared: usize,
}

impl Checker {
    fn check(&mut self, golden: &Path, actual: &[u8]) {
        self.compared += 1;
        let zipped = golden.extension().is_some_and(|e| e == "gz");
        let expected = if !golden.exists() {
            None
        } else if zipped {
            Some(gunzip(golden))
        } else {
            Some(std::fs::read(golden).unwrap())
        };
        if expected.as_deref() == Some(actual) {
            return;
        }
        if bless() {
            std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
            if zipped {
                gzip(actual, golden);
            } else {
                std::fs::write(golden, actual).unwrap();
            }
            self.blessed += 1;
            return;
        }
        let Some(expected) = expected else {
            self.mismatches.push(format!("{}: no golden file (WRITEBENCH_BLESS=1 writes it)", golden.display()));
            return;
        };
        let (expected, actual) = (String::from_utf8_lossy(&expected), String::from_utf8_lossy(actual));
        let (old, new): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
        let first = old.iter().zip(&new).position(|(a, b)| a != b).unwrap_or(old.len().min(new.len()));
        let shown = |lines: &[&str]| {
            lines.iter().skip(first).take(3).map(|l| format!("      {}", truncate(l))).collect::<Vec<_>>().join("\n")
        };
        self.mismatches.push(format!(
            "{} differs from line {} ({} lines golden, {} now):\n    golden:\n{}\n    now:\n{}",
            golden.display(),
            first + 1,
            old.len(),
            new.len(),
            shown(&old),
            shown(&new)
        ));
    }
}

fn truncate(line: &str) -> String {
    if line.chars().count() > 160 {
        format!("{}…", line.chars().take(160).collect::<String>())
    } else {
        line.to_string()
    }
}

/// `writebench ARGS` in `dir` (so that no temporary path appears in what it prints), with
/// its stdout, and its stderr with a line for a status other than 0.
fn writebench(dir: &Path, args: &[&str]) -> (Vec<u8>, Vec<u8>) {
    let output = Command::new(env!("CARGO_BIN_EXE_writebench"))
        .current_dir(dir)
        .args(args)
        .env_remove("COLUMNS")
        .env("NO_COLOR", "1")
        .output()
        .expect("writebench runs");
    let mut stderr = output.stderr;
    if !output.status.success() {
        stderr.extend_from_slice(format!("(exit status {:?})\n", output.status.code()).as_bytes());
    }
    (output.stdout, stderr)
}

/// Every corpus file rendered by `report` in every way, and each pair by `compare`, the
/// same as the committed renders.
#[test]
fn every_saved_result_renders_as_its_golden_files() {
    let dir = tempfile::tempdir().unwrap();
    let here = dir.path();
    for name in CORPUS {
        std::fs::write(here.join(format!("{name}.json")), gunzip(&golden().join(format!("corpus/{name}.json.gz"))))
            .unwrap();
    }
    // A result of the first schema, as a user may still have one.
    std::fs::copy(golden().join("../data/v1-result.json"), here.join("v1-result.json")).unwrap();
    let mut checker = Checker { mismatches: Vec::new(), blessed: 0, compared: 0 };
    let renders = golden().join("renders");
    let crash = |name: &str| name.starts_with("crash");
    for name in CORPUS.iter().copied().chain(["v1-result"]) {
        let file = format!("{name}.json");
        let out = renders.join(name);
        let views: &[(&str, &[&str])] = if crash(name) {
            &[("answer.txt", &[])]
        } else {
            &[
                ("answer.txt", &[]),
                ("classic.txt", &["--table", "--style", "classic"]),
                ("explain.txt", &["--table", "--explain"]),
            ]
        };
        for (golden_name, flags) in views {
            let mut args = vec!["report", file.as_str()];
            args.extend_from_slice(flags);
            let (stdout, stderr) = writebench(here, &args);
            checker.check(&out.join(golden_name), &stdout);
            checker.check(&out.join(golden_name.replace(".txt", ".stderr")), &stderr);
        }
        let formats: &[&str] =
            if crash(name) { &["json", "markdown", "html"] } else { &["json", "csv", "markdown", "html"] };
        for format in formats {
            let export = here.join(format!("{name}.export.{format}"));
            let flag = format!("--export-{format}");
            let (_, stderr) =
                writebench(here, &["report", &file, &flag, export.file_name().unwrap().to_str().unwrap()]);
            let written = std::fs::read(&export)
                .unwrap_or_else(|_| panic!("report {file} {flag} wrote nothing: {}", String::from_utf8_lossy(&stderr)));
            checker.check(&out.join(format!("export.{format}.gz")), &written);
        }
    }
    for (baseline, other) in PAIRS {
        let out = renders.join(format!("compare-{baseline}-{other}"));
        let (a, b) = (format!("{baseline}.json"), format!("{other}.json"));
        let (stdout, stderr) = writebench(
            here,
            &[
                "compare",
                &a,
                &b,
                "--export-markdown",
                "compare.md",
                "--export-json",
                "compare.json",
                "--export-html",
                "compare.html",
            ],
        );
        checker.check(&out.join("compare.txt"), &stdout);
        checker.check(&out.join("compare.stderr"), &stderr);
        for format in ["md", "json", "html"] {
            let written = std::fs::read(here.join(format!("compare.{format}"))).expect("compare wrote its exports");
            checker.check(&out.join(format!("compare.{format}.gz")), &written);
        }
    }
    assert!(checker.compared >= 90, "the corpus renders {} ways: fewer than it should", checker.compared);
    if checker.blessed > 0 {
        eprintln!("golden: wrote {} renders anew", checker.blessed);
    }
    assert!(
        checker.mismatches.is_empty(),
        "{} of {} renders differ from the golden files (a change that means to alter the output re-blesses them: \
         WRITEBENCH_BLESS=1 cargo test --release --test results golden):\n{}",
        checker.mismatches.len(),
        checker.compared,
        checker.mismatches.join("\n")
    );
}
