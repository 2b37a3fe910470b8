//! `pwritev(2)` at explicit offsets: `--iov` chunks gathered per call.

use super::vectored::write_span_vectored;
use super::{CallError, Engine, Job, Prepared, Span, SpanMethod, SpanRun};

pub struct Pwritev;

impl Engine for Pwritev {
    fn name(&self) -> &'static str {
        "pwritev"
    }

    fn wall_refusal(&self) -> Option<&'static str> {
        None
    }

    fn prepare<'a>(&'a self, job: &'a Job<'a>) -> Result<Box<dyn Prepared + 'a>, CallError> {
        SpanRun::boxed(self, job)
    }
}

impl SpanMethod for Pwritev {
    fn write_span(&self, span: &Span) -> Result<(), CallError> {
        write_span_vectored(span, "pwritev", |iovecs, offset| {
            // SAFETY: every iovec points into the source buffer, valid for its length.
            unsafe { libc::pwritev(span.fd, iovecs.as_ptr(), iovecs.len() as libc::c_int, offset as libc::off_t) }
        })
    }
}
