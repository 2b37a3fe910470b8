//! `pwrite(2)` at explicit offsets, one chunk per call.

use super::{CallError, Engine, Job, Prepared, Span, SpanMethod, SpanRun, no_progress, retry_eintr};

pub struct Pwrite;

impl Engine for Pwrite {
    fn name(&self) -> &'static str {
        "pwrite"
    }

    fn wall_refusal(&self) -> Option<&'static str> {
        None
    }

    fn prepare<'a>(&'a self, job: &'a Job<'a>) -> Result<Box<dyn Prepared + 'a>, CallError> {
        SpanRun::boxed(self, job)
    }
}

impl SpanMethod for Pwrite {
    fn write_span(&self, span: &Span) -> Result<(), CallError> {
        let mut cursor = span.cursor();
        let mut pacer = span.pacer();
        let mut offset = span.offset;
        let end = span.offset + span.len;
        while offset < end && !span.at_wall(offset) {
            let want = span.chunk.min((end - offset) as usize);
            let mut buf = cursor.take(want);
            while !buf.is_empty() {
                // SAFETY: `buf` is valid for reads of `buf.len()` bytes.
                let written = retry_eintr(|| unsafe {
                    libc::pwrite(span.fd, buf.as_ptr().cast(), buf.len(), offset as libc::off_t)
                })
                .and_then(|n| if n == 0 { Err(no_progress()) } else { Ok(n) })
                .map_err(|error| CallError::new(format!("pwrite of {} bytes at offset {offset}", buf.len()), error))?;
                buf = &buf[written..];
                offset += written as u64;
            }
            pacer.after_write(span.fd, offset)?;
        }
        pacer.finish(span.fd)
    }
}
