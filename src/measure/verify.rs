//! `--verify`: after a run's timed span, every file is read back and compared with what
//! was meant to be written. The byte at file offset `o` is `pattern[o % PERIOD]` for
//! every file: a one-file case writes its parts at their offsets, and in a
//! file-per-thread case each file holds its part from offset 0 (runner::split). Reads
//! go through a new open file description (`/proc/self/fd/N`), so a descriptor opened
//! with special flags is not used for them.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Arc, Mutex};

use crate::error::{CallError, retry_eintr};
use crate::measure::fd::reopen;
use crate::measure::source::{PERIOD, fill_pattern, first_mismatch};

/// What to check after each run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verify {
    /// Test aid (hidden `--corrupt-for-test OFFSET`): flip the byte at this offset of
    /// the run's first file between the write and the check.
    pub corrupt_at: Option<u64>,
}

const READ_CHUNK: usize = 1 << 20;

/// The pattern for `seed`, made once per seed (8 MiB of PRNG output).
fn pattern(seed: u64) -> Arc<Vec<u8>> {
    static CACHE: Mutex<Option<(u64, Arc<Vec<u8>>)>> = Mutex::new(None);
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((cached, pattern)) = cache.as_ref() {
        if *cached == seed {
            return Arc::clone(pattern);
        }
    }
    let mut pattern = vec![0u8; PERIOD];
    fill_pattern(seed, &mut pattern);
    let pattern = Arc::new(pattern);
    *cache = Some((seed, Arc::clone(&pattern)));
    pattern
}

/// Reads every file back; the first wrong byte (or a wrong length) fails the run.
pub fn check(verify: &Verify, files: &[RawFd], lens: &[u64], seed: u64) -> Result<(), CallError> {
    if let (Some(offset), Some(&fd)) = (verify.corrupt_at, files.first()) {
        corrupt(fd, offset)?;
    }
    let pattern = pattern(seed);
    let mut buffer = vec![0u8; READ_CHUNK];
    for (index, (&fd, &len)) in files.iter().zip(lens).enumerate() {
        let reader =
            reopen(fd, libc::O_RDONLY).map_err(|e| CallError::new(format!("verify: reopen file {index}"), e))?;
        let mut offset = 0u64;
        loop {
            let want = READ_CHUNK.min((len - offset) as usize).max(1);
            // SAFETY: pread into a buffer of at least `want` bytes.
            let read = retry_eintr(|| unsafe {
                libc::pread(reader.as_raw_fd(), buffer.as_mut_ptr().cast(), want, offset as libc::off_t)
            })
            .map_err(|error| CallError::new(format!("verify: read of file {index} at offset {offset}"), error))?;
            if read == 0 || offset >= len {
                if offset != len || read != 0 {
                    let what = if offset < len { "shorter" } else { "longer" };
                    return Err(CallError::new(
                        format!("verify of file {index}"),
                        io::Error::other(format!("the file is {what} than the {len} bytes written")),
                    ));
                }
                break;
            }
            let data = &buffer[..read.min((len - offset) as usize)];
            if let Some(bad) = first_mismatch(&pattern, offset, data) {
                return Err(CallError::new(
                    format!("verify of file {index}"),
                    io::Error::other(format!("data differs from what was written, first at offset {bad}")),
                ));
            }
            offset += data.len() as u64;
        }
    }
    Ok(())
}

fn corrupt(fd: RawFd, offset: u64) -> Result<(), CallError> {
    let writer = reopen(fd, libc::O_RDWR).map_err(|e| CallError::new("corrupt-for-test: reopen", e))?;
    let mut byte = [0u8; 1];
    // SAFETY: pread/pwrite of one byte through a local buffer.
    let done = unsafe {
        libc::pread(writer.as_raw_fd(), byte.as_mut_ptr().cast(), 1, offset as libc::off_t) == 1 && {
            byte[0] ^= 0xff;
            libc::pwrite(writer.as_raw_fd(), byte.as_ptr().cast(), 1, offset as libc::off_t) == 1
        }
    };
    if !done {
        return Err(CallError::new(format!("corrupt-for-test at offset {offset}"), io::Error::last_os_error()));
    }
    Ok(())
}
