//! What makes written data durable (DESIGN §1 "durability"): the modes, their
//! spelling, the open flags they need, the per-call hook that syncs every N calls,
//! and the O_DIRECT alignment a case must meet.
//!
//! Spellings (`--durability`, comma-separated):
//! - `none`: page cache only;
//! - `end` / `end-fdatasync`: one fsync / fdatasync after the last write (the sync span);
//! - `every:N` / `every-fdatasync:N`: fsync / fdatasync after every N calls, inside the
//!   write span (the loop cannot go on until the sync returns), and once more after the
//!   last call if it was not synced;
//! - `osync` / `odsync`: the file is opened with O_SYNC / O_DSYNC: every call is durable
//!   when it returns;
//! - `direct`, or `direct+MODE`: O_DIRECT (bypass the page cache) with any mode above.

use std::fmt;
use std::io;
use std::os::fd::RawFd;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::methods::CallError;

/// The call that makes a file's data durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SyncCall {
    Fsync,
    Fdatasync,
}

impl SyncCall {
    pub fn name(self) -> &'static str {
        match self {
            SyncCall::Fsync => "fsync",
            SyncCall::Fdatasync => "fdatasync",
        }
    }

    /// The call itself, checked, retried on EINTR.
    pub fn call(self, fd: RawFd) -> Result<(), CallError> {
        loop {
            // SAFETY: fsync/fdatasync on a descriptor the caller keeps open.
            let result = unsafe {
                match self {
                    SyncCall::Fsync => libc::fsync(fd),
                    SyncCall::Fdatasync => libc::fdatasync(fd),
                }
            };
            if result == 0 {
                return Ok(());
            }
            let error = io::Error::last_os_error();
            if error.kind() != io::ErrorKind::Interrupted {
                return Err(CallError::new(self.name(), error));
            }
        }
    }
}

/// When the data is committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Commit {
    None,
    /// Once after the last write, timed as the sync span.
    End(SyncCall),
    /// After every N calls, inside the write span.
    Every(u32, SyncCall),
    /// O_SYNC: each call returns when data and metadata are durable.
    OSync,
    /// O_DSYNC: each call returns when the data (and the metadata to read it) is durable.
    ODsync,
}

/// A durability mode: a commit rule, with or without O_DIRECT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Durability {
    pub commit: Commit,
    pub direct: bool,
}

/// Largest N of `every:N`.
pub const MAX_EVERY: u32 = 1_000_000_000;

#[allow(non_upper_case_globals)] // spelled like the enum variants they replaced
impl Durability {
    pub const None: Durability = Durability { commit: Commit::None, direct: false };
    pub const End: Durability = Durability { commit: Commit::End(SyncCall::Fsync), direct: false };

    pub const fn of(commit: Commit) -> Durability {
        Durability { commit, direct: false }
    }

    pub const fn direct(commit: Commit) -> Durability {
        Durability { commit, direct: true }
    }

    pub fn name(self) -> String {
        let commit = match self.commit {
            Commit::None if self.direct => return "direct".to_string(),
            Commit::None => "none".to_string(),
            Commit::End(SyncCall::Fsync) => "end".to_string(),
            Commit::End(SyncCall::Fdatasync) => "end-fdatasync".to_string(),
            Commit::Every(n, SyncCall::Fsync) => format!("every:{n}"),
            Commit::Every(n, SyncCall::Fdatasync) => format!("every-fdatasync:{n}"),
            Commit::OSync => "osync".to_string(),
            Commit::ODsync => "odsync".to_string(),
        };
        if self.direct { format!("direct+{commit}") } else { commit }
    }

    /// Flags the timed run's descriptor is opened with (besides O_RDWR).
    pub fn open_flags(self) -> libc::c_int {
        let sync = match self.commit {
            Commit::OSync => libc::O_SYNC,
            Commit::ODsync => libc::O_DSYNC,
            _ => 0,
        };
        sync | if self.direct { libc::O_DIRECT } else { 0 }
    }

    /// The sync the runner times after the write span, if any.
    pub fn end_sync(self) -> Option<SyncCall> {
        match self.commit {
            Commit::End(call) => Some(call),
            _ => None,
        }
    }

    /// The sync every N calls, if any.
    pub fn every(self) -> Option<(u32, SyncCall)> {
        match self.commit {
            Commit::Every(n, call) => Some((n, call)),
            _ => None,
        }
    }
}

const KNOWN: &str = "none, end, end-fdatasync, every:N, every-fdatasync:N, osync, odsync, direct, direct+MODE";

impl FromStr for Durability {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let unknown = || format!("unknown durability '{text}' (known: {KNOWN})");
        let (direct, rest) = match text.strip_prefix("direct") {
            Some("") => return Ok(Durability::direct(Commit::None)),
            Some(rest) => (true, rest.strip_prefix('+').ok_or_else(unknown)?),
            None => (false, text),
        };
        let commit = match rest {
            "none" => Commit::None,
            "end" => Commit::End(SyncCall::Fsync),
            "end-fdatasync" => Commit::End(SyncCall::Fdatasync),
            "osync" => Commit::OSync,
            "odsync" => Commit::ODsync,
            _ => {
                let (call, count) = if let Some(count) = rest.strip_prefix("every:") {
                    (SyncCall::Fsync, count)
                } else if let Some(count) = rest.strip_prefix("every-fdatasync:") {
                    (SyncCall::Fdatasync, count)
                } else {
                    return Err(unknown());
                };
                let n: u32 = count.parse().map_err(|_| format!("'{text}': N must be a whole number, 1 or more"))?;
                if n == 0 || n > MAX_EVERY {
                    return Err(format!("'{text}': N must be between 1 and {MAX_EVERY}"));
                }
                Commit::Every(n, call)
            }
        };
        Ok(Durability { commit, direct })
    }
}

impl From<Durability> for String {
    fn from(durability: Durability) -> String {
        durability.name()
    }
}

impl TryFrom<String> for Durability {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        text.parse()
    }
}

impl fmt::Display for Durability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// The hook of `every:N`: a method asks it after each call (each chunk, or each
/// vectored call), and it syncs when N calls have passed since the last sync. `finish`
/// syncs the calls left over at the end of the span, so that every byte the span wrote
/// is durable when it returns.
pub struct Pacer {
    every: Option<(u32, SyncCall)>,
    since: u32,
}

impl Pacer {
    pub fn new(every: Option<(u32, SyncCall)>) -> Pacer {
        Pacer { every, since: 0 }
    }

    /// Counts one call; true when the caller must now make its data durable (methods
    /// with their own way to sync, e.g. stdio's fflush or msync, use this).
    #[inline]
    pub fn due(&mut self) -> bool {
        let Some((n, _)) = self.every else { return false };
        self.since += 1;
        if self.since >= n {
            self.since = 0;
            return true;
        }
        false
    }

    /// Counts one call on `fd` and syncs it when due.
    #[inline]
    pub fn after_call(&mut self, fd: RawFd) -> Result<(), CallError> {
        if self.due() { self.sync(fd) } else { Ok(()) }
    }

    /// True when calls since the last sync are not yet durable.
    pub fn pending(&self) -> bool {
        self.every.is_some() && self.since > 0
    }

    /// Syncs the calls left since the last sync, if any.
    pub fn finish(&mut self, fd: RawFd) -> Result<(), CallError> {
        if self.pending() {
            self.since = 0;
            self.sync(fd)?;
        }
        Ok(())
    }

    /// Syncs now (the caller saw [`Pacer::due`] or [`Pacer::pending`]); nothing is pending after.
    pub fn sync_now(&mut self, fd: RawFd) -> Result<(), CallError> {
        self.since = 0;
        self.sync(fd)
    }

    fn sync(&self, fd: RawFd) -> Result<(), CallError> {
        match self.every {
            Some((_, call)) => call.call(fd),
            None => Ok(()),
        }
    }
}

/// What O_DIRECT needs of a file here, and where the numbers came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DioAlignment {
    pub mem: u32,
    pub offset: u32,
    pub source: String,
}

/// The alignment of `fd`'s file: `statx(STATX_DIOALIGN)` (Linux 6.1, filesystems that
/// report it), else the logical block size of the device under it (sysfs), else 4096,
/// which satisfies every logical block size in use (512 and 4096).
pub fn dio_alignment(fd: RawFd) -> DioAlignment {
    // SAFETY: statx with AT_EMPTY_PATH on an open descriptor fills the struct we pass.
    let stx = unsafe {
        let mut stx: libc::statx = std::mem::zeroed();
        let ok = libc::statx(fd, c"".as_ptr(), libc::AT_EMPTY_PATH, libc::STATX_DIOALIGN, &mut stx) == 0;
        ok.then_some(stx)
    };
    if let Some(stx) = stx {
        if stx.stx_mask & libc::STATX_DIOALIGN != 0 && stx.stx_dio_offset_align != 0 {
            return DioAlignment {
                mem: stx.stx_dio_mem_align,
                offset: stx.stx_dio_offset_align,
                source: "statx STATX_DIOALIGN".into(),
            };
        }
        let (major, minor) = (stx.stx_dev_major, stx.stx_dev_minor);
        for file in ["queue/logical_block_size", "../queue/logical_block_size"] {
            let path = format!("/sys/dev/block/{major}:{minor}/{file}");
            if let Some(size) = std::fs::read_to_string(&path).ok().and_then(|t| t.trim().parse::<u32>().ok()) {
                if size.is_power_of_two() {
                    return DioAlignment { mem: size, offset: size, source: format!("logical block size ({path})") };
                }
            }
        }
    }
    DioAlignment {
        mem: 4096,
        offset: 4096,
        source: "assumed 4096: the kernel gave no STATX_DIOALIGN and there is no block device to ask".into(),
    }
}

/// Why O_DIRECT cannot run calls of `chunk` bytes into files of `lens`, if it cannot:
/// every call must start and end on the offset alignment (the last, short call
/// included: rounding it up would write bytes the case does not own, so such a size is
/// refused rather than padded), and the source memory must be aligned, which holds for
/// any alignment up to a page because the source of an aligned offset is page-aligned
/// plus that offset.
pub fn direct_refusal(alignment: &DioAlignment, chunk: u64, lens: &[u64]) -> Option<String> {
    let align = u64::from(alignment.offset.max(1));
    let page = crate::source::page_size() as u64;
    if u64::from(alignment.mem) > page {
        return Some(format!("O_DIRECT needs memory aligned to {} bytes, more than a page", alignment.mem));
    }
    if chunk % align != 0 {
        return Some(format!(
            "O_DIRECT needs offsets and lengths in multiples of {align} bytes here ({}); a chunk of {} is not",
            alignment.source,
            crate::units::format_size(chunk)
        ));
    }
    if let Some(len) = lens.iter().find(|&&len| len % align != 0) {
        return Some(format!(
            "O_DIRECT needs offsets and lengths in multiples of {align} bytes here ({}); the last call of a {len}-byte file is not",
            alignment.source
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_round_trips() {
        for text in [
            "none",
            "end",
            "end-fdatasync",
            "every:1",
            "every:64",
            "every-fdatasync:8",
            "osync",
            "odsync",
            "direct",
            "direct+end",
            "direct+odsync",
            "direct+every-fdatasync:4",
        ] {
            let mode: Durability = text.parse().unwrap();
            assert_eq!(mode.name(), text);
            let json = serde_json::to_value(mode).unwrap();
            assert_eq!(json, text);
            assert_eq!(serde_json::from_value::<Durability>(json).unwrap(), mode);
        }
        assert_eq!("direct+none".parse::<Durability>().unwrap().name(), "direct");
        assert_eq!("end".parse::<Durability>(), Ok(Durability::End));
    }

    #[test]
    fn bad_spellings_are_one_line_errors() {
        for text in
            ["sometimes", "every:0", "every:x", "every:", "direct+", "directly", "every-fdatasync:-1", "direct+direct"]
        {
            let error = text.parse::<Durability>().unwrap_err();
            assert!(error.contains(text) && !error.contains('\n'), "{text}: {error}");
        }
    }

    #[test]
    fn open_flags_follow_the_mode() {
        assert_eq!(Durability::None.open_flags(), 0);
        assert_eq!("odsync".parse::<Durability>().unwrap().open_flags(), libc::O_DSYNC);
        assert_eq!("direct+osync".parse::<Durability>().unwrap().open_flags(), libc::O_SYNC | libc::O_DIRECT);
    }

    #[test]
    fn the_pacer_syncs_every_n_calls_and_the_rest_at_the_end() {
        let mut pacer = Pacer::new(Some((3, SyncCall::Fdatasync)));
        let due: Vec<bool> = (0..7).map(|_| pacer.due()).collect();
        assert_eq!(due, [false, false, true, false, false, true, false]);
        assert!(pacer.pending());
        let mut none = Pacer::new(None);
        assert!(!none.due() && !none.pending());
    }

    #[test]
    fn direct_refuses_unaligned_chunks_and_sizes() {
        let alignment = DioAlignment { mem: 512, offset: 512, source: "test".into() };
        assert_eq!(direct_refusal(&alignment, 4096, &[1 << 20]), None);
        assert_eq!(direct_refusal(&alignment, 512, &[1 << 20]), None);
        let chunk = direct_refusal(&alignment, 100, &[1 << 20]).unwrap();
        assert!(chunk.contains("multiples of 512 bytes") && chunk.contains("a chunk of 100 B"), "{chunk}");
        assert!(direct_refusal(&alignment, 4096, &[1000]).unwrap().contains("1000-byte file"));
    }
}
