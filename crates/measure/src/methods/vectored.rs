//! The loop shared by `writev` and `pwritev`: gather `iov` chunks per call, and after a
//! short write resubmit exactly the bytes that are left. A call's chunks are taken from
//! the source in one piece, so that its iovecs are contiguous bytes of the writer's
//! buffer: one call's chunks can never be two laps of the period (whose stamps differ).

use super::{CallError, Span, no_progress, retry_eintr};

/// `call(iovecs, file_offset)` issues one vectored write and returns its raw result.
pub(super) fn write_span_vectored(
    span: &Span,
    name: &str,
    mut call: impl FnMut(&[libc::iovec], u64) -> isize,
) -> Result<(), CallError> {
    let mut cursor = span.cursor();
    let mut pacer = span.pacer();
    let mut iovecs: Vec<libc::iovec> = Vec::with_capacity(span.iov);
    let mut offset = span.offset;
    let end = span.offset + span.len;
    while offset < end && !span.at_wall(offset) {
        iovecs.clear();
        let batch = span.chunk.saturating_mul(span.iov).min((end - offset) as usize);
        let bytes = cursor.take(batch);
        for piece in bytes.chunks(span.chunk) {
            iovecs.push(libc::iovec { iov_base: piece.as_ptr() as *mut libc::c_void, iov_len: piece.len() });
        }
        let mut pending: &mut [libc::iovec] = &mut iovecs;
        while !pending.is_empty() {
            let written = retry_eintr(|| call(pending, offset))
                .and_then(|n| if n == 0 { Err(no_progress()) } else { Ok(n) })
                .map_err(|error| {
                    let bytes: usize = pending.iter().map(|v| v.iov_len).sum();
                    CallError::new(
                        format!("{name} of {} iovecs, {bytes} bytes at offset {offset}", pending.len()),
                        error,
                    )
                })?;
            offset += written as u64;
            pending = advance(pending, written);
        }
        pacer.after_write(span.fd, offset)?;
    }
    pacer.finish(span.fd)
}

/// Drops the first `written` bytes from a list of iovecs.
fn advance(iovecs: &mut [libc::iovec], mut written: usize) -> &mut [libc::iovec] {
    let mut skip = 0;
    while skip < iovecs.len() && written >= iovecs[skip].iov_len {
        written -= iovecs[skip].iov_len;
        skip += 1;
    }
    let rest = &mut iovecs[skip..];
    if let Some(first) = rest.first_mut() {
        // SAFETY: `written` < first.iov_len, so the new base stays inside the buffer.
        first.iov_base = unsafe { first.iov_base.cast::<u8>().add(written) }.cast();
        first.iov_len -= written;
    }
    rest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iov(base: usize, len: usize) -> libc::iovec {
        libc::iovec { iov_base: base as *mut libc::c_void, iov_len: len }
    }

    #[test]
    fn advance_skips_whole_iovecs_and_trims_the_partial_one() {
        let mut list = [iov(0x1000, 10), iov(0x2000, 20), iov(0x3000, 30)];
        let rest = advance(&mut list, 15);
        assert_eq!(rest.len(), 2);
        assert_eq!(rest[0].iov_base as usize, 0x2005);
        assert_eq!(rest[0].iov_len, 15);
        assert_eq!(rest[1].iov_len, 30);
        let rest = advance(rest, 45);
        assert!(rest.is_empty());
    }

    #[test]
    fn advance_by_exactly_one_iovec() {
        let mut list = [iov(0x1000, 10), iov(0x2000, 20)];
        let rest = advance(&mut list, 10);
        assert_eq!(rest.len(), 1);
        assert_eq!(rest[0].iov_base as usize, 0x2000);
        assert_eq!(rest[0].iov_len, 20);
    }
}
