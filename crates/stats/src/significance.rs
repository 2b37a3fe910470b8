//! Is a difference between two cases real? Pure functions over run *times* (seconds),
//! the same samples the statistics are computed on (docs/design.md §2.9).
//!
//! The test is Welch's t-test on the run times of two cases, two-sided: it does not
//! assume equal variances, which a fast and a slow case rarely have, and it works
//! from the 5 or so runs a case has. Where many cases are compared at once
//! (`compare`), the p-values are corrected with Holm's step-down method, which keeps
//! the chance of any false "significant" at α without Bonferroni's loss of power.
//!
//! A factor between two cases (how many times faster) is the ratio of their mean
//! times, with a 95 % interval from the delta method on the log of the ratio and
//! Welch–Satterthwaite degrees of freedom: the interval of a ratio is not symmetric,
//! the log's is. Its p-value comes from the same statistic (the log of the ratio over
//! its standard error, against the same Student t), so that a factor is significant
//! exactly when its interval excludes 1, and the factor, its interval and its p never
//! disagree (docs/answer.md, "One estimator per comparison").
//!
//! Equivalence: two cases are *tied* only when the whole 95 % interval of their factor
//! lies within ±δ (on the log scale: between 1/(1+δ) and 1+δ), a two one-sided test at
//! 2.5 % each; a factor neither significant nor equivalent is *undecided*.

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
    /// Two-sided p-value of the log of the factor against 0, from the same t
    /// statistic and degrees of freedom as the interval; once [`Factor::adjusted`], the
    /// adjusted p-value, and the interval widened to match.
    pub p: f64,
    /// The standard error of the log of the factor, and its degrees of freedom: what
    /// an interval at another level is made from.
    #[serde(default)]
    pub se: f64,
    #[serde(default)]
    pub df: f64,
}

/// What a factor shows, at [`ALPHA`] and an equivalence margin δ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The interval lies above 1: the second side is faster.
    Faster,
    /// The interval lies below 1: the second side is slower.
    Slower,
    /// The interval lies within ±δ: the two are the same for any purpose at δ.
    Tied,
    /// Neither: the interval holds 1 and reaches past ±δ. More runs would tell.
    Undecided,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::Tied => "tied",
            Verdict::Undecided => "undecided",
        }
    }
}

/// The default equivalence margin δ: 5 % (`--equivalence`), as the result holds it.
pub use result::options::EQUIVALENCE;

impl Factor {
    /// Significant at [`ALPHA`]: the interval excludes 1 (which is p < ALPHA, as both
    /// come from one statistic).
    pub fn significant(&self) -> bool {
        self.low > 1.0 || self.high < 1.0
    }

    /// The whole interval lies within ±`margin` (a fraction: 0.05 for 5 %), on the log
    /// scale so that it reads the same whichever side is named first.
    pub fn equivalent(&self, margin: f64) -> bool {
        let bound = 1.0 + margin.max(0.0);
        self.low >= 1.0 / bound && self.high <= bound
    }

    /// Non-inferior within `margin` (DESIGN's one rule, docs/answer.md): the upper end of
    /// the interval of this factor of times (a case's mean time over the fastest's) is at
    /// most 1 + `margin`, so the case is shown at most that much slower.
    pub fn non_inferior(&self, margin: f64) -> bool {
        self.high <= 1.0 + margin.max(0.0)
    }

    /// One-sided p-value against "at most 1 + `margin`": small where the factor of times
    /// is shown above it (the case is slower than the margin allows). From the same
    /// statistic as the interval: the log of the factor less the log of the bound, over
    /// its standard error, on Student's t with the factor's degrees of freedom.
    pub fn p_beyond(&self, margin: f64) -> f64 {
        let bound = (1.0 + margin.max(0.0)).ln();
        if self.se == 0.0 || !self.se.is_finite() {
            return if self.factor.ln() > bound { 0.0 } else { 1.0 };
        }
        let t = (self.factor.ln() - bound) / self.se;
        (1.0 - students_t(self.df.max(1.0)).cdf(t)).clamp(0.0, 1.0)
    }

    /// The same factor judged among others: `adjusted_p` is its p-value after a
    /// correction for the family (Holm), and the interval is widened to the level that
    /// correction implies, ALPHA x p / adjusted p, so that the interval still excludes 1
    /// exactly when the adjusted p is below ALPHA.
    pub fn adjusted(&self, adjusted_p: f64) -> Factor {
        if adjusted_p.is_nan() || adjusted_p <= self.p || self.p <= 0.0 || self.se == 0.0 {
            return Factor { p: adjusted_p.max(self.p), ..*self };
        }
        let level = ALPHA * self.p / adjusted_p;
        let quantile = students_t(self.df).inverse_cdf(1.0 - level / 2.0);
        Factor {
            low: self.factor * (-quantile * self.se).exp(),
            high: self.factor * (quantile * self.se).exp(),
            p: adjusted_p,
            ..*self
        }
    }

    /// The lower end of the same factor's two-sided interval at level `alpha` (0.01: the
    /// 99 % one), never above the interval's own.
    pub fn low_at(&self, alpha: f64) -> f64 {
        if self.se <= 0.0 || self.df <= 0.0 {
            return self.low;
        }
        let quantile = students_t(self.df).inverse_cdf(1.0 - alpha / 2.0);
        (self.factor * (-quantile * self.se).exp()).min(self.low)
    }

    /// Faster, slower, tied within `margin`, or undecided.
    pub fn verdict(&self, margin: f64) -> Verdict {
        if self.low > 1.0 {
            Verdict::Faster
        } else if self.high < 1.0 {
            Verdict::Slower
        } else if self.equivalent(margin) {
            Verdict::Tied
        } else {
            Verdict::Undecided
        }
    }
}

/// See [`Factor`]. None where either sample has fewer than two runs or a value that is
/// not finite, or a mean time is not positive.
pub fn factor(a: &[f64], b: &[f64]) -> Option<Factor> {
    let (ma, va, na) = moments(a)?;
    let (mb, vb, nb) = moments(b)?;
    if ma <= 0.0 || mb <= 0.0 {
        return None;
    }
    // Var(ln ma - ln mb) ≈ va/(na ma²) + vb/(nb mb²), each term the squared coefficient
    // of variation of a mean.
    let (ua, ub) = (va / (na * ma * ma), vb / (nb * mb * mb));
    // Welch–Satterthwaite on the log scale's two variance terms.
    let se2 = ua + ub;
    let mut df = se2 * se2 / (ua * ua / (na - 1.0) + ub * ub / (nb - 1.0));
    if !df.is_finite() {
        df = na + nb - 2.0;
    }
    Some(judged(ma, mb, se2, df))
}

/// The factor of mean times `ma / mb` whose log has variance `se2`, judged on Student's
/// t with `df` degrees of freedom: its interval at [`ALPHA`] and its two-sided p.
/// Without any spread, identical means are no difference and different ones cannot be
/// noise.
fn judged(ma: f64, mb: f64, se2: f64, df: f64) -> Factor {
    let factor = ma / mb;
    if se2 == 0.0 {
        let p = if ma == mb { 1.0 } else { 0.0 };
        return Factor { factor, low: factor, high: factor, p, se: 0.0, df };
    }
    let se = se2.sqrt();
    let t = students_t(df);
    let quantile = t.inverse_cdf(1.0 - ALPHA / 2.0);
    let p = (2.0 * (1.0 - t.cdf((factor.ln() / se).abs()))).clamp(0.0, 1.0);
    Factor { factor, low: factor * (-quantile * se).exp(), high: factor * (quantile * se).exp(), p, se, df }
}

/// [`factor`] of two samples taken from the same runs, `a[i]` and `b[i]` of run `i`: a
/// case's write time against its write and sync. Each run's noise (a slow write, the
/// machine's drift) is in both, so only what differs between the two within a run, the
/// sync, is noise of the ratio: the variance of the log of the ratio of means is that of
/// `a[i]/mean(a) − b[i]/mean(b)` over the runs (the delta method on both means at once),
/// with n − 1 degrees of freedom. Two independent samples' test would count each run's
/// noise twice and never show a sync of a few µs in a run of 25 ms, or rule it out
/// (docs/answer.md, "One estimator per comparison"). None where the two differ in
/// length, or as [`factor`].
pub fn paired_factor(a: &[f64], b: &[f64]) -> Option<Factor> {
    if a.len() != b.len() {
        return None;
    }
    let (ma, _, n) = moments(a)?;
    let (mb, _, _) = moments(b)?;
    if ma <= 0.0 || mb <= 0.0 {
        return None;
    }
    let differences: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / ma - y / mb).collect();
    let (_, variance, _) = moments(&differences)?;
    Some(judged(ma, mb, variance / n, n - 1.0))
}

/// [`factor`] with the noise pooled over a family of samples (a race's candidates,
/// `stats::race`): each side's squared coefficient of variation is the larger of its own
/// and `pooled_cv2`, the family's, and the degrees of freedom are the family's,
/// `pooled_df`. With two or three runs a case's own spread says little, while the
/// family's says how noisy runs are on this machine; taking the larger of the two
/// keeps a case whose own runs are noisier from being judged on the family's calm.
pub fn pooled_factor(a: &[f64], b: &[f64], pooled_cv2: f64, pooled_df: f64) -> Option<Factor> {
    let (ma, va, na) = moments(a)?;
    let (mb, vb, nb) = moments(b)?;
    if ma <= 0.0 || mb <= 0.0 || pooled_df.is_nan() || pooled_df < 1.0 {
        return None;
    }
    let (ua, ub) = ((va / (ma * ma)).max(pooled_cv2) / na, (vb / (mb * mb)).max(pooled_cv2) / nb);
    Some(judged(ma, mb, ua + ub, pooled_df))
}

/// The 95 % interval of the mean of `times` as factors of it (low below 1, high above),
/// with the noise pooled as [`pooled_factor`] pools it: the sample's own squared CV or
/// the pool's, whichever is larger, over its runs, on the log scale with the pool's
/// degrees of freedom. The one noise model of a raced goal's verdicts, for the range
/// printed beside its figure (docs/answer.md). None with fewer than two runs.
pub fn pooled_mean_range(times: &[f64], pooled_cv2: f64, pooled_df: f64) -> Option<(f64, f64)> {
    let (mean, variance, n) = moments(times)?;
    if mean <= 0.0 || pooled_df.is_nan() || pooled_df < 1.0 {
        return None;
    }
    let se = ((variance / (mean * mean)).max(pooled_cv2) / n).sqrt();
    let quantile = students_t(pooled_df).inverse_cdf(1.0 - ALPHA / 2.0);
    Some(((-quantile * se).exp(), (quantile * se).exp()))
}

/// The squared coefficient of variation of run times pooled over samples of two or more
/// runs (each weighted by its runs less one), and its degrees of freedom, leaving out a
/// sample whose own is more than [`OUTLYING`] times the samples' typical one.
///
/// Why leave any out: on a disk one run in a hundred can take twenty times as long as
/// its others (a journal commit, another process's writeback), and one such run in a
/// family of 77 doubled the pooled noise and kept the race from dropping anything
/// (docs/racing.md). The sample that had it keeps its own larger spread in
/// [`pooled_factor`]. "Typical" is the median of the samples' squared CVs, each divided
/// by the median of χ²ₖ/k for its k = runs − 1 (so that it estimates their variance, not
/// 0.45 of it at k = 1); a sample of calm runs lies past 20 times it by chance in 0.26 %
/// of cases at k = 1 (fewer at larger k), and leaving those out lowers the pool by about
/// 2.5 %.
pub fn pooled_cv2<'a>(samples: impl IntoIterator<Item = &'a [f64]>) -> Option<(f64, f64)> {
    let own: Vec<(f64, f64)> = samples
        .into_iter()
        .filter_map(moments)
        .filter(|(mean, _, _)| *mean > 0.0)
        .map(|(mean, variance, n)| (variance / (mean * mean), n - 1.0))
        .collect();
    let mut scaled: Vec<f64> = own.iter().map(|&(cv2, k)| cv2 / chi2_median_over_k(k)).collect();
    scaled.sort_by(f64::total_cmp);
    let middle = scaled.len() / 2;
    let typical = match scaled.len() {
        0 => return None,
        n if n % 2 == 1 => scaled[middle],
        _ => (scaled[middle - 1] + scaled[middle]) / 2.0,
    };
    let (mut sum, mut df) = (0.0, 0.0);
    for &(cv2, k) in own.iter().filter(|(cv2, _)| typical == 0.0 || *cv2 <= OUTLYING * typical) {
        sum += k * cv2;
        df += k;
    }
    (df >= 1.0).then(|| (sum / df, df))
}

/// The upper end of a one-sided 95 % interval for the CV behind a pooled squared CV
/// with `df` degrees of freedom (`pooled_cv2`): cv2 · df / χ²₀.₀₅(df), as for a variance.
/// Three candidates with seven runs at a true 30 % estimate it below 20 % often enough
/// to matter (docs/racing.md, "The error a user sees").
pub fn cv_upper(cv2: f64, df: f64) -> f64 {
    use statrs::distribution::ChiSquared;
    let low = ChiSquared::new(df.max(1.0)).map_or(f64::NAN, |chi| chi.inverse_cdf(0.05));
    if low > 0.0 { (cv2 * df.max(1.0) / low).sqrt() } else { f64::INFINITY }
}

/// How many times the typical squared CV a sample's own may be and still count in the
/// pool ([`pooled_cv2`]).
const OUTLYING: f64 = 20.0;

/// The median of χ²ₖ/k: exact for k = 1 and 2, Wilson–Hilferty's (1 − 2/(9k))³ above
/// (within 0.7 % at k = 3, closer after).
fn chi2_median_over_k(k: f64) -> f64 {
    if k < 1.5 {
        0.454_936
    } else if k < 2.5 {
        std::f64::consts::LN_2
    } else {
        (1.0 - 2.0 / (9.0 * k)).powi(3)
    }
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

    /// The noise a pool may stand for: close to its estimate with many degrees of
    /// freedom, far above it with a few (χ²₀.₀₅ of 3 is 0.352, of 40 is 26.5).
    #[test]
    fn the_upper_end_of_the_noise_widens_as_the_degrees_of_freedom_fall() {
        let many = super::cv_upper(0.15 * 0.15, 40.0);
        assert!((0.18..0.20).contains(&many), "{many}");
        let few = super::cv_upper(0.15 * 0.15, 3.0);
        assert!((0.43..0.45).contains(&few), "{few}");
        assert!(super::cv_upper(0.01, 1.0) > 0.2, "one degree of freedom bounds little");
    }

    /// One sample with a run twenty times as long as its other does not make the pool:
    /// the other samples' noise does, and the degrees of freedom are theirs.
    #[test]
    fn the_pool_leaves_out_a_sample_far_noisier_than_the_typical_one() {
        let calm: Vec<Vec<f64>> = (0..9).map(|i| vec![1.0, 1.0 + 0.02 * f64::from(i % 3 + 1)]).collect();
        let mut all = calm.clone();
        all.push(vec![1.0, 20.0]);
        let (with, df_with) = pooled_cv2(all.iter().map(Vec::as_slice)).unwrap();
        let (without, df_without) = pooled_cv2(calm.iter().map(Vec::as_slice)).unwrap();
        assert!((with - without).abs() < 1e-12 && df_with == df_without, "{with} {without}");
        assert!(without > 0.0 && without < 0.01, "{without}");
        // Samples of equal noise all count.
        let even: Vec<Vec<f64>> = (0..4).map(|_| vec![1.0, 1.1]).collect();
        assert_eq!(pooled_cv2(even.iter().map(Vec::as_slice)).unwrap().1, 4.0);
    }

    use super::*;

    /// The lower end at another level comes from the same standard error: at ALPHA it
    /// is the interval's own, at 0.01 lower, and as `adjusted` widens it for a p five
    /// times larger.
    #[test]
    fn a_lower_end_at_another_level_is_the_same_estimate_widened() {
        let factor = pooled_factor(&[1.5, 1.6, 1.4, 1.55], &[1.0, 1.1, 0.95, 1.05], 0.01, 20.0).unwrap();
        assert!((factor.low_at(ALPHA) - factor.low).abs() < 1e-12);
        let low99 = factor.low_at(0.01);
        assert!(low99 < factor.low && low99 > 1.0, "{low99} {factor:?}");
        assert!((low99 - factor.adjusted(factor.p * 5.0).low).abs() < 1e-9);
        let exact = Factor { se: 0.0, ..factor };
        assert_eq!(exact.low_at(0.01), exact.low, "no standard error: the interval as it is");
    }

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

    /// A case's write time against its write and sync, run by run: a sync of 0.1 % in
    /// runs 10 % apart is shown and lies within 1 %, where two independent samples'
    /// interval holds 1 and reaches past 5 %.
    #[test]
    fn a_paired_factor_counts_only_what_differs_within_each_run() {
        let writes = [1.0, 1.1, 0.9, 1.05, 0.95];
        let durable: Vec<f64> = writes.iter().map(|w| w + 0.001 + 0.0001 * w).collect();
        let paired = paired_factor(&writes, &durable).unwrap();
        let apart = factor(&writes, &durable).unwrap();
        assert!((paired.factor - apart.factor).abs() < 1e-12, "the same ratio of means");
        assert!(paired.high < 1.0 && paired.low > 0.99, "{paired:?}");
        assert!(paired.verdict(0.01) == Verdict::Slower && paired.equivalent(0.01), "{paired:?}");
        assert_eq!(paired.df, 4.0);
        assert!(apart.low < 0.95 && apart.high > 1.0 && apart.verdict(0.05) == Verdict::Undecided, "{apart:?}");
        // A sync that doubles some runs and not others is noise of its own.
        let uneven = [1.2, 2.1, 0.95, 2.0, 1.0];
        let noisy = paired_factor(&writes, &uneven).unwrap();
        assert!(noisy.low < 0.6 && noisy.high > 0.9, "{noisy:?}");
        assert_eq!(paired_factor(&writes, &durable[..4]), None, "unequal runs are no pairs");
        assert_eq!(paired_factor(&[1.0], &[1.1]), None);
        // Worked by hand, runs of 20–50 ms: each run's share of its mean, 0.8 and 1.2
        // against 0.75 and 1.25, differ by ±0.05; their variance 0.005 over 2 runs.
        let worked = paired_factor(&[0.02, 0.03], &[0.03, 0.05]).unwrap();
        assert!((worked.factor - 0.625).abs() < 1e-12 && (worked.se - 0.05).abs() < 1e-12, "{worked:?}");
        assert_eq!(worked.df, 1.0);
        assert_eq!(paired_factor(&[-1.0, -1.2], &[1.0, 1.1]), None, "a time is never negative");
        assert_eq!(paired_factor(&[1.0, 1.1], &[-1.0, -1.2]), None);
        let same = paired_factor(&writes, &writes).unwrap();
        assert_eq!((same.factor, same.p), (1.0, 1.0));
    }

    /// Seen in real output before one estimator: "1.63x (0.98–2.7x, p = 0.03)", an
    /// interval holding 1 beside a p that called it significant. Over many skewed
    /// samples, p < 0.05 holds exactly when the interval excludes 1.
    #[test]
    fn significant_exactly_when_the_interval_excludes_one() {
        let mut state = 7u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut both = 0;
        for _ in 0..2000 {
            let n = 3 + (next() * 6.0) as usize;
            let m = 3 + (next() * 6.0) as usize;
            let shift = 0.6 + next() * 0.8;
            // Skewed times: a slow run now and then, as on this noisy machine.
            let a: Vec<f64> = (0..n).map(|_| 1.0 + 0.3 * next().powi(4)).collect();
            let b: Vec<f64> = (0..m).map(|_| shift * (1.0 + next().powi(3))).collect();
            let f = factor(&a, &b).unwrap();
            let excludes = f.low > 1.0 || f.high < 1.0;
            assert_eq!(f.p < ALPHA, excludes, "{f:?} a={a:?} b={b:?}");
            assert_eq!(f.significant(), excludes);
            both += usize::from(excludes);
        }
        assert!(both > 200 && both < 1800, "both outcomes are exercised: {both}");
    }

    #[test]
    fn an_adjusted_factor_excludes_one_exactly_when_its_adjusted_p_is_below_alpha() {
        let f = factor(&[1.10, 1.12, 1.08, 1.11, 1.09], &[1.0, 1.02, 0.98, 1.01, 0.99]).unwrap();
        assert!(f.significant() && f.p < 0.01, "{f:?}");
        let kept = f.adjusted(f.p * 3.0);
        assert!(kept.significant() && kept.low < f.low && kept.high > f.high, "{kept:?}");
        let lost = f.adjusted(0.2);
        assert!(!lost.significant() && lost.low < 1.0 && lost.p == 0.2, "{lost:?}");
        assert_eq!(f.adjusted(f.p), f);
    }

    #[test]
    fn tied_needs_the_whole_interval_within_the_margin_else_undecided() {
        // Identical within 1 %, 5 runs each: the interval sits inside ±5 %.
        let a = [1.000, 1.010, 0.990, 1.005, 0.995];
        let b = [1.004, 0.996, 1.010, 0.992, 1.001];
        assert_eq!(factor(&a, &b).unwrap().verdict(EQUIVALENCE), Verdict::Tied);
        // 10 % apart at 8 % noise with 5 runs each: not significant, not equivalent.
        let slow = [1.00, 1.22, 0.98, 1.18, 1.12];
        let fast = [0.92, 1.10, 0.88, 1.08, 1.02];
        let f = factor(&slow, &fast).unwrap();
        assert!(!f.significant(), "{f:?}");
        assert_eq!(f.verdict(EQUIVALENCE), Verdict::Undecided, "{f:?}");
        // A wider margin can call the same runs tied only when the interval fits in it.
        assert_eq!(f.verdict(0.5), Verdict::Tied);
        // Clear differences either way.
        assert_eq!(factor(&[2.0, 2.1, 1.9], &[1.0, 1.1, 0.9]).unwrap().verdict(EQUIVALENCE), Verdict::Faster);
        assert_eq!(factor(&[1.0, 1.1, 0.9], &[2.0, 2.1, 1.9]).unwrap().verdict(EQUIVALENCE), Verdict::Slower);
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
