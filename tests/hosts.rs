//! `writebench run --mpi` across hosts: two hosts made of Linux namespaces on this machine
//! (bench/hosts: each its own network, host name and mounts, joined by a bridge), Open MPI
//! launched across them through a launch agent, a node-local tmpfs on each host, and a
//! directory node 1 exports over SSH that both hosts mount with sshfs. Built only with
//! `--features mpi`; needs root, mpirun, sshd, ssh and sshfs (CI installs them), else it
//! fails loudly.

#![cfg(feature = "mpi")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::read_json;

/// A set of namespace hosts, taken down when dropped.
struct Hosts {
    dir: tempfile::TempDir,
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/hosts")
}

impl Hosts {
    fn up(count: u32) -> Hosts {
        for tool in ["mpirun", "sshfs", "/usr/sbin/sshd", "ssh"] {
            let found = Command::new("sh").args(["-c", &format!("command -v {tool}")]).output().unwrap();
            assert!(found.status.success(), "{tool} is needed by tests/hosts.rs (.ci/run installs it)");
        }
        let hosts = Hosts { dir: tempfile::tempdir().unwrap() };
        let output = Command::new(script()).arg("up").arg(hosts.dir.path()).arg(count.to_string()).output().unwrap();
        assert!(output.status.success(), "bench/hosts up: {}", String::from_utf8_lossy(&output.stderr));
        hosts
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `CMD` on `host`, in its namespaces.
    fn exec(&self, host: &str, args: &[&str]) -> Command {
        let mut command = Command::new(script());
        command.arg("exec").arg(self.dir.path()).arg(host).args(args);
        command
    }

    /// What `host` sees in `dir`: its own tmpfs for `local`, the sshfs mount for `shared`.
    fn entries(&self, host: &str, dir: &str) -> Vec<String> {
        let path = self.path(dir);
        let output = self.exec(host, &["ls", "-A", path.to_str().unwrap()]).output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).lines().map(str::to_string).collect()
    }

    /// `mpirun` on node 1, one rank on each host (`--map-by node`), Open MPI's daemon on
    /// node 2 started by the launch agent and both talking over the bridge. Keepalives
    /// every second, so that a host lost mid-run is found in seconds, not the default's
    /// eight minutes (docs/scale.md).
    fn mpirun(&self, ranks: u32, args: &[&str]) -> Command {
        let (hostfile, agent) = (self.path("hostfile"), self.path("agent"));
        let mut command = self.exec("wb-node1", &["mpirun", "--allow-run-as-root", "--map-by", "node"]);
        command.args(["--hostfile", hostfile.to_str().unwrap(), "-np", &ranks.to_string()]);
        command.args(["--mca", "plm_rsh_agent", agent.to_str().unwrap()]);
        command.args(["--mca", "btl_tcp_if_include", "eth0", "--mca", "oob_tcp_if_include", "eth0"]);
        for (name, value) in [("time", "1"), ("intvl", "1"), ("probes", "2")] {
            command.args(["--mca", &format!("oob_tcp_keepalive_{name}"), value]);
        }
        command.arg(env!("CARGO_BIN_EXE_writebench")).args(["run", "--mpi"]).args(args);
        command
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        let _ = Command::new(script()).arg("down").arg(self.dir.path()).status();
    }
}

fn text(output: &Output) -> String {
    format!("{}\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// `hosts.mpirun(2, args)` with the shared case, `--verify` and an export into `json`,
/// which must succeed with one rank on each host: the result.
fn run_on_both(hosts: &Hosts, args: &[&str], json: &Path) -> serde_json::Value {
    let output = hosts
        .mpirun(2, args)
        .args(CASE)
        .args(["--budget", "none", "--verify", "--export-json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("rank 0 on wb-node1") && stdout.contains("rank 1 on wb-node2"), "{stdout}");
    let result = read_json(json);
    assert_eq!(rank_hosts(&result), ["wb-node1", "wb-node2"]);
    result
}

/// The hosts of a result's ranks, by rank.
fn rank_hosts(result: &serde_json::Value) -> Vec<String> {
    let ranks = result["host"]["mpi"]["ranks"].as_array().unwrap_or_else(|| panic!("ranks in {}", result["host"]));
    ranks.iter().map(|rank| rank["hostname"].as_str().unwrap().to_string()).collect()
}

const CASE: [&str; 12] = [
    "--methods",
    "pwrite",
    "--chunks",
    "1MiB",
    "--size",
    "16MiB",
    "--threads",
    "1",
    "--durability",
    "end",
    "--repeat",
    "3",
];

#[test]
fn two_ranks_on_two_hosts_write_a_file_each_locally_and_one_file_over_sshfs_and_read_them_back() {
    let hosts = Hosts::up(2);
    let out = tempfile::tempdir().unwrap();

    // A file per rank, each on its own host's tmpfs (--mpi-local).
    let local = hosts.path("local");
    let args = ["--mpi-local", local.to_str().unwrap(), "--layout", "file-per-rank", "--states", "prealloc"];
    let result = run_on_both(&hosts, &args, &out.path().join("local.json"));
    assert!(result["host"]["mpi"]["clock"].as_str().unwrap().starts_with("several hosts"), "{}", result["host"]);
    assert_eq!(result["host"]["mpi"]["local"], true);
    let case = &result["cases"][0];
    assert_eq!(
        (case["id"].as_str().unwrap(), case["status"].as_str().unwrap()),
        ("pwrite prealloc 1MiB r2 t1 f2 end", "ok")
    );
    assert_eq!(result["options"]["verify"], true, "every run read back");
    for host in ["wb-node1", "wb-node2"] {
        assert_eq!(hosts.entries(host, "local"), Vec::<String>::new(), "{host}'s scratch directory is gone");
    }

    // One file, written by both hosts through their own sshfs clients and read back
    // whole by each. sshfs cannot preallocate (SFTP has no fallocate): empty and sparse.
    let shared = hosts.path("shared");
    let args = [shared.to_str().unwrap(), "--layout", "shared-file", "--states", "empty,sparse"];
    let result = run_on_both(&hosts, &args, &out.path().join("shared.json"));
    assert_eq!(result["target"]["fs_type"], "fuse.sshfs", "{}", result["target"]);
    let cases = result["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2);
    for case in cases {
        assert_eq!(case["status"], "ok", "{}: {}", case["id"], case["error"]);
        assert_eq!(case["files"], 1, "{}", case["id"]);
        for run in case["runs"].as_array().unwrap() {
            let bytes: Vec<u64> =
                run["ranks"].as_array().unwrap().iter().map(|r| r["bytes"].as_u64().unwrap()).collect();
            assert_eq!(bytes, [8 << 20, 8 << 20], "each host wrote its half");
        }
    }
    // The exported directory holds nothing after the run, seen from either host.
    assert_eq!(std::fs::read_dir(hosts.path("export")).unwrap().count(), 0);
    for host in ["wb-node1", "wb-node2"] {
        assert_eq!(hosts.entries(host, "shared"), Vec::<String>::new(), "{host}");
    }
}

#[test]
fn a_host_that_loses_its_network_mid_run_ends_the_job_in_seconds_naming_it_and_leaves_nothing() {
    let hosts = Hosts::up(2);
    let local = hosts.path("local");
    let mut job = hosts
        .mpirun(2, &["--mpi-local", local.to_str().unwrap(), "--layout", "file-per-rank", "--states", "prealloc"])
        .args(["--methods", "pwrite", "--chunks", "1MiB", "--size", "64MiB", "--threads", "1"])
        .args(["--durability", "end", "--budget", "none", "--repeat", "1000"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until node 2 writes: its scratch directory is on its own tmpfs.
    let started = Instant::now();
    while hosts.entries("wb-node2", "local").is_empty() {
        assert!(started.elapsed() < Duration::from_secs(30), "node 2 never started writing");
        assert!(job.try_wait().unwrap().is_none(), "the job ended before the cut");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    let cut = Command::new(script()).arg("cut").arg(hosts.dir.path()).arg("wb-node2").status().unwrap();
    assert!(cut.success());
    let cut_at = Instant::now();
    let status = common::ended_within(&mut job, Duration::from_secs(30), "node 2 lost its network");
    let took = cut_at.elapsed();
    let stderr = std::io::read_to_string(job.stderr.take().unwrap()).unwrap();
    assert!(!status.success(), "{stderr}");
    assert!(took < Duration::from_secs(15), "{took:?}: {stderr}");
    assert!(stderr.contains("wb-node2"), "the lost host is named: {stderr}");
    // Nothing left on either host: each rank removed its scratch directory on its
    // launcher's SIGTERM, or its watcher did where Open MPI ended the rank without one
    // (docs/scale.md, "Faults"), each on its own tmpfs. mpirun may exit while its own
    // rank is still in that handler, so the directory is given a moment to go.
    let ended = Instant::now();
    for host in ["wb-node1", "wb-node2"] {
        while !hosts.entries(host, "local").is_empty() && ended.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let left = hosts.entries(host, "local");
        if !left.is_empty() {
            let listing = hosts.exec(host, &["ls", "-laR", hosts.path("local").to_str().unwrap()]).output().unwrap();
            eprintln!("LISTING {}", String::from_utf8_lossy(&listing.stdout));
            let ps = hosts.exec(host, &["ps", "-eo", "pid,stat,cmd"]).output().unwrap();
            eprintln!("PS {}", String::from_utf8_lossy(&ps.stdout));
        }
        assert_eq!(left, Vec::<String>::new(), "{host} kept its scratch directory 5 s after the job ended: {stderr}");
    }
    eprintln!("the scratch directories were gone {:?} after the job ended", ended.elapsed());
}
