//! A case's figures as statistics of its runs (docs/design.md §2.9): plain data, drawn
//! by `stats` and held by the result; and the width of interval past which a figure is
//! called noisy.

use serde::{Deserialize, Serialize};

/// Without a `--target-ci`, a case is flagged noisy when the half-width of the 95 %
/// confidence interval of its mean time exceeds 5 % of that mean: differences between
/// cases smaller than that should not be trusted. The same measure as `--target-ci`,
/// so the flag means one thing whether or not a target was set.
pub const NOISY_CI: f64 = 0.05;

/// Summary of a sample: of run times in seconds (`stats::Summarize::of`), or of throughput in
/// bytes/s converted from run times (`stats::Summarize::throughput`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    /// Sample standard deviation (divisor n-1); 0.0 when n == 1. For throughput, the
    /// time's sd carried over by the delta method (see `stats::Summarize::throughput`).
    pub stddev: f64,
    pub median: f64,
    /// 95 % confidence interval of the mean, Student t with n-1 degrees of freedom:
    /// mean ± t(0.975, n-1) * stddev / sqrt(n). None (JSON null) when n < 2, and for
    /// throughput the upper bound is None when the interval of the time reaches 0
    /// (no finite rate bounds it).
    pub ci95_low: Option<f64>,
    pub ci95_high: Option<f64>,
}

impl Summary {
    /// Every field multiplied by `factor`, n unchanged, so that unit conversion
    /// (bytes/s to GB/s with 1e-9) happens once, after the statistics, instead of
    /// on every sample. Expects factor > 0, otherwise min/max swap roles.
    pub fn scaled(&self, factor: f64) -> Summary {
        Summary {
            n: self.n,
            min: self.min * factor,
            max: self.max * factor,
            mean: self.mean * factor,
            stddev: self.stddev * factor,
            median: self.median * factor,
            ci95_low: self.ci95_low.map(|x| x * factor),
            ci95_high: self.ci95_high.map(|x| x * factor),
        }
    }
}
