//! `writebench run --mpi` across hosts: hosts made of Linux namespaces on this machine
//! (bench/hosts: each its own network, host name and mounts, joined by a bridge), Open MPI
//! launched across them through a launch agent, a node-local tmpfs on each host, a
//! directory node 1 exports over SSH that every host mounts with sshfs, and GlusterFS
//! volumes over three hosts (docs/scale.md, "A distributed filesystem"). Built only with
//! `--features mpi`; needs root, mpirun, sshd, ssh, sshfs and GlusterFS (CI installs
//! them), else it fails loudly.

#![cfg(feature = "mpi")]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{read_json, stream_of};
use writebench::measure::source::Source;

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

    /// A GlusterFS volume of `kind` over every host, mounted at `self.path(kind)` on each.
    fn volume(&self, kind: &str) {
        for tool in ["glusterd", "gluster", "mount.glusterfs"] {
            let found = Command::new("sh").args(["-c", &format!("command -v {tool}")]).output().unwrap();
            assert!(found.status.success(), "{tool} is needed by tests/hosts.rs (.ci/run installs it)");
        }
        let output = Command::new(script()).arg("volume").arg(self.dir.path()).arg(kind).output().unwrap();
        assert!(output.status.success(), "bench/hosts volume {kind}: {}", String::from_utf8_lossy(&output.stderr));
    }

    /// The network namespaces of the hosts and their switch, as `/proc/PID/ns/net` reads.
    fn namespaces(&self) -> Vec<String> {
        let pids = std::fs::read_dir(self.path("hosts")).unwrap().map(|e| e.unwrap().path());
        let pids = pids.filter(|path| path.extension().is_some_and(|e| e == "pid"));
        let namespaces = pids.map(|path| std::fs::read_to_string(path).unwrap().trim().to_string());
        let mut namespaces: Vec<String> = namespaces
            .map(|pid| std::fs::read_link(format!("/proc/{pid}/ns/net")).unwrap().display().to_string())
            .collect();
        // sshd's pid file is there too, in node 1's namespace.
        namespaces.sort();
        namespaces.dedup();
        namespaces
    }

    /// Takes the hosts down and checks that nothing of them is left: no process in any of
    /// their network namespaces (glusterd, its bricks, the FUSE clients; with the last
    /// process go the namespaces, their veths and their mounts), no mount under them here.
    fn down_leaving_nothing(self) {
        let namespaces = self.namespaces();
        assert_eq!(namespaces.len(), 4, "three hosts and the switch: {namespaces:?}");
        let status = Command::new(script()).arg("down").arg(self.dir.path()).status().unwrap();
        assert!(status.success());
        // kill -9 is sent; the processes are gone once the kernel has reaped them.
        let started = Instant::now();
        loop {
            let left: Vec<String> = std::fs::read_dir("/proc")
                .unwrap()
                .filter_map(|entry| {
                    let path = entry.ok()?.path();
                    let net = std::fs::read_link(path.join("ns/net")).ok()?.display().to_string();
                    let cmdline = std::fs::read(path.join("cmdline")).ok()?;
                    namespaces.contains(&net).then(|| String::from_utf8_lossy(&cmdline).replace('\0', " "))
                })
                .collect();
            if left.is_empty() {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(10), "left after bench/hosts down: {left:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let under = self.dir.path().to_str().unwrap();
        assert!(!mounts.contains(under), "a mount under {under} is left here: {mounts}");
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

/// The bytes of `path` as `host` reads them, through its own mounts and clients.
fn read_on(hosts: &Hosts, host: &str, path: &Path) -> Vec<u8> {
    let output = hosts.exec(host, &["cat", path.to_str().unwrap()]).output().unwrap();
    assert!(output.status.success(), "{host}: cat {}: {}", path.display(), String::from_utf8_lossy(&output.stderr));
    output.stdout
}

/// A dispersed GlusterFS volume (two data fragments and one of parity, a brick on each of
/// three hosts): two ranks on two hosts write one shared file and a file per rank, each
/// run read back by the ranks (`--verify`) and, kept, every byte read again through the
/// third host's own client; a stonewalled case; and the names every run uses are its own,
/// which is what keeps the volume's stale-handle pitfall (a name deleted and recreated
/// from another host reads as the old file there) out of the runs. The pitfall is played
/// first and what node 2 reads is printed, not asserted: whether its client still holds
/// the old file depends on its caches' timeouts against this machine's pace. Nothing of
/// the hosts or the volume is left afterwards.
#[test]
fn two_ranks_on_two_hosts_write_a_dispersed_volume_that_a_third_host_reads_back_whole() {
    let hosts = Hosts::up(3);
    hosts.volume("disperse");
    let volume = hosts.path("disperse");
    for host in ["wb-node1", "wb-node2", "wb-node3"] {
        let fs_type = hosts.exec(host, &["findmnt", "-n", "-o", "FSTYPE", volume.to_str().unwrap()]).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&fs_type.stdout).trim(), "fuse.glusterfs", "{host} mounts the volume");
    }

    // The pitfall, on this volume: node 2 has read a file, node 1 deletes it and makes a
    // new one under the same name; node 2 then reads the old file or none, not the new
    // one (GlusterFS 10.3's default caches; seen 8 times in 8 here, by hand). A benchmark
    // that reuses a name between runs checks the wrong file, or fails.
    let name = volume.join("same-name");
    let write_on_1 = |text: &str| {
        let script = format!("rm -f {0}; echo {text} > {0}", name.display());
        assert!(hosts.exec("wb-node1", &["sh", "-c", &script]).status().unwrap().success());
    };
    write_on_1("first");
    assert_eq!(read_on(&hosts, "wb-node2", &name), b"first\n");
    write_on_1("second");
    let seen = hosts.exec("wb-node2", &["cat", name.to_str().unwrap()]).output().unwrap();
    eprintln!(
        "wb-node2 reads the recreated name as {:?} {:?}",
        String::from_utf8_lossy(&seen.stdout),
        String::from_utf8_lossy(&seen.stderr)
    );
    assert!(hosts.exec("wb-node1", &["rm", name.to_str().unwrap()]).status().unwrap().success());

    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("disperse.json");
    let output = hosts
        .mpirun(2, &[volume.to_str().unwrap(), "--layout", "shared-file,file-per-rank", "--states", "empty,prealloc"])
        .args(CASE)
        .args(["--budget", "none", "--verify", "--keep", "--export-json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let result = read_json(&json);
    assert_eq!(rank_hosts(&result), ["wb-node1", "wb-node2"]);
    assert_eq!(result["target"]["fs_type"], "fuse.glusterfs", "{}", result["target"]);
    // The volume's layout, asked of its server once (`gluster volume info`).
    assert_eq!(result["target"]["volume"], "GlusterFS disperse volume disperse, 1 x (2 + 1) = 3 bricks");
    let cases = result["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 4, "two layouts, two states");
    // The ranks' goal weighs one shared file against a file each (docs/answer.md).
    let goals: Vec<&str> = result["answer"].as_array().unwrap().iter().map(|r| r["goal"].as_str().unwrap()).collect();
    assert_eq!(goals, ["ranks-one-file"], "{}", result["answer"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("Many ranks producing one file:"), "{stdout}");
    let source = Source::new(result["options"]["seed"].as_u64().unwrap());
    let scratch = hosts.entries("wb-node3", "disperse");
    assert_eq!(scratch.len(), 1, "one kept scratch directory: {scratch:?}");
    let scratch = volume.join(&scratch[0]);
    let mut names = Vec::new();
    for (index, case) in cases.iter().enumerate() {
        assert_eq!(case["status"], "ok", "{}: {}", case["id"], case["error"]);
        let runs = case["runs"].as_array().unwrap().len() as u32 + result["options"]["warmup"].as_u64().unwrap() as u32;
        // Whose file, with the shape its writers wrote it in (docs/scale.md): the shared
        // file's stream has both ranks' writers; each rank's own file, its own share.
        let files: Vec<(String, serde_json::Value)> = if case["files"] == 1 {
            let mut whole = case.clone();
            whole["threads"] = serde_json::json!(2);
            vec![(format!("case{index:04}"), whole)]
        } else {
            (0..2)
                .map(|rank| {
                    let mut own = case.clone();
                    own["bytes"] = serde_json::json!(case["bytes"].as_u64().unwrap() / 2);
                    (format!("case{index:04}-rank{rank}"), own)
                })
                .collect()
        };
        for number in 0..runs {
            for (prefix, shape) in &files {
                let name = format!("{prefix}-run{number}-f0.dat");
                let data = read_on(&hosts, "wb-node3", &scratch.join(&name));
                assert_eq!(data.len() as u64, shape["bytes"].as_u64().unwrap(), "{name}");
                let stream = stream_of(source.seed(), shape, &name);
                assert_eq!(stream.first_mismatch(&source, 0, &data), None, "{name} as wb-node3 reads it");
                names.push(name);
            }
        }
    }
    // Every run of every case wrote files of its own names: no name was made twice.
    let listed: Vec<String> =
        hosts.entries("wb-node3", &format!("disperse/{}", scratch.file_name().unwrap().to_str().unwrap()));
    let mut written: Vec<&String> = names.iter().collect();
    written.sort();
    written.dedup();
    assert_eq!(written.len(), names.len(), "{names:?}");
    assert!(names.iter().all(|name| listed.contains(name)), "{listed:?}");
    assert!(hosts.exec("wb-node3", &["rm", "-r", scratch.to_str().unwrap()]).status().unwrap().success());

    // Stonewalled: both ranks stop at the wall, into one file and a file each.
    let json = out.path().join("stonewall.json");
    let output = hosts
        .mpirun(2, &[volume.to_str().unwrap(), "--layout", "shared-file,file-per-rank", "--states", "empty"])
        .args(["--methods", "pwrite", "--chunks", "1MiB", "--size", "1GiB", "--threads", "1", "--durability", "end"])
        .args(["--repeat", "2", "--stonewall", "200ms", "--budget", "none", "--export-json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output));
    for case in read_json(&json)["cases"].as_array().unwrap() {
        assert_eq!(case["status"], "ok", "{}: {}", case["id"], case["error"]);
        for run in case["runs"].as_array().unwrap() {
            let wall = &run["stonewall"];
            let writers: Vec<u64> =
                wall["writer_bytes"].as_array().unwrap().iter().map(|b| b.as_u64().unwrap()).collect();
            assert_eq!(writers.len(), 2, "{}: {wall}", case["id"]);
            assert!(writers.iter().all(|&bytes| bytes > 0), "{}: both wrote before the wall: {wall}", case["id"]);
            assert!(wall["bytes"].as_u64().unwrap() < 1 << 30, "{}: the wall stopped them: {wall}", case["id"]);
        }
    }
    assert_eq!(hosts.entries("wb-node3", "disperse"), Vec::<String>::new(), "the volume holds nothing after the runs");
    hosts.down_leaving_nothing();
}
