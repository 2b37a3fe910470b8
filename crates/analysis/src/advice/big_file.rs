//! One big file means big (docs/answer.md, "Past the dirty limit"): the big-file goals
//! are measured at the run's size (64 MiB by default), where a writer's pages wait in
//! memory and its writes run at the page cache's rate. A bigger file is slowed once the
//! kernel makes its writer wait for writeback. Where the calibration wrote one big file
//! and timed it (`measure::big_write`), the goal's own lines say where its writer was
//! slowed and the rate it went on at, measured; else where the settings put the dirty
//! limit and the device's calibrated rate, said as such.

use super::words::gbps;
use context::Host;
use context::calibration::BigWrite;
use plan::units::format_size;
use result::{Recommendation, ResultFile};

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

/// Where a big file's writer was slowed, and what it got after: the first step whose rate
/// fell below half the first step's (bytes written by then), and the rate from there to
/// the end, with the bytes written in all. None where it was not slowed, or where less
/// than four steps followed the point (too few to time the rate after it).
pub fn slowed(big: &BigWrite) -> Option<(u64, f64, u64)> {
    let points: Vec<(f64, f64)> = std::iter::once((0.0, 0.0)).chain(big.points.iter().map(|p| (p[0], p[1]))).collect();
    let rate = |i: usize| (points[i].0 - points[i - 1].0) / (points[i].1 - points[i - 1].1).max(1e-9);
    if points.len() < 3 {
        return None;
    }
    let first = rate(1);
    let at = (2..points.len()).find(|&i| rate(i) < first / 2.0)? - 1;
    let last = points.len() - 1;
    if last - at < 4 {
        return None;
    }
    let after = (points[last].0 - points[at].0) / (points[last].1 - points[at].1).max(1e-9);
    Some((points[at].0 as u64, after, points[last].0 as u64))
}

/// On each big-file goal whose pick wrote less than the point where writers wait, on a
/// filesystem with a device under it, where what a bigger file gets is slower than the
/// figure shown: measured where the calibration timed a big file, else the dirty limit
/// of the settings and the device's calibrated rate. A warning, on the goal's lines.
pub fn annotate(result: &ResultFile, answer: &mut [Recommendation]) {
    if result.target.memory_filesystem() || result.target.block_device.is_none() {
        return;
    }
    let calibration = result.calibration.as_ref();
    let measured = calibration.and_then(|c| c.big_write.as_ref()).and_then(slowed);
    let said = |bytes: u64, figure: f64| -> Option<String> {
        if let Some((at, after, total)) = measured {
            return (bytes < at && figure > after).then(|| {
                format!(
                    "measured at {}; a bigger file's writer waits for writeback here: one of {} was slowed after {} \
                     and went on at {} (measured once, by the calibration)",
                    format_size(bytes),
                    format_size(total),
                    format_size(at),
                    gbps(after)
                )
            });
        }
        let device = calibration.and_then(|c| c.device.bytes_per_s)?;
        let (limit, how) = dirty_limit(&result.host)?;
        (bytes < limit && figure > device).then(|| {
            format!(
                "measured at {}; past {} (the dirty limit: {how}) writers wait for the disk: about {} (its \
                 calibrated rate, not measured past the limit)",
                format_size(bytes),
                format_size(limit),
                gbps(device)
            )
        })
    };
    // The goals a big file's figure answers through the page cache.
    let through_cache = |r: &Recommendation| result::goals::by_key(&r.goal).is_some_and(|g| g.new_file() && !g.durable);
    for recommendation in answer.iter_mut().filter(|r| through_cache(r)) {
        let Some(case) = result.cases.iter().find(|c| c.case.id == recommendation.best.case) else { continue };
        let Some(glance) = recommendation.glance.as_mut().filter(|g| g.not_applicable.is_none()) else { continue };
        if let Some(warning) = said(case.case.bytes, glance.figure.value) {
            glance.warnings.push(warning);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advice::testkit::{Build, case};

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
            let mut answer = crate::advice::recommendations(result);
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
        // Measured: an 8 GiB file slowed after 2 GiB to 0.4 GB/s, the settings aside.
        let mut measured = result("ext4", Some(1.9e9));
        let mut points = Vec::new();
        let (mut bytes, mut seconds) = (0.0, 0.0);
        for step in 0..32 {
            bytes += 256.0 * 1048576.0;
            seconds += 256.0 * 1048576.0 / if step < 8 { 4.0e9 } else { 0.4e9 };
            points.push([bytes, seconds]);
        }
        measured.calibration.as_mut().unwrap().big_write = Some(BigWrite { points, why_not: None });
        assert_eq!(
            warned(&measured),
            [
                "measured at 1 GiB; a bigger file's writer waits for writeback here: one of 8 GiB was slowed after 2 GiB \
              and went on at 0.400 GB/s (measured once, by the calibration)"
            ]
        );
        assert!(warned(&result("ext4", None)).is_empty(), "no device rate: nothing to say");
        assert!(warned(&result("tmpfs", Some(1.9e9))).is_empty(), "no writeback on tmpfs");
    }

    /// The point is the first step at under half the first step's rate; a file never
    /// slowed, or slowed too near its end to time the rate after, says nothing.
    #[test]
    fn a_big_write_is_slowed_where_its_rate_halves() {
        let big = |rates: &[f64]| {
            let (mut bytes, mut seconds) = (0.0, 0.0);
            let points = rates
                .iter()
                .map(|rate| {
                    bytes += 64.0 * 1048576.0;
                    seconds += 64.0 * 1048576.0 / rate;
                    [bytes, seconds]
                })
                .collect();
            BigWrite { points, why_not: None }
        };
        let (at, after, total) = slowed(&big(&[4e9, 3e9, 0.5e9, 0.4e9, 0.4e9, 0.4e9, 0.4e9, 0.4e9])).unwrap();
        assert_eq!((at, total), (128 << 20, 512 << 20));
        assert!((after - 0.4167e9).abs() < 0.01e9, "{after}");
        assert_eq!(slowed(&big(&[4e9; 12])), None, "never slowed");
        assert_eq!(slowed(&big(&[4e9, 4e9, 4e9, 4e9, 0.4e9, 0.4e9])), None, "too near the end");
    }
}
