//! `writev(2)` at the file position: `--iov` chunks gathered per call.

use super::vectored::write_span_vectored;
use super::{CallError, Engine, Job, Prepared, Span, SpanMethod, SpanRun};

pub struct Writev;

impl Engine for Writev {
    fn name(&self) -> &'static str {
        "writev"
    }

    fn wall_refusal(&self) -> Option<&'static str> {
        None
    }

    fn prepare<'a>(&'a self, job: &'a Job<'a>) -> Result<Box<dyn Prepared + 'a>, CallError> {
        SpanRun::boxed(self, job)
    }
}

impl SpanMethod for Writev {
    fn write_span(&self, span: &Span) -> Result<(), CallError> {
        span.seek_to_offset()?;
        write_span_vectored(span, "writev", |iovecs, _offset| {
            // SAFETY: every iovec points into the source buffer, valid for its length.
            unsafe { libc::writev(span.fd, iovecs.as_ptr(), iovecs.len() as libc::c_int) }
        })
    }
}
