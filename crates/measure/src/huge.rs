//! Anonymous memory in huge pages: the settle step's warming (`settle::warm`) and the
//! buffers of writers asked for them (`source::Pages::Huge`, the calibration's device
//! ceiling).
//!
//! Why a writer's pages matter: an O_DIRECT call's request is built from the pages of
//! the caller's buffer, one segment per page, and a device takes only so many segments
//! a request (`/sys/block/*/queue/max_segments`, 254 on this machine's virtio disk).
//! From 4 KiB pages a 4 MiB `pwrite` went to this disk as 120–128 requests of 512–546
//! KiB, at 1.93–2.48 GB/s; from 2 MiB pages as 16 requests of 4 MiB, at 4.75–6.26 GB/s
//! (a C loop, 64 MiB over a written file, six alternating pairs, 2026-12-06; the
//! requests counted in `/sys/block/vda/stat`). The page cache's writeback sends large
//! folios, 18 requests of 3.6 MiB for the same file: a device rate measured from 4 KiB
//! pages was below what the device took from the page cache (docs/ceilings.md).

use std::io;
use std::ptr::NonNull;

use crate::source::Pages;

/// The size of a huge page (x86-64's and arm64's with 4 KiB pages).
pub const HUGE: usize = 2 << 20;

/// A private anonymous read-write mapping of `len` bytes (a multiple of [`HUGE`]),
/// starting on a huge page's boundary, that the kernel is asked to back with huge pages
/// (MADV_HUGEPAGE: given page fault by page fault, where transparent huge pages are not
/// off). Unmap it with `munmap(ptr, len)`.
pub fn map(len: usize) -> io::Result<NonNull<u8>> {
    assert!(len > 0 && len % HUGE == 0, "whole huge pages");
    // SAFETY: a fresh private anonymous mapping, checked; the slack before and after the
    // aligned start is unmapped, so that exactly [start, start + len) stays mapped.
    unsafe {
        let map = libc::mmap(
            std::ptr::null_mut(),
            len + HUGE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let start = (map as usize).div_ceil(HUGE) * HUGE;
        let head = start - map as usize;
        if head > 0 {
            libc::munmap(map, head);
        }
        let tail = HUGE - head;
        if tail > 0 {
            libc::munmap((start + len) as *mut libc::c_void, tail);
        }
        libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        Ok(NonNull::new(start as *mut u8).expect("mmap returned null"))
    }
}

/// The unit a mapping in `pages` is made of: the page size, or a huge page.
pub fn granule(pages: Pages) -> usize {
    match pages {
        Pages::Ordinary => crate::source::page_size(),
        Pages::Huge => HUGE,
    }
}

/// A private anonymous read-write mapping of `len` bytes (a multiple of
/// [`granule`]`(pages)`) in `pages`: an ordinary one, or [`map`]'s. Unmap it with
/// `munmap(ptr, len)`.
pub fn map_in(len: usize, pages: Pages) -> io::Result<NonNull<u8>> {
    if pages == Pages::Huge {
        return map(len);
    }
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
    Ok(NonNull::new(ptr.cast::<u8>()).expect("mmap returned null"))
}

/// How many bytes of the mapping that starts at `start` are in huge pages now
/// (`AnonHugePages` of its entry in /proc/self/smaps); None where it cannot be read.
pub fn backed_bytes(start: *const u8) -> Option<u64> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let wanted = start as usize;
    let mut inside = false;
    for line in smaps.lines() {
        // A mapping's first line: "start-end perms …", in hex.
        let range = line.split_once(' ').and_then(|(range, _)| range.split_once('-'));
        let bounds = range
            .and_then(|(from, to)| Some((usize::from_str_radix(from, 16).ok()?, usize::from_str_radix(to, 16).ok()?)));
        if let Some((from, to)) = bounds {
            inside = (from..to).contains(&wanted);
            continue;
        }
        match line.strip_prefix("AnonHugePages:") {
            Some(rest) if inside => {
                return rest.split_whitespace().next()?.parse::<u64>().ok().map(|kib| kib * 1024);
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mapping_asked_for_huge_pages_gets_them_where_they_are_not_off() {
        let len = 4 * HUGE;
        let start = map(len).unwrap();
        assert_eq!(start.as_ptr() as usize % HUGE, 0, "aligned to a huge page");
        // SAFETY: `len` bytes mapped read-write by `map`, unmapped below.
        unsafe { std::ptr::write_bytes(start.as_ptr(), 7, len) };
        let backed = backed_bytes(start.as_ptr()).expect("this mapping is in /proc/self/smaps");
        // SAFETY: the mapping `map` made, of its length.
        unsafe { libc::munmap(start.as_ptr().cast(), len) };
        match context::transparent_hugepages().as_deref() {
            // Memory too fragmented to compact can still give fewer; one at least.
            Some("always" | "madvise") => assert!(backed >= HUGE as u64, "{backed} bytes in huge pages"),
            mode => assert_eq!(backed, 0, "transparent huge pages {mode:?}"),
        }
        assert_eq!(backed_bytes(std::ptr::null()), None, "no mapping at 0");
    }
}
