//! The writers' buffers and the cursor that hands out and stamps their bytes (the
//! parent module's doc says what is written and why).
//!
//! Past 600 lines because of its tests (the last third), which check every byte a
//! cursor hands out and stamps against the stream it stands for.

use std::cell::UnsafeCell;
use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{BLOCK, Pages, Shape, Source, Stream, round_up};

/// The file block a buffer block is stamped for, and the tag it carries for it.
#[derive(Debug, Clone, Copy)]
struct Stamp {
    block: u64,
    tag: u64,
}

/// A block still as the pattern has it: no file block is `u64::MAX`, and XOR with 0
/// leaves the bytes alone.
const UNSTAMPED: Stamp = Stamp { block: u64::MAX, tag: 0 };

/// One writer's buffer: its period of its stream, then a tail as long as its longest
/// call, in a private anonymous mapping (page-aligned).
pub struct Writer {
    base: NonNull<u8>,
    len: usize,
    pages: Pages,
    /// Where the cursor wraps: a multiple of the stream's period.
    period: usize,
    stream: Stream,
    /// One per block of the buffer; changed only by the cursor.
    stamps: UnsafeCell<Box<[Stamp]>>,
    /// Whether a cursor is alive.
    busy: AtomicBool,
    #[cfg(test)]
    restamped: std::sync::atomic::AtomicU64,
}

// SAFETY: the buffer and its stamps change only through a Cursor, and at most one
// Cursor of a Writer exists at a time (`busy`: taken with Acquire and given back with
// Release, so that the next cursor, on whatever thread, sees what the last one did).
// Slices a cursor hands out are only read, and the cursor never re-stamps a block under
// a slice still in use: `take`'s slice borrows the cursor, and `take_in_flight`'s caller
// promises where its slices in use are.
unsafe impl Send for Writer {}
unsafe impl Sync for Writer {}

impl Writer {
    /// A buffer for calls of at most `max_take` bytes that wraps every `period` bytes
    /// (a multiple of the stream's period); filled now, untimed.
    pub fn new(source: &Source, stream: Stream, period: usize, max_take: usize) -> io::Result<Writer> {
        Writer::in_pages(source, stream, period, max_take, Pages::Ordinary)
    }

    /// [`Writer::new`] in `pages` (a buffer in huge pages is whole huge pages long: its
    /// tail longer than the longest call, which does no harm).
    pub fn in_pages(
        source: &Source,
        stream: Stream,
        period: usize,
        max_take: usize,
        pages: Pages,
    ) -> io::Result<Writer> {
        assert!(period % BLOCK == 0 && period % stream.period() == 0, "a writer's period holds whole stream periods");
        let len = round_up(period + round_up(max_take.max(1), BLOCK), crate::huge::granule(pages).max(BLOCK));
        let base = spare::take(len, pages)?;
        // SAFETY: `len` bytes are mapped read-write and nothing else refers to them.
        let bytes = unsafe { std::slice::from_raw_parts_mut(base.as_ptr(), len) };
        // The period, then the tail, continue the pattern: position q holds pattern[q mod P].
        let pattern = source.pattern(stream.period());
        for piece in bytes.chunks_mut(pattern.len()) {
            piece.copy_from_slice(&pattern[..piece.len()]);
        }
        let stamps = UnsafeCell::new(vec![UNSTAMPED; len / BLOCK].into_boxed_slice());
        Ok(Writer {
            base,
            len,
            pages,
            period,
            stream,
            stamps,
            busy: AtomicBool::new(false),
            #[cfg(test)]
            restamped: std::sync::atomic::AtomicU64::new(0),
        })
    }

    pub fn stream(&self) -> Stream {
        self.stream
    }

    pub fn period(&self) -> usize {
        self.period
    }

    /// Address and length of the whole buffer, for registering it once (io_uring fixed
    /// buffers): every slice a cursor hands out lies inside. Raw, because cursors write
    /// stamps into it meanwhile.
    pub fn region(&self) -> (*const u8, usize) {
        (self.base.as_ptr(), self.len)
    }

    /// Stamps, untimed, the buffer blocks that the first `len` file bytes from `offset`
    /// take before the cursor wraps, so that a part that fits in the buffer (a single
    /// call of 1 GiB, a file no longer than the period) is written with no stamping
    /// inside its timed span, and a longer one stamps only from its second lap on.
    pub fn prestamp(&self, offset: u64, len: u64) {
        let mut cursor = self.cursor(offset);
        let room = (self.len - cursor.position) as u64;
        cursor.stamp(cursor.position, len.min(room) as usize);
    }

    /// Untimed, before the run (`--source memory`): every cache line of the buffer
    /// written back and dropped from the CPU caches, so that the run reads it from memory
    /// as a program writing out a large buffer does, whatever the last-level cache's size.
    pub fn evict(&self) {
        flush_from_caches(self.base.as_ptr(), self.len);
    }

    /// How many blocks cursors have stamped since the buffer was made (tests).
    #[cfg(test)]
    fn restamps(&self) -> u64 {
        self.restamped.load(Ordering::Relaxed)
    }

    /// A cursor at file offset `offset`. There is one at a time per writer (two would
    /// stamp under each other's slices): a second one panics.
    pub fn cursor(&self, offset: u64) -> Cursor<'_> {
        assert!(!self.busy.swap(true, Ordering::Acquire), "a writer's buffer has one cursor at a time");
        // SAFETY: `busy` was false, so no other cursor uses the stamps until this one
        // is dropped.
        let stamps = unsafe { (*self.stamps.get()).as_mut_ptr() };
        let mut cursor = Cursor { writer: self, stamps, position: 0, lap_block: 0, offset: 0 };
        cursor.restart(offset);
        cursor
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // No cursor outlives `self`: the mapping is no one's now.
        spare::give_back(self.base, self.len, self.pages);
    }
}

/// The mappings of writers' buffers no longer in use, kept for the next run's writers
/// of the same length: a run's buffers are made before it and dropped after it, and
/// mapping them afresh each time costs a page fault per page, which on a machine that
/// gives freed memory back to its host took 0.55 s a GiB (2026-11-28), more than the
/// writes under `--source memory`. At most [`KEPT`] bytes are kept, the oldest unmapped
/// first, so that memory held stays within the buffers' own budgets.
mod spare {
    use std::io;
    use std::ptr::NonNull;
    use std::sync::Mutex;

    use crate::source::{Pages, WRITERS_BUDGET};
    use plan::data_source::MEMORY_BUDGET;

    const KEPT: usize = MEMORY_BUDGET + WRITERS_BUDGET;

    /// (address, length, pages) of each mapping kept, oldest first.
    static KEPT_MAPPINGS: Mutex<Vec<(usize, usize, Pages)>> = Mutex::new(Vec::new());

    /// A private anonymous read-write mapping of `len` bytes in `pages` (for huge ones,
    /// `len` is whole huge pages): one kept, else a new one. Its contents are whatever
    /// they were: the caller fills it.
    pub fn take(len: usize, pages: Pages) -> io::Result<NonNull<u8>> {
        let mut kept = KEPT_MAPPINGS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(index) = kept.iter().position(|&(_, kept_len, kept_pages)| (kept_len, kept_pages) == (len, pages)) {
            let (address, _, _) = kept.remove(index);
            return Ok(NonNull::new(address as *mut u8).expect("a kept mapping is not null"));
        }
        // Room first: the kept mappings and this one within KEPT, the oldest unmapped.
        let mut total: usize = kept.iter().map(|&(_, len, _)| len).sum();
        while !kept.is_empty() && total + len > KEPT {
            let (address, old_len, _) = kept.remove(0);
            // SAFETY: a mapping `take` made, of its length, that no one uses any more.
            unsafe { libc::munmap(address as *mut libc::c_void, old_len) };
            total -= old_len;
        }
        drop(kept);
        crate::huge::map_in(len, pages)
    }

    /// Keeps the mapping `base` of `len` bytes in `pages` (made by [`take`], no one's
    /// now) for a later [`take`], unmapping the oldest kept ones beyond [`KEPT`] bytes.
    pub fn give_back(base: NonNull<u8>, len: usize, pages: Pages) {
        let mut kept = KEPT_MAPPINGS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        kept.push((base.as_ptr() as usize, len, pages));
        let mut total: usize = kept.iter().map(|&(_, len, _)| len).sum();
        while total > KEPT {
            let (address, len, _) = kept.remove(0);
            // SAFETY: a mapping `take` made, of its length, that no one uses any more.
            unsafe { libc::munmap(address as *mut libc::c_void, len) };
            total -= len;
        }
    }

    /// The mappings kept, (address, length) (tests).
    #[cfg(test)]
    pub fn kept() -> Vec<(usize, usize)> {
        let kept = KEPT_MAPPINGS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        kept.iter().map(|&(address, len, _)| (address, len)).collect()
    }
}

/// Walks a writer's buffer alongside a file offset: each `take` returns the bytes for
/// the next file bytes, stamped for the blocks they belong to, and advances, wrapping
/// at the period with a compare, not a division.
pub struct Cursor<'a> {
    writer: &'a Writer,
    /// The writer's stamps, ours while `busy` is held.
    stamps: *mut Stamp,
    /// Where in the buffer the next byte comes from; below the period.
    position: usize,
    /// The file block that the buffer's first block stands for in this lap.
    lap_block: u64,
    /// File offset of the next byte.
    offset: u64,
}

impl<'a> Cursor<'a> {
    /// File offset of the next byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Moves to file offset `offset` (latency's `overwrite0` writes the bytes of
    /// offset 0 again and again).
    pub fn restart(&mut self, offset: u64) {
        let period = self.writer.period as u64;
        self.position = (offset % period) as usize;
        self.lap_block = (offset - self.position as u64) / BLOCK as u64;
        self.offset = offset;
    }

    /// The bytes for the next `len` file bytes. They borrow the cursor: the next take
    /// may re-stamp them.
    #[inline]
    pub fn take(&mut self, len: usize) -> &[u8] {
        let start = self.stamp_and_advance(len);
        // SAFETY: start + len <= the buffer's length (checked in stamp_and_advance), and
        // nothing changes these bytes while the returned borrow of the cursor lasts.
        unsafe { std::slice::from_raw_parts(self.writer.base.as_ptr().add(start), len) }
    }

    /// As [`Cursor::take`], for requests that stay in flight while later ones are
    /// taken (io_uring): `None` when handing the bytes out would re-stamp a block that
    /// a slice at file offset `oldest` or later may still read; wait for completions
    /// and ask again. With nothing in flight (`oldest` at or after [`Cursor::offset`]),
    /// a take always succeeds.
    ///
    /// # Safety
    ///
    /// Every slice this cursor handed out that is still in use lies at file offsets at
    /// or after `oldest`, and none of them was taken before a [`Cursor::restart`].
    #[inline]
    pub unsafe fn take_in_flight(&mut self, len: usize, oldest: u64) -> Option<&'a [u8]> {
        // The file blocks from the oldest slice in use to the end of this one have
        // buffer blocks of their own as long as they are no more than the period's
        // blocks (the tail is memory apart): then none is stamped for two of them. With
        // nothing in use, this take alone cannot conflict with itself, however long.
        if oldest < self.offset {
            let first = oldest / BLOCK as u64;
            let end = (self.offset + len as u64).div_ceil(BLOCK as u64);
            if end - first > (self.writer.period / BLOCK) as u64 {
                return None;
            }
        }
        let start = self.stamp_and_advance(len);
        // SAFETY: in bounds (checked in stamp_and_advance); by the caller's promise and
        // the check above, no later take re-stamps these bytes while they are in use.
        Some(unsafe { std::slice::from_raw_parts(self.writer.base.as_ptr().add(start), len) })
    }

    /// Stamps the buffer blocks of the next `len` bytes for the file blocks they now
    /// stand for, advances, and returns where in the buffer the bytes start.
    #[inline]
    fn stamp_and_advance(&mut self, len: usize) -> usize {
        let start = self.position;
        self.stamp(start, len);
        self.offset += len as u64;
        self.position += len;
        let period = self.writer.period;
        while self.position >= period {
            self.position -= period;
            self.lap_block += (period / BLOCK) as u64;
        }
        start
    }
}

impl Cursor<'_> {
    /// Stamps the buffer blocks of `len` bytes from buffer position `start` for the file
    /// blocks they stand for in this lap.
    #[inline]
    fn stamp(&mut self, start: usize, len: usize) {
        assert!(len <= self.writer.len - start, "source read out of bounds");
        if len > 0 {
            for block in start / BLOCK..=(start + len - 1) / BLOCK {
                let want = self.lap_block + block as u64;
                // SAFETY: block < len / BLOCK, the number of stamps (start + len is
                // within the buffer); this cursor alone uses them.
                let stamp = unsafe { &mut *self.stamps.add(block) };
                if stamp.block != want {
                    restamp(self.writer, block, stamp, want);
                }
            }
        }
    }
}

impl Drop for Cursor<'_> {
    fn drop(&mut self) {
        self.writer.busy.store(false, Ordering::Release);
    }
}

/// Makes buffer block `block` carry the tag of file block `want` instead of its
/// current one: one hash and an 8-byte XOR.
#[inline]
fn restamp(writer: &Writer, block: usize, stamp: &mut Stamp, want: u64) {
    let tag = writer.stream.tag(want);
    // SAFETY: the block lies inside the buffer (`block` indexes a stamp) and starts on
    // a multiple of 4096 from a page-aligned base. No slice in use covers its first
    // bytes: `take`'s slices are gone by the next take, and `take_in_flight` refuses a
    // range whose blocks may be read by a request in flight.
    unsafe {
        let at = writer.base.as_ptr().add(block * BLOCK).cast::<[u8; 8]>();
        let word = u64::from_le_bytes(at.read()) ^ stamp.tag ^ tag;
        at.write(word.to_le_bytes());
    }
    *stamp = Stamp { block: want, tag };
    #[cfg(test)]
    writer.restamped.fetch_add(1, Ordering::Relaxed);
}

/// The writers of one run, and the stream of each of its files.
pub struct Streams<'a> {
    source: &'a Source,
    files: Vec<Stream>,
    writers: Vec<Writer>,
}

impl<'a> Streams<'a> {
    /// File `f` is named `names[f]`; writer `w` writes file `part_files[w]`. Allocates
    /// and fills every writer's buffer (untimed).
    pub fn new(source: &'a Source, names: &[String], part_files: &[usize], shape: Shape) -> io::Result<Streams<'a>> {
        let files: Vec<Stream> =
            names.iter().map(|name| Stream::timed(source.seed(), name, shape.stream_period())).collect();
        let writers = part_files
            .iter()
            .map(|&file| Writer::in_pages(source, files[file], shape.period(), shape.max_take, shape.pages))
            .collect::<io::Result<Vec<_>>>()?;
        Ok(Streams { source, files, writers })
    }

    pub fn source(&self) -> &'a Source {
        self.source
    }

    /// What file `index` must hold.
    pub fn file(&self, index: usize) -> &Stream {
        &self.files[index]
    }

    /// The buffer of part `index`.
    pub fn writer(&self, index: usize) -> &Writer {
        &self.writers[index]
    }

    /// Untimed, before the run and after [`Streams::prestamp`] (`--source memory`):
    /// every writer's buffer out of the CPU caches (see [`Writer::evict`]).
    pub fn evict(&self) {
        for writer in &self.writers {
            writer.evict();
        }
    }

    /// Untimed, before the run: each writer's buffer stamped for the start of its part,
    /// `parts[w]` being writer w's (file offset, bytes) (see [`Writer::prestamp`]).
    pub fn prestamp(&self, parts: impl IntoIterator<Item = (u64, u64)>) {
        for (writer, (offset, len)) in self.writers.iter().zip(parts) {
            writer.prestamp(offset, len);
        }
    }
}

/// Writes back and invalidates every cache line of `[start, start + len)` in every
/// CPU cache: `clflushopt` on x86-64 where the CPU has it (`clflush` else, which this
/// machine runs 40 times slower: 2.6 s against 62 ms a GiB, 2026-11-28), `dc civac` on
/// AArch64 (64-byte steps: no line is shorter), then a fence so that the flushes are
/// done before the caller goes on. On other architectures nothing: the buffer's size
/// alone (as large as the part) keeps most of it out of the caches there.
fn flush_from_caches(start: *const u8, len: usize) {
    const LINE: usize = 64;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: every address flushed lies inside the caller's mapping; clflushopt only
    // where CPUID says the CPU has it; clflush and mfence are x86-64's baseline (SSE2).
    unsafe {
        // CPUID leaf 7, subleaf 0: EBX bit 23 is CLFLUSHOPT.
        if std::arch::x86_64::__cpuid_count(7, 0).ebx & (1 << 23) != 0 {
            for offset in (0..len).step_by(LINE) {
                std::arch::asm!("clflushopt [{0}]", in(reg) start.add(offset), options(nostack, preserves_flags));
            }
        } else {
            for offset in (0..len).step_by(LINE) {
                std::arch::x86_64::_mm_clflush(start.add(offset));
            }
        }
        std::arch::x86_64::_mm_mfence();
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: every address flushed lies inside the caller's mapping; `dc civac` is
    // allowed at EL0 on Linux, and `dsb ish` waits for it.
    unsafe {
        for offset in (0..len).step_by(LINE) {
            std::arch::asm!("dc civac, {0}", in(reg) start.add(offset), options(nostack, preserves_flags));
        }
        std::arch::asm!("dsb ish", options(nostack, preserves_flags));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let _ = (start, len, LINE);
}

#[cfg(test)]
mod tests {
    use super::super::{PERIOD, STAMP, page_size};
    use super::*;
    use crate::huge::HUGE;

    fn expected(source: &Source, stream: Stream, offset: u64, len: usize) -> Vec<u8> {
        let mut bytes = vec![0u8; len];
        stream.fill(source, offset, &mut bytes);
        bytes
    }

    /// A run's buffers go back to be kept and the next run's writer of the same length
    /// gets the same mapping, filled again with its own stream; flushed from the caches,
    /// its bytes are still the stream.
    #[test]
    fn a_dropped_buffer_is_kept_for_the_next_writer_of_its_length_and_filled_anew() {
        let source = Source::new(11);
        // A length no other test's writer has: 5 blocks + a tail of 3 blocks.
        let (period, take) = (5 * BLOCK, 3 * BLOCK - 7);
        let first = Writer::new(&source, Stream::timed(11, "a", 5 * BLOCK), period, take).unwrap();
        let (address, len) = first.region();
        drop(first);
        assert!(spare::kept().contains(&(address as usize, len)), "kept once dropped");
        let stream = Stream::timed(11, "b", 5 * BLOCK);
        let second = Writer::new(&source, stream, period, take).unwrap();
        assert_eq!(second.region(), (address, len), "the same mapping again");
        assert!(!spare::kept().contains(&(address as usize, len)), "no longer kept while in use");
        second.prestamp(0, 4 * BLOCK as u64);
        second.evict();
        let mut cursor = second.cursor(0);
        assert_eq!(cursor.take(4 * BLOCK), &expected(&source, stream, 0, 4 * BLOCK)[..]);
    }

    #[test]
    fn takes_of_any_size_over_many_laps_are_the_stream() {
        let source = Source::new(7);
        let stream = Stream::timed(7, "f", 2 * BLOCK);
        // A buffer period of two stream periods, calls that divide nothing, a call
        // longer than the period: every byte as the stream has it.
        let writer = Writer::new(&source, stream, 4 * BLOCK, 20_000).unwrap();
        for start in [0, 5, BLOCK as u64 - 3, 7 * BLOCK as u64 + 1] {
            let mut cursor = writer.cursor(start);
            let mut offset = start;
            for len in [1, 7, 4096, 5000, 3, 20_000, 8191, 1, 12_288, 100].repeat(5) {
                let bytes = cursor.take(len).to_vec();
                assert_eq!(bytes, expected(&source, stream, offset, len), "{len} bytes at {offset}");
                offset += len as u64;
                assert_eq!(cursor.offset(), offset);
            }
        }
    }

    /// A writer in huge pages hands out the stream as an ordinary one does, from a
    /// buffer on a huge page's boundary that is in huge pages where they are not off,
    /// and is kept apart from ordinary buffers of its length.
    #[test]
    fn a_writer_in_huge_pages_writes_the_same_stream_from_huge_pages() {
        let source = Source::new(5);
        let stream = Stream::timed(5, "f", PERIOD);
        let writer = Writer::in_pages(&source, stream, PERIOD, 4 << 20, Pages::Huge).unwrap();
        let (address, len) = writer.region();
        assert_eq!((address as usize % HUGE, len % HUGE), (0, 0), "whole huge pages");
        let backed = crate::huge::backed_bytes(address).expect("in /proc/self/smaps");
        if matches!(context::transparent_hugepages().as_deref(), Some("always" | "madvise")) {
            assert!(backed >= HUGE as u64, "{backed} bytes in huge pages");
        }
        let mut cursor = writer.cursor(3 * BLOCK as u64);
        for _ in 0..5 {
            let offset = cursor.offset();
            assert_eq!(cursor.take(4 << 20), &expected(&source, stream, offset, 4 << 20)[..], "at {offset}");
        }
        drop(cursor);
        drop(writer);
        let ordinary = Writer::new(&source, stream, PERIOD, 4 << 20).unwrap();
        assert_ne!(ordinary.region().0, address, "a huge buffer is not handed out as an ordinary one");
    }

    /// The stamping writebench does for data that cannot be deduplicated happens before
    /// the timed span where the part fits the buffer: a one-call write of the whole part
    /// stamps nothing, and a part longer than the period stamps only from its second lap.
    #[test]
    fn a_prestamped_part_is_taken_without_stamping() {
        let source = Source::new(3);
        let stream = Stream::timed(3, "f", 4 * BLOCK);
        let one_call = 10 * BLOCK + 100;
        let writer = Writer::new(&source, stream, 4 * BLOCK, one_call).unwrap();
        writer.prestamp(BLOCK as u64, one_call as u64);
        let before = writer.restamps();
        assert!(before > 0);
        assert_eq!(writer.cursor(BLOCK as u64).take(one_call), expected(&source, stream, BLOCK as u64, one_call));
        assert_eq!(writer.restamps(), before, "nothing stamped in the span");
        // Small calls over three laps of a prestamped writer: the first lap is free.
        let small = Writer::new(&source, stream, 4 * BLOCK, BLOCK).unwrap();
        small.prestamp(0, 12 * BLOCK as u64);
        let before = small.restamps();
        let mut cursor = small.cursor(0);
        for lap in 0..3u64 {
            for _ in 0..4 {
                cursor.take(BLOCK);
            }
            let stamped = small.restamps() - before;
            assert_eq!(stamped, 4 * lap, "lap {lap}: only the laps after the first stamp");
        }
    }

    #[test]
    fn a_call_crossing_the_period_end_reads_the_tail_stamped_for_the_next_lap() {
        let source = Source::new(1);
        let stream = Stream::timed(1, "f", PERIOD);
        let writer = Writer::new(&source, stream, PERIOD, 1 << 20).unwrap();
        let start = (PERIOD - 1000) as u64;
        let mut cursor = writer.cursor(start);
        assert_eq!(cursor.take(3000), expected(&source, stream, start, 3000));
        // The next take starts in the buffer's first block, which the tail stood in for.
        assert_eq!(cursor.take(5000), expected(&source, stream, start + 3000, 5000));
        // Once round the period again, the same buffer blocks carry the next lap's tags.
        let mut offset = start + 8000;
        while offset < 3 * PERIOD as u64 {
            let bytes = cursor.take(1 << 20);
            if offset + (1 << 20) > 2 * PERIOD as u64 {
                assert_eq!(bytes, expected(&source, stream, offset, 1 << 20), "at {offset}");
            }
            offset += 1 << 20;
        }
    }

    #[test]
    fn writers_of_one_file_and_of_two_files_write_their_own_streams() {
        let source = Source::new(2);
        let names = ["case0001-run0-f0.dat".to_string(), "case0001-run0-f1.dat".to_string()];
        let shape = Shape::new(3, 4096, 1, None, 1 << 20);
        // Parts 0 and 1 into file 0 (at 0 and 512 KiB), part 2 into file 1 (at 0).
        let streams = Streams::new(&source, &names, &[0, 0, 1], shape).unwrap();
        assert_ne!(streams.file(0), streams.file(1));
        let (period, len) = (shape.period() as u64, 3 * shape.period());
        let mut cursors =
            [streams.writer(0).cursor(0), streams.writer(1).cursor(period / 2), streams.writer(2).cursor(0)];
        let mut written = [Vec::new(), Vec::new(), Vec::new()];
        // Taken in turns, as threads would: each buffer is stamped for its own blocks.
        for _ in 0..len / 4096 {
            for (cursor, out) in cursors.iter_mut().zip(&mut written) {
                out.extend_from_slice(cursor.take(4096));
            }
        }
        assert_eq!(written[0], expected(&source, *streams.file(0), 0, len));
        assert_eq!(written[1], expected(&source, *streams.file(0), period / 2, len));
        assert_eq!(written[2], expected(&source, *streams.file(1), 0, len));
        assert_ne!(written[0][..STAMP], written[2][..STAMP], "another file, another stamp");
        assert_eq!(written[0][STAMP..4096], written[2][STAMP..4096], "the same pattern under it");
    }

    #[test]
    fn aligned_offsets_have_aligned_sources() {
        let source = Source::new(4);
        let shape = Shape::new(1, 1 << 20, 1, None, 64 << 20);
        let streams = Streams::new(&source, &["f".to_string()], &[0], shape).unwrap();
        let page = page_size();
        let mut cursor = streams.writer(0).cursor(3 * page as u64);
        for _ in 0..20 {
            assert_eq!(cursor.take(1 << 20).as_ptr() as usize % page, 0);
        }
    }

    #[test]
    #[should_panic(expected = "one cursor at a time")]
    fn a_second_cursor_of_one_writer_is_refused() {
        let source = Source::new(4);
        let writer = Writer::new(&source, Stream::timed(4, "f", BLOCK), BLOCK, 1).unwrap();
        let _first = writer.cursor(0);
        let _second = writer.cursor(0);
    }

    #[test]
    fn a_writer_is_free_again_once_its_cursor_is_gone() {
        let source = Source::new(4);
        let stream = Stream::timed(4, "f", BLOCK);
        let writer = Writer::new(&source, stream, BLOCK, 100).unwrap();
        let first = writer.cursor(0).take(100).to_vec();
        // Another thread may take over the part's buffer, and sees its stamps.
        std::thread::scope(|scope| {
            scope.spawn(|| assert_eq!(writer.cursor(0).take(100), first.as_slice()));
        });
        assert_eq!(writer.cursor(BLOCK as u64).take(100), expected(&source, stream, BLOCK as u64, 100));
    }

    #[test]
    fn slices_in_flight_are_never_restamped_and_the_window_is_the_period() {
        let source = Source::new(9);
        let stream = Stream::timed(9, "f", 4 * BLOCK);
        let writer = Writer::new(&source, stream, 4 * BLOCK, 1000).unwrap();
        let mut cursor = writer.cursor(0);
        let mut live: std::collections::VecDeque<(u64, &[u8])> = Default::default();
        let (mut offset, mut refused) = (0u64, 0);
        let complete = |(at, bytes): (u64, &[u8])| {
            assert_eq!(bytes, expected(&source, stream, at, bytes.len()), "the request at {at} changed in flight");
        };
        // Up to 12 requests of 1000 bytes in flight (three quarters of the period),
        // always completing the newest, as a kernel may: the oldest holds the window.
        while offset < 200_000 {
            if live.len() < 12 {
                let oldest = live.front().map_or(offset, |&(at, _)| at);
                // SAFETY: every slice in use is in `live`, at `oldest` or later.
                if let Some(bytes) = unsafe { cursor.take_in_flight(1000, oldest) } {
                    live.push_back((offset, bytes));
                    offset += 1000;
                    continue;
                }
                assert!(!live.is_empty(), "nothing in flight, yet refused at {offset}");
                refused += 1;
            }
            complete(live.pop_back().unwrap());
        }
        live.into_iter().for_each(complete);
        assert!(refused > 0, "the window held requests back");
    }

    #[test]
    fn with_nothing_in_flight_a_request_longer_than_the_period_is_taken() {
        // io_uring at one request in flight, in calls longer than the period: the tail
        // makes each contiguous, and nothing in flight can be re-stamped.
        let source = Source::new(9);
        let stream = Stream::timed(9, "f", 4 * BLOCK);
        let writer = Writer::new(&source, stream, 4 * BLOCK, 20_000).unwrap();
        let mut cursor = writer.cursor(100);
        for round in 0..5u64 {
            let offset = 100 + round * 20_000;
            // SAFETY: no slice of this cursor is in use (each is compared, then dropped).
            let bytes = unsafe { cursor.take_in_flight(20_000, offset) }.expect("nothing in flight");
            assert_eq!(bytes, expected(&source, stream, offset, 20_000), "round {round}");
        }
    }
}
