//! C stdio: `fwrite(3)` through a `FILE*` from `fdopen`, with `fclose` in the timed span
//! (the data is not in the kernel until stdio's buffer is flushed). O_DIRECT is refused
//! before any run (the catalogue's `Buffer::Stdio`): stdio's buffer is not aligned for it.

use std::io;

use super::{CallError, Engine, Job, Prepared, Span, SpanMethod, SpanRun};
use crate::durability::Pacer;

pub struct Fwrite;

impl Engine for Fwrite {
    fn name(&self) -> &'static str {
        "fwrite"
    }

    fn wall_refusal(&self) -> Option<&'static str> {
        None
    }

    fn prepare<'a>(&'a self, job: &'a Job<'a>) -> Result<Box<dyn Prepared + 'a>, CallError> {
        SpanRun::boxed(self, job)
    }
}

impl SpanMethod for Fwrite {
    fn write_span(&self, span: &Span) -> Result<(), CallError> {
        // stdio closes the descriptor it is given; hand it a duplicate so the runner's
        // descriptor stays open for the sync and for cleanup.
        // SAFETY: plain descriptor and stdio calls; every result is checked.
        let stream = unsafe {
            let duplicate = libc::dup(span.fd);
            if duplicate < 0 {
                return Err(CallError::new("dup", io::Error::last_os_error()));
            }
            if libc::lseek(duplicate, span.offset as libc::off_t, libc::SEEK_SET) < 0 {
                let error = io::Error::last_os_error();
                libc::close(duplicate);
                return Err(CallError::new(format!("lseek to {}", span.offset), error));
            }
            let stream = libc::fdopen(duplicate, c"w".as_ptr());
            if stream.is_null() {
                let error = io::Error::last_os_error();
                libc::close(duplicate);
                return Err(CallError::new("fdopen", error));
            }
            stream
        };
        let result = write_all(stream, span);
        // SAFETY: `stream` came from fdopen above and is closed exactly once.
        let closed = unsafe { libc::fclose(stream) };
        result?;
        if closed != 0 {
            return Err(CallError::new("fclose (flushing stdio's buffer)", io::Error::last_os_error()));
        }
        Ok(())
    }
}

/// `every:N` counts fwrite calls; a due sync first flushes stdio's buffer (fflush) so
/// that the data is in the kernel, then syncs the descriptor.
fn write_all(stream: *mut libc::FILE, span: &Span) -> Result<(), CallError> {
    let mut pacer = span.pacer();
    let mut cursor = span.cursor();
    let mut remaining = span.len;
    while remaining > 0 && !span.at_wall(span.offset + (span.len - remaining)) {
        let want = span.chunk.min(remaining as usize);
        let mut buf = cursor.take(want);
        while !buf.is_empty() {
            // SAFETY: `buf` is valid for reads of `buf.len()` bytes; `stream` is open.
            let written = unsafe { libc::fwrite(buf.as_ptr().cast(), 1, buf.len(), stream) };
            if written < buf.len() {
                let error = io::Error::last_os_error();
                // stdio reports EINTR as a short count with the error flag set: retry the rest.
                if error.kind() != io::ErrorKind::Interrupted {
                    let offset = span.offset + (span.len - remaining) + written as u64;
                    return Err(CallError::new(format!("fwrite of {} bytes near offset {offset}", buf.len()), error));
                }
                // SAFETY: `stream` is open.
                unsafe { libc::clearerr(stream) };
            }
            buf = &buf[written..];
            remaining -= written as u64;
        }
        if pacer.due() {
            flush_and_sync(stream, &mut pacer)?;
        }
    }
    if pacer.at_end() {
        flush_and_sync(stream, &mut pacer)?;
    }
    Ok(())
}

fn flush_and_sync(stream: *mut libc::FILE, pacer: &mut Pacer<'_>) -> Result<(), CallError> {
    // SAFETY: `stream` is open.
    if unsafe { libc::fflush(stream) } != 0 {
        return Err(CallError::new("fflush", io::Error::last_os_error()));
    }
    // SAFETY: `stream` is open; fileno cannot fail on it.
    let fd = unsafe { libc::fileno(stream) };
    pacer.sync_now(fd)
}
