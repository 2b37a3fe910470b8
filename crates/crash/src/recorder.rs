//! The recorder (docs/crash.md): a FUSE filesystem of one file, `image`, that a loop
//! device serves to a real filesystem as its disk. Every write and every flush the
//! filesystem sends down arrives here, in order, and is logged before it is answered:
//! a block-level write log with its flush barriers (what device-mapper's `log-writes`
//! records), on a kernel without device-mapper.
//!
//! Why each choice:
//! - every open of `image` is answered with direct I/O (`FOPEN_DIRECT_IO`), and FUSE's
//!   write-back cache is never asked for: the kernel's page cache for the file would
//!   merge writes and send them sorted by offset at fsync time, hiding their order;
//! - `fsync` is implemented and logged as a flush: the loop driver turns a flush request
//!   (`REQ_PREFLUSH`, and FUA, which it emulates) into fsync of its backing file; a daemon
//!   that answered ENOSYS would make the kernel stop sending fsync and report success;
//! - FUSE's close-time `flush` is not a barrier and is not logged;
//! - loop turns discard and write-zeroes into a punched hole: logged as a zeroed range;
//! - one thread serves every request, so the log's order is the order of arrival;
//! - a slow device ([`Pace::Slow`], `--device slow`) answers each write and flush after a
//!   seeded random delay, while the log takes it at once, and its loop device's queue
//!   holds four requests ([`SLOW_QUEUE`]): the kernel then finds its queue full as on a
//!   slow disk, and which writes it has issued before each flush (writeback racing a
//!   commit) is decided as there, not as on a device that answers in microseconds (on
//!   this kernel that changed no recording of the built-in workloads, and does change a
//!   program's whose commit passes the writeback another thread started: docs/crash.md,
//!   "A slow device"). Its delays apply from the start of the recording, not to the
//!   set-up.

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fuser::{
    BackgroundSession, BsdFileFlags, Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation,
    INodeNo, LockOwner, MountOption, OpenFlags, ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry,
    ReplyOpen, ReplyWrite, Request, TimeOrNow, WriteFlags,
};

use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::{Rng, SeedableRng};

use super::image::Image;

/// How fast the recorder answers (`--device`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pace {
    /// At once: a RAM device.
    #[default]
    Fast,
    /// Each write and flush after a random delay of up to [`SLOW_DELAY`], drawn from
    /// `seed`: a slow disk (a spinning one seeks for milliseconds, a cheap flash card
    /// programs for as long), and the range of the feasibility check docs/crash.md tells
    /// of ("A slow device").
    Slow { seed: u64 },
}

/// The longest delay of a slow device's answer.
pub const SLOW_DELAY: Duration = Duration::from_millis(3);

/// The requests a slow device takes at once: the fewest the kernel lets a queue hold
/// (`nr_requests` below 4 is raised to 4; a USB stick or a cheap card takes 1 or 2, a
/// SATA disk 32). A loop device takes 128 by default, 160 MiB at its 1.25 MiB a request,
/// and serves them in order: the kernel then never waits for the device, and writeback
/// that another thread started is always received whole before a later flush. With a
/// short queue, what is submitted while the device is busy waits in the kernel, and a
/// flush may pass it (docs/crash.md, "A slow device").
pub const SLOW_QUEUE: u32 = 4;

impl Pace {
    /// Its name, as `--device` takes it.
    pub fn name(self) -> &'static str {
        match self {
            Pace::Fast => "fast",
            Pace::Slow { .. } => "slow",
        }
    }

    /// The requests its queue holds, if it is shorter than a loop device's own.
    pub fn queue_depth(self) -> Option<u32> {
        match self {
            Pace::Fast => None,
            Pace::Slow { .. } => Some(SLOW_QUEUE),
        }
    }

    /// The delays its answers come after, in order.
    pub fn delays(self) -> Delays {
        match self {
            Pace::Fast => Delays(None),
            Pace::Slow { seed } => Delays(Some(Xoshiro256PlusPlus::seed_from_u64(seed))),
        }
    }
}

/// The delays of a device's answers, drawn in the order requests arrive (all zero for a
/// fast one): `Pace::delays`.
#[derive(Debug)]
pub struct Delays(Option<Xoshiro256PlusPlus>);

impl Iterator for Delays {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        Some(match &mut self.0 {
            None => Duration::ZERO,
            Some(random) => Duration::from_micros(random.next_u64() % (SLOW_DELAY.as_micros() as u64 + 1)),
        })
    }
}

/// The one file the recorder serves.
pub const IMAGE: &str = "image";
const ROOT: INodeNo = INodeNo::ROOT;
const FILE: INodeNo = INodeNo(2);
/// Attributes are asked again at once: the size never changes, but nothing is gained by
/// letting the kernel keep them.
const TTL: Duration = Duration::ZERO;

/// One record of the log, in the order the device received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// Bytes written at an offset of the image.
    Write { offset: u64, data: Vec<u8> },
    /// A range zeroed (discard or write-zeroes, which loop sends as a punched hole).
    Zero { offset: u64, len: u64 },
    /// A flush: what was written before it is on the device.
    Flush,
}

/// The image and the log, under one lock so that a record and its effect are one step.
#[derive(Debug)]
struct State {
    image: Image,
    log: Vec<Entry>,
    delays: Delays,
}

struct Served {
    state: Arc<Mutex<State>>,
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn attr(ino: INodeNo, size: u64) -> FileAttr {
    let (kind, perm, nlink) =
        if ino == ROOT { (FileType::Directory, 0o755, 2) } else { (FileType::RegularFile, 0o600, 1) };
    FileAttr {
        ino,
        size,
        blocks: size.div_ceil(512),
        atime: UNIX_EPOCH,
        mtime: UNIX_EPOCH,
        ctime: UNIX_EPOCH,
        crtime: UNIX_EPOCH,
        kind,
        perm,
        nlink,
        // SAFETY: getuid and getgid cannot fail.
        uid: unsafe { libc::getuid() },
        gid: unsafe { libc::getgid() },
        rdev: 0,
        flags: 0,
        blksize: 4096,
    }
}

impl Served {
    fn size(&self) -> u64 {
        lock(&self.state).image.size()
    }
}

impl Filesystem for Served {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        if parent == ROOT && name == IMAGE {
            reply.entry(&TTL, &attr(FILE, self.size()), Generation(0));
        } else {
            reply.error(Errno::ENOENT);
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match ino {
            ROOT => reply.attr(&TTL, &attr(ROOT, 0)),
            FILE => reply.attr(&TTL, &attr(FILE, self.size())),
            _ => reply.error(Errno::ENOENT),
        }
    }

    /// Times and modes are accepted and forgotten (fdatasync fails with EIO when a
    /// file system cannot set them); the size is the device's and cannot change.
    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        if ino != FILE {
            return reply.error(Errno::EPERM);
        }
        let current = self.size();
        if size.is_some_and(|size| size != current) {
            return reply.error(Errno::EPERM);
        }
        reply.attr(&TTL, &attr(FILE, current));
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        if ino != FILE {
            return reply.error(Errno::EISDIR);
        }
        reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO);
    }

    fn read(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let data = lock(&self.state).image.read(offset, u64::from(size));
        reply.data(&data);
    }

    /// Logged, then applied, then answered: a write the filesystem saw acknowledged is
    /// in the log.
    fn write(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let mut state = lock(&self.state);
        let end = offset.saturating_add(data.len() as u64).min(state.image.size());
        if offset >= end && !data.is_empty() {
            drop(state);
            return reply.error(Errno::ENOSPC);
        }
        let kept = &data[..(end.saturating_sub(offset)) as usize];
        state.log.push(Entry::Write { offset, data: kept.to_vec() });
        let written = state.image.write(offset, kept);
        let delay = state.delays.next().unwrap_or_default();
        drop(state);
        std::thread::sleep(delay);
        reply.written(written as u32);
    }

    /// A close, not a barrier.
    fn flush(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _lock_owner: LockOwner, reply: ReplyEmpty) {
        reply.ok();
    }

    fn fsync(&self, _req: &Request, _ino: INodeNo, _fh: FileHandle, _datasync: bool, reply: ReplyEmpty) {
        let delay = {
            let mut state = lock(&self.state);
            state.log.push(Entry::Flush);
            state.delays.next().unwrap_or_default()
        };
        std::thread::sleep(delay);
        reply.ok();
    }

    fn fallocate(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        if mode & (libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_ZERO_RANGE) != 0 {
            let mut state = lock(&self.state);
            state.log.push(Entry::Zero { offset, len: length });
            state.image.zero(offset, length);
        }
        // Plain allocation: every byte of the image is already there.
        reply.ok();
    }

    fn readdir(&self, _req: &Request, ino: INodeNo, _fh: FileHandle, offset: u64, mut reply: ReplyDirectory) {
        if ino != ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        let entries =
            [(ROOT, FileType::Directory, "."), (ROOT, FileType::Directory, ".."), (FILE, FileType::RegularFile, IMAGE)];
        for (index, (ino, kind, name)) in entries.into_iter().enumerate().skip(offset as usize) {
            if reply.add(ino, index as u64 + 1, kind, name) {
                break;
            }
        }
        reply.ok();
    }
}

/// A mounted recorder. [`Recorder::stop`] unmounts it; dropping it without (an error
/// path) aborts its connection, so that nothing waits on it.
pub struct Recorder {
    state: Arc<Mutex<State>>,
    mount: PathBuf,
    /// The FUSE connection's number (`/sys/fs/fuse/connections/N`).
    connection: Option<u64>,
    session: Option<BackgroundSession>,
}

impl Recorder {
    /// Mounts a recorder of an image of `size` bytes (all zeros) on the empty directory
    /// `mount`; the image is `mount/image`.
    pub fn start(mount: &Path, size: u64) -> io::Result<Recorder> {
        Recorder::start_with(mount, Image::new(size))
    }

    /// The same, serving `image` as it is (a filesystem made before recording starts).
    pub fn start_with(mount: &Path, image: Image) -> io::Result<Recorder> {
        use std::os::unix::fs::MetadataExt;
        let state = Arc::new(Mutex::new(State { image, log: Vec::new(), delays: Pace::Fast.delays() }));
        let mut config = Config::default();
        config.mount_options = vec![MountOption::FSName("writebench-recorder".into()), MountOption::RW];
        config.n_threads = Some(1);
        let session = fuser::spawn_mount(Served { state: state.clone() }, mount, &config)?;
        // The connection's number is the mount's device minor.
        let connection = std::fs::metadata(mount).ok().map(|m| (m.dev() & 0xff) | ((m.dev() >> 12) & 0xfff00));
        Ok(Recorder { state, mount: mount.to_path_buf(), connection, session: Some(session) })
    }

    /// The served file: what a loop device is set up over.
    pub fn image_path(&self) -> PathBuf {
        self.mount.join(IMAGE)
    }

    /// How many records the log has: a workload notes it when a call returns, and the
    /// records before it are what the device had received by then.
    pub fn position(&self) -> usize {
        lock(&self.state).log.len()
    }

    /// The records from `from` on.
    pub fn entries(&self, from: usize) -> Vec<Entry> {
        lock(&self.state).log.get(from..).map(<[Entry]>::to_vec).unwrap_or_default()
    }

    /// Forgets the log so far (the set-up's records: mkfs, the first mount), keeping the
    /// image: recording starts from the image as it is, answered at `pace` from now on.
    pub fn start_log(&self, pace: Pace) {
        let mut state = lock(&self.state);
        state.log.clear();
        state.delays = pace.delays();
    }

    /// A copy of the image as the device holds it now.
    pub fn image(&self) -> Image {
        lock(&self.state).image.clone()
    }

    /// Unmounts and waits for the serving thread; Ok: the image as the device held it
    /// last, moved out of the recorder (not copied: an image may hold hundreds of MB).
    /// The connection is aborted first, so that a loop device still over the image (an
    /// error path) cannot make this wait: its I/O fails instead.
    pub fn stop(mut self) -> io::Result<Image> {
        self.abort();
        let last = std::mem::take(&mut lock(&self.state).image);
        let Some(session) = self.session.take() else { return Ok(last) };
        match session.umount_and_join() {
            Ok(()) => Ok(last),
            // Still busy (a loop device whose detach failed, a process holding the image
            // open): detached lazily, the kernel ends the mount when the last user lets
            // go. Its connection is aborted, so nothing waits on it meanwhile. (A loop
            // device's own detach waits until it has let go of the image:
            // `lab::loopdev::detach`.)
            Err(error) if error.raw_os_error() == Some(libc::EBUSY) => self.detach_lazily().map(|()| last),
            Err(error) => Err(error),
        }
    }

    fn detach_lazily(&self) -> io::Result<()> {
        use std::os::unix::ffi::OsStrExt;
        let path = std::ffi::CString::new(self.mount.as_os_str().as_bytes())?;
        // SAFETY: umount2 of a NUL-terminated path we mounted.
        if unsafe { libc::umount2(path.as_ptr(), libc::MNT_DETACH) } == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// Aborts the FUSE connection: every request, pending or future, fails, and the
    /// serving thread ends.
    fn abort(&self) {
        if let Some(connection) = self.connection {
            let _ = std::fs::write(format!("/sys/fs/fuse/connections/{connection}/abort"), "1");
        }
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Some(session) = self.session.take() {
            self.abort();
            drop(session);
        }
    }
}
