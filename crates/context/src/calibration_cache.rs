//! `run`'s short calibration, kept for an hour per machine and path (docs/ceilings.md):
//! a user who asks again on the same path within the hour does not wait for the memory
//! copy and the device ceiling a second time. A calibration is reused only for exactly
//! the same host (name, kernel, CPUs), the same filesystem and device under the same
//! mount point, the same work (its effort and memory-copy size classes) and the same
//! writebench; anything else, an older entry, or one that cannot be read is measured
//! again. `--recalibrate` always measures. Kept in `$XDG_CACHE_HOME/writebench/
//! calibration/` (else `~/.cache/...`), one file per key, written atomically, so that
//! concurrent runs never read half a file.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::TargetInfo;
use crate::calibration::Calibration;

/// How long a calibration is reused. Its ceilings are best runs, which drift less than
/// means, but this machine's speed moves by tens of percent within minutes: an hour is
/// what a user re-running a question expects, not a day.
pub const MAX_AGE: Duration = Duration::from_secs(3600);

/// What a calibration is valid for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Key {
    pub writebench: String,
    pub hostname: String,
    pub kernel: String,
    pub cpus: usize,
    pub fs_type: String,
    pub device: String,
    pub block_device: Option<String>,
    pub mount_point: String,
    /// What was measured: the effort's name and the memory copy's size classes.
    pub work: String,
}

impl Key {
    /// The key of a calibration on `target` by this process, for `work`.
    pub fn new(target: &TargetInfo, work: String) -> Key {
        Key {
            writebench: env!("CARGO_PKG_VERSION").to_string(),
            hostname: super::hostname(),
            kernel: super::kernel_release(),
            cpus: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            fs_type: target.fs_type.clone(),
            device: target.device.clone(),
            block_device: target.block_device.clone(),
            mount_point: target.mount_point.clone(),
            work,
        }
    }

    fn file_name(&self) -> String {
        // A collision or a hasher that changed with the compiler only costs a miss: the
        // whole key is stored in the file and compared.
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.hash(&mut hasher);
        format!("calibration-{:016x}.json", hasher.finish())
    }
}

#[derive(Serialize, Deserialize)]
struct Entry {
    key: Key,
    measured_unix_s: f64,
    calibration: Calibration,
}

/// `$XDG_CACHE_HOME/writebench`, else `$HOME/.cache/writebench`: every cache of writebench
/// lives under it (the runtimes' runners, the calibration).
pub fn cache_root() -> Result<PathBuf, String> {
    let base = match std::env::var_os("XDG_CACHE_HOME").filter(|dir| !dir.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => match std::env::var_os("HOME").filter(|dir| !dir.is_empty()) {
            Some(home) => PathBuf::from(home).join(".cache"),
            None => return Err("neither XDG_CACHE_HOME nor HOME is set: no cache".into()),
        },
    };
    Ok(base.join("writebench"))
}

/// Where the calibrations are kept: `calibration/` under [`cache_root`].
pub fn dir() -> Result<PathBuf, String> {
    cache_root().map(|root| root.join("calibration"))
}

/// The calibration kept in `dir` for `key`, with its age at `now`, when there is one
/// younger than [`MAX_AGE`].
pub fn load(dir: &Path, key: &Key, now: SystemTime) -> Option<(Calibration, Duration)> {
    let text = std::fs::read_to_string(dir.join(key.file_name())).ok()?;
    let entry: Entry = serde_json::from_str(&text).ok()?;
    let measured = UNIX_EPOCH.checked_add(Duration::try_from_secs_f64(entry.measured_unix_s).ok()?)?;
    // A calibration from the future (a clock set back) is not trusted either; less than
    // a second ahead is the rounding of the stored seconds.
    let age = match now.duration_since(measured) {
        Ok(age) => age,
        Err(ahead) if ahead.duration() < Duration::from_secs(1) => Duration::ZERO,
        Err(_) => return None,
    };
    (entry.key == *key && age < MAX_AGE).then_some((entry.calibration, age))
}

/// Keeps `calibration`, measured at `now`, in `dir` for `key`, and removes entries older
/// than [`MAX_AGE`] (each path a user ever calibrated, say a test's temporary mount,
/// leaves one file, which must not pile up).
pub fn store(dir: &Path, key: &Key, calibration: &Calibration, now: SystemTime) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    prune(dir, now);
    let measured_unix_s = now.duration_since(UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0);
    let entry = Entry { key: key.clone(), measured_unix_s, calibration: calibration.clone() };
    let text = serde_json::to_string_pretty(&entry).map_err(std::io::Error::other)?;
    let path = dir.join(key.file_name());
    let temporary = dir.join(format!(".{}.{}", key.file_name(), std::process::id()));
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, &path)
}

fn prune(dir: &Path, now: SystemTime) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let calibration = name.to_str().is_some_and(|n| n.starts_with("calibration-") && n.ends_with(".json"));
        let modified = entry.metadata().and_then(|m| m.modified());
        let old = modified.is_ok_and(|at| now.duration_since(at).is_ok_and(|age| age > MAX_AGE));
        if calibration && old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(mount_point: &str) -> Key {
        let target = TargetInfo { mount_point: mount_point.into(), fs_type: "tmpfs".into(), ..TargetInfo::default() };
        Key::new(&target, "short: 1MiB 64MiB".into())
    }

    fn calibration() -> Calibration {
        Calibration { memcpy_bytes_per_s: 10e9, seconds: 0.3, ..Calibration::default() }
    }

    #[test]
    fn a_calibration_is_reused_within_the_hour_for_its_own_key_only() {
        let dir = tempfile::tempdir().unwrap();
        let now = SystemTime::now();
        store(dir.path(), &key("/a"), &calibration(), now).unwrap();
        let later = now + Duration::from_secs(600);
        let (kept, age) = load(dir.path(), &key("/a"), later).expect("reused");
        assert_eq!(kept, calibration());
        assert!((age.as_secs_f64() - 600.0).abs() < 1.0, "{age:?}");
        assert!(load(dir.path(), &key("/b"), later).is_none(), "another mount point");
        let other_work = Key { work: "short: 1MiB 256MiB".into(), ..key("/a") };
        assert!(load(dir.path(), &other_work, later).is_none(), "other size classes");
        assert!(load(dir.path(), &key("/a"), now + MAX_AGE + Duration::from_secs(1)).is_none(), "too old");
        assert!(load(dir.path(), &key("/a"), now - Duration::from_secs(60)).is_none(), "from the future");
    }

    #[test]
    fn a_damaged_entry_is_a_miss_and_old_entries_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let now = SystemTime::now();
        std::fs::write(dir.path().join(key("/a").file_name()), "{ half a file").unwrap();
        assert!(load(dir.path(), &key("/a"), now).is_none());
        store(dir.path(), &key("/a"), &calibration(), now).unwrap();
        assert!(load(dir.path(), &key("/a"), now).is_some(), "written over");
        // An hour and more later, storing another path's removes the old one.
        store(dir.path(), &key("/b"), &calibration(), now + MAX_AGE + Duration::from_secs(60)).unwrap();
        let names: Vec<String> =
            std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        assert_eq!(names, vec![key("/b").file_name()]);
    }
}
