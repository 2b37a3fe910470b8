//! A failed call and its OS text: the one error type of the measuring code, the EINTR
//! retry every raw call goes through, and the plain wording shown to people.

use std::fmt;
use std::io;

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

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.call, self.error)
    }
}

/// Runs a raw syscall that returns a byte count or -1, retrying on EINTR.
#[inline]
pub fn retry_eintr(mut call: impl FnMut() -> isize) -> io::Result<usize> {
    loop {
        let result = call();
        if result >= 0 {
            return Ok(result as usize);
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
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
