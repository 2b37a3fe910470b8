//! One big file means big (docs/answer.md, "Past the dirty limit"): the big-file goals
//! are measured at the run's size (64 MiB by default), where a writer's pages wait in
//! memory and its writes run at the page cache's rate. A bigger file may be slowed: by
//! the kernel making its writer wait for writeback, or, on a machine that gives freed
//! memory back to its host, by memory the host must supply again. Where the calibration
//! wrote one big file and timed it (`measure::big_write`), the goal's own lines say where
//! its writer was slowed, the rate it went on at, and which of the two it was, by whether
//! the writer kept the CPU; else where the settings put the dirty limit and the device's
//! calibrated rate, said as such.

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

/// Where a big file's writer was slowed, and what it got after.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Slowed {
    /// Bytes written by the point, and in all.
    pub at: u64,
    pub total: u64,
    /// Bytes per second from the point to the end.
    pub after: f64,
    /// The writer's share of that time on a CPU, of the time it was not waiting for one
    /// (another program's share left out): None where not recorded.
    pub on_cpu: Option<f64>,
}

/// A slowed writer that kept a CPU this much of its time was not waiting for writeback:
/// `balance_dirty_pages` puts a throttled writer to sleep for most of each pause (19–24 %
/// on the CPU on a strictly limited loop device), a writer copying into memory the host
/// must supply kept it 85–95 % (docs/answer.md, "Past the dirty limit").
const ON_CPU: f64 = 0.5;

/// Where a big file's writer was slowed, and what it got after: the first step whose rate
/// fell below half the first step's (bytes written by then), and the rate from there to
/// the end, with the bytes written in all and the writer's share of that time on a CPU.
/// None where it was not slowed, or where less than four steps followed the point (too
/// few to time the rate after it).
fn slowed(big: &BigWrite) -> Option<Slowed> {
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
    let seconds = (points[last].1 - points[at].1).max(1e-9);
    // `scheduled` has one entry a point, none for the start: point i is entry i - 1 (and
    // `at` is at least 1: the first step sets the rate, it is never the point).
    let on_cpu = if big.scheduled.len() == big.points.len() {
        let [cpu_from, wait_from] = big.scheduled[at - 1];
        let [cpu_to, wait_to] = big.scheduled[last - 1];
        let not_waiting = (seconds - (wait_to - wait_from)).max(1e-9);
        Some(((cpu_to - cpu_from) / not_waiting).clamp(0.0, 1.0))
    } else {
        None
    };
    Some(Slowed {
        at: points[at].0 as u64,
        total: points[last].0 as u64,
        after: (points[last].0 - points[at].0) / seconds,
        on_cpu,
    })
}

/// The warning for a file of `bytes` slowed as `slowed` says: the cause only where the
/// writer's time shows it.
fn slowed_words(bytes: u64, slowed: &Slowed, host_takes_memory_back: bool) -> String {
    let (size, total, at, after) =
        (format_size(bytes), format_size(slowed.total), format_size(slowed.at), gbps(slowed.after));
    match slowed.on_cpu {
        Some(share) if share < ON_CPU => format!(
            "measured at {size}; a bigger file's writer waits for writeback here: one of {total} was slowed after \
             {at} to {after}, asleep {:.0} % of the time (measured once)",
            (1.0 - share) * 100.0
        ),
        // Where the host takes memory back, its supplying it again is what keeps a writer
        // busy (docs/answer.md); elsewhere the time alone is known, not its cause.
        Some(share) if host_takes_memory_back => format!(
            "measured at {size}; a file of {total} was slowed after {at} to {after}, copying into memory the host \
             supplied again, not waiting for writeback ({:.0} % on the CPU; measured once)",
            share * 100.0
        ),
        Some(share) => format!(
            "measured at {size}; a file of {total} was slowed after {at} to {after} while it kept the CPU ({:.0} % \
             of the time), not waiting for writeback (measured once)",
            share * 100.0
        ),
        None => format!(
            "measured at {size}; a file of {total} was slowed after {at} to {after} (measured once, by the \
             calibration)"
        ),
    }
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
    let big = calibration.and_then(|c| c.big_write.as_ref());
    let measured = big.and_then(slowed);
    let said = |bytes: u64, figure: f64| -> Option<String> {
        if let Some(slowed) = measured {
            return (bytes < slowed.at && figure > slowed.after)
                .then(|| slowed_words(bytes, &slowed, big.is_some_and(|b| b.host_takes_memory_back == Some(true))));
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
        // Measured: an 8 GiB file slowed after 2 GiB to 0.4 GB/s, the settings aside; the
        // writer's time on a CPU says why, and without it no cause is said.
        let mut points = Vec::new();
        let (mut bytes, mut seconds) = (0.0, 0.0);
        for step in 0..32 {
            bytes += 256.0 * 1048576.0;
            seconds += 256.0 * 1048576.0 / if step < 8 { 4.0e9 } else { 0.4e9 };
            points.push([bytes, seconds]);
        }
        // On a CPU all the time while fast, then `share` of the time, half a second of it
        // spent waiting for a CPU (another program's), which does not count against it.
        let scheduled = |share: f64| -> Vec<[f64; 2]> {
            let fast = points[7][1];
            points
                .iter()
                .map(|p| if p[1] <= fast { [p[1], 0.0] } else { [fast + (p[1] - fast - 0.5) * share, 0.5] })
                .collect()
        };
        let measured = |scheduled: Vec<[f64; 2]>, host_takes_memory_back: bool| {
            let mut measured = result("ext4", Some(1.9e9));
            measured.calibration.as_mut().unwrap().big_write = Some(BigWrite {
                points: points.clone(),
                scheduled,
                host_takes_memory_back: Some(host_takes_memory_back),
                why_not: None,
            });
            warned(&measured)
        };
        assert_eq!(
            measured(scheduled(0.2), true),
            [
                "measured at 1 GiB; a bigger file's writer waits for writeback here: one of 8 GiB was slowed after 2 GiB \
                 to 0.400 GB/s, asleep 80 % of the time (measured once)"
            ]
        );
        assert_eq!(
            measured(scheduled(0.9), true),
            ["measured at 1 GiB; a file of 8 GiB was slowed after 2 GiB to 0.400 GB/s, copying into memory the host \
                 supplied again, not waiting for writeback (90 % on the CPU; measured once)"]
        );
        let elsewhere = measured(scheduled(0.9), false);
        assert!(
            elsewhere[0].contains(" to 0.400 GB/s while it kept the CPU (90 % of the time), not waiting "),
            "{elsewhere:?}"
        );
        assert_eq!(
            measured(Vec::new(), false),
            [
                "measured at 1 GiB; a file of 8 GiB was slowed after 2 GiB to 0.400 GB/s (measured once, by the calibration)"
            ],
            "a result from before the writer's time was kept: no cause"
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
            BigWrite { points, ..BigWrite::default() }
        };
        let found = slowed(&big(&[4e9, 3e9, 0.5e9, 0.4e9, 0.4e9, 0.4e9, 0.4e9, 0.4e9])).unwrap();
        assert_eq!((found.at, found.total, found.on_cpu), (128 << 20, 512 << 20, None));
        assert!((found.after - 0.4167e9).abs() < 0.01e9, "{found:?}");
        assert_eq!(slowed(&big(&[4e9; 12])), None, "never slowed");
        assert_eq!(slowed(&big(&[4e9, 4e9, 4e9, 4e9, 0.4e9, 0.4e9])), None, "too near the end");
    }
}
