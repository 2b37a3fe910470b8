//! A case's notes as every output lays them out (`case_notes`), with the share of the
//! ceiling beside them, and the runs wording of the header.

pub use crate::case_notes::{
    cpu_note, detail_notes, dirty_words, most_common_size, noise_note, race_note, stonewall_note,
};
// Said by the Answer's race lines too (analysis), and by the announcement (app).
pub use plan::numbers::seconds_words;
use result::options::RunOptions;
use result::{CaseResult, NOISY_CI};

/// What a reader should know about a measured case's figure: noisy, outlying runs,
/// stragglers among its threads, and the rest. The Markdown and HTML reports say the same.
pub fn notes(result: &CaseResult) -> Vec<String> {
    let mut notes: Vec<String> = noise_note(result).into_iter().collect();
    notes.extend(detail_notes(result));
    notes.extend(result.ceiling.as_ref().map(crate::calibration::share_note));
    notes
}

/// "5 runs", or with `--target-ci` "5 to 7 runs (...)": read from the options applied.
pub fn runs_wording(options: &RunOptions) -> String {
    let number = |value: Option<u32>| value.unwrap_or(0);
    if options.race == Some(true) {
        let within = options.budget_seconds.map(|b| format!(" within {}", seconds_words(b))).unwrap_or_default();
        return format!(
            "{} to {} runs, raced for the Answer's goals{within}: a case stops once no open goal needs it \
             (noisy: the 95 % CI of the mean wider than ±{:.0} %)",
            number(options.min_runs),
            number(options.max_runs),
            100.0 * NOISY_CI
        );
    }
    match options.target_ci {
        Some(pct) => format!(
            "{} to {} runs, until the 95 % CI of the mean is within ±{pct} % (noisy: not reached)",
            number(options.min_runs),
            number(options.max_runs)
        ),
        None => {
            format!(
                "{} runs (noisy: the 95 % CI of the mean wider than ±{:.0} %)",
                number(options.repeat),
                100.0 * NOISY_CI
            )
        }
    }
}
