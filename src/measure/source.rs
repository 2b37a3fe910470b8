//! The data every method writes (DESIGN §2.5): seeded pseudo-random bytes, generated
//! before any timing, held in one bounded buffer that is reused across the whole file.
//!
//! The byte that belongs at file offset `o` is `pattern[o % PERIOD]`. Every method
//! writes exactly that, whatever its chunk size or call shape, so one verifier fits all.
//! The buffer is `PERIOD + max_chunk` bytes long so that a call of up to `max_chunk`
//! bytes starting anywhere in the period reads contiguous memory without wrapping.

use std::io;
use std::ptr::NonNull;

use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::{Rng, SeedableRng};

/// Length of the repeating pattern. Far above any filesystem's compression window
/// (btrfs compresses 128 KiB extents), and a multiple of the page size so that the
/// source of a page-aligned file offset is page-aligned too (O_DIRECT needs that).
pub const PERIOD: usize = 8 << 20;

/// The seed used unless `--seed` says otherwise; recorded in every result file.
pub const DEFAULT_SEED: u64 = 0x7772_6974_6562_656e; // "writeben"

pub struct Source {
    base: NonNull<u8>,
    len: usize,
    max_chunk: usize,
    seed: u64,
}

// SAFETY: the buffer is filled once in `new` and only read afterwards.
unsafe impl Send for Source {}
unsafe impl Sync for Source {}

impl Source {
    /// Allocates and fills the buffer for calls of at most `max_chunk` bytes.
    /// The buffer comes from an anonymous mapping, so it is page-aligned.
    pub fn new(seed: u64, max_chunk: usize) -> io::Result<Source> {
        let len = round_up(PERIOD + max_chunk, page_size());
        // SAFETY: a fresh private anonymous mapping; checked for MAP_FAILED below.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = NonNull::new(ptr.cast::<u8>()).expect("mmap returned null");
        // SAFETY: `len` bytes were just mapped read-write and nothing else refers to them.
        let bytes = unsafe { std::slice::from_raw_parts_mut(base.as_ptr(), len) };
        fill_pattern(seed, &mut bytes[..PERIOD]);
        let (pattern, tail) = bytes.split_at_mut(PERIOD);
        for (index, byte) in tail.iter_mut().enumerate() {
            *byte = pattern[index % PERIOD];
        }
        Ok(Source { base, len, max_chunk, seed })
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    pub fn max_chunk(&self) -> usize {
        self.max_chunk
    }

    /// The whole buffer, for interfaces that register it once (io_uring fixed buffers):
    /// every slice [`Source::bytes`] returns lies inside it.
    pub fn buffer(&self) -> &[u8] {
        // SAFETY: `len` bytes were mapped and filled in `new`, and are only read afterwards.
        unsafe { std::slice::from_raw_parts(self.base.as_ptr(), self.len) }
    }

    /// Position in the period of file offset `offset`: where a cursor starts.
    #[inline]
    pub fn position_of(offset: u64) -> usize {
        (offset % PERIOD as u64) as usize
    }

    /// The `len` bytes that belong at the file offset whose period position is `position`.
    /// Methods keep a running `position` (see [`Cursor`]) so the hot loop has no division.
    #[inline]
    pub fn bytes(&self, position: usize, len: usize) -> &[u8] {
        assert!(position < PERIOD && len <= self.max_chunk, "source read out of bounds");
        // SAFETY: position + len <= PERIOD + max_chunk <= self.len, checked above.
        unsafe { std::slice::from_raw_parts(self.base.as_ptr().add(position), len) }
    }
}

impl Drop for Source {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping made in `new`.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

/// Walks the source alongside a file offset: `take(n)` returns the bytes for the next
/// `n` file bytes and advances, wrapping at the period with a compare, not a division.
pub struct Cursor<'a> {
    source: &'a Source,
    position: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(source: &'a Source, offset: u64) -> Cursor<'a> {
        Cursor { source, position: Source::position_of(offset) }
    }

    #[inline]
    pub fn take(&mut self, len: usize) -> &'a [u8] {
        let bytes = self.source.bytes(self.position, len);
        self.advance(len);
        bytes
    }

    /// Skips `len` bytes (used after a short write, so the retry writes the rest).
    #[inline]
    pub fn advance(&mut self, len: usize) {
        self.position += len;
        while self.position >= PERIOD {
            self.position -= PERIOD;
        }
    }
}

/// The first PERIOD bytes of the stream for `seed`; public so that tests and `--verify`
/// can rebuild the expected content without a `Source`.
pub fn fill_pattern(seed: u64, out: &mut [u8]) {
    Xoshiro256PlusPlus::seed_from_u64(seed).fill_bytes(out);
}

/// Checks `data`, read from file offset `offset`, against the pattern. Returns the file
/// offset of the first wrong byte.
pub fn first_mismatch(pattern: &[u8], offset: u64, data: &[u8]) -> Option<u64> {
    assert_eq!(pattern.len(), PERIOD, "pattern must be one full period");
    let mut position = Source::position_of(offset);
    let mut checked = 0usize;
    while checked < data.len() {
        let run = (PERIOD - position).min(data.len() - checked);
        let expected = &pattern[position..position + run];
        let actual = &data[checked..checked + run];
        if expected != actual {
            let index = expected.iter().zip(actual).position(|(a, b)| a != b).unwrap_or(0);
            return Some(offset + (checked + index) as u64);
        }
        checked += run;
        position = 0;
    }
    None
}

pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 { size as usize } else { 4096 }
}

fn round_up(value: usize, multiple: usize) -> usize {
    value.div_ceil(multiple) * multiple
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_bytes_other_seed_other_bytes() {
        let mut a = vec![0u8; 4096];
        let mut b = vec![0u8; 4096];
        let mut c = vec![0u8; 4096];
        fill_pattern(1, &mut a);
        fill_pattern(1, &mut b);
        fill_pattern(2, &mut c);
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn data_is_not_trivially_compressible() {
        let source = Source::new(DEFAULT_SEED, 4096).unwrap();
        let bytes = source.bytes(0, 4096);
        let mut seen = [0usize; 256];
        for &byte in bytes {
            seen[byte as usize] += 1;
        }
        // Uniform bytes: every value appears, none dominates (expected 16 each).
        assert!(seen.iter().all(|&count| count > 0 && count < 64), "{seen:?}");
    }

    #[test]
    fn cursor_wraps_at_the_period_and_matches_the_pattern() {
        let source = Source::new(7, 1 << 20).unwrap();
        let mut pattern = vec![0u8; PERIOD];
        fill_pattern(7, &mut pattern);
        let start = (PERIOD - 1000) as u64;
        let mut cursor = Cursor::new(&source, start);
        let chunk = cursor.take(3000);
        assert_eq!(first_mismatch(&pattern, start, chunk), None);
        let next = cursor.take(10);
        assert_eq!(next, &pattern[2000..2010]);
    }

    #[test]
    fn mismatch_reports_the_file_offset() {
        let mut pattern = vec![0u8; PERIOD];
        fill_pattern(3, &mut pattern);
        let offset = PERIOD as u64 * 2 + 100;
        let mut data = pattern[100..400].to_vec();
        assert_eq!(first_mismatch(&pattern, offset, &data), None);
        data[123] ^= 1;
        assert_eq!(first_mismatch(&pattern, offset, &data), Some(offset + 123));
    }
}
