//! Outlying runs (docs/design.md §2.9): the modified z-score of Iglewicz and Hoaglin on run
//! times. Outliers are reported, never dropped: a stalled run is a finding about the
//! machine or the filesystem, and the statistics keep it.

use crate::median;

/// |modified z| above this marks an outlier (Iglewicz and Hoaglin's recommendation).
pub const THRESHOLD: f64 = 3.5;

/// 0.6745 is the 75th percentile of the standard normal: it makes the MAD of a
/// normal sample comparable to its standard deviation.
const MAD_SCALE: f64 = 0.6745;

/// With MAD = 0 (more than half of the times identical), the mean absolute deviation
/// around the median stands in, scaled by 1.253314 (= sqrt(pi / 2), its ratio to the
/// standard deviation for a normal sample), as IBM's SPSS documents; a run that
/// differs from the identical majority is then still found.
const MEAN_AD_SCALE: f64 = 1.253314;

/// Modified z-scores of `samples` around their median; None when the sample has no
/// spread at all (every value equal to the median) or fewer than three values, where
/// no value can stand out from the others.
pub fn modified_z_scores(samples: &[f64]) -> Option<Vec<f64>> {
    if samples.len() < 3 || samples.iter().any(|x| !x.is_finite()) {
        return None;
    }
    let center = median(samples);
    let deviations: Vec<f64> = samples.iter().map(|x| (x - center).abs()).collect();
    let mad = median(&deviations);
    let scale = if mad > 0.0 {
        mad / MAD_SCALE
    } else {
        let mean_ad = deviations.iter().sum::<f64>() / deviations.len() as f64;
        if mean_ad == 0.0 {
            return None;
        }
        MEAN_AD_SCALE * mean_ad
    };
    Some(samples.iter().map(|x| (x - center) / scale).collect())
}

/// Indices (from 0) of the samples whose |modified z-score| exceeds [`THRESHOLD`].
pub fn outliers(samples: &[f64]) -> Vec<usize> {
    modified_z_scores(samples)
        .map(|scores| (0..scores.len()).filter(|&i| scores[i].abs() > THRESHOLD).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stalled_run_stands_out_and_the_others_do_not() {
        let times = [1.00, 1.02, 0.98, 1.01, 0.99, 3.0];
        assert_eq!(outliers(&times), vec![5]);
        // A fast run is an outlier too (the score is two-sided).
        assert_eq!(outliers(&[1.00, 1.02, 0.98, 1.01, 0.99, 0.2]), vec![5]);
        assert_eq!(outliers(&[1.00, 1.02, 0.98, 1.01, 0.99]), Vec::<usize>::new());
    }

    #[test]
    fn the_score_is_0_6745_deviations_over_the_mad() {
        // Median 3, absolute deviations 2, 1, 0, 1, 7: MAD 1.
        let scores = modified_z_scores(&[1.0, 2.0, 3.0, 4.0, 10.0]).unwrap();
        for (score, expected) in scores.iter().zip([-2.0, -1.0, 0.0, 1.0, 7.0]) {
            assert!((score - 0.6745 * expected).abs() < 1e-12, "{scores:?}");
        }
        // 0.6745 * 7 = 4.72 > 3.5; 0.6745 * 5 = 3.37 is not.
        assert_eq!(outliers(&[1.0, 2.0, 3.0, 4.0, 10.0]), vec![4]);
        assert_eq!(outliers(&[1.0, 2.0, 3.0, 4.0, 8.0]), Vec::<usize>::new());
    }

    #[test]
    fn mad_zero_falls_back_to_the_mean_absolute_deviation() {
        // Four identical times: MAD = 0. The mean absolute deviation is 2/5 = 0.4, so
        // the odd run scores 2 / (1.253314 * 0.4) = 3.99.
        let times = [1.0, 1.0, 1.0, 1.0, 3.0];
        let scores = modified_z_scores(&times).unwrap();
        assert!((scores[4] - 2.0 / (1.253314 * 0.4)).abs() < 1e-9);
        assert_eq!(outliers(&times), vec![4]);
        // All equal, or too few values: nothing stands out, and nothing divides by 0.
        assert_eq!(modified_z_scores(&[2.0; 6]), None);
        assert_eq!(outliers(&[2.0; 6]), Vec::<usize>::new());
        assert_eq!(outliers(&[1.0, 100.0]), Vec::<usize>::new());
        assert_eq!(outliers(&[1.0, f64::NAN, 1.0]), Vec::<usize>::new());
    }

    #[test]
    fn three_finite_values_are_the_least_that_can_be_scored() {
        assert_eq!(modified_z_scores(&[1.0, 2.0]), None);
        assert!(modified_z_scores(&[1.0, 2.0, 4.0]).is_some());
        assert!(modified_z_scores(&[1.0, 2.0, 4.0, 8.0]).is_some());
        assert_eq!(modified_z_scores(&[1.0, 2.0, f64::NAN, 4.0]), None, "a failed run's time is not scored");
    }

    #[test]
    fn a_score_of_exactly_the_threshold_is_not_an_outlier() {
        // Median 0 and MAD 0.6745, so the scale is exactly 1 and the last score exactly 3.5.
        let samples = [-MAD_SCALE, -MAD_SCALE, 0.0, MAD_SCALE, THRESHOLD];
        assert_eq!(modified_z_scores(&samples).unwrap()[4], THRESHOLD);
        assert!(outliers(&samples).is_empty());
        assert_eq!(outliers(&[-MAD_SCALE, -MAD_SCALE, 0.0, MAD_SCALE, THRESHOLD + 1e-9]), vec![4]);
    }
}
