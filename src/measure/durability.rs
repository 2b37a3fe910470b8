//! Durability at run time: the per-call hook that syncs every N calls, and the
//! O_DIRECT alignment a case must meet (found by `context::dio`, which the result file
//! records too). The modes themselves are `plan::durability`.

use std::os::fd::RawFd;

pub use crate::context::dio::{DioAlignment, dio_alignment};
use crate::error::CallError;
use crate::measure::source::PERIOD;
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

/// Why O_DIRECT cannot run calls of `chunk` bytes into files of `lens` from the source
/// buffer at address `source_base`, if it cannot. Every call must start and end on the
/// offset alignment (the last, short call included: rounding it up would write bytes
/// the case does not own, so such a size is refused rather than padded). Every call's
/// memory must be aligned too: a call at file offset `o` reads the source at
/// `source_base + o mod PERIOD`, and the calls start at multiples of the chunk, so the
/// buffer's address, the chunk and the period must all be multiples of the memory
/// alignment.
pub fn direct_refusal(alignment: &DioAlignment, chunk: u64, lens: &[u64], source_base: usize) -> Option<String> {
    let align = u64::from(alignment.offset.max(1));
    let mem = u64::from(alignment.mem.max(1));
    let source = &alignment.source;
    if chunk % align != 0 {
        return Some(format!(
            "O_DIRECT needs offsets and lengths in multiples of {align} bytes here ({source}); a chunk of {} is not",
            crate::plan::units::format_size(chunk)
        ));
    }
    if let Some(len) = lens.iter().find(|&&len| len % align != 0) {
        return Some(format!(
            "O_DIRECT needs offsets and lengths in multiples of {align} bytes here ({source}); the last call of a {len}-byte file is not"
        ));
    }
    if source_base as u64 % mem != 0 || PERIOD as u64 % mem != 0 {
        return Some(format!(
            "O_DIRECT needs memory aligned to {mem} bytes here ({source}); the source buffer at {source_base:#x} is not"
        ));
    }
    if chunk % mem != 0 {
        return Some(format!(
            "O_DIRECT needs memory aligned to {mem} bytes here ({source}); calls of {} start at source addresses that are not",
            crate::plan::units::format_size(chunk)
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
        let base = 1 << 20;
        assert_eq!(direct_refusal(&alignment, 4096, &[1 << 20], base), None);
        assert_eq!(direct_refusal(&alignment, 512, &[1 << 20], base), None);
        let chunk = direct_refusal(&alignment, 100, &[1 << 20], base).unwrap();
        assert!(chunk.contains("multiples of 512 bytes") && chunk.contains("a chunk of 100 B"), "{chunk}");
        assert!(direct_refusal(&alignment, 4096, &[1000], base).unwrap().contains("1000-byte file"));
    }

    #[test]
    fn direct_refuses_memory_the_device_cannot_take() {
        // Defect 1.14: only an alignment above a page was checked; the buffer's address
        // and a memory alignment above the offset alignment were taken on trust.
        let alignment = DioAlignment { mem: 512, offset: 512, source: "test".into() };
        let refused = direct_refusal(&alignment, 4096, &[1 << 20], (1 << 20) + 8).unwrap();
        assert!(refused.contains("memory aligned to 512 bytes") && refused.contains("0x100008"), "{refused}");
        let wide = DioAlignment { mem: 1024, offset: 512, source: "test".into() };
        let refused = direct_refusal(&wide, 512, &[1 << 20], 1 << 20).unwrap();
        assert!(refused.contains("memory aligned to 1024 bytes") && refused.contains("calls of 512 B"), "{refused}");
        assert_eq!(direct_refusal(&wide, 1024, &[1 << 20], 1 << 20), None);
        // More than the period's alignment can give.
        let huge = DioAlignment { mem: 1 << 24, offset: 512, source: "test".into() };
        assert!(direct_refusal(&huge, 1 << 24, &[1 << 24], 1 << 24).is_some());
    }
}
