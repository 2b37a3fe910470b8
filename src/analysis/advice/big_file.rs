//! One big file means big (docs/answer.md, "Past the dirty limit"): the big-file goals
//! are measured at the run's size (64 MiB by default), which on most machines stays
//! under the dirty limit, where a writer's pages wait in memory and its writes run at
//! the page cache's rate. A file past that limit is throttled to what the device takes.
//! The goal's own lines say so, with the limit and the device's calibrated rate: the
//! figure a program writing a file of gigabytes should expect.

use super::words::gbps;
use crate::context::Host;
use crate::plan::units::format_size;
use crate::result::{Recommendation, ResultFile};

/// The goals a big file's figure answers through the page cache.
const BIG_FILE_GOALS: [&str; 2] = ["fastest", "threads-one-file"];

/// Where writers of this machine start to wait for writeback, in bytes, and how it was
/// found, in words: `vm.dirty_bytes` where set, else `vm.dirty_ratio` of the memory
/// available (the kernel's dirtyable memory is free and file pages, which
/// `MemAvailable` estimates), within the cgroup's memory limit where there is one. Read
/// from the settings, not measured where writers block: the kernel's own count moves
/// with the page cache, and its balancing lets a writer run past it for a while.
pub fn dirty_limit(host: &Host) -> Option<(u64, String)> {
    if let Some(&bytes) = host.vm_dirty.get("dirty_bytes").filter(|&&b| b > 0) {
        return Some((bytes, format!("vm.dirty_bytes, {}", format_size(bytes))));
    }
    let ratio = *host.vm_dirty.get("dirty_ratio")?;
    let available = host.memory_available_bytes?;
    let (memory, of) = match host.cgroup_memory_max.filter(|&max| max < available) {
        Some(max) => (max, format!("the cgroup's {} limit", format_size(max))),
        None => (available, format!("{} available", format_size(available))),
    };
    let limit = memory / 100 * ratio;
    Some((limit, format!("{ratio} % of {of}")))
}

/// On each big-file goal whose pick wrote less than the dirty limit, on a filesystem
/// with a device under it: past the limit a file is written at about the device's own
/// rate, where that is slower than the figure shown. A warning, on the goal's lines.
pub fn annotate(result: &ResultFile, answer: &mut [Recommendation]) {
    if result.target.memory_filesystem() || result.target.block_device.is_none() {
        return;
    }
    let Some(device) = result.calibration.as_ref().and_then(|c| c.device.bytes_per_s) else { return };
    let Some((limit, how)) = dirty_limit(&result.host) else { return };
    for recommendation in answer.iter_mut().filter(|r| BIG_FILE_GOALS.contains(&r.goal.as_str())) {
        let Some(case) = result.cases.iter().find(|c| c.case.id == recommendation.best.case) else { continue };
        let Some(glance) = recommendation.glance.as_mut().filter(|g| g.not_applicable.is_none()) else { continue };
        if case.case.bytes >= limit || glance.figure.value <= device {
            continue;
        }
        glance.warnings.push(format!(
            "measured at {}; past {} (the dirty limit: {how}) writers wait for the disk: about {} (its \
             calibrated rate, not measured past the limit)",
            format_size(case.case.bytes),
            format_size(limit),
            gbps(device)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::advice::testkit::{Build, case};

    fn host(ratio: u64, dirty_bytes: u64, available: u64, cgroup: Option<u64>) -> Host {
        Host {
            vm_dirty: [("dirty_ratio".to_string(), ratio), ("dirty_bytes".to_string(), dirty_bytes)].into(),
            memory_available_bytes: Some(available),
            cgroup_memory_max: cgroup,
            ..Host::default()
        }
    }

    #[test]
    fn the_dirty_limit_is_dirty_bytes_or_the_ratio_of_the_memory_available_within_the_cgroup() {
        const GIB: u64 = 1 << 30;
        let (limit, how) = dirty_limit(&host(20, 0, 20 * GIB, None)).unwrap();
        assert_eq!((limit, how.as_str()), (20 * GIB / 100 * 20, "20 % of 20 GiB available"));
        let (limit, how) = dirty_limit(&host(20, 0, 20 * GIB, Some(2 * GIB))).unwrap();
        assert_eq!((limit, how.as_str()), (2 * GIB / 100 * 20, "20 % of the cgroup's 2 GiB limit"));
        assert_eq!(dirty_limit(&host(20, 256 << 20, 20 * GIB, None)).unwrap().0, 256 << 20);
        assert_eq!(dirty_limit(&Host::default()), None, "nothing recorded: nothing said");
    }

    /// A disk run's fastest pick at 4.6 GB/s from 1 GiB files, the device at 1.9 GB/s,
    /// 20 % of 20 GiB available: the goal's own lines say what a file past 4 GiB gets.
    /// A pick slower than the device, a file past the limit, or tmpfs: nothing.
    #[test]
    fn a_big_file_goal_under_the_dirty_limit_says_what_a_file_past_it_gets() {
        let result = |fs: &str, device: Option<f64>| {
            let mut result = Build::new()
                .add(case("write empty 1MiB t1 end"), &[0.233, 0.234])
                .add(case("write empty 4KiB t1 end"), &[0.52, 0.53])
                .done();
            result.target.fs_type = fs.to_string();
            result.target.block_device = Some("vda".into());
            result.host = host(20, 0, 20 << 30, None);
            let mut calibration = result.calibration.clone().unwrap_or_default();
            calibration.device.bytes_per_s = device;
            result.calibration = Some(calibration);
            result
        };
        let warned = |result: &ResultFile| {
            let mut answer = crate::analysis::advice::recommendations(result);
            answer.iter_mut().for_each(|r| r.glance.iter_mut().for_each(|g| g.warnings.clear()));
            annotate(result, &mut answer);
            let fastest = answer.iter().find(|r| r.goal == "fastest").unwrap();
            fastest.glance.as_ref().unwrap().warnings.clone()
        };
        let disk = result("ext4", Some(1.9e9));
        let said = warned(&disk);
        assert_eq!(said.len(), 1, "{said:?}");
        assert_eq!(
            said[0],
            "measured at 1 GiB; past 4.00 GiB (the dirty limit: 20 % of 20 GiB available) writers wait for the \
             disk: about 1.90 GB/s (its calibrated rate, not measured past the limit)"
        );
        assert!(warned(&result("ext4", Some(9.0e9))).is_empty(), "the device is faster than the pick");
        assert!(warned(&result("ext4", None)).is_empty(), "no device rate: nothing to say");
        assert!(warned(&result("tmpfs", Some(1.9e9))).is_empty(), "no writeback on tmpfs");
    }
}
