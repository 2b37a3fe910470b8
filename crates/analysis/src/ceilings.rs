//! Each case's figures as a share of this machine's ceilings (`context::calibration`):
//! what "% of ceiling" in the table and the JSON is.

use context::calibration::CaseKind;
use plan::Case;
use plan::catalog;
use result::{ResultFile, Status};

/// What decides a case's ceilings: its writers, whether the kernel copies for it in
/// workers of its own (io_uring), O_DIRECT, whether the path has a device, and its
/// bytes (the size class of its memory copy, docs/measurement.md).
pub fn case_kind(case: &Case, has_device: bool) -> CaseKind {
    CaseKind {
        writers: case.threads,
        kernel_copies: case.method.starts_with("io_uring"),
        direct: case.durability.direct,
        has_device,
        bytes: case.bytes,
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
        let creates = catalog::by_name(&case.case.method).is_some_and(|m| m.creation.is_some());
        if case.latency_ns.is_some() || creates {
            continue;
        }
        let kind = case_kind(&case.case, has_device);
        case.ceiling = calibration.share(kind, buffered.median, case.durable_stats.map(|d| d.median));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advice::testkit::{Build, around, case, sized};

    #[test]
    fn each_case_s_share_is_of_the_copy_at_its_own_size_class() {
        const MIB: u64 = 1 << 20;
        // 16 MiB in 1.68 ms is 10 GB/s; 1 GiB in 0.107 s too.
        let small = sized(case("pwrite empty 1MiB t1 none"), 16 * MIB);
        let mut result = Build::new()
            .add(small, &around((16 * MIB) as f64 / 10e9))
            .add(case("write empty 1MiB t1 none"), &around((1u64 << 30) as f64 / 10e9))
            .calibrated(12.5e9)
            .copy_classes(&[(MIB, 40e9), (16 * MIB, 20e9), (64 * MIB, 12.5e9)])
            .done();
        apply(&mut result);
        let share = |index: usize| result.cases[index].ceiling.as_ref().unwrap().buffered_pct;
        assert!((share(0) - 50.0).abs() < 1e-6, "{}", share(0));
        assert!((share(1) - 80.0).abs() < 1e-6, "above every class: the large buffer's, {}", share(1));
    }
}
