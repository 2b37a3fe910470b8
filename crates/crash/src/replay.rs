//! One crash state checked on the real filesystem (docs/crash.md): the image written to
//! a file in RAM, a loop device over it, a mount (which replays the journal, as the
//! next boot would), the promises read back, an unmount, then the filesystem's checker
//! in read-only mode on the replayed image. Checking before the replay would report
//! false errors (e2fsck -n) or refuse (xfs_repair -n) on an image that only needs its
//! journal replayed.

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::filesystems::CrashFs;
use super::image::Image;
use super::promise::{self, Ack};
use super::record::mount_step;
use lab::names::Names;
use lab::objects::{Object, Objects};
use lab::shell::Log;

/// What one state showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The checker's first complaint, when it found the filesystem in need of repair.
    pub repair: Option<String>,
    /// The first promise broken, in words.
    pub broken: Option<String>,
    /// Why the judge could not say (a user's checker that crashed or timed out).
    pub failed: Option<String>,
    /// The broken state is corrupt (it did not mount, or a user's checker said so with
    /// exit status 2), not only short of a promise.
    pub corrupt: bool,
    /// What groups a broken state with others: the judge's own words, without the
    /// promise they were said after.
    pub key: Option<String>,
    /// The promises the state broke (see [`Judged::promises`]).
    pub promises: Vec<String>,
}

/// What the judge of a state found in the mounted filesystem.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Judged {
    pub broken: Option<String>,
    pub failed: Option<String>,
    pub corrupt: bool,
    /// See [`Outcome::key`] (the broken words when None).
    pub key: Option<String>,
    /// The promises broken: a workload's call that returned ("the fsync at the end"), or
    /// the lines a program said before the power went that its checker finds broken.
    pub promises: Vec<String>,
}

/// Where states are checked: one image file and one mount point, reused state after state.
pub struct Replayer<'a> {
    pub fs: &'a CrashFs,
    pub options: String,
    pub image: PathBuf,
    pub mount: PathBuf,
}

impl<'a> Replayer<'a> {
    /// The paths for `names`; the caller creates the mount point and removes both.
    pub fn new(fs: &'a CrashFs, options: &str, names: Names) -> Replayer<'a> {
        Replayer {
            fs,
            options: options.to_string(),
            image: names.image("crash-state", 0),
            mount: names.mount_point("crash-state"),
        }
    }

    /// Checks `image` with `judge`, given the mounted filesystem's root (Err: it could
    /// not run at all, a signal came).
    pub fn check(&self, image: &Image, judge: &dyn Fn(&Path) -> Result<Judged, String>) -> Result<Outcome, String> {
        write_image(&self.image, image)?;
        let mut objects = Objects::default();
        let mut log = Log::default();
        let device = self.fs.attach(&self.image, &mut objects, &mut log)?;
        let judged = match mount_step(self.fs, &self.options, &device, &self.mount).run() {
            Err(error) => Judged {
                broken: Some(format!("the filesystem did not mount: {error}")),
                corrupt: true,
                ..Judged::default()
            },
            Ok(_) => {
                let mut mounted = Objects::default();
                mounted.push(Object::Mount(self.mount.clone()));
                let judged = judge(&self.mount);
                mounted.teardown().map_err(|failures| failures.join("; "))?;
                judged?
            }
        };
        let repair = run_checker(self.fs, &device)?;
        objects.teardown().map_err(|failures| failures.join("; "))?;
        let key = judged.key.or_else(|| judged.broken.clone());
        let Judged { broken, failed, corrupt, promises, .. } = judged;
        Ok(Outcome { repair, broken, failed, corrupt, key, promises })
    }
}

/// The first promise made at a position up to `end` that the files under `root` break:
/// "the fsync at the end returned, but data: bytes 0–16,383 were zeros".
pub fn judge(acks: &[Ack], end: usize, root: &Path) -> Judged {
    let mut read = |name: &str| match std::fs::read(root.join(name)) {
        Ok(data) => Ok(Some(data)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("reading {name} failed: {}", error::plain(&e))),
    };
    let mut acks: Vec<&Ack> = acks.iter().filter(|a| a.position <= end).collect();
    acks.sort_by_key(|a| a.position);
    for ack in acks {
        if let Err(found) = promise::check(&ack.promise, &mut read) {
            let broken = if ack.position == 0 { found } else { format!("{}, but {found}", ack.what) };
            return Judged { broken: Some(broken), promises: vec![ack.what.clone()], ..Judged::default() };
        }
    }
    Judged::default()
}

/// Writes `image` to `path` as a sparse file of its size: its written pages only.
pub fn write_image(path: &Path, image: &Image) -> Result<(), String> {
    let failed = |e: std::io::Error| format!("cannot write {}: {}", path.display(), error::plain(&e));
    let file = std::fs::File::create(path).map_err(failed)?;
    file.set_len(image.size()).map_err(failed)?;
    for (offset, bytes) in image.pages() {
        file.write_all_at(bytes, offset).map_err(failed)?;
    }
    Ok(())
}

/// The checker on `device`: None when it found the filesystem clean (exit 0), else its
/// first complaint ("e2fsck: … Block bitmap differences: -(9--1032)"); Err when it could
/// not run at all.
fn run_checker(fs: &CrashFs, device: &str) -> Result<Option<String>, String> {
    use std::os::unix::process::CommandExt;
    let output = std::process::Command::new(fs.checker[0])
        .args(&fs.checker[1..])
        .arg(device)
        .process_group(0)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {}", fs.checker[0], error::plain(&e)))?;
    if output.status.success() {
        return Ok(None);
    }
    let text = format!("{}\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    // Progress and banners are not complaints.
    let banner = |line: &str| {
        let first = line.split_whitespace().next().unwrap_or("");
        line.is_empty()
            || line.starts_with('[')
            || line.starts_with(fs.checker[0]) && line.contains('(')
            || [
                "Pass", "Phase", "Opening", "Checking", "Starting", "UUID:", "found", "total", "cache", "fs", "file",
                "no",
            ]
            .contains(&first)
            || line.starts_with("- ")
    };
    let complaint = text.lines().map(str::trim).find(|line| !banner(line)).unwrap_or("no message");
    let code = output.status.code().map_or("a signal".to_string(), |c| format!("exit status {c}"));
    Ok(Some(format!("{} ({code}): {complaint}", fs.checker.join(" "))))
}
