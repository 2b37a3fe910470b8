//! writebench's own peak memory (`options.peak_rss_bytes`, docs/design.md §2.5): the high-water
//! mark of its resident set, leaving out the memory the settle step touches on purpose
//! (`measure::settle`), which is no buffer of writebench's and is freed before the run.

use std::sync::atomic::{AtomicU64, Ordering};

/// The highest mark reached before a pass that is left out, kept here because leaving
/// the pass out resets the kernel's mark.
static EARLIER: AtomicU64 = AtomicU64::new(0);

/// Peak resident set size of this process so far, in bytes, without the left-out passes.
pub fn peak_rss_bytes() -> u64 {
    EARLIER.load(Ordering::Relaxed).max(high_water_mark())
}

/// Starts the count again from the memory in use now (`/proc/self/clear_refs`, "5"):
/// `run` does so after its calibration, whose copy buffers are freed by then, so that
/// the peak it records is the cases'.
pub fn reset_peak_rss() -> bool {
    EARLIER.store(0, Ordering::Relaxed);
    clear_mark()
}

/// Runs `pass` (which frees what it maps) without its memory counting in the peak: the
/// mark so far is kept, and the kernel's mark restarts after it. Where the mark cannot
/// be reset, the pass counts, which over-states the peak rather than hiding any.
pub fn left_out<R>(pass: impl FnOnce() -> R) -> R {
    // One pass at a time: a pass that read the mark while another's memory was mapped
    // would keep that memory in the peak (two threads settling at once, as the unit
    // tests of latency loops and of the settle step do).
    let _one = PASSES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    EARLIER.fetch_max(high_water_mark(), Ordering::Relaxed);
    let result = pass();
    clear_mark();
    result
}

static PASSES: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn clear_mark() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// VmHWM, the address space's high-water mark, which `clear_mark` can lower;
/// getrusage's maxrss (the fallback) also keeps the peak of every thread that exited.
fn high_water_mark() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let hwm = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next().and_then(|kib| kib.parse::<u64>().ok()));
    if let Some(kib) = hwm {
        return kib * 1024;
    }
    // SAFETY: getrusage fills the struct we pass.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    usage.ru_maxrss as u64 * 1024
}
