//! A failed call and its OS text: the one error type of the measuring code, the EINTR
//! retry every raw call goes through, and the plain wording shown to people; and the one
//! wait for a child process with a limit (`wait`), and SIGINT, SIGTERM and SIGHUP made a
//! flag and passed on to the one child that must hear them (`interrupt`).

use std::fmt;
use std::io;

pub mod interrupt;
pub mod wait;

/// A failed call, with enough context to act on: which call, where, and the OS text.
#[derive(Debug)]
pub struct CallError {
    pub call: String,
    pub error: io::Error,
}

impl CallError {
    pub fn new(call: impl Into<String>, error: io::Error) -> CallError {
        CallError { call: call.into(), error }
    }
}

impl CallError {
    /// The same error again (io::Error is not Clone): the OS error number where there
    /// is one, else the kind and the text.
    pub fn copy(&self) -> CallError {
        let error = match self.error.raw_os_error() {
            Some(code) => io::Error::from_raw_os_error(code),
            None => io::Error::new(self.error.kind(), self.error.to_string()),
        };
        CallError { call: self.call.clone(), error }
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.call, self.error)
    }
}

/// Runs `call` again as long as it fails with EINTR: the one retry loop of the code.
#[inline]
pub fn retry<T>(mut call: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    loop {
        match call() {
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            outcome => return outcome,
        }
    }
}

/// Runs a raw syscall that returns a count (or 0) on success and -1 with errno on
/// failure, retrying on EINTR.
#[inline]
pub fn retry_eintr(mut call: impl FnMut() -> isize) -> io::Result<usize> {
    retry(|| {
        let result = call();
        if result >= 0 { Ok(result as usize) } else { Err(io::Error::last_os_error()) }
    })
}

/// A call that reports zero bytes written for a non-empty buffer would loop forever;
/// the kernel does not do that for regular files, so treat it as an error.
pub fn no_progress() -> io::Error {
    io::Error::new(io::ErrorKind::WriteZero, "the call wrote 0 bytes")
}

/// An io::Error's text without the "(os error N)" suffix, for messages to people.
pub fn plain(error: &std::io::Error) -> String {
    let text = error.to_string();
    match text.find(" (os error") {
        Some(index) => text[..index].to_string(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eintr_is_retried_and_other_errors_are_returned() {
        let mut calls = 0;
        let result = retry(|| {
            calls += 1;
            if calls < 3 { Err(io::Error::from_raw_os_error(libc::EINTR)) } else { Ok(calls) }
        });
        assert_eq!(result.unwrap(), 3);
        let error = retry::<()>(|| Err(io::Error::from_raw_os_error(libc::EIO))).unwrap_err();
        assert_eq!(error.raw_os_error(), Some(libc::EIO));
        assert_eq!(retry_eintr(|| 7).unwrap(), 7);
    }
}
