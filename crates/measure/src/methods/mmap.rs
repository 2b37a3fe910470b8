//! `mmap(2)` with `MAP_SHARED`, then `memcpy` into the map: the data goes to the file's
//! page cache, so it reaches the file (benchmarkIOWrite used `MAP_PRIVATE`, whose copies never
//! do). Three ways for N threads to share one file, after rapidgzip's benchmarkIOWrite results:
//!
//! - `mmap`: one map of the whole file; each thread copies its part into it;
//! - `mmap-maps`: a map per thread over its part, all made from the run's descriptor;
//! - `mmap-fds`: a map per thread made from a descriptor of its own (a new open file
//!   description of the same file, from `/proc/self/fd/N`);
//! - `mmap-populate`: like `mmap`, but each thread first faults its whole part in with
//!   one `madvise(MADV_POPULATE_WRITE)` (Linux 5.14), then copies.
//!
//! What is timed: `mmap(2)` is set-up (untimed, recorded as `setup_seconds`); the page
//! faults and copies are the write span; `msync(MS_SYNC)` is the sync. On Linux msync
//! is a data sync of the range (what fdatasync does), so the fsync modes (`end`,
//! `every:N`) add an fsync of the file for the metadata and the fdatasync modes do not.
//! `munmap` (in `finish`) comes after the sync, since msync needs the map: it ends the
//! sync span when there is one, else the write span. `MADV_SEQUENTIAL` is not used: on
//! tmpfs it changed nothing beyond the noise. `MAP_POPULATE` is not used either: it
//! would fault the pages in inside mmap(2), out of the timed span, which made the write
//! span look 2-4x faster than it is; `mmap-populate` does that work timed instead.
//!
//! A map cannot extend its file: touching it beyond the end of the file raises SIGBUS.
//! The file must be sized first, which is the `sparse` state, so `empty` is refused
//! rather than measured as `sparse` under another name.
//!
//! If another process truncated the file during a run, touching the map would raise
//! SIGBUS; the scratch directory is private (0700), so nothing else should.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;

use super::{CallError, Engine, Job, Prepared};
use crate::durability::sync_fd;
use crate::source::page_size;
use crate::{fd, space};
use plan::durability::SyncCall;

/// How the threads of a run share the one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sharing {
    /// One map of each file, shared by every thread.
    OneMap,
    /// A map per part, all from the run's descriptor.
    MapPerThread,
    /// A map per part, each from a descriptor of its own.
    MapAndFdPerThread,
}

pub struct Mapped {
    name: &'static str,
    sharing: Sharing,
    /// Fault each part in with MADV_POPULATE_WRITE before copying (timed).
    prefault: bool,
}

pub static MMAP: Mapped = Mapped { name: "mmap", sharing: Sharing::OneMap, prefault: false };
pub static MMAP_MAPS: Mapped = Mapped { name: "mmap-maps", sharing: Sharing::MapPerThread, prefault: false };
pub static MMAP_FDS: Mapped = Mapped { name: "mmap-fds", sharing: Sharing::MapAndFdPerThread, prefault: false };
pub static MMAP_POPULATE: Mapped = Mapped { name: "mmap-populate", sharing: Sharing::OneMap, prefault: true };

/// What the variants refuse (the empty state, the open flags) is the catalogue's data
/// (`plan::catalog`); whether this kernel has MADV_POPULATE_WRITE is asked here.
impl Engine for Mapped {
    fn name(&self) -> &'static str {
        self.name
    }

    fn unsupported_reason(&self) -> Option<String> {
        self.prefault.then(|| advice_missing(libc::MADV_POPULATE_WRITE, "MADV_POPULATE_WRITE")).flatten()
    }

    /// The copy loop asks before each chunk; mmap-populate's whole part is faulted in
    /// before it, however soon the wall comes.
    fn wall_refusal(&self) -> Option<&'static str> {
        self.prefault.then_some("it faults its whole part in (MADV_POPULATE_WRITE) before its first write")
    }

    /// Makes the map(s) (and descriptors): untimed set-up.
    fn prepare<'a>(&'a self, job: &'a Job<'a>) -> Result<Box<dyn Prepared + 'a>, CallError> {
        check_space(job)?;
        for (&fd, &len) in job.files.iter().zip(job.file_lens) {
            check_length(fd, len)?;
        }
        let page = page_size() as u64;
        let mut run =
            MappedRun { job, maps: Vec::new(), targets: Vec::new(), fds: Vec::new(), prefault: self.prefault };
        match self.sharing {
            Sharing::OneMap => {
                for (file, (&fd, &len)) in job.files.iter().zip(job.file_lens).enumerate() {
                    run.maps.push(Map::new(fd, 0, len, file)?);
                }
                for part in job.parts {
                    run.targets.push(Target { map: part.file, start: part.offset as usize });
                }
            }
            Sharing::MapPerThread | Sharing::MapAndFdPerThread => {
                for part in job.parts {
                    let mut fd = job.files[part.file];
                    if self.sharing == Sharing::MapAndFdPerThread {
                        let own = fd::reopen(fd, libc::O_RDWR)
                            .map_err(|error| CallError::new("reopen via /proc/self/fd", error))?;
                        fd = own.as_raw_fd();
                        run.fds.push(own);
                    }
                    let window = Window::of(part.offset, part.len, page);
                    run.targets.push(Target { map: run.maps.len(), start: window.start as usize });
                    run.maps.push(Map::new(fd, window.offset, window.len, part.file)?);
                }
            }
        }
        Ok(Box::new(run))
    }
}

/// Where one part goes: which map, and the index in it of the part's first byte.
#[derive(Clone, Copy)]
struct Target {
    map: usize,
    start: usize,
}

struct MappedRun<'a> {
    job: &'a Job<'a>,
    maps: Vec<Map>,
    targets: Vec<Target>, // one per part
    /// The descriptors `mmap-fds` opened; the run's own files belong to `case_runs`.
    fds: Vec<OwnedFd>,
    prefault: bool,
}

impl Prepared for MappedRun<'_> {
    /// Copies the part into its map in `chunk`-sized pieces; the first touch of each
    /// page faults it in, which is where the file system does its work.
    fn write_part(&self, index: usize) -> Result<(), CallError> {
        // Asked for first: a wall counts from the writer's start.
        let span = self.job.span(index);
        let part = self.job.parts[index];
        let target = self.targets[index];
        let len = part.len as usize;
        let map = &self.maps[target.map];
        // Checked once per part, so that every copy below stays inside the map.
        assert!(target.start + len <= map.len, "part {index} does not fit its map");
        if self.prefault && len > 0 {
            let window = Window::of(target.start as u64, len as u64, page_size() as u64);
            // SAFETY: the window starts on a page, as madvise needs (the map's base is
            // page-aligned), and lies inside the live map (checked above). Populating only
            // faults pages in; neighbouring parts share at most a boundary page.
            let result = unsafe {
                libc::madvise(
                    map.base.as_ptr().add(window.offset as usize).cast(),
                    window.len as usize,
                    libc::MADV_POPULATE_WRITE,
                )
            };
            if result != 0 {
                return Err(CallError::new(
                    format!("madvise(MADV_POPULATE_WRITE) of {} bytes of part {index}", window.len),
                    io::Error::last_os_error(),
                ));
            }
        }
        let mut cursor = self.job.source.writer(index).cursor(part.offset);
        // every:N / every-fdatasync:N: the file is synced when the case's count says.
        let every = self.job.pacing.call().unwrap_or(SyncCall::Fsync);
        let mut pacer = self.job.pacing.pacer();
        let mut done = 0usize;
        while done < len && !span.at_wall(part.offset + done as u64) {
            let piece = self.job.chunk.min(len - done);
            let bytes = cursor.take(piece);
            // SAFETY: target.start + done + piece <= target.start + len <= map.len (checked
            // above), so the destination is inside the live, writable map. Parts are
            // disjoint byte ranges of the file, so no other thread writes these bytes, and
            // the source is a separate anonymous mapping, so the ranges do not overlap.
            unsafe {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), map.base.as_ptr().add(target.start + done), piece);
            }
            done += piece;
            if pacer.due() {
                self.sync_file(part.file, every)?;
            }
        }
        if pacer.at_end() {
            self.sync_file(part.file, every)?;
        }
        Ok(())
    }

    fn sync(&self) -> Result<(), CallError> {
        (0..self.job.files.len()).try_for_each(|file| self.sync_file(file, self.job.end_call()))
    }

    fn sync_part(&self, index: usize) -> Result<(), CallError> {
        self.sync_file(self.job.parts[index].file, self.job.end_call())
    }

    fn closes(&self) -> bool {
        true
    }

    /// `munmap` every map, then close the descriptors this run opened.
    fn finish(&mut self) -> Result<(), CallError> {
        // Taken out of `self`, so an early return leaves the rest to their own Drop
        // and nothing is unmapped or closed twice.
        for map in std::mem::take(&mut self.maps) {
            map.unmap()?;
        }
        for fd in std::mem::take(&mut self.fds) {
            fd::close(fd).map_err(|error| CallError::new("close of a per-thread descriptor", error))?;
        }
        Ok(())
    }
}

impl MappedRun<'_> {
    /// Makes file `file` durable: `msync(MS_SYNC)` of every map of it (on Linux, a data
    /// sync of the mapped range, like fdatasync), and for `call` fsync an fsync of the
    /// file for its metadata. Other writers may still be copying into the maps: the
    /// sync covers what they copied before it, as an fsync does for write(2).
    fn sync_file(&self, file: usize, call: SyncCall) -> Result<(), CallError> {
        for map in self.maps.iter().filter(|map| map.file == file) {
            // SAFETY: msync of a live mapping, with the address and length mmap returned.
            if unsafe { libc::msync(map.base.as_ptr().cast(), map.len, libc::MS_SYNC) } != 0 {
                return Err(CallError::new(
                    format!("msync of {} bytes of file {}", map.len, map.file),
                    io::Error::last_os_error(),
                ));
            }
        }
        match call {
            SyncCall::Fsync => sync_fd(SyncCall::Fsync, self.job.files[file]),
            SyncCall::Fdatasync => Ok(()),
        }
    }
}

/// One live shared mapping; unmapped by [`Map::unmap`] (checked) or, after an error,
/// by Drop.
struct Map {
    base: NonNull<u8>,
    len: usize,
    /// Index of the run's file it maps (for error messages).
    file: usize,
}

// SAFETY: a Map is a pointer to shared memory that stays valid until it is unmapped,
// which needs `&mut`/ownership. Threads write only disjoint parts of it (see
// `write_part`), so sharing `&Map` between them cannot race.
unsafe impl Send for Map {}
unsafe impl Sync for Map {}

impl Map {
    /// Maps `len` bytes of `fd` from `offset` (page-aligned) with `MAP_SHARED`.
    fn new(fd: RawFd, offset: u64, len: u64, file: usize) -> Result<Map, CallError> {
        let describe = || format!("mmap of {len} bytes at offset {offset} of file {file}");
        let size = usize::try_from(len).map_err(|_| CallError::new(describe(), io::Error::other("too large")))?;
        // mmap(2) rejects a length of 0; a part of 0 bytes (which the plan avoids) needs
        // no memory, so it gets a one-page placeholder that is never written.
        let size = size.max(1);
        // SAFETY: a fresh shared mapping of an open descriptor; checked for MAP_FAILED.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                offset as libc::off_t,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(CallError::new(describe(), io::Error::last_os_error()));
        }
        let base = NonNull::new(ptr.cast::<u8>())
            .ok_or_else(|| CallError::new(describe(), io::Error::other("mmap returned address 0")))?;
        Ok(Map { base, len: size, file })
    }

    /// Unmaps, reporting the error. A mapping whose munmap failed is not tried again:
    /// better a leak until exit than a second munmap of a range that may not be ours.
    fn unmap(self) -> Result<(), CallError> {
        let map = std::mem::ManuallyDrop::new(self);
        // SAFETY: the address and length mmap returned; `map` is never used again.
        if unsafe { libc::munmap(map.base.as_ptr().cast(), map.len) } != 0 {
            return Err(CallError::new(
                format!("munmap of {} bytes of file {}", map.len, map.file),
                io::Error::last_os_error(),
            ));
        }
        Ok(())
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // Only reached when an error cut the run short, and that error is reported.
        // SAFETY: the address and length mmap returned; nothing uses the map after Drop.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

/// The page-aligned stretch of the file a map must cover so that it holds `len` bytes
/// from `offset`: mmap offsets must be page multiples, chunks need not be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Window {
    /// File offset of the map: `offset` rounded down to a page.
    offset: u64,
    /// Bytes to map.
    len: u64,
    /// Where in the map the part's first byte is.
    start: u64,
}

impl Window {
    fn of(offset: u64, len: u64, page: u64) -> Window {
        let floor = page_floor(offset, page);
        Window { offset: floor, len: offset - floor + len, start: offset - floor }
    }
}

fn page_floor(offset: u64, page: u64) -> u64 {
    offset - offset % page
}

/// Fails with ENOSPC when the file system cannot hold the blocks the run will allocate:
/// where write(2) returns ENOSPC, a page fault raises SIGBUS, which kills writebench and
/// leaves its scratch directory behind. Best effort: it cannot see other writers,
/// metadata overhead, or copy-on-write file systems needing new blocks to overwrite.
fn check_space(job: &Job) -> Result<(), CallError> {
    let Some(&first) = job.files.first() else { return Ok(()) };
    let mut needed = 0u64;
    for (&fd, &len) in job.files.iter().zip(job.file_lens) {
        let allocated = file_stat(fd)?.st_blocks as u64 * 512;
        needed += len.saturating_sub(allocated);
    }
    let free = space::free_bytes(space::At::Fd(first)).map_err(|error| CallError::new("fstatvfs", error))?;
    if needed > free {
        return Err(CallError::new(
            format!("mmap needs {needed} bytes free, the file system has {free} (a fault without space is SIGBUS)"),
            io::Error::from_raw_os_error(libc::ENOSPC),
        ));
    }
    Ok(())
}

/// The file must already have its final length (the sparse, prealloc and overwrite
/// states give it): touching a map beyond the end of the file raises SIGBUS.
fn check_length(fd: RawFd, len: u64) -> Result<(), CallError> {
    let size = file_stat(fd)?.st_size as u64;
    if size < len {
        return Err(CallError::new(
            format!("mmap of {len} bytes"),
            io::Error::other(format!("the file has {size} bytes: a map cannot extend it")),
        ));
    }
    Ok(())
}

/// Why this kernel does not take `advice`, if it does not. An empty range is enough to
/// ask: madvise(2) checks the advice before the length (5.13 and older answer EINVAL
/// for MADV_POPULATE_WRITE).
fn advice_missing(advice: libc::c_int, name: &str) -> Option<String> {
    // SAFETY: madvise of an empty range touches no memory.
    if unsafe { libc::madvise(std::ptr::null_mut(), 0, advice) } != 0 {
        return Some(format!("madvise({name}) needs Linux 5.14 or later: {}", io::Error::last_os_error()));
    }
    None
}

fn file_stat(fd: RawFd) -> Result<libc::stat, CallError> {
    fd::fstat(fd).map_err(|error| CallError::new("fstat", error))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_start_at_the_page_floor_and_cover_the_whole_part() {
        assert_eq!(page_floor(0, 4096), 0);
        assert_eq!(page_floor(4095, 4096), 0);
        assert_eq!(page_floor(4096, 4096), 4096);
        assert_eq!(page_floor(20_000, 4096), 16_384);
        // The second of three parts of 10000-byte chunks: starts mid-page.
        assert_eq!(Window::of(100_000, 100_000, 4096), Window { offset: 98_304, len: 101_696, start: 1_696 });
        // A page-aligned part needs nothing extra.
        assert_eq!(Window::of(8192, 5, 4096), Window { offset: 8192, len: 5, start: 0 });
        // With 64 KiB pages (arm64, ppc64) the floor moves accordingly.
        assert_eq!(Window::of(100_000, 1, 65_536), Window { offset: 65_536, len: 34_465, start: 34_464 });
    }

    #[test]
    fn unknown_advice_makes_the_method_unsupported() {
        assert!(advice_missing(9_999, "MADV_BOGUS").is_some_and(|reason| reason.contains("MADV_BOGUS")));
        assert_eq!(advice_missing(libc::MADV_NORMAL, "MADV_NORMAL"), None);
    }
}
