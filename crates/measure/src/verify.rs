//! `--verify`: after a run's timed span, every file is read back and compared with what
//! was meant to be written: its own stream (`measure::source`), stamps included, whole.
//! A one-file case writes its parts at their offsets, and in a file-per-thread case each
//! file holds its part from offset 0 (runner::split). Reads go through a new open file
//! description (`/proc/self/fd/N`), so a descriptor opened with special flags is not
//! used for them.

use std::io;
use std::os::fd::{AsRawFd, RawFd};

use crate::fd::reopen;
use crate::source::Streams;
use error::{CallError, retry_eintr};

/// What to check after each run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verify {
    /// Test aid (hidden `--corrupt-for-test`): what to change in each run's files
    /// between the write and the check.
    pub corrupt: Option<Corruption>,
    /// Read back only each case's first measured run (the quick suite's default: what a
    /// method writes is checked once, and the rounds' time goes to runs), not every run
    /// (`--verify`).
    pub first_only: bool,
}

/// A change the tests make to a run's file, to see the check find it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Corruption {
    /// Flip every bit of the byte at `offset` of file `file`.
    Flip { file: usize, offset: u64 },
    /// Cut the last byte off file `file`.
    Shorten { file: usize },
    /// Add a byte at the end of file `file`.
    Lengthen { file: usize },
}

impl Corruption {
    /// `[FILE:]OFFSET`, `[FILE:]short` or `[FILE:]long`; files count from 0, and the
    /// first one is meant when FILE is left out.
    pub fn parse(text: &str) -> Result<Corruption, String> {
        let (file, what) = match text.split_once(':') {
            Some((file, what)) => (file.parse().map_err(|_| format!("'{file}' is not a file number"))?, what),
            None => (0, text),
        };
        match what {
            "short" => Ok(Corruption::Shorten { file }),
            "long" => Ok(Corruption::Lengthen { file }),
            offset => offset
                .parse()
                .map(|offset| Corruption::Flip { file, offset })
                .map_err(|_| format!("'{offset}' is not an offset, 'short' or 'long'")),
        }
    }

    fn file(self) -> usize {
        match self {
            Corruption::Flip { file, .. } | Corruption::Shorten { file } | Corruption::Lengthen { file } => file,
        }
    }
}

const READ_CHUNK: usize = 1 << 20;

/// Reads every file back; the first wrong byte (or a wrong length) fails the run.
/// File `i` must hold `streams.file(i)`.
pub fn check(verify: &Verify, files: &[RawFd], lens: &[u64], streams: &Streams) -> Result<(), CallError> {
    if let Some(corruption) = verify.corrupt {
        let Some((&fd, &len)) = files.get(corruption.file()).zip(lens.get(corruption.file())) else {
            let error = io::Error::other(format!("the run has {} files", files.len()));
            return Err(CallError::new(format!("corrupt-for-test of file {}", corruption.file()), error));
        };
        corrupt(fd, len, corruption)?;
    }
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
            if let Some(bad) = streams.file(index).first_mismatch(streams.source(), offset, data) {
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

/// Makes `corruption` to a file of `len` bytes, through a descriptor of its own.
fn corrupt(fd: RawFd, len: u64, corruption: Corruption) -> Result<(), CallError> {
    let writer = reopen(fd, libc::O_RDWR).map_err(|e| CallError::new("corrupt-for-test: reopen", e))?;
    let fd = writer.as_raw_fd();
    let mut byte = [0u8; 1];
    // SAFETY: pread/pwrite of one byte through a local buffer; ftruncate of our descriptor.
    let done = unsafe {
        match corruption {
            Corruption::Flip { offset, .. } => {
                libc::pread(fd, byte.as_mut_ptr().cast(), 1, offset as libc::off_t) == 1 && {
                    byte[0] ^= 0xff;
                    libc::pwrite(fd, byte.as_ptr().cast(), 1, offset as libc::off_t) == 1
                }
            }
            Corruption::Shorten { .. } => libc::ftruncate(fd, len.saturating_sub(1) as libc::off_t) == 0,
            Corruption::Lengthen { .. } => libc::pwrite(fd, byte.as_ptr().cast(), 1, len as libc::off_t) == 1,
        }
    };
    if !done {
        return Err(CallError::new(format!("corrupt-for-test: {corruption:?}"), io::Error::last_os_error()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corruptions_are_spelled_with_an_optional_file() {
        assert_eq!(Corruption::parse("654321"), Ok(Corruption::Flip { file: 0, offset: 654_321 }));
        assert_eq!(Corruption::parse("1:9000000"), Ok(Corruption::Flip { file: 1, offset: 9_000_000 }));
        assert_eq!(Corruption::parse("short"), Ok(Corruption::Shorten { file: 0 }));
        assert_eq!(Corruption::parse("2:long"), Ok(Corruption::Lengthen { file: 2 }));
        assert!(Corruption::parse("x:5").unwrap_err().contains("'x'"));
        assert!(Corruption::parse("1:tall").unwrap_err().contains("'tall'"));
    }
}
