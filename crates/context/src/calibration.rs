//! This machine's ceilings (issue "context and limits"): how fast it copies memory, what
//! a trivial system call and a clock read cost, and — measured by `rounds::calibrate`
//! on the path — the best buffered write rate and the device's own direct write rate.
//!
//! A figure is then read against its ceiling: buffered writes copy the caller's bytes
//! into the page cache, so none can be faster than copying memory; a durable or direct
//! figure cannot be faster than the device takes data. This file holds the numbers and
//! the syscall and clock measurements, which touch no file; `context::copy` measures
//! the memory copy, at each size class.

use std::hint::black_box;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::copy::CopyClass;

/// What a measured ceiling on the path came to, or why there is none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ceiling {
    /// The best run's rate, bytes per second; null when it could not be measured.
    pub bytes_per_s: Option<f64>,
    /// How it was measured: the cases (writebench ids), their runs and size.
    pub how: String,
    /// Why there is no figure: no block device, O_DIRECT refused, no room…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_not: Option<String>,
}

impl Ceiling {
    pub fn missing(how: &str, why: String) -> Ceiling {
        Ceiling { bytes_per_s: None, how: how.to_string(), why_not: Some(why) }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// One thread copying 1 MiB pieces from an 8 MiB source (the size of the data
    /// period native writers use) into a destination larger than this machine's last
    /// level cache (64 MiB in `run`'s short calibration, 256 MiB in `calibrate`): the
    /// best of the passes, bytes per second. Where the cache is larger than the
    /// destination the rate is the cache's: higher, so still a bound no write passes.
    /// The largest class of `memcpy_classes`; it holds the cases larger than any class.
    pub memcpy_bytes_per_s: f64,
    /// The same from every CPU at once, each thread with its own slice of the
    /// destination: total bytes over the span from the first start to the last end.
    pub memcpy_all_bytes_per_s: f64,
    /// Threads of the all-thread copy (this machine's CPUs).
    pub memcpy_threads: usize,
    /// Bytes copied per pass, in all (the threads share them out): the largest class.
    pub memcpy_bytes: u64,
    /// The copy at each size class, smallest first, the last one `memcpy_bytes`
    /// (docs/measurement.md): a small file's copy stays in the CPU caches, so a case is
    /// held against the class at or above its bytes. Empty in results from before the
    /// classes, whose one figure then serves every case.
    #[serde(default)]
    pub memcpy_classes: Vec<CopyClass>,
    /// A trivial system call (`getppid`, which no libc caches), nanoseconds.
    pub syscall_ns: f64,
    /// A read of the monotonic clock (vDSO `clock_gettime`), nanoseconds.
    pub clock_ns: f64,
    /// The best buffered rate into a preallocated file on the path.
    pub page_cache: Ceiling,
    /// The device's own sequential write rate: O_DIRECT, large requests, into a
    /// preallocated file on the path. Missing where the path has no block device or
    /// O_DIRECT is refused.
    pub device: Ceiling,
    /// How long the calibration took, seconds.
    pub seconds: f64,
    /// Null when this command measured it; else how old it was, seconds, when `run`
    /// reused the one kept for this machine and path (`context::calibration_cache`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reused_age_seconds: Option<f64>,
    /// The process's peak resident memory by the end of the calibration, bytes: its
    /// copy buffers, freed before any case (`options.peak_rss_bytes` is the cases').
    #[serde(default)]
    pub peak_rss_bytes: u64,
    /// One big buffered file on a path with a device under it, its progress timed
    /// (`measure::big_write`): where a big file's writer is slowed, its rate after that,
    /// and whether it was kept waiting (for writeback) or kept the CPU. Absent on memory,
    /// and in results from before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub big_write: Option<BigWrite>,
}

/// A big buffered file's progress: `[bytes written, seconds]` after every step, or why
/// it was not written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BigWrite {
    pub points: Vec<[f64; 2]>,
    /// For each point, the writer's `[seconds on a CPU, seconds runnable but waiting for
    /// one]` since the first write; empty where the kernel does not keep them, and in
    /// results from before 2026-12-06.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scheduled: Vec<[f64; 2]>,
    /// The machine gives freed memory back to its host (free page reporting,
    /// `context::page_reporting`): a writer may be slowed by memory the host must supply.
    /// Absent in results from before 2026-12-06.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_takes_memory_back: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_not: Option<String>,
}

/// A case's figures as a share of their ceilings (percent), with what each ceiling is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CeilingShare {
    pub buffered_pct: f64,
    /// "memory copy" or "device".
    pub buffered_of: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durable_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durable_of: Option<String>,
}

/// What a case is, as far as its ceilings go.
#[derive(Debug, Clone, Copy)]
pub struct CaseKind {
    /// Writer threads (the kernel's own workers count as every CPU: see `kernel_copies`).
    pub writers: u32,
    /// io_uring: the kernel may copy in its own workers on every CPU.
    pub kernel_copies: bool,
    /// O_DIRECT: the buffered figure is already the device's.
    pub direct: bool,
    /// Whether the path has a block device under it.
    pub has_device: bool,
    /// The bytes a run writes: the size class of its memory-copy ceiling.
    pub bytes: u64,
}

pub const MEMORY_COPY: &str = "memory copy";
pub const DEVICE: &str = "device";

impl Calibration {
    /// The copy rates (one thread, every CPU) that bound a run of `bytes`: its class's,
    /// the smallest class at or above its bytes, raised to any larger class's (copying
    /// less is never slower, so a larger class measured faster is the machine's drift,
    /// and the higher figure is the safer bound); above every class, and in results
    /// from before the classes, the large-buffer figures.
    pub fn copy_rates(&self, bytes: u64) -> (f64, f64) {
        self.memcpy_classes
            .iter()
            .filter(|class| class.bytes >= bytes)
            .fold((self.memcpy_bytes_per_s, self.memcpy_all_bytes_per_s), |(one, all), class| {
                (one.max(class.bytes_per_s), all.max(class.all_bytes_per_s))
            })
    }

    /// The size class a run of `bytes` is held against, if the calibration has classes
    /// and one holds it (none above the largest: the large-buffer figures hold those).
    pub fn copy_class(&self, bytes: u64) -> Option<u64> {
        self.memcpy_classes.iter().map(|class| class.bytes).filter(|&class| class >= bytes).min()
    }

    /// The memory-copy rate `writers` threads writing `bytes` can reach: measured at 1
    /// and at every CPU, straight between them (never below one thread's), and every
    /// CPU's above that.
    pub fn memcpy_for(&self, writers: u32, bytes: u64) -> f64 {
        let (one, all) = self.copy_rates(bytes);
        let all = all.max(one);
        let cpus = self.memcpy_threads.max(1) as f64;
        let writers = f64::from(writers.max(1)).min(cpus);
        if cpus <= 1.0 {
            return all;
        }
        one + (all - one) * (writers - 1.0) / (cpus - 1.0)
    }

    /// The ceiling of a case's buffered figure, and what it is: the device for O_DIRECT
    /// on a device, else copying memory with as many threads as write.
    pub fn buffered_ceiling(&self, kind: CaseKind) -> Option<(f64, &'static str)> {
        if kind.direct && kind.has_device {
            return self.device.bytes_per_s.map(|rate| (rate, DEVICE));
        }
        Some(self.copy_ceiling(kind))
    }

    /// Copying memory with the case's writers, or every CPU where the kernel copies
    /// for it in workers of its own.
    fn copy_ceiling(&self, kind: CaseKind) -> (f64, &'static str) {
        let writers = if kind.kernel_copies { self.memcpy_threads as u32 } else { kind.writers };
        (self.memcpy_for(writers, kind.bytes), MEMORY_COPY)
    }

    /// The ceiling of a durable figure: the device where there is one (unknown if its
    /// rate could not be measured), else memory (tmpfs keeps the data in memory).
    pub fn durable_ceiling(&self, kind: CaseKind) -> Option<(f64, &'static str)> {
        if kind.has_device {
            return self.device.bytes_per_s.map(|rate| (rate, DEVICE));
        }
        Some(self.copy_ceiling(kind))
    }

    /// The hard limit no figure of this kind can pass, whatever the threads: every
    /// CPU's memory copy at the case's size class, or the device's rate.
    pub fn impossible_above(&self, kind: CaseKind, durable: bool) -> Option<(f64, &'static str)> {
        if kind.has_device && (durable || kind.direct) {
            return self.device.bytes_per_s.map(|rate| (rate, DEVICE));
        }
        let (one, all) = self.copy_rates(kind.bytes);
        Some((all.max(one), MEMORY_COPY))
    }

    /// A case's medians (bytes/s) as percentages of their ceilings.
    pub fn share(&self, kind: CaseKind, buffered: f64, durable: Option<f64>) -> Option<CeilingShare> {
        let (ceiling, of) = self.buffered_ceiling(kind)?;
        let durable = durable.and_then(|rate| self.durable_ceiling(kind).map(|(c, of)| (100.0 * rate / c, of)));
        Some(CeilingShare {
            buffered_pct: 100.0 * buffered / ceiling,
            buffered_of: of.to_string(),
            durable_pct: durable.map(|(pct, _)| pct),
            durable_of: durable.map(|(_, of)| of.to_string()),
        })
    }
}

/// The cheapest of `batches` batches of `calls` calls of `call`, in nanoseconds per call.
fn cheapest_ns(calls: u32, batches: u32, call: impl Fn()) -> f64 {
    (0..batches)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..calls {
                call();
            }
            start.elapsed().as_secs_f64() * 1e9 / f64::from(calls)
        })
        .fold(f64::INFINITY, f64::min)
}

/// A trivial system call: `getppid` enters the kernel every time (glibc caches no
/// parent id), and does almost nothing there.
pub fn syscall_ns(calls: u32) -> f64 {
    // SAFETY: getppid has no arguments and cannot fail.
    cheapest_ns(calls, 5, || {
        black_box(unsafe { libc::syscall(libc::SYS_getppid) });
    })
}

/// A monotonic clock read, as the runner takes around each timed span.
pub fn clock_ns(calls: u32) -> f64 {
    cheapest_ns(calls, 5, || {
        black_box(Instant::now());
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn calibration() -> Calibration {
        Calibration {
            memcpy_bytes_per_s: 10e9,
            memcpy_all_bytes_per_s: 16e9,
            memcpy_threads: 4,
            device: Ceiling { bytes_per_s: Some(1.5e9), how: String::new(), why_not: None },
            ..Calibration::default()
        }
    }

    /// A run of 1 GiB: above any class, held against the large-buffer figures.
    fn kind(writers: u32, direct: bool, has_device: bool) -> CaseKind {
        CaseKind { writers, kernel_copies: false, direct, has_device, bytes: 1 << 30 }
    }

    fn class(bytes: u64, one: f64, all: f64) -> CopyClass {
        CopyClass { bytes, bytes_per_s: one, all_bytes_per_s: all }
    }

    #[test]
    fn the_copy_ceiling_grows_with_writers_up_to_every_cpu() {
        let c = calibration();
        let gib = 1 << 30;
        assert_eq!(c.memcpy_for(1, gib), 10e9);
        assert_eq!(c.memcpy_for(4, gib), 16e9);
        assert_eq!(c.memcpy_for(64, gib), 16e9);
        assert!((c.memcpy_for(2, gib) - 12e9).abs() < 1.0);
        // All CPUs measured slower than one (noise): never below one thread's.
        let slow_all = Calibration { memcpy_all_bytes_per_s: 8e9, ..calibration() };
        assert_eq!(slow_all.memcpy_for(4, gib), 10e9);
        let io_uring = CaseKind { kernel_copies: true, ..kind(1, false, false) };
        assert_eq!(c.buffered_ceiling(io_uring), Some((16e9, MEMORY_COPY)));
    }

    #[test]
    fn a_run_is_held_against_the_class_at_or_above_its_bytes() {
        let c = Calibration {
            memcpy_classes: vec![class(MIB, 40e9, 60e9), class(16 * MIB, 20e9, 30e9), class(64 * MIB, 10e9, 16e9)],
            memcpy_bytes: 64 << 20,
            ..calibration()
        };
        assert_eq!(c.copy_rates(16 * MIB), (20e9, 30e9));
        assert_eq!(c.copy_rates(5 * MIB), (20e9, 30e9));
        assert_eq!(c.copy_rates(MIB), (40e9, 60e9));
        assert_eq!(c.copy_rates(4096), (40e9, 60e9));
        assert_eq!(c.copy_rates(64 * MIB + 1), (10e9, 16e9), "above every class: the large buffer's");
        assert_eq!(
            (c.copy_class(5 * MIB), c.copy_class(MIB), c.copy_class(1 << 30)),
            (Some(16 * MIB), Some(MIB), None)
        );
        let small = CaseKind { bytes: 16 * MIB, ..kind(1, false, false) };
        assert_eq!(c.buffered_ceiling(small), Some((20e9, MEMORY_COPY)));
        assert_eq!(c.memcpy_for(4, 16 * MIB), 30e9);
        assert_eq!(c.impossible_above(small, false), Some((30e9, MEMORY_COPY)));
        assert_eq!(c.share(small, 10e9, None).unwrap().buffered_pct, 50.0);
        // A class measured slower than a larger one drifted: the higher figure holds.
        let dip = Calibration { memcpy_classes: vec![class(16 * MIB, 9e9, 12e9), class(64 * MIB, 10e9, 16e9)], ..c };
        assert_eq!(dip.copy_rates(16 * MIB), (10e9, 16e9));
        // A result from before the classes: its one figure holds every size.
        assert_eq!(calibration().copy_rates(MIB), (10e9, 16e9));
        assert_eq!(calibration().copy_class(MIB), None);
        assert_eq!(calibration().impossible_above(small, false), Some((16e9, MEMORY_COPY)));
    }

    #[test]
    fn an_old_calibration_without_classes_still_loads() {
        let old = r#"{"memcpy_bytes_per_s": 9e9, "memcpy_all_bytes_per_s": 14e9, "memcpy_threads": 2,
            "memcpy_bytes": 67108864, "syscall_ns": 80.0, "clock_ns": 17.0,
            "page_cache": {"bytes_per_s": 4e9, "how": ""}, "device": {"bytes_per_s": null, "how": ""},
            "seconds": 0.2}"#;
        let old: Calibration = serde_json::from_str(old).unwrap();
        assert!(old.memcpy_classes.is_empty());
        assert_eq!(old.copy_rates(16 * MIB), (9e9, 14e9));
    }

    #[test]
    fn buffered_reads_against_memory_and_durable_or_direct_against_the_device() {
        let c = calibration();
        let share = c.share(kind(1, false, true), 5e9, Some(0.75e9)).unwrap();
        assert_eq!((share.buffered_pct, share.buffered_of.as_str()), (50.0, MEMORY_COPY));
        assert_eq!((share.durable_pct, share.durable_of.as_deref()), (Some(50.0), Some(DEVICE)));
        let direct = c.share(kind(1, true, true), 0.3e9, None).unwrap();
        assert_eq!((direct.buffered_pct, direct.buffered_of.as_str()), (20.0, DEVICE));
        // No device (tmpfs): durable data is in memory, and so is its ceiling.
        let tmpfs = c.share(kind(1, true, false), 5e9, Some(5e9)).unwrap();
        assert_eq!((tmpfs.buffered_of.as_str(), tmpfs.durable_of.as_deref()), (MEMORY_COPY, Some(MEMORY_COPY)));
        // A device whose rate is unknown gives no durable share, and no direct one.
        let unknown = Calibration { device: Ceiling::missing("", "refused".into()), ..calibration() };
        assert_eq!(unknown.share(kind(1, false, true), 5e9, Some(1e9)).unwrap().durable_pct, None);
        assert!(unknown.share(kind(1, true, true), 1e9, None).is_none());
        assert_eq!(c.impossible_above(kind(1, false, true), false), Some((16e9, MEMORY_COPY)));
        assert_eq!(c.impossible_above(kind(1, false, true), true), Some((1.5e9, DEVICE)));
    }

    #[test]
    fn calls_and_clock_reads_measure_something_plausible() {
        let syscall = syscall_ns(20_000);
        let clock = clock_ns(20_000);
        assert!((5.0..100_000.0).contains(&syscall), "{syscall}");
        assert!((1.0..100_000.0).contains(&clock), "{clock}");
    }
}
