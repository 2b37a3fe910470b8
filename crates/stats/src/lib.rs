//! Statistics over the runs of one case: the figures the result holds (`result::Summary`)
//! drawn from run times, outlying runs in [`outliers`], whether a difference is real (and
//! ties) in [`significance`], the race's rules in [`race`]. Above `result`, whose types
//! it computes, and below every floor that judges (docs/design.md §5). Pure (no I/O) so
//! every printed number can be pinned by a unit test.
//!
//! The statistics are computed on run *times* and converted to throughput, as
//! hyperfine does (docs/design.md §2.9): the mean of per-run throughputs is biased upward
//! (runs of 1 s and 2 s of one byte average 0.75 B/s, while the byte rate over the
//! two runs is 2/3 B/s), whereas bytes / mean time is the rate of the average run.

pub mod outliers;
pub mod race;
pub mod rank;
pub mod significance;

pub use result::{NOISY_CI, Summary};

/// A case's figures as the contract holds them (`result::Summary`), drawn here from run
/// times: `Summary::of` the times themselves, `Summary::throughput` the rate they give.
pub trait Summarize: Sized {
    fn of(samples: &[f64]) -> Option<Self>;
    fn throughput(bytes: f64, seconds: &[f64]) -> Option<Self>;
    fn cv(&self) -> f64;
}

impl Summarize for Summary {
    /// None for an empty slice or if any sample is not finite: a failed or
    /// overflowing run must not silently turn every statistic into NaN.
    fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() || samples.iter().any(|x| !x.is_finite()) {
            return None;
        }
        let n = samples.len();
        let nf = n as f64;
        let mean = samples.iter().sum::<f64>() / nf;
        let ss: f64 = samples.iter().map(|x| (x - mean) * (x - mean)).sum();
        // n == 1: ss is exactly 0, and the divisor is clamped to avoid 0/0.
        let stddev = (ss / (nf - 1.0).max(1.0)).sqrt();
        // With so few runs the normal quantile 1.96 would make the interval
        // look far tighter than it is; Student t accounts for the estimated sd.
        let half = (n >= 2).then(|| t_975(n - 1) * stddev / nf.sqrt());
        Some(Summary {
            n,
            min: samples.iter().copied().fold(f64::INFINITY, f64::min),
            max: samples.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            mean,
            stddev,
            median: median(samples),
            ci95_low: half.map(|h| mean - h),
            ci95_high: half.map(|h| mean + h),
        })
    }

    /// Throughput in bytes/s of runs that each wrote `bytes` in `seconds`: the
    /// statistics of the times, converted. mean = bytes / mean time; min = bytes / max
    /// time and max = bytes / min time; median = bytes / median time (the median of
    /// an even sample is the rate of the mean of the two middle times); the CI bounds
    /// are bytes / the time bounds, swapped. The sd in throughput units follows the
    /// delta method, sd = bytes * sd_time / mean_time², so that sd / mean is the time's
    /// coefficient of variation and "mean ± sd" reads like the time's. None when a time
    /// is not a positive finite number (no rate can be derived from it).
    fn throughput(bytes: f64, seconds: &[f64]) -> Option<Summary> {
        if seconds.iter().any(|&t| t.is_nan() || t <= 0.0) {
            return None;
        }
        let time = Summary::of(seconds)?;
        let rate = |t: f64| bytes / t;
        Some(Summary {
            n: time.n,
            min: rate(time.max),
            max: rate(time.min),
            mean: rate(time.mean),
            stddev: bytes * time.stddev / (time.mean * time.mean),
            median: rate(time.median),
            ci95_low: time.ci95_high.map(rate),
            // A time interval reaching 0 or below bounds no rate from above.
            ci95_high: time.ci95_low.filter(|&low| low > 0.0).map(rate),
        })
    }

    /// Coefficient of variation stddev/mean (0.0 when mean == 0 or n < 2).
    /// Relative, so that one noise threshold fits slow disks and fast RAM alike;
    /// |mean| keeps it non-negative should a caller summarise negative values.
    fn cv(&self) -> f64 {
        if self.n < 2 || self.mean == 0.0 { 0.0 } else { self.stddev / self.mean.abs() }
    }
}

/// Half-width of the 95 % confidence interval of the mean of `seconds`, as a fraction
/// of that mean: what `--target-ci` and the noisy flag judge. None with fewer than two
/// runs (no spread estimate) or a mean that is not positive.
pub fn ci_relative_half_width(seconds: &[f64]) -> Option<f64> {
    let time = Summary::of(seconds)?;
    let high = time.ci95_high?;
    (time.mean > 0.0).then(|| (high - time.mean) / time.mean)
}

/// The usual printed table (3 decimals, within 0.0005 of the true quantile),
/// so intervals agree with what a reader checks by hand.
const T_TABLE: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
    2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/// (1/df, quantile) anchors with 6 decimals, lest interpolation spread table
/// rounding over all df > 30; nearly linear in 1/df, so error stays < 3e-4.
const T_TAIL: [(f64, f64); 5] =
    [(1.0 / 30.0, 2.042272), (1.0 / 40.0, 2.021075), (1.0 / 60.0, 2.000298), (1.0 / 120.0, 1.979930), (0.0, 1.959964)];

/// Two-sided 97.5 % quantile of Student's t distribution with `df` degrees of
/// freedom (df >= 1); within 0.0005 of the true value for every df. A table
/// rather than an inverse incomplete beta keeps the module dependency-free.
/// df == 0 gives +inf (no spread estimate means no bound), never a panic.
pub fn t_975(df: usize) -> f64 {
    match df {
        0 => f64::INFINITY,
        1..=30 => T_TABLE[df - 1],
        _ => {
            let x = 1.0 / df as f64;
            T_TAIL.windows(2).find(|w| x >= w[1].0).map_or(T_TAIL[4].1, |w| {
                let ((x0, y0), (x1, y1)) = (w[0], w[1]);
                y1 + (y0 - y1) * (x - x1) / (x0 - x1)
            })
        }
    }
}

/// Median of a sample (mean of the two middle values for even n). Reported
/// beside the mean because one stalled run drags the mean but not the median.
/// Never panics (NaN samples are ordered by total_cmp); returns NaN for empty.
pub fn median(samples: &[f64]) -> f64 {
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        // Halving first cannot overflow for huge values.
        v[n / 2 - 1] / 2.0 + v[n / 2] / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() <= 1e-9 * b.abs().max(1e-300), "{a} != {b}");
    }

    fn with(mean: f64, stddev: f64, n: usize) -> Summary {
        let mut s = Summary::of(&[mean]).unwrap();
        s.stddev = stddev;
        s.n = n;
        s
    }

    #[test]
    fn summary_of_textbook_sample() {
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.n, 8);
        close(s.mean, 5.0);
        close(s.stddev, (32.0f64 / 7.0).sqrt());
        close(s.median, 4.5);
        close(s.min, 2.0);
        close(s.max, 9.0);
        let half = 2.365 * (32.0f64 / 7.0).sqrt() / 8.0f64.sqrt();
        close(s.ci95_low.unwrap(), 5.0 - half);
        close(s.ci95_high.unwrap(), 5.0 + half);
    }

    #[test]
    fn single_empty_and_non_finite_samples() {
        let s = Summary::of(&[3.5]).unwrap();
        assert_eq!((s.n, s.stddev), (1, 0.0));
        assert_eq!((s.ci95_low, s.ci95_high), (None, None));
        close(s.median, 3.5);
        assert_eq!(s.cv(), 0.0);
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains("\"ci95_low\":null"), "{json}");
        assert_eq!(serde_json::from_str::<Summary>(&json).unwrap(), s);
        // Empty or non-finite input gives no summary at all.
        assert_eq!(Summary::of(&[]), None);
        assert_eq!(Summary::of(&[1.0, f64::NAN]), None);
        assert_eq!(Summary::of(&[f64::INFINITY, 1.0]), None);
    }

    #[test]
    fn median_odd_even_empty() {
        close(median(&[9.0, 1.0, 3.0]), 3.0);
        close(median(&[5.0, 1.0, 4.0, 2.0, 3.0]), 3.0);
        close(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn t_975_table_and_tail() {
        close(t_975(1), 12.706);
        close(t_975(4), 2.776);
        close(t_975(9), 2.262);
        close(t_975(30), 2.042);
        // True values from the inverse regularized incomplete beta (mpmath).
        for (df, exact) in [(31, 2.039513), (60, 2.000298), (1000, 1.962339)] {
            assert!((t_975(df) - exact).abs() < 0.0005, "df {df}: {}", t_975(df));
        }
        assert!((t_975(1000) - 1.962).abs() < 0.0005);
        assert!((t_975(usize::MAX) - 1.959964).abs() < 1e-6);
        assert_eq!(t_975(0), f64::INFINITY);
        // Decreasing towards the normal quantile, with no jump at the anchors.
        for df in 1..5000 {
            assert!(t_975(df + 1) < t_975(df), "df {df}");
            assert!(t_975(df) > 1.959964, "df {df}");
        }
    }

    #[test]
    fn cv_is_relative_and_zero_without_spread() {
        close(with(100.0, 5.0, 10).cv(), 0.05);
        assert_eq!(with(0.0, 1.0, 10).cv(), 0.0);
        assert_eq!(with(100.0, 50.0, 1).cv(), 0.0);
        // Two runs are the fewest with a spread (the sample sd divides by n - 1).
        close(with(100.0, 5.0, 2).cv(), 0.05);
    }

    #[test]
    fn throughput_is_bytes_over_the_time_statistics() {
        // One byte in 1 s and in 2 s: 2/3 B/s over the two runs, not the 0.75 B/s
        // that averaging the per-run rates (1 and 0.5) gives.
        let s = Summary::throughput(1.0, &[1.0, 2.0]).unwrap();
        close(s.mean, 2.0 / 3.0);
        assert_eq!((s.min, s.max), (0.5, 1.0));
        close(s.median, 1.0 / 1.5);
        // Delta method: sd_time / mean_time² per byte; cv equals the time's.
        let time = Summary::of(&[1.0, 2.0]).unwrap();
        close(s.stddev, time.stddev / (1.5 * 1.5));
        close(s.cv(), time.cv());
        // The interval of the time [1.5 - h, 1.5 + h] with h = 12.706 * 0.7071 / 1.4142
        // reaches below 0: the rate has a lower bound and no upper one.
        close(s.ci95_low.unwrap(), 1.0 / time.ci95_high.unwrap());
        assert_eq!(s.ci95_high, None);
        let tight = Summary::throughput(1e9, &[1.0, 1.01, 0.99, 1.0]).unwrap();
        let time = Summary::of(&[1.0, 1.01, 0.99, 1.0]).unwrap();
        close(tight.ci95_low.unwrap(), 1e9 / time.ci95_high.unwrap());
        close(tight.ci95_high.unwrap(), 1e9 / time.ci95_low.unwrap());
        close(tight.mean * time.mean, 1e9);
        assert!(tight.ci95_low.unwrap() < tight.mean && tight.mean < tight.ci95_high.unwrap());
        // No rate from a time that is not positive and finite.
        assert_eq!(Summary::throughput(1.0, &[1.0, 0.0]), None);
        assert_eq!(Summary::throughput(1.0, &[f64::NAN]), None);
        assert_eq!(Summary::throughput(1.0, &[]), None);
        let one = Summary::throughput(8.0, &[2.0]).unwrap();
        assert_eq!((one.n, one.mean, one.stddev, one.ci95_low), (1, 4.0, 0.0, None));
    }

    #[test]
    fn relative_ci_half_width_of_times() {
        // Mean 5, sd sqrt(32/7), n 8: half-width 2.365 * sd / sqrt(8).
        let half = 2.365 * (32.0f64 / 7.0).sqrt() / 8.0f64.sqrt();
        close(ci_relative_half_width(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap(), half / 5.0);
        assert_eq!(ci_relative_half_width(&[3.0, 3.0]), Some(0.0));
        assert_eq!(ci_relative_half_width(&[3.0]), None);
        assert_eq!(ci_relative_half_width(&[]), None);
    }

    #[test]
    fn scaled_multiplies_every_field_but_n() {
        let s = Summary::of(&[1e9, 2e9, 3e9, 6e9]).unwrap();
        let g = s.scaled(1e-9);
        assert_eq!(g.n, 4);
        close(g.min, 1.0);
        close(g.max, 6.0);
        close(g.mean, 3.0);
        close(g.median, 2.5);
        close(g.stddev, s.stddev * 1e-9);
        close(g.ci95_low.unwrap(), s.ci95_low.unwrap() * 1e-9);
        close(g.ci95_high.unwrap(), s.ci95_high.unwrap() * 1e-9);
    }
}
