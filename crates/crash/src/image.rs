//! A device image held in memory, in 4 KiB pages that exist only once written (an xfs
//! image must be 300 MB, most of it never touched): what the recorder serves, and what a
//! crash state is built into.

use std::collections::BTreeMap;

const PAGE: u64 = 4096;

/// A fixed-size image; reads of pages never written are zeros.
#[derive(Debug, Clone, Default)]
pub struct Image {
    size: u64,
    pages: BTreeMap<u64, Box<[u8; PAGE as usize]>>,
}

impl Image {
    pub fn new(size: u64) -> Image {
        Image { size, pages: BTreeMap::new() }
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    /// The bytes of `len` from `offset`, cut at the end of the image.
    pub fn read(&self, offset: u64, len: u64) -> Vec<u8> {
        let end = offset.saturating_add(len).min(self.size);
        let mut out = vec![0; end.saturating_sub(offset) as usize];
        let mut at = offset;
        while at < end {
            let (page, within) = (at / PAGE, at % PAGE);
            let take = (PAGE - within).min(end - at);
            if let Some(bytes) = self.pages.get(&page) {
                let from = (at - offset) as usize;
                out[from..from + take as usize].copy_from_slice(&bytes[within as usize..(within + take) as usize]);
            }
            at += take;
        }
        out
    }

    /// Writes `data` at `offset`; what passes the end of the image is refused (the
    /// count written is returned, as pwrite does).
    pub fn write(&mut self, offset: u64, data: &[u8]) -> usize {
        let end = offset.saturating_add(data.len() as u64).min(self.size);
        let mut at = offset;
        while at < end {
            let (page, within) = (at / PAGE, at % PAGE);
            let take = (PAGE - within).min(end - at);
            let from = (at - offset) as usize;
            let bytes = self.pages.entry(page).or_insert_with(|| Box::new([0; PAGE as usize]));
            bytes[within as usize..(within + take) as usize].copy_from_slice(&data[from..from + take as usize]);
            at += take;
        }
        end.saturating_sub(offset) as usize
    }

    /// Zeros `len` bytes from `offset` (a punched hole reads as zeros), freeing whole pages.
    pub fn zero(&mut self, offset: u64, len: u64) {
        let end = offset.saturating_add(len).min(self.size);
        let mut at = offset;
        while at < end {
            let (page, within) = (at / PAGE, at % PAGE);
            let take = (PAGE - within).min(end - at);
            if take == PAGE {
                self.pages.remove(&page);
            } else if let Some(bytes) = self.pages.get_mut(&page) {
                bytes[within as usize..(within + take) as usize].fill(0);
            }
            at += take;
        }
    }

    /// The written pages, `(offset, bytes)` in order: all a copy of the image needs
    /// beside its size (the rest reads as zeros, as a sparse file's holes do).
    pub fn pages(&self) -> impl Iterator<Item = (u64, &[u8])> {
        self.pages.iter().map(|(page, bytes)| (page * PAGE, &bytes[..]))
    }

    /// Bytes held in memory (written pages).
    pub fn resident(&self) -> u64 {
        self.pages.len() as u64 * PAGE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_across_pages_read_back_and_unwritten_bytes_are_zeros() {
        let mut image = Image::new(3 * PAGE);
        let data: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8 + 1).collect();
        assert_eq!(image.write(PAGE - 100, &data), 5000);
        assert_eq!(image.read(PAGE - 100, 5000), data);
        assert_eq!(image.read(0, 10), vec![0; 10]);
        assert_eq!(image.resident(), 3 * PAGE, "bytes 3,996-8,995: three pages");
        // Past the end: cut, as a device is.
        assert_eq!(image.write(3 * PAGE - 10, &[7; 20]), 10);
        assert_eq!(image.read(3 * PAGE - 10, 100), vec![7; 10]);
    }

    #[test]
    fn zeroing_frees_whole_pages_and_clears_partial_ones() {
        let mut image = Image::new(4 * PAGE);
        image.write(0, &vec![9; 4 * PAGE as usize]);
        image.zero(100, 2 * PAGE);
        assert_eq!(image.read(0, 100), vec![9; 100]);
        assert_eq!(image.read(100, 2 * PAGE), vec![0; 2 * PAGE as usize]);
        assert_eq!(image.read(2 * PAGE + 100, 10), vec![9; 10]);
        assert_eq!(image.resident(), 3 * PAGE, "page 1 was wholly zeroed and freed");
    }
}
