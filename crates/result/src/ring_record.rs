//! What an io_uring run submitted besides plain writes, as plain data: the methods
//! fill it, the result file carries it (`runs[].ring`). Here with the result's other
//! types, below `measure` (docs/design.md §5), which imports it from here.

use serde::{Deserialize, Serialize};

/// The submissions of an io_uring run, summed over its rings (one per writer).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RingRecord {
    /// The SQE flags and set-up flags the run's requests used, e.g. `IOSQE_IO_LINK`,
    /// `IOSQE_FIXED_FILE`, `IORING_SETUP_SQPOLL`.
    pub sqe_flags: Vec<String>,
    /// Write requests with IOSQE_IO_LINK (every:N: the write that completes a batch).
    pub linked_writes: u64,
    /// IORING_OP_FSYNC requests linked to a write (every:N's syncs), with
    /// IORING_FSYNC_DATASYNC for the fdatasync modes.
    pub linked_fsyncs: u64,
    /// IORING_OP_FSYNC requests on their own: every:N's calls left at the end, and
    /// `end`'s sync span.
    pub fsyncs: u64,
    /// Linked fsyncs the kernel cancelled (a short or failed write), each issued again.
    pub cancelled_fsyncs: u64,
    /// CPU seconds of the SQPOLL kernel threads over their writers' parts (their
    /// /proc/self/task/TID/sched `se.sum_exec_runtime`, else stat's 10 ms ticks): not in
    /// `user_seconds`/`sys_seconds`, which are the writers' own. Absent where the thread
    /// was not found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sqpoll_cpu_seconds: Option<f64>,
    /// CPU seconds of io_uring's worker threads (io-wq, `iou-wrk-TID`) that served the
    /// writers' requests during their parts: above 0 where the filesystem could not take
    /// a write without blocking and the kernel handed it to a worker. Absent in results
    /// from before it was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_wq_cpu_seconds: Option<f64>,
}
