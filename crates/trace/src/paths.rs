//! Paths as the fold keeps them: absolute and lexically normal, without strace's
//! " (deleted)", and told apart from the pipes, sockets and kernel files a program also
//! writes to.

use crate::strace::descriptor;

/// The directory `AT_FDCWD</path>` names.
pub fn at_fdcwd(arg: &str) -> Option<String> {
    match descriptor(arg) {
        ("AT_FDCWD", Some(path)) => Some(path),
        _ => None,
    }
}

/// A path strace named, without the " (deleted)" of a file removed (or never named).
pub fn plain_path(path: &str) -> String {
    path.strip_suffix(" (deleted)").unwrap_or(path).to_string()
}

/// Pipes, sockets, terminals and the kernel's own files: written to, but no file.
/// /dev/shm is a tmpfs of regular files, not a device.
pub fn pseudo(path: &str) -> bool {
    !path.starts_with('/')
        || !path.starts_with("/dev/shm/") && ["/dev/", "/proc/", "/sys/"].iter().any(|p| path.starts_with(p))
}

/// The directory of a path.
pub fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) => "/",
        Some(at) => &path[..at],
        None => "",
    }
}

/// A path without `.`, `..` and doubled slashes (read as written: no link is followed).
pub fn normal(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    format!("/{}", parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_made_plain() {
        assert_eq!(normal("/w/./a//b/../c"), "/w/a/c");
        assert_eq!(normal("/.."), "/");
        assert_eq!(parent("/w/a"), "/w");
        assert_eq!(parent("/a"), "/");
        assert_eq!(plain_path("/w/#12 (deleted)"), "/w/#12");
        assert!(pseudo("pipe:[12]") && pseudo("/dev/null") && pseudo("/proc/self/status") && !pseudo("/w/a"));
        assert!(!pseudo("/dev/shm/data"), "a file in /dev/shm is a file");
        assert_eq!(at_fdcwd("AT_FDCWD</w>").as_deref(), Some("/w"));
        assert_eq!(at_fdcwd("3</w>"), None);
    }
}
