//! Stamped data (docs/crash.md): every 512-byte sector a workload writes says which file
//! it belongs to, which write put it there and at which offset, so that any sector read
//! back after a simulated power loss tells where it came from ("the old file's", "write 3
//! of 16's", zeros, or nobody's).

/// Sectors are the unit a device writes whole (torn sectors are outside the model).
pub const SECTOR: usize = 512;
const MAGIC: &[u8; 8] = b"WBCRASH1";

/// Who wrote a sector: the file's tag (a workload numbers its files and versions) and
/// the write's number (1-based, in the order the workload made them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub tag: u32,
    pub write: u32,
    pub offset: u64,
}

/// The bytes of `len` (a multiple of [`SECTOR`]) that write `write` of file `tag` puts
/// at `offset` (a multiple of [`SECTOR`]).
pub fn fill(tag: u32, write: u32, offset: u64, len: usize) -> Vec<u8> {
    assert!(offset % SECTOR as u64 == 0 && len % SECTOR == 0, "stamped writes are whole sectors");
    let mut out = Vec::with_capacity(len);
    for n in 0..(len / SECTOR) as u64 {
        out.extend_from_slice(&sector(Stamp { tag, write, offset: offset + n * SECTOR as u64 }));
    }
    out
}

/// One stamped sector: the magic, the stamp, then bytes that depend on all of it (so a
/// sector copied to another place, or mixed from two, does not read as valid).
pub fn sector(stamp: Stamp) -> [u8; SECTOR] {
    let mut out = [0u8; SECTOR];
    out[..8].copy_from_slice(MAGIC);
    out[8..12].copy_from_slice(&stamp.tag.to_le_bytes());
    out[12..16].copy_from_slice(&stamp.write.to_le_bytes());
    out[16..24].copy_from_slice(&stamp.offset.to_le_bytes());
    let mut state = u64::from(stamp.tag) << 32 ^ u64::from(stamp.write) ^ stamp.offset.rotate_left(17) ^ 0x9E37_79B9;
    for chunk in out[24..].chunks_mut(8) {
        // splitmix64: cheap and well mixed.
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        chunk.copy_from_slice(&z.to_le_bytes()[..chunk.len()]);
    }
    out
}

/// What a sector read back is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    Zeros,
    Stamped(Stamp),
    /// Neither: filesystem metadata, a mix of two writes, or garbage.
    Other,
}

pub fn read(bytes: &[u8]) -> Found {
    if bytes.iter().all(|&b| b == 0) {
        return Found::Zeros;
    }
    if bytes.len() != SECTOR || &bytes[..8] != MAGIC {
        return Found::Other;
    }
    let word = |at: usize, n: usize| bytes[at..at + n].iter().rev().fold(0u64, |acc, &b| acc << 8 | u64::from(b));
    let stamp = Stamp { tag: word(8, 4) as u32, write: word(12, 4) as u32, offset: word(16, 8) };
    if sector(stamp)[..] == *bytes { Found::Stamped(stamp) } else { Found::Other }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sector_tells_its_file_write_and_offset_and_a_mix_does_not_pass() {
        let data = fill(3, 7, 4096, 1024);
        assert_eq!(read(&data[..SECTOR]), Found::Stamped(Stamp { tag: 3, write: 7, offset: 4096 }));
        assert_eq!(read(&data[SECTOR..]), Found::Stamped(Stamp { tag: 3, write: 7, offset: 4608 }));
        assert_eq!(read(&[0; SECTOR]), Found::Zeros);
        let mut mixed = data[..SECTOR].to_vec();
        mixed[300..].copy_from_slice(&fill(3, 8, 4096, SECTOR)[300..]);
        assert_eq!(read(&mixed), Found::Other);
        assert_ne!(fill(3, 7, 0, SECTOR), fill(3, 8, 0, SECTOR));
    }
}
