//! One recording (docs/crash.md): a filesystem made on a loop device over the recorder's
//! image, the workload's files set up and synced, then the log cleared and the image kept
//! as the base, the workload (or the user's program, which cannot see the recorder) run
//! with its promises noted, and everything torn down in reverse. Objects are named as the lab names its own (`lab::names`), so that
//! `writebench clean` finds what a killed check left.

use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::filesystems::CrashFs;
use super::image::Image;
use super::program::Ended;
use super::promise::Ack;
use super::recorder::{Entry, Pace, Recorder};
use super::subject::Subject;
use super::workloads;
use lab::names::Names;
use lab::objects::{Object, Objects};
use lab::shell::{Log, Step};

/// What a workload left in the log.
#[derive(Debug)]
pub struct Recorded {
    /// The device as it was when the workload began (its set-up synced).
    pub base: Image,
    pub entries: Vec<Entry>,
    pub acks: Vec<Ack>,
    /// The commands that built the filesystem.
    pub commands: Vec<String>,
    /// How the user's program ended (None for a workload).
    pub ended: Option<Ended>,
    /// Seconds from the end of the workload or program to the last record the device
    /// received while the recording lingered (None: none came).
    pub last_write_after_end: Option<f64>,
    /// The device as the unmount at the end left it (its journal checkpointed): what
    /// `--show-log` names each block's file from.
    pub last: Image,
}

#[derive(Debug)]
pub enum Recording {
    Done(Recorded),
    /// The workload cannot run on this filesystem (why).
    Refused(String),
}

/// The directory the recorder is mounted on: one per recording, so that a recorder whose
/// teardown failed does not stop the next recordings (short, so that `clean`, which
/// unmounts the longest paths first, unmounts the filesystem on top of it before it).
pub fn recorder_dir(names: Names) -> PathBuf {
    static RECORDINGS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RECORDINGS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    names.mount_point(&format!("rec{n}"))
}

pub fn fs_dir(names: Names, fs: &CrashFs) -> PathBuf {
    names.mount_point(&format!("crash-{}", fs.name))
}

/// The mount command for `fs` with `options` ("" for its defaults).
pub fn mount_step(fs: &CrashFs, options: &str, device: &str, at: &Path) -> Step {
    let mut step = Step::new("mount").arg("-t").arg(fs.name);
    if !options.is_empty() {
        step = step.arg("-o").arg(options);
    }
    step.arg(device).arg(at)
}

/// Records `subject` on a new `fs` mounted with `options`, the device answering at
/// `pace` once the set-up is done. The lab's mount root for `names` must exist.
pub fn record(
    fs: &CrashFs,
    options: &str,
    subject: &Subject,
    names: Names,
    pace: Pace,
    linger: Duration,
    stop: &dyn Fn() -> Option<String>,
) -> Result<Recording, String> {
    // Dropped last to first: the filesystem and loop device, then the recorder, then
    // its directory.
    let mut outer = Objects::default();
    let served = recorder_dir(names);
    outer.make_dir(&served)?;
    let recorder = Recorder::start(&served, fs.device_bytes)
        .map_err(|e| format!("cannot mount the recorder (FUSE, /dev/fuse): {}", error::plain(&e)))?;
    let mut inner = Objects::default();
    let mut log = Log::default();
    let image = recorder.image_path();
    let device = fs.attach(&image, &mut inner, &mut log)?;
    let mut mkfs = Step::new(fs.mkfs[0]);
    for arg in &fs.mkfs[1..] {
        mkfs = mkfs.arg(arg);
    }
    log.run(mkfs.arg(&device))?;
    let dir = fs_dir(names, fs);
    inner.make_dir(&dir)?;
    log.run(mount_step(fs, options, &device, &dir))?;
    inner.push(Object::Mount(dir.clone()));
    if let Subject::Workload(workload) = subject {
        if let Some(why) = workloads::refusal(workload, &dir) {
            return finish(inner, recorder, outer).map(|_| Recording::Refused(why));
        }
        if let Err(error) = workloads::setup(workload, &dir) {
            return Err(fail(error, inner, recorder, outer));
        }
    }
    if let Err(error) = sync_fs(&dir) {
        return Err(fail(error, inner, recorder, outer));
    }
    let shortened = pace.queue_depth().map_or(Ok(()), |depth| lab::loopdev::set_queue_depth(&device, depth));
    if let Err(error) = shortened {
        return Err(fail(error, inner, recorder, outer));
    }
    recorder.start_log(pace);
    let base = recorder.image();
    let position = || recorder.position();
    let ran = match subject {
        Subject::Workload(workload) => workloads::run(workload, &dir, &position).map(|acks| (acks, None)),
        // The program cannot see the recorder's image (it would reach under the
        // filesystem it is checked on).
        Subject::Program(program) => program.record(&dir, vec![served.clone()], &position).map(|(a, e)| (a, Some(e))),
    };
    let (acks, ended) = match ran {
        Ok(ran) => ran,
        Err(error) => return Err(fail(error, inner, recorder, outer)),
    };
    let last_write_after_end = match keep_recording(&position, linger, stop) {
        Ok(last) => last,
        Err(why) => return Err(fail(why, inner, recorder, outer)),
    };
    let entries = recorder.entries(0);
    let last = finish(inner, recorder, outer)?;
    Ok(Recording::Done(Recorded { base, entries, acks, commands: log.lines, ended, last_write_after_end, last }))
}

/// Lets the recording go on for `linger` with nothing running: what the kernel writes by
/// itself after a program exits (ext4's journal commit every 5 s, writeback of data
/// dirty for 30 s, btrfs's commit every 30 s) is recorded as a machine that keeps running
/// would write it. The seconds from the start to the last record received; Err when a
/// signal came.
fn keep_recording(
    position: &dyn Fn() -> usize,
    linger: Duration,
    stop: &dyn Fn() -> Option<String>,
) -> Result<Option<f64>, String> {
    let started = Instant::now();
    let (mut seen, mut last) = (position(), None);
    while started.elapsed() < linger {
        if let Some(why) = stop() {
            return Err(why);
        }
        std::thread::sleep(Duration::from_millis(100).min(linger.saturating_sub(started.elapsed())));
        let now = position();
        if now != seen {
            (seen, last) = (now, Some(started.elapsed().as_secs_f64()));
        }
    }
    Ok(last)
}

/// syncfs of the filesystem at `dir`: this filesystem only, never a global sync.
fn sync_fs(dir: &Path) -> Result<(), String> {
    let root = std::fs::File::open(dir).map_err(|e| format!("open {}: {}", dir.display(), error::plain(&e)))?;
    // SAFETY: syncfs on a descriptor we own.
    if unsafe { libc::syncfs(root.as_raw_fd()) } != 0 {
        return Err(format!("syncfs of {}: {}", dir.display(), error::plain(&std::io::Error::last_os_error())));
    }
    Ok(())
}

/// `error`, after tearing everything down (and what the teardown could not do).
fn fail(error: String, inner: Objects, recorder: Recorder, outer: Objects) -> String {
    match finish(inner, recorder, outer) {
        Ok(_) => error,
        Err(also) => format!("{error}; {also}"),
    }
}

/// Tears a recording's objects down in order; Ok: the device as the filesystem's unmount
/// left it; Err: every step that failed, one line.
fn finish(mut inner: Objects, recorder: Recorder, mut outer: Objects) -> Result<Image, String> {
    let mut failures = inner.teardown().err().unwrap_or_default();
    let last = recorder.stop().unwrap_or_else(|e| {
        failures.push(format!("cannot unmount the recorder: {}", error::plain(&e)));
        Image::default()
    });
    failures.extend(outer.teardown().err().unwrap_or_default());
    if failures.is_empty() { Ok(last) } else { Err(failures.join("; ")) }
}
