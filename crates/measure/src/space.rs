//! Free space (docs/design.md §6): a run that cannot fit is refused before it starts, and a
//! case that cannot fit any more is skipped with the numbers, instead of filling the
//! file system the user's data lives on. `statvfs` counts the blocks available to an
//! unprivileged user (`f_bavail`), so the root reserve stays untouched.

use std::io;
use std::path::Path;

pub use context::statvfs::{At, free_bytes, statvfs};

use plan::units::format_size;

/// What a case of `bytes` needs free before it starts: its data plus room for the
/// file system's metadata (extent trees, journal) — 1 MiB and 1/64 of the data.
pub fn needed_for(bytes: u64) -> u64 {
    bytes.saturating_add((1 << 20) + bytes / 64)
}

/// The reason to skip a case of `bytes` in `dir`, or None when it fits.
pub fn shortfall(dir: &Path, bytes: u64) -> Option<String> {
    let needed = needed_for(bytes);
    match free_bytes(At::Path(dir)) {
        Ok(free) if free >= needed => None,
        Ok(free) => Some(format!(
            "not enough free space: the case needs {} ({} of data and a margin for metadata), {} is free",
            format_size(needed),
            format_size(bytes),
            format_size(free)
        )),
        // Not knowing is not a reason to skip: the writes will say what is wrong.
        Err(_) => None,
    }
}

/// Before the run: the largest case's data must fit in what is free now.
pub fn check_up_front(path: &Path, largest: u64) -> Result<(), String> {
    let free =
        free_bytes(At::Path(path)).map_err(|e| format!("cannot read the free space of {}: {}", path.display(), e))?;
    if largest > free {
        return Err(format!(
            "--size {} does not fit in {}: {} is free (use a smaller --size)",
            format_size(largest),
            path.display(),
            format_size(free)
        ));
    }
    Ok(())
}

/// PATH must be on a writable mount and writable by us (checked before anything is
/// created, so the user gets one line instead of a failed mkdir).
pub fn check_writable(path: &Path) -> Result<(), String> {
    let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| format!("PATH {} contains a NUL byte", path.display()))?;
    if statvfs(At::Path(path)).is_ok_and(|fs| fs.f_flag & libc::ST_RDONLY != 0) {
        return Err(format!("PATH {} is on a read-only file system", path.display()));
    }
    // SAFETY: access(2) on a valid path; W_OK|X_OK is what creating an entry needs.
    if unsafe { libc::access(c_path.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        let error = io::Error::last_os_error();
        return Err(format!("PATH {} is not writable: {}", path.display(), error::plain(&error)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_margin_grows_with_the_case() {
        assert_eq!(needed_for(0), 1 << 20);
        assert_eq!(needed_for(64 << 20), (64 << 20) + (1 << 20) + (1 << 20));
        assert_eq!(needed_for(u64::MAX), u64::MAX);
    }

    #[test]
    fn a_huge_case_is_refused_and_a_small_one_fits() {
        let dir = tempfile::tempdir().unwrap();
        assert!(free_bytes(At::Path(dir.path())).unwrap() > 0);
        let open = std::fs::File::open(dir.path()).unwrap();
        assert!(free_bytes(At::Fd(std::os::fd::AsRawFd::as_raw_fd(&open))).unwrap() > 0);
        assert!(free_bytes(At::Fd(-1)).is_err());
        assert!(shortfall(dir.path(), 1).is_none());
        let reason = shortfall(dir.path(), 1 << 62).unwrap();
        assert!(reason.contains("is free"), "{reason}");
        let refusal = check_up_front(dir.path(), 1 << 62).unwrap_err();
        assert!(refusal.contains("does not fit") && !refusal.contains('\n'), "{refusal}");
    }
}
