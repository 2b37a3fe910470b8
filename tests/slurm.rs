//! `srun -n 2 writebench run --mpi …` under a real Slurm: Debian's slurm-wlm and munge,
//! one controller and one node daemon of this machine, configured in a temporary
//! directory (bench/slurm). The command is the README's. Built only with
//! `--features mpi`; needs root, slurm-wlm and munge (CI installs them), else it fails
//! loudly.

#![cfg(feature = "mpi")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{entries, read_json};

/// A one-node Slurm, stopped when dropped.
struct Slurm {
    dir: tempfile::TempDir,
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/slurm")
}

impl Slurm {
    fn up() -> Slurm {
        for tool in ["srun", "slurmctld", "slurmd", "munged"] {
            let found = Command::new("sh").args(["-c", &format!("command -v {tool}")]).output().unwrap();
            assert!(found.status.success(), "{tool} is needed by tests/slurm.rs (apt-get install slurm-wlm munge)");
        }
        let slurm = Slurm { dir: tempfile::tempdir().unwrap() };
        let output = Command::new(script()).arg("up").arg(slurm.dir.path()).output().unwrap();
        assert!(output.status.success(), "bench/slurm up: {}", String::from_utf8_lossy(&output.stderr));
        slurm
    }

    fn srun(&self) -> Command {
        let mut command = Command::new("srun");
        command.env("SLURM_CONF", self.dir.path().join("slurm.conf"));
        command
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        let _ = Command::new(script()).arg("down").arg(self.dir.path()).status();
    }
}

#[test]
fn srun_starts_two_ranks_that_write_one_result() {
    let slurm = Slurm::up();
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let output = slurm
        .srun()
        .args(["-n", "2", env!("CARGO_BIN_EXE_writebench"), "run", "--mpi", dir.path().to_str().unwrap()])
        .args(["--methods", "pwrite", "--states", "prealloc", "--chunks", "1MiB", "--size", "16MiB"])
        .args(["--layout", "shared-file,file-per-rank", "--threads", "1", "--durability", "end"])
        .args(["--budget", "none", "--repeat", "3", "--verify", "--export-json", json.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(stdout.matches("Per rank").count(), 1, "rank 0 prints, once: {stdout}");
    let result = read_json(&json);
    assert_eq!(result["host"]["mpi"]["ranks"].as_array().map(Vec::len), Some(2), "{}", result["host"]);
    assert_eq!(result["options"]["mpi"]["ranks"], 2);
    let ids: Vec<&str> = result["cases"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["pwrite prealloc 1MiB r2 t1 end", "pwrite prealloc 1MiB r2 t1 f2 end"]);
    for case in result["cases"].as_array().unwrap() {
        assert_eq!(case["status"], "ok", "{}: {}", case["id"], case["error"]);
        assert_eq!(case["runs"].as_array().unwrap().len(), 3);
    }
    assert_eq!(entries(dir.path()), Vec::<String>::new(), "the scratch directory is gone");
    // Slurm, not a fallback to singletons, started them: its controller ran the job.
    let log = std::fs::read_to_string(slurm.dir.path().join("log/slurmctld.log")).unwrap();
    assert!(log.contains("_job_complete: JobId=1 WEXITSTATUS 0"), "{log}");
}
