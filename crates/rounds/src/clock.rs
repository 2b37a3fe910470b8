//! The clock a race's budget is counted on: the wall clock, or the simulation's virtual
//! one, which its synthetic runs advance by the time they stand for (docs/racing.md,
//! "The error a user sees"), so that the budget ends a simulated race where it would end
//! a real one, without the simulation taking that long.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// Which clock: a value, so that `Racing` stays a plain copyable setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Clock {
    #[default]
    Wall,
    /// The time this thread's synthetic runs have taken since [`Clock::reset`].
    Virtual,
}

thread_local! {
    static VIRTUAL: Cell<Duration> = const { Cell::new(Duration::ZERO) };
}

impl Clock {
    /// The time now, on this clock, for a race that started at `start`.
    pub fn now(self, start: Instant) -> Instant {
        match self {
            Clock::Wall => Instant::now(),
            Clock::Virtual => start + VIRTUAL.with(Cell::get),
        }
    }

    /// Sets this thread's virtual clock to `spent` since its race's start: the time the
    /// probe, the calibration and the rest of the suite took before the simulated cases.
    pub fn reset(spent: Duration) {
        VIRTUAL.with(|clock| clock.set(spent));
    }

    /// Moves this thread's virtual clock on by `by`: a synthetic run's time.
    pub fn advance(by: Duration) {
        VIRTUAL.with(|clock| clock.set(clock.get() + by));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_virtual_clock_moves_only_as_it_is_told() {
        let start = Instant::now();
        Clock::reset(Duration::from_secs(20));
        assert_eq!(Clock::Virtual.now(start) - start, Duration::from_secs(20));
        Clock::advance(Duration::from_millis(250));
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(Clock::Virtual.now(start) - start, Duration::from_millis(20_250));
        assert!(Clock::Wall.now(start) - start >= Duration::from_millis(5));
    }
}
