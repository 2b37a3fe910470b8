//! Processes in network namespaces the lab made for its hosts (`hosts`): the one place
//! that ends them, for the teardown and for `writebench clean` alike. A host's processes
//! are found by the namespace, never by name (a host without a PID namespace sees every
//! host's processes), and a killed lab's by the tag in their environment.

use std::path::PathBuf;
use std::time::Duration;

use super::namespaces;
use super::shell::Step;

/// The environment variable every process of a lab's host carries: the host's state
/// directory, named like the lab's other objects.
pub const HOST_VARIABLE: &str = "WRITEBENCH_LAB_HOST";

/// The network namespace of `pid`, as `/proc/PID/ns/net` reads ("net:[4026532…]").
pub fn net_of(pid: u32) -> Option<String> {
    namespaces::of(pid, "net")
}

/// Ends a host: its volume's client unmounted lazily inside it (a client killed while
/// mounted leaves "Transport endpoint is not connected" to whoever holds the mount),
/// every process in its network namespace killed, the holder reaped. With the last
/// process go its namespaces, veth, tmpfs mounts and bind mounts.
pub fn end(pid: u32, net: &str, unmount: Option<&PathBuf>) -> Result<(), String> {
    if net_of(pid).as_deref() == Some(net) {
        if let Some(mount) = unmount {
            let pid = pid.to_string();
            let _ = Step::new("nsenter").args(["-t", &pid, "-m", "--", "umount", "-l"]).arg(mount).run();
        }
    }
    // The holder reaped if it is our child (harmless otherwise). Never a pid of 0 or
    // below: that would reap any child of ours, another's exit status.
    let reap = || {
        if let Ok(pid) = i32::try_from(pid).map(|pid| pid.max(1)) {
            // SAFETY: waitpid of one pid, without blocking.
            unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) };
        }
    };
    let left = namespaces::kill_all("net", net, Duration::from_secs(10), reap);
    if left.is_empty() {
        return Ok(());
    }
    Err(format!("processes {left:?} of a host ({net}) still there 10 s after SIGKILL"))
}

/// The tag (`WRITEBENCH_LAB_HOST`) in the environment of `pid`, if it is a lab host's.
pub fn tag_of(pid: u32) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{HOST_VARIABLE}=");
    environ.split(|&b| b == 0).find_map(|entry| {
        let entry = String::from_utf8_lossy(entry);
        entry.strip_prefix(&prefix).map(str::to_string)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_no_lab_host_and_has_a_namespace() {
        assert_eq!(tag_of(std::process::id()), None);
        assert!(net_of(std::process::id()).unwrap().starts_with("net:["));
        assert!(end(i32::MAX as u32, "net:[0]", None).is_ok(), "a host already gone is ended");
    }
}
