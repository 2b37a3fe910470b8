//! A distributed filesystem for the lab: three hosts made of Linux namespaces on this
//! machine, a GlusterFS volume over them (a brick each, on the host's own tmpfs), and
//! the volume mounted with each host's FUSE client at the lab's mount point; the suite
//! then runs from host 1 (docs/lab.md, "A distributed filesystem").
//!
//! Each host is a `sleep` holding its own network, UTS and mount namespaces (no PID
//! namespace, so that `nsenter` reaches them all); a fourth holds the "switch", a bridge
//! the hosts' veths meet on, so that nothing of this machine's network, host name or
//! mounts changes. Inside each host: its name `wb-nodeN`, 10.0.0.N/24, an /etc/hosts
//! naming them all, its own /var/lib/glusterd (seeded from the package's), logs and /run,
//! a glusterd. Every process of a host carries `WRITEBENCH_LAB_HOST=<its state dir>` in
//! its environment, a path named like the lab's objects: teardown ends them by their
//! network namespace, and `writebench clean` finds those of a killed lab by it.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::netns::{HOST_VARIABLE, net_of};
use super::objects::{Object, Objects};
use super::shell::{Log, Step};

/// How many hosts a volume spans: a disperse volume needs three (two data fragments and
/// one of parity).
pub const HOSTS: usize = 3;

/// What the build made, for the suite's run: host 1's holder, to enter.
pub struct Volume {
    pub first_host: u32,
}

/// Builds the hosts and a volume of `kind` (`distribute`, `disperse`, `replica`) mounted
/// at `mount` on each with `options` (`mount -o`, none if empty), its state under
/// `state` (a directory of the lab's, made here).
pub fn build(
    kind: &str,
    options: &str,
    state: &Path,
    mount: &Path,
    brick_bytes: u64,
    log: &mut Log,
    objects: &mut Objects,
) -> Result<Volume, String> {
    std::fs::create_dir(state).map_err(|e| format!("cannot create {}: {}", state.display(), error::plain(&e)))?;
    objects.push(Object::Tree(state.to_path_buf()));
    let tag = state.display().to_string();
    let switch = hold(&tag, &["--net", "--uts"], objects, None)?;
    log.run(enter(switch, &tag).arg("ip").arg("link").arg("add").arg("br0").arg("type").arg("bridge"))?;
    log.run(enter(switch, &tag).arg("ip").arg("link").arg("set").arg("br0").arg("up"))?;
    let hosts_file = state.join("etc-hosts");
    let names: Vec<String> = (1..=HOSTS).map(|n| format!("wb-node{n}")).collect();
    let mut table = "127.0.0.1 localhost\n".to_string();
    for (n, name) in names.iter().enumerate() {
        table += &format!("10.0.0.{} {name}\n", n + 1);
    }
    std::fs::write(&hosts_file, table)
        .map_err(|e| format!("cannot write {}: {}", hosts_file.display(), error::plain(&e)))?;
    let bricks = state.join("bricks");
    std::fs::create_dir(&bricks).map_err(|e| error::plain(&e))?;
    let package_state = Path::new("/var/lib/glusterd");
    let mut hosts = Vec::new();
    for (n, name) in names.iter().enumerate() {
        let own = state.join(name);
        for dir in ["glusterd", "log"] {
            std::fs::create_dir_all(own.join(dir)).map_err(|e| error::plain(&e))?;
        }
        // The package's groups and hooks; no glusterd.info, so each host makes its UUID.
        log.run(Step::new("cp").arg("-a").arg(package_state.join(".")).arg(own.join("glusterd")))?;
        let _ = std::fs::remove_file(own.join("glusterd/glusterd.info"));
        let pid = hold(&tag, &["--net", "--uts", "--mount", "--propagation", "private"], objects, Some(mount))?;
        let port = format!("port{}", n + 1);
        log.run(
            enter(switch, &tag)
                .args(["ip", "link", "add", &port, "type", "veth", "peer", "name", "eth0", "netns"])
                .arg(pid.to_string()),
        )?;
        log.run(enter(switch, &tag).args(["ip", "link", "set", &port, "master", "br0"]))?;
        log.run(enter(switch, &tag).args(["ip", "link", "set", &port, "up"]))?;
        log.run(enter(pid, &tag).args(["hostname", name]))?;
        log.run(enter(pid, &tag).args(["ip", "link", "set", "lo", "up"]))?;
        log.run(enter(pid, &tag).args(["ip", "addr", "add", &format!("10.0.0.{}/24", n + 1), "dev", "eth0"]))?;
        log.run(enter(pid, &tag).args(["ip", "link", "set", "eth0", "up"]))?;
        log.run(enter(pid, &tag).args(["mount", "--bind"]).arg(&hosts_file).arg("/etc/hosts"))?;
        log.run(enter(pid, &tag).args(["mount", "--bind"]).arg(own.join("glusterd")).arg(package_state))?;
        log.run(enter(pid, &tag).args(["mount", "--bind"]).arg(own.join("log")).arg("/var/log/glusterfs"))?;
        log.run(enter(pid, &tag).args(["mount", "-t", "tmpfs", "-o", "size=16m", "writebench-lab-run", "/run"]))?;
        log.run(enter(pid, &tag).args(["mkdir", "-p", "/run/gluster", "/run/lock"]))?;
        let size = format!("size={brick_bytes}");
        log.run(enter(pid, &tag).args(["mount", "-t", "tmpfs", "-o", &size, "writebench-lab-brick"]).arg(&bricks))?;
        log.run(enter(pid, &tag).arg("mkdir").arg(bricks.join(kind)))?;
        log.run(enter(pid, &tag).arg("glusterd"))?;
        hosts.push(pid);
    }
    let first = hosts[0];
    for name in &names[1..] {
        // glusterd takes a few seconds to listen.
        retry(Duration::from_secs(20), || {
            enter(first, &tag).args(["gluster", "--mode=script", "peer", "probe", name]).run()
        })?;
    }
    // Every host must see every other: host 1 seeing both is not enough (a volume
    // create was seen failing with "Staging failed on wb-node2: Host wb-node3 not
    // connected").
    for (&pid, name) in hosts.iter().zip(&names) {
        retry(Duration::from_secs(20), || {
            let status = enter(pid, &tag).args(["gluster", "--mode=script", "peer", "status"]).run()?;
            let connected = status.matches("Peer in Cluster (Connected)").count();
            if connected == HOSTS - 1 {
                Ok(status)
            } else {
                Err(format!("{name} sees {connected} of its {} peers connected", HOSTS - 1))
            }
        })?;
    }
    let layout: Vec<String> = match kind {
        "distribute" => Vec::new(),
        "disperse" => vec!["disperse".into(), HOSTS.to_string(), "redundancy".into(), "1".into()],
        "replica" => vec!["replica".into(), HOSTS.to_string()],
        other => return Err(format!("no GlusterFS volume kind {other}")),
    };
    let mut create = enter(first, &tag)
        .args(["gluster", "--mode=script", "volume", "create", kind])
        .args(&layout)
        .args(["transport", "tcp"]);
    for name in &names {
        create = create.arg(format!("{name}:{}", bricks.join(kind).display()));
    }
    log.run(create)?;
    log.run(enter(first, &tag).args(["gluster", "--mode=script", "volume", "start", kind]))?;
    for (pid, name) in hosts.iter().zip(&names) {
        // The bricks' processes take a moment to come up after the start.
        let mut step = enter(*pid, &tag).args(["mount", "-t", "glusterfs"]);
        if !options.is_empty() {
            step = step.args(["-o", options]);
        }
        let step = step.arg(format!("{name}:/{kind}")).arg(mount);
        log.lines.push(step.line());
        retry(Duration::from_secs(20), || step.run())?;
    }
    Ok(Volume { first_host: first })
}

/// A step run inside the namespaces of `pid`, tagged as one of the lab's hosts.
fn enter(pid: u32, tag: &str) -> Step {
    Step::new("env").arg(format!("{HOST_VARIABLE}={tag}")).args([
        "nsenter",
        "-t",
        &pid.to_string(),
        "-n",
        "-u",
        "-m",
        "--",
    ])
}

/// `attempt` until it succeeds or `limit` has passed: its last error then.
fn retry(limit: Duration, mut attempt: impl FnMut() -> Result<String, String>) -> Result<String, String> {
    let started = Instant::now();
    loop {
        match attempt() {
            Ok(out) => return Ok(out),
            Err(why) if started.elapsed() > limit => return Err(why),
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// A process holding fresh namespaces (`unshare FLAGS`), noted in `objects` at once; its
/// pid once its namespaces are its own.
fn hold(tag: &str, flags: &[&str], objects: &mut Objects, unmount: Option<&Path>) -> Result<u32, String> {
    let child = Command::new("unshare")
        .args(flags)
        .args(["--", "sleep", "infinity"])
        .env(HOST_VARIABLE, tag)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run unshare: {}", error::plain(&e)))?;
    let pid = child.id();
    let ours = net_of(std::process::id());
    let started = Instant::now();
    // unshare makes the namespaces, then execs sleep in the same process.
    loop {
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        match net_of(pid) {
            Some(net) if comm.trim_end() == "sleep" && Some(&net) != ours.as_ref() => {
                objects.push(Object::Host { pid, net, unmount: unmount.map(Path::to_path_buf) });
                return Ok(pid);
            }
            _ if started.elapsed() > Duration::from_secs(5) => {
                // SAFETY: our own child, not yet a host.
                unsafe { libc::kill(pid as i32, libc::SIGKILL) };
                return Err("unshare did not make its namespaces within 5 s".into());
            }
            _ => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_step_is_tagged_and_enters_every_namespace_but_pids() {
        let line = enter(42, "/dev/shm/writebench-lab-7-mnt/glusterfs-disperse-hosts").arg("glusterd").line();
        assert_eq!(
            line,
            "env WRITEBENCH_LAB_HOST=/dev/shm/writebench-lab-7-mnt/glusterfs-disperse-hosts nsenter -t 42 -n -u -m -- glusterd"
        );
    }
}
