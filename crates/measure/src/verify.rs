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

/// How long reads that end before the bytes written are tried again, through a new
/// descriptor each time: a network filesystem's client may hold the file's size from
/// before another host's writes (a shared file of MPI ranks on GlusterFS read back on
/// one host ended early under load, its metadata cache keeping the size 1 s by default),
/// and its reads end there until the cache lapses. A file truly short is called so after
/// this.
const SHORT_READ_PATIENCE: std::time::Duration = std::time::Duration::from_secs(3);

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
        let open = || reopen(fd, libc::O_RDONLY).map_err(|e| CallError::new(format!("verify: reopen file {index}"), e));
        let mut reader = open()?;
        let mut offset = 0u64;
        // When a read first ended before `len`: the patience runs from there.
        let mut short_since: Option<std::time::Instant> = None;
        loop {
            let want = READ_CHUNK.min((len - offset) as usize).max(1);
            // SAFETY: pread into a buffer of at least `want` bytes.
            let read = retry_eintr(|| unsafe {
                libc::pread(reader.as_raw_fd(), buffer.as_mut_ptr().cast(), want, offset as libc::off_t)
            })
            .map_err(|error| CallError::new(format!("verify: read of file {index} at offset {offset}"), error))?;
            let short = read == 0 && offset < len;
            if short && short_since.get_or_insert_with(std::time::Instant::now).elapsed() < SHORT_READ_PATIENCE {
                std::thread::sleep(std::time::Duration::from_millis(100));
                reader = open()?;
                continue;
            }
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

    /// A file whose size lags (another host's writes, seen through a client's cache) is
    /// waited for; a file truly short is called short once the patience is spent.
    #[test]
    fn a_size_that_lags_is_waited_for_and_a_short_file_is_short() {
        use crate::source::{Shape, Source, Streams};
        use std::io::Write;
        use std::os::fd::AsRawFd;
        let source = Source::new(7);
        let len = 64 * 1024u64;
        let streams = Streams::new(&source, &["f".to_string()], &[0], Shape::new(1, 4096, 1, None, len)).unwrap();
        let mut bytes = vec![0u8; len as usize];
        streams.file(0).fill(&source, 0, &mut bytes);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, &bytes[..len as usize / 2]).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let verify = Verify { corrupt: None, first_only: false };
        std::thread::scope(|scope| {
            scope.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(300));
                let mut rest = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
                rest.write_all(&bytes[len as usize / 2..]).unwrap();
            });
            assert!(check(&verify, &[file.as_raw_fd()], &[len], &streams).is_ok());
        });
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(len / 2).unwrap();
        let started = std::time::Instant::now();
        let error = check(&verify, &[file.as_raw_fd()], &[len], &streams).unwrap_err().to_string();
        assert!(error.contains("shorter than the 65536 bytes written"), "{error}");
        assert!(started.elapsed() >= SHORT_READ_PATIENCE, "called short after {:?}", started.elapsed());
    }
}
