//! Durability at run time: the per-call hook that syncs every N calls, and the
//! O_DIRECT alignment a case must meet. The modes themselves are `plan::durability`.

use std::os::fd::RawFd;

use crate::error::CallError;
use crate::plan::durability::SyncCall;

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
    let page = crate::measure::source::page_size() as u64;
    if u64::from(alignment.mem) > page {
        return Some(format!("O_DIRECT needs memory aligned to {} bytes, more than a page", alignment.mem));
    }
    if chunk % align != 0 {
        return Some(format!(
            "O_DIRECT needs offsets and lengths in multiples of {align} bytes here ({}); a chunk of {} is not",
            alignment.source,
            crate::plan::units::format_size(chunk)
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
