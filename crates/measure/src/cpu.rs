//! CPU time of a thread: read before and after a timed span, the difference is what
//! the span cost the CPU. Per thread, so that each writer's time is its own.

use serde::{Deserialize, Serialize};

/// CPU seconds of one thread, user and system.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Cpu {
    pub user: f64,
    pub sys: f64,
}

/// A reading of the calling thread's CPU clocks, to subtract from a later one.
///
/// The total comes from the thread's CPU clock (`CLOCK_THREAD_CPUTIME_ID`), which the
/// kernel brings up to date when it is read. `getrusage(RUSAGE_THREAD)` alone is not
/// good enough for runs of milliseconds: it splits the thread's run time into user and
/// system in proportion to the ticks each got (4 ms apart at HZ=250) and never lets
/// either go back, so after the main thread's own user-mode work a 3 ms run of
/// `write` calls read 0.0 ms, and the next 2.7 ms. Its split is still the only one the
/// kernel gives: the total is divided in the proportion of getrusage's own deltas
/// (all system time where those did not move; the writers are system-time loops).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuClock {
    user: f64,
    sys: f64,
    total: f64,
}

impl CpuClock {
    /// The calling thread's clocks now. Per thread, so that each writer's time is its
    /// own, and nothing else the process does is in it.
    pub fn now() -> CpuClock {
        // SAFETY: getrusage and clock_gettime fill the structs we pass; neither can fail
        // for the calling thread on Linux.
        let (usage, clock) = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_THREAD, &mut usage);
            let mut clock: libc::timespec = std::mem::zeroed();
            libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut clock);
            (usage, clock)
        };
        let seconds = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6;
        CpuClock {
            user: seconds(usage.ru_utime),
            sys: seconds(usage.ru_stime),
            total: clock.tv_sec as f64 + clock.tv_nsec as f64 * 1e-9,
        }
    }

    /// The CPU time used since `before` (read on the same thread).
    pub fn since(self, before: CpuClock) -> Cpu {
        Cpu::split((self.total - before.total).max(0.0), self.user - before.user, self.sys - before.sys)
    }
}

impl Cpu {
    /// `total` CPU seconds divided as `user` and `sys` (getrusage's deltas, which may
    /// lag) divide theirs; all system time where they did not move.
    pub fn split(total: f64, user: f64, sys: f64) -> Cpu {
        let (user, sys) = (user.max(0.0), sys.max(0.0));
        if user + sys <= 0.0 {
            return Cpu { user: 0.0, sys: total };
        }
        // The share first: total * (user / sum) never exceeds total; (total * user) / sum
        // can, by a rounding, and made a negative system time.
        let user = total * (user / (user + sys));
        Cpu { user, sys: (total - user).max(0.0) }
    }

    pub fn plus(self, other: Cpu) -> Cpu {
        Cpu { user: self.user + other.user, sys: self.sys + other.sys }
    }

    /// The sum of threads' CPU times, or None where any one was not read: a part
    /// of the sum would be a figure for less than it says.
    pub fn sum(times: impl IntoIterator<Item = Option<Cpu>>) -> Option<Cpu> {
        times.into_iter().try_fold(Cpu::default(), |sum, time| Some(sum.plus(time?)))
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    #[test]
    fn a_few_milliseconds_of_system_calls_read_as_what_they_took() {
        // getrusage alone read 0.0 ms for some 3 ms runs after user-mode work, and more
        // than the wall time for others (by a 4 ms tick at HZ=250); the thread's CPU
        // clock is exact. Each round: user-mode work, then 20,000 system calls (1-4 ms
        // here). A preempted thread's wall time grows, its CPU time does not, so the
        // bounds hold on a busy machine: no more than the wall time, and at least 15 ns a
        // call, which no CPU beats.
        let (mut cpu_sum, mut wall_sum) = (0.0, 0.0);
        for _ in 0..20 {
            let busy = Instant::now();
            let mut x = 0u64;
            while busy.elapsed() < Duration::from_millis(2) {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
            }
            let (before, wall) = (CpuClock::now(), Instant::now());
            for _ in 0..20_000 {
                // SAFETY: getppid has no preconditions.
                std::hint::black_box(unsafe { libc::getppid() });
            }
            let (cpu, wall) = (CpuClock::now().since(before), wall.elapsed().as_secs_f64());
            let total = cpu.user + cpu.sys;
            // The scheduler's clock and the monotonic clock differ by a little in a
            // virtual machine: 18 µs in 3.3 ms was seen, and once (CI, a busy host) 92 µs
            // in 1.8 ms. One round is held to what a tick's error would break (a
            // quarter and half a millisecond over, below the 4 ms of one tick); the sum
            // of the rounds to the clocks' agreement.
            assert!(total <= wall * 1.25 + 5e-4, "{cpu:?} in {wall} s: more CPU time than time");
            assert!(total >= 20_000.0 * 15e-9, "{cpu:?} in {wall} s: the CPU time is lost");
            (cpu_sum, wall_sum) = (cpu_sum + total, wall_sum + wall);
        }
        assert!(cpu_sum <= wall_sum * 1.03 + 20.0 * 2e-5, "{cpu_sum} s of CPU time in {wall_sum} s");
    }

    #[test]
    fn the_total_is_split_as_getrusage_splits_its_own() {
        assert_eq!(Cpu::split(1.0, 0.0, 0.0), Cpu { user: 0.0, sys: 1.0 });
        assert_eq!(Cpu::split(2.0, 1.0, 3.0), Cpu { user: 0.5, sys: 1.5 });
        assert_eq!(Cpu::split(0.0, 1.0, 1.0), Cpu { user: 0.0, sys: 0.0 });
        assert_eq!(Cpu::split(1.0, -1.0, 1.0), Cpu { user: 0.0, sys: 1.0 }, "a lagging delta is no share");
        // (0.1 * 3.0) / 3.0 is above 0.1 by a rounding; the split never is.
        let tiny = Cpu::split(0.1, 3.0, 1e-30);
        assert!(tiny.user <= 0.1 && tiny.sys >= 0.0, "{tiny:?}");
    }

    #[test]
    fn cpu_time_is_the_calling_threads_own() {
        let before = CpuClock::now();
        // Another thread burns 50 ms of CPU while this one waits for it.
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let start = CpuClock::now();
                let mut x = 0u64;
                while CpuClock::now().since(start).user + CpuClock::now().since(start).sys < 0.05 {
                    x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
                }
            });
        });
        let waited = CpuClock::now().since(before);
        assert!(waited.user + waited.sys < 0.04, "the other thread's CPU time is not ours: {waited:?}");
    }
}
