//! The O_DIRECT alignment of a file (docs/design.md §2.7): what the result file records and
//! what the runner checks every O_DIRECT case against come from this one function,
//! so the two can never disagree.

use std::os::fd::RawFd;

use serde::{Deserialize, Serialize};

/// What O_DIRECT needs of a file here, and where the numbers came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DioAlignment {
    /// Alignment of the buffer's address in memory.
    pub mem: u32,
    /// Alignment of file offsets and lengths.
    pub offset: u32,
    /// Where the numbers came from: statx, the device's logical block size, or assumed.
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn every_file_gets_an_alignment_and_its_source() {
        let file = tempfile::tempfile().unwrap();
        let alignment = dio_alignment(file.as_raw_fd());
        assert!(alignment.mem.is_power_of_two() || alignment.mem == 0, "{alignment:?}");
        assert!(alignment.offset.is_power_of_two(), "{alignment:?}");
        assert!(!alignment.source.is_empty());
        // Not a descriptor: no statx, no device, the assumption says so.
        let assumed = dio_alignment(-1);
        assert_eq!((assumed.mem, assumed.offset), (4096, 4096));
        assert!(assumed.source.starts_with("assumed"), "{}", assumed.source);
    }
}
