//! Each case's figures as a share of this machine's ceilings (`context::calibration`):
//! what "% of ceiling" in the table and the JSON is.

use crate::context::calibration::CaseKind;
use crate::measure::methods;
use crate::plan::Case;
use crate::result::{ResultFile, Status};

/// What decides a case's ceilings: its writers, whether the kernel copies for it in
/// workers of its own (io_uring), O_DIRECT, and whether the path has a device.
pub fn case_kind(case: &Case, has_device: bool) -> CaseKind {
    CaseKind {
        writers: case.threads,
        kernel_copies: case.method.starts_with("io_uring"),
        direct: case.durability.direct,
        has_device,
    }
}

/// Fills every measured case's `ceiling` from the result's calibration (none without one).
pub fn apply(result: &mut ResultFile) {
    let has_device = result.target.block_device.is_some();
    let Some(calibration) = result.calibration.clone() else { return };
    for case in result.cases.iter_mut().filter(|c| c.status == Status::Ok) {
        let Some(buffered) = case.stats else { continue };
        // Latency cases have per-operation figures, not a stream's rate; file creation
        // writes no data (ftruncate of 64 MiB in microseconds is no copy at all).
        let creates = methods::by_name(&case.case.method).is_some_and(|m| m.creation().is_some());
        if case.latency_ns.is_some() || creates {
            continue;
        }
        let kind = case_kind(&case.case, has_device);
        case.ceiling = calibration.share(kind, buffered.median, case.durable_stats.map(|d| d.median));
    }
}
