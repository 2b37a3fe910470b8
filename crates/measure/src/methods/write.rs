//! `write(2)` at the file position, one chunk per call.

use super::{CallError, Engine, Job, Prepared, Span, SpanMethod, SpanRun, no_progress, retry_eintr};

pub struct Write;

impl Engine for Write {
    fn name(&self) -> &'static str {
        "write"
    }

    fn wall_refusal(&self) -> Option<&'static str> {
        None
    }

    fn prepare<'a>(&'a self, job: &'a Job<'a>) -> Result<Box<dyn Prepared + 'a>, CallError> {
        SpanRun::boxed(self, job)
    }
}

impl SpanMethod for Write {
    fn write_span(&self, span: &Span) -> Result<(), CallError> {
        // write(2) uses the file position; place it once (a no-op for a fresh file).
        span.seek_to_offset()?;
        let mut cursor = span.cursor();
        let mut pacer = span.pacer();
        let mut remaining = span.len;
        while remaining > 0 && !span.at_wall(span.offset + (span.len - remaining)) {
            let want = span.chunk.min(remaining as usize);
            let mut buf = cursor.take(want);
            // Short writes continue with the rest of the same chunk.
            while !buf.is_empty() {
                // SAFETY: `buf` is valid for reads of `buf.len()` bytes.
                let written = retry_eintr(|| unsafe { libc::write(span.fd, buf.as_ptr().cast(), buf.len()) })
                    .and_then(|n| if n == 0 { Err(no_progress()) } else { Ok(n) })
                    .map_err(|error| {
                        let offset = span.offset + (span.len - remaining);
                        CallError::new(format!("write of {} bytes at offset {offset}", buf.len()), error)
                    })?;
                buf = &buf[written..];
                remaining -= written as u64;
            }
            pacer.after_write(span.fd, span.offset + (span.len - remaining))?;
        }
        pacer.finish(span.fd)
    }
}
