//! The crash recorder (docs/crash.md) on real parts: its FUSE file written directly, and a
//! real ext4 on a loop device over it. Needs root, losetup and mkfs.ext4; fails loudly
//! without them.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use writebench::crash::recorder::{Entry, Recorder};

fn run(program: &str, args: &[&str]) -> String {
    let output = Command::new(program).args(args).output().unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(output.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// A loop device over a file, detached on drop.
struct Loop(String);

impl Loop {
    fn over(file: &Path) -> Loop {
        Loop(run("losetup", &["--find", "--show", file.to_str().unwrap()]))
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

/// A mount, undone on drop.
struct Mounted(PathBuf);

impl Mounted {
    fn of(device: &str, at: &Path, options: &str) -> Mounted {
        run("mount", &["-o", options, device, at.to_str().unwrap()]);
        Mounted(at.to_path_buf())
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn flushes(entries: &[Entry]) -> usize {
    entries.iter().filter(|e| **e == Entry::Flush).count()
}

#[test]
fn writes_zeroes_and_syncs_of_the_image_arrive_in_the_log_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let recorder = Recorder::start(dir.path(), 1 << 20).expect("the recorder mounts (root and /dev/fuse needed)");
    let image = OpenOptions::new().read(true).write(true).open(recorder.image_path()).unwrap();
    assert_eq!(image.metadata().unwrap().len(), 1 << 20);

    image.write_all_at(&[b'a'; 4096], 0).unwrap();
    image.write_all_at(&[b'b'; 100], 5000).unwrap();
    image.sync_all().unwrap();
    image.write_all_at(&[b'c'; 10], 8192).unwrap();
    image.sync_data().unwrap();
    // A punched hole, as loop sends a discard.
    let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
    // SAFETY: fallocate on a descriptor this test owns.
    assert_eq!(unsafe { libc::fallocate(image.as_raw_fd(), mode, 0, 2048) }, 0);
    drop(image);

    let expected = vec![
        Entry::Write { offset: 0, data: vec![b'a'; 4096] },
        Entry::Write { offset: 5000, data: vec![b'b'; 100] },
        Entry::Flush,
        Entry::Write { offset: 8192, data: vec![b'c'; 10] },
        Entry::Flush,
        Entry::Zero { offset: 0, len: 2048 },
    ];
    assert_eq!(recorder.entries(0), expected, "every write, flush and zeroing, in order; a close is no flush");
    assert_eq!(recorder.position(), expected.len());
    let held = recorder.image();
    assert_eq!(held.read(0, 4096), [vec![0; 2048], vec![b'a'; 2048]].concat());
    assert_eq!(held.read(5000, 100), vec![b'b'; 100]);
    let mut back = vec![0; 10];
    File::open(recorder.image_path()).unwrap().read_exact_at(&mut back, 8192).unwrap();
    assert_eq!(back, [b'c'; 10]);
    recorder.stop().unwrap();
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none(), "unmounted: the directory is empty again");
}

/// ext4 on a loop device over the recorder's image: what it writes reaches the log, and
/// so do its flushes, on syncfs and fsync; mounted `barrier=0`, it sends none.
#[test]
fn ext4_on_a_loop_device_over_the_image_sends_its_writes_and_flushes() {
    let dir = tempfile::tempdir().unwrap();
    let served = dir.path().join("served");
    let mounted = dir.path().join("mounted");
    std::fs::create_dir_all(&served).unwrap();
    std::fs::create_dir_all(&mounted).unwrap();
    let recorder = Recorder::start(&served, 64 << 20).expect("the recorder mounts");
    let flushed_with = |options: &str| {
        let device = Loop::over(&recorder.image_path());
        // No lazy initialisation: it would write and flush in the background, later.
        run("mkfs.ext4", &["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", &device.0]);
        let mount = Mounted::of(&device.0, &mounted, options);
        let pattern: Vec<u8> = (0..1u32 << 20).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
        let before = recorder.position();
        std::fs::write(mount.0.join("data"), &pattern).unwrap();
        let file = File::open(mount.0.join("data")).unwrap();
        // SAFETY: syncfs on a descriptor this test owns (sync -f, not a global sync).
        assert_eq!(unsafe { libc::syncfs(file.as_raw_fd()) }, 0);
        let after_syncfs = recorder.entries(before);
        let written = after_syncfs
            .iter()
            .any(|e| matches!(e, Entry::Write { data, .. } if data.windows(4096).any(|w| w == &pattern[..4096])));
        assert!(written, "the file's data reached the device ({} records)", after_syncfs.len());
        let before_fsync = recorder.position();
        let other = OpenOptions::new().create(true).truncate(true).write(true).open(mount.0.join("other")).unwrap();
        other.write_all_at(b"committed", 0).unwrap();
        other.sync_all().unwrap();
        let after_fsync = recorder.entries(before_fsync);
        drop((file, other, mount, device));
        (flushes(&after_syncfs), flushes(&after_fsync))
    };
    let (syncfs, fsync) = flushed_with("rw");
    assert!(syncfs >= 1 && fsync >= 1, "ext4's journal commits flush: {syncfs} on syncfs, {fsync} on fsync");
    let (syncfs, fsync) = flushed_with("barrier=0");
    assert_eq!((syncfs, fsync), (0, 0), "barrier=0: no flush reaches the device");
    recorder.stop().unwrap();
}
