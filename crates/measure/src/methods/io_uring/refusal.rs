//! Why `io_uring_setup` failed, in words that name the cause actually in force. EPERM
//! has two sources this can tell apart: the machine-wide `kernel.io_uring_disabled`
//! (2: no process; 1: none without CAP_SYS_ADMIN outside `kernel.io_uring_group`), and
//! a refusal of this process alone (a seccomp filter, as containers and sandboxes
//! install, or a security module). Naming the sysctl when it is 0 would send the reader
//! to the wrong knob, so the sysctl is named only when it refuses this process.

use std::io;

use error::plain;

/// What decides whether this process may create a ring, read from /proc.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// `kernel.io_uring_disabled`, where the kernel has it (Linux 6.6+).
    pub sysctl: Option<u32>,
    /// Whether `kernel.io_uring_disabled = 1` lets this process through: CAP_SYS_ADMIN
    /// in the initial user namespace, or membership of `kernel.io_uring_group`.
    pub exempt: bool,
    /// Whether this process runs under a seccomp filter (`Seccomp: 2`).
    pub seccomp_filter: bool,
}

/// The unsupported reason for a failed `io_uring_setup`.
pub fn setup_refusal(error: &io::Error, facts: Facts) -> String {
    if error.raw_os_error() != Some(libc::EPERM) {
        return format!("io_uring is not available: io_uring_setup failed: {}", plain(error));
    }
    let refused = "io_uring is not available: io_uring_setup was refused (EPERM)";
    match facts.sysctl {
        Some(2) => format!("{refused}: kernel.io_uring_disabled = 2 forbids io_uring to every process"),
        Some(1) if !facts.exempt => format!(
            "{refused}: kernel.io_uring_disabled = 1 forbids io_uring to processes without CAP_SYS_ADMIN \
             outside kernel.io_uring_group"
        ),
        sysctl => {
            let switch = match sysctl {
                Some(value) => format!("kernel.io_uring_disabled = {value} does not forbid it here"),
                None => "this kernel has no kernel.io_uring_disabled".to_string(),
            };
            let by = if facts.seccomp_filter {
                "it runs under a seccomp filter (as in a container or sandbox)"
            } else {
                "a security module or the container may forbid it"
            };
            format!("{refused} for this process ({switch}); {by}")
        }
    }
}

impl Facts {
    /// This process's facts; what cannot be read counts as absent.
    pub fn read() -> Facts {
        let sysctl = read_number("/proc/sys/kernel/io_uring_disabled");
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let field = |name: &str| {
            status.lines().find_map(|line| line.strip_prefix(name)?.strip_prefix(':').map(str::trim).map(String::from))
        };
        // CAP_SYS_ADMIN is capability 21; the kernel asks for it in the initial user
        // namespace, whose uid_map maps the whole range onto itself.
        let sys_admin = field("CapEff")
            .and_then(|hex| u64::from_str_radix(&hex, 16).ok())
            .is_some_and(|caps| caps & (1 << 21) != 0);
        let initial_namespace = std::fs::read_to_string("/proc/self/uid_map")
            .is_ok_and(|map| map.split_whitespace().collect::<Vec<_>>() == ["0", "0", "4294967295"]);
        let in_group = read_number("/proc/sys/kernel/io_uring_group").is_some_and(|gid| {
            let gid = gid as libc::gid_t;
            // SAFETY: getegid takes no arguments and cannot fail.
            gid == unsafe { libc::getegid() }
                || field("Groups").is_some_and(|groups| groups.split_whitespace().any(|g| g.parse() == Ok(gid)))
        });
        Facts {
            sysctl,
            exempt: (sys_admin && initial_namespace) || in_group,
            seccomp_filter: field("Seccomp").as_deref() == Some("2"),
        }
    }
}

/// A non-negative number in a /proc file (`io_uring_group` is -1 when unset: none).
fn read_number(path: &str) -> Option<u32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eperm() -> io::Error {
        io::Error::from_raw_os_error(libc::EPERM)
    }

    #[test]
    fn the_sysctl_at_2_is_named_as_the_cause() {
        let facts = Facts { sysctl: Some(2), exempt: true, seccomp_filter: false };
        let reason = setup_refusal(&eperm(), facts);
        assert!(reason.contains("refused (EPERM): kernel.io_uring_disabled = 2 forbids"), "{reason}");
    }

    #[test]
    fn the_sysctl_at_1_is_named_only_for_a_process_it_refuses() {
        let refused = setup_refusal(&eperm(), Facts { sysctl: Some(1), exempt: false, seccomp_filter: false });
        assert!(refused.contains("kernel.io_uring_disabled = 1 forbids"), "{refused}");
        let exempt = setup_refusal(&eperm(), Facts { sysctl: Some(1), exempt: true, seccomp_filter: false });
        assert!(exempt.contains("for this process (kernel.io_uring_disabled = 1 does not forbid it here)"), "{exempt}");
    }

    #[test]
    fn eperm_with_the_sysctl_at_0_is_this_process_refused_not_the_sysctl() {
        let reason = setup_refusal(&eperm(), Facts { sysctl: Some(0), exempt: true, seccomp_filter: true });
        assert_eq!(
            reason,
            "io_uring is not available: io_uring_setup was refused (EPERM) for this process \
             (kernel.io_uring_disabled = 0 does not forbid it here); it runs under a seccomp filter \
             (as in a container or sandbox)"
        );
        let old_kernel = setup_refusal(&eperm(), Facts { sysctl: None, exempt: false, seccomp_filter: false });
        assert!(old_kernel.contains("this kernel has no kernel.io_uring_disabled"), "{old_kernel}");
        assert!(!old_kernel.contains("seccomp"), "{old_kernel}");
    }

    #[test]
    fn another_errno_is_given_as_is() {
        let reason = setup_refusal(&io::Error::from_raw_os_error(libc::ENOSYS), Facts::default());
        assert!(reason.starts_with("io_uring is not available: io_uring_setup failed: "), "{reason}");
        assert!(!reason.contains("EPERM") && !reason.contains("io_uring_disabled"), "{reason}");
    }
}
