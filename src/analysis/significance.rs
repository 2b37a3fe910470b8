//! Is a difference between two cases real? Pure functions over run *times* (seconds),
//! the same samples the statistics are computed on (DESIGN §2.9).
//!
//! The test is Welch's t-test on the run times of two cases, two-sided: it does not
//! assume equal variances, which a fast and a slow case rarely have, and it works
//! from the 5 or so runs a case has. Where many cases are compared at once
//! (`compare`), the p-values are corrected with Holm's step-down method, which keeps
//! the chance of any false "significant" at α without Bonferroni's loss of power.
//!
//! A factor between two cases (how many times faster) is the ratio of their mean
//! times, with a 95 % interval from the delta method on the log of the ratio and the
//! Welch degrees of freedom: the interval of a ratio is not symmetric, the log's is.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The significance level used throughout: a difference is called real at p < 0.05.
pub const ALPHA: f64 = 0.05;

/// Welch's t-test of two samples of run times.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Welch {
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
}

/// None when either sample has fewer than two runs or a value that is not finite:
/// with one run there is no spread, and no test.
pub fn welch(a: &[f64], b: &[f64]) -> Option<Welch> {
    let (ma, va, na) = moments(a)?;
    let (mb, vb, nb) = moments(b)?;
    let (sa, sb) = (va / na, vb / nb);
    let se2 = sa + sb;
    if se2 == 0.0 {
        // Two samples without any spread: identical means are no difference, and
        // different ones cannot be noise.
        let p = if ma == mb { 1.0 } else { 0.0 };
        return Some(Welch { t: if ma == mb { 0.0 } else { f64::INFINITY.copysign(ma - mb) }, df: na + nb - 2.0, p });
    }
    let t = (ma - mb) / se2.sqrt();
    let mut df = se2 * se2 / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0));
    if !df.is_finite() {
        df = na + nb - 2.0;
    }
    let p = 2.0 * (1.0 - students_t(df).cdf(t.abs()));
    Some(Welch { t, df, p: p.clamp(0.0, 1.0) })
}

/// How many times faster `b` is than `a` (mean time of a / mean time of b), with its
/// 95 % interval. For throughput this is b's rate over a's rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Factor {
    pub factor: f64,
    pub low: f64,
    pub high: f64,
    /// Welch's two-sided p-value for the difference of the mean times.
    pub p: f64,
}

impl Factor {
    /// Significant at [`ALPHA`].
    pub fn significant(&self) -> bool {
        self.p < ALPHA
    }
}

/// See [`Factor`]. None where [`welch`] is None or a mean time is not positive.
pub fn factor(a: &[f64], b: &[f64]) -> Option<Factor> {
    let test = welch(a, b)?;
    let (ma, va, na) = moments(a)?;
    let (mb, vb, nb) = moments(b)?;
    if ma <= 0.0 || mb <= 0.0 {
        return None;
    }
    let factor = ma / mb;
    // Var(ln ma - ln mb) ≈ va/(na ma²) + vb/(nb mb²).
    let se = (va / (na * ma * ma) + vb / (nb * mb * mb)).sqrt();
    let quantile = if se == 0.0 { 0.0 } else { students_t(test.df).inverse_cdf(0.975) };
    Some(Factor { factor, low: factor * (-quantile * se).exp(), high: factor * (quantile * se).exp(), p: test.p })
}

/// Holm's step-down adjustment: the adjusted p-values, in the order given. Compare
/// each with [`ALPHA`]. NaN p-values (no test) stay NaN and do not count.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..p.len()).filter(|&i| !p[i].is_nan()).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    let m = order.len();
    let mut adjusted = vec![f64::NAN; p.len()];
    let mut running = 0.0_f64;
    for (rank, &index) in order.iter().enumerate() {
        // Monotone: an adjusted p is never below that of a smaller raw p.
        running = running.max(((m - rank) as f64 * p[index]).min(1.0));
        adjusted[index] = running;
    }
    adjusted
}

/// (mean, sample variance, n) of at least two finite values.
fn moments(samples: &[f64]) -> Option<(f64, f64, f64)> {
    if samples.len() < 2 || samples.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let n = samples.len() as f64;
    let mean = samples.iter().sum::<f64>() / n;
    let variance = samples.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    Some((mean, variance, n))
}

fn students_t(df: f64) -> StudentsT {
    StudentsT::new(0.0, 1.0, df.max(1e-9)).expect("location 0, scale 1 and df > 0 are valid")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_matches_a_worked_example() {
        // R: t.test(c(27.5,21.0,19.0,23.6,17.0,17.9,16.9,20.1,21.9,22.6,23.1,19.6,19.0,21.7,21.4),
        //           c(27.1,22.0,20.8,23.4,23.4,23.5,25.8,22.0,24.8,20.2,21.9,22.1,22.9,20.5,24.4))
        // t = -2.4553, df = 24.988, p-value = 0.02135
        let a = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4];
        let b = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4];
        let test = welch(&a, &b).unwrap();
        assert!((test.t + 2.4553).abs() < 1e-3, "{test:?}");
        assert!((test.df - 24.988).abs() < 1e-2, "{test:?}");
        assert!((test.p - 0.02135).abs() < 1e-4, "{test:?}");
    }

    #[test]
    fn overlapping_samples_are_not_significant_and_separate_ones_are() {
        let a = [1.00, 1.02, 0.98, 1.01, 0.99];
        assert!(welch(&a, &[1.01, 0.99, 1.00, 1.02, 0.98]).unwrap().p > 0.5);
        assert!(welch(&a, &[0.50, 0.51, 0.49, 0.50, 0.52]).unwrap().p < 1e-6);
        assert_eq!(welch(&a, &[1.0]), None, "one run has no spread");
        assert_eq!(welch(&[1.0, 1.0], &[1.0, 1.0]).unwrap().p, 1.0);
        assert_eq!(welch(&[1.0, 1.0], &[2.0, 2.0]).unwrap().p, 0.0);
    }

    #[test]
    fn a_factor_is_the_ratio_of_mean_times_with_an_interval_around_it() {
        let slow = [2.0, 2.1, 1.9, 2.0];
        let fast = [1.0, 1.05, 0.95, 1.0];
        let f = factor(&slow, &fast).unwrap();
        assert!((f.factor - 2.0).abs() < 1e-12);
        assert!(f.low < 2.0 && f.high > 2.0 && f.low > 1.7 && f.high < 2.3, "{f:?}");
        assert!(f.significant());
        let same = factor(&slow, &[2.05, 1.95, 2.0, 2.1]).unwrap();
        assert!(!same.significant() && same.low < 1.0 && same.high > 1.0, "{same:?}");
    }

    #[test]
    fn holm_multiplies_by_the_rank_and_stays_monotone() {
        let adjusted = holm(&[0.01, 0.04, 0.03, f64::NAN, 0.5]);
        // Sorted: 0.01 (x4), 0.03 (x3), 0.04 (x2), 0.5 (x1).
        assert!((adjusted[0] - 0.04).abs() < 1e-12);
        assert!((adjusted[2] - 0.09).abs() < 1e-12);
        assert!((adjusted[1] - 0.09).abs() < 1e-12, "monotone: not below 0.09");
        assert!(adjusted[3].is_nan());
        assert!((adjusted[4] - 0.5).abs() < 1e-12);
    }
}
