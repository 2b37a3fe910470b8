//! How much of a run's files the page cache still holds once the run is over (after
//! its data is durable): what `pwritev2-dontcache` (RWF_DONTCACHE) is for, measured for
//! every case so that the default policy is there to compare with.

use std::io;
use std::os::fd::RawFd;

/// Bytes of the files' pages resident in the page cache now (`mincore` on a fresh
/// read-only shared map of each file, which faults nothing in), or None if a file cannot
/// be mapped.
pub fn resident_bytes(files: &[RawFd], lens: &[u64]) -> Option<u64> {
    let page = crate::source::page_size() as u64;
    let mut resident = 0u64;
    for (&fd, &len) in files.iter().zip(lens) {
        if len == 0 {
            continue;
        }
        resident += resident_pages(fd, len).ok()? * page;
    }
    Some(resident)
}

fn resident_pages(fd: RawFd, len: u64) -> io::Result<u64> {
    let page = crate::source::page_size() as u64;
    let pages = len.div_ceil(page) as usize;
    // SAFETY: a new read-only shared map of the file, unmapped below; mincore fills one
    // byte per page of it into a vector of that many bytes.
    unsafe {
        let map = libc::mmap(std::ptr::null_mut(), len as usize, libc::PROT_READ, libc::MAP_SHARED, fd, 0);
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let mut vec = vec![0u8; pages];
        let result = libc::mincore(map, len as usize, vec.as_mut_ptr());
        let error = io::Error::last_os_error();
        libc::munmap(map, len as usize);
        if result != 0 {
            return Err(error);
        }
        Ok(vec.iter().filter(|&&v| v & 1 != 0).count() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_file_just_written_is_resident_and_an_empty_one_counts_nothing() {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&vec![7u8; 64 << 10]).unwrap();
        let resident = resident_bytes(&[file.as_raw_fd()], &[64 << 10]).unwrap();
        assert_eq!(resident, 64 << 10);
        assert_eq!(resident_bytes(&[file.as_raw_fd()], &[0]), Some(0));
        assert_eq!(resident_bytes(&[-1], &[4096]), None);
    }
}
