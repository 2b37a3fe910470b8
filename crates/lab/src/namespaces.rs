//! Processes by the namespace they are in: the one place that finds and ends them, for
//! the lab's hosts (their network namespaces) and the crash check's user program (its
//! mount namespace) alike. By the namespace, never by name: whatever a program started
//! is in it too, however it named itself.

use std::time::{Duration, Instant};

/// The namespace of `kind` (`mnt`, `net`: a name under /proc/PID/ns) that process `pid`
/// is in, as the kernel names it ("net:[4026532…]"), if it can be read.
pub fn of(pid: u32, kind: &str) -> Option<String> {
    std::fs::read_link(format!("/proc/{pid}/ns/{kind}")).ok().map(|link| link.display().to_string())
}

/// The processes (not zombies, which hold no namespace) in namespace `id` of `kind`,
/// this one left out.
pub fn members(kind: &str, id: &str) -> Vec<u32> {
    let own = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != own && of(pid, kind).as_deref() == Some(id))
        .collect()
}

/// Kills every process in namespace `id` of `kind` with SIGKILL, again until none is
/// left (a process may fork while it is being killed), for at most `within`; `between`
/// runs after each round (to reap a child among them). Never this process's own
/// namespace: that would be everything beside it. The processes still there at the end.
pub fn kill_all(kind: &str, id: &str, within: Duration, mut between: impl FnMut()) -> Vec<u32> {
    if of(std::process::id(), kind).as_deref() == Some(id) {
        return Vec::new();
    }
    let started = Instant::now();
    loop {
        let left = members(kind, id);
        for &pid in &left {
            // SAFETY: a plain kill of a process in a namespace writebench made.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
        between();
        if left.is_empty() || started.elapsed() > within {
            return left;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_namespaces_and_is_never_its_own_target() {
        let net = of(std::process::id(), "net").unwrap();
        assert!(net.starts_with("net:["), "{net}");
        assert!(members("net", "net:[0]").is_empty());
        assert!(!members("net", &net).contains(&std::process::id()));
        // Our own namespace holds every process beside us: kill_all refuses it.
        let mut rounds = 0;
        assert!(kill_all("net", &net, Duration::from_secs(1), || rounds += 1).is_empty());
        assert_eq!(rounds, 0, "nothing was killed");
    }
}
