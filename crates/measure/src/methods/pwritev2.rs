//! `pwritev2(2)` with per-call flags (Linux 4.6+), the write paths fio has no option for:
//! - `pwritev2`: the flags of the durability mode only (`rwf-sync` → `RWF_SYNC`,
//!   `rwf-dsync` → `RWF_DSYNC`, else none), so that O_SYNC/O_DSYNC can be compared with
//!   their per-call counterparts in one run;
//! - `pwritev2-dontcache`: `RWF_DONTCACHE` (Linux 6.14), buffered writes whose pages are
//!   dropped once written back: large streaming writes that should not evict the rest
//!   of the page cache. Filesystems opt in; the others answer EOPNOTSUPP, which makes
//!   the case `unsupported` (never judged from the kernel's version: it was switched off
//!   and on again in 2025 kernels);
//! - `pwritev2-append`: `RWF_APPEND`, an append per call without O_APPEND on the
//!   descriptor; from an empty file only, and a file per writer (appends of several
//!   threads into one file would interleave);
//! - `pwritev2-atomic`: `RWF_ATOMIC` (Linux 6.11), writes the kernel keeps whole across a
//!   crash. Each call's size must be a power of two within the file's atomic write
//!   units (statx `STATX_WRITE_ATOMIC`), at an offset aligned to it, in at most the
//!   units' segments; where statx offers none, the case is `unsupported` with its answer.
//!
//! All take `--iov` (a call gathers `iov` chunks) and `writebehind:SIZE`.

use std::io;

use super::vectored::write_span_vectored;
use super::{CallError, Engine, Job, Prepared, Span, SpanMethod, SpanRun};
use context::features::atomic_write;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Plain,
    DontCache,
    Append,
    Atomic,
}

pub struct Pwritev2 {
    name: &'static str,
    kind: Kind,
}

pub static PLAIN: Pwritev2 = Pwritev2 { name: "pwritev2", kind: Kind::Plain };
pub static DONTCACHE: Pwritev2 = Pwritev2 { name: "pwritev2-dontcache", kind: Kind::DontCache };
pub static APPEND: Pwritev2 = Pwritev2 { name: "pwritev2-append", kind: Kind::Append };
pub static ATOMIC: Pwritev2 = Pwritev2 { name: "pwritev2-atomic", kind: Kind::Atomic };

impl Pwritev2 {
    /// The method's own flag, before the durability mode's.
    fn own_flag(&self) -> libc::c_int {
        match self.kind {
            Kind::Plain => 0,
            Kind::DontCache => libc::RWF_DONTCACHE,
            Kind::Append => libc::RWF_APPEND,
            Kind::Atomic => libc::RWF_ATOMIC,
        }
    }

    /// Why RWF_ATOMIC cannot write this job's calls, from statx's answer for its file.
    fn atomic_refusal(&self, job: &Job) -> Option<String> {
        let fd = *job.files.first()?;
        let Some(units) = atomic_write(fd) else {
            return Some("the kernel reports no atomic write units (statx STATX_WRITE_ATOMIC, Linux 6.11)".into());
        };
        if !units.supported {
            return Some(format!(
                "statx offers no atomic writes for files here (STATX_WRITE_ATOMIC: unit {}..{} bytes)",
                units.unit_min, units.unit_max
            ));
        }
        let call = (job.chunk * job.iov) as u64;
        let (min, max) = (u64::from(units.unit_min), u64::from(units.unit_max));
        if !call.is_power_of_two() || call < min || call > max {
            return Some(format!(
                "calls of {call} bytes: RWF_ATOMIC takes a power of two from {min} to {max} bytes here (statx)"
            ));
        }
        if job.iov as u32 > units.segments_max.max(1) {
            return Some(format!(
                "{} iovecs a call: RWF_ATOMIC takes at most {} here (statx)",
                job.iov, units.segments_max
            ));
        }
        if job.file_lens.iter().any(|len| len % call != 0) {
            return Some(format!(
                "RWF_ATOMIC: every call must be {call} bytes, so the file size must be a multiple of it"
            ));
        }
        None
    }
}

impl Engine for Pwritev2 {
    fn name(&self) -> &'static str {
        self.name
    }

    fn wall_refusal(&self) -> Option<&'static str> {
        None
    }

    fn prepare<'a>(&'a self, job: &'a Job<'a>) -> Result<Box<dyn Prepared + 'a>, CallError> {
        if self.kind == Kind::Atomic {
            if let Some(why) = self.atomic_refusal(job) {
                return Err(CallError::new(why, io::Error::from_raw_os_error(libc::EOPNOTSUPP)));
            }
        }
        SpanRun::boxed(self, job)
    }
}

impl SpanMethod for Pwritev2 {
    fn write_span(&self, span: &Span) -> Result<(), CallError> {
        let flags = self.own_flag() | span.rwf;
        let name = format!("{} (flags {})", self.name, flag_names(flags));
        write_span_vectored(span, &name, |iovecs, offset| {
            // SAFETY: every iovec points into the source buffer, valid for its length.
            unsafe {
                libc::pwritev2(span.fd, iovecs.as_ptr(), iovecs.len() as libc::c_int, offset as libc::off_t, flags)
                    as isize
            }
        })
    }
}

/// "RWF_DSYNC|RWF_DONTCACHE", for error messages.
fn flag_names(flags: libc::c_int) -> String {
    let names: Vec<&str> = [
        (libc::RWF_DSYNC, "RWF_DSYNC"),
        (libc::RWF_SYNC, "RWF_SYNC"),
        (libc::RWF_APPEND, "RWF_APPEND"),
        (libc::RWF_ATOMIC, "RWF_ATOMIC"),
        (libc::RWF_DONTCACHE, "RWF_DONTCACHE"),
    ]
    .iter()
    .filter(|(flag, _)| flags & flag != 0)
    .map(|(_, name)| *name)
    .collect();
    if names.is_empty() { "0".to_string() } else { names.join("|") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_named_for_errors() {
        assert_eq!(flag_names(0), "0");
        assert_eq!(flag_names(libc::RWF_DSYNC | libc::RWF_DONTCACHE), "RWF_DSYNC|RWF_DONTCACHE");
        assert_eq!(APPEND.own_flag() | libc::RWF_SYNC, libc::RWF_APPEND | libc::RWF_SYNC);
    }
}
