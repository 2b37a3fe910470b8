//! How the work is cut: the chunk size where a method stops gaining (the knee), and
//! what threads bring, into one file or with a file each. Buffered figures throughout:
//! the sync after the writes is the same whatever cut them (see `durability`).

use std::collections::BTreeMap;

use super::figures::{Finding, Measured, Metric, Side, test, twin_key};
use super::words::{Token, direction, factor, gbps, gbps_change, id_without, p_value};
use plan::units::format_size;
use result::CaseResult;
use stats::significance::Verdict;

/// A chunk "reaches" the method's best when its mean throughput is at least this share
/// of the best mean, or when it cannot be told from the best (Welch p ≥ 0.05).
pub const KNEE_SHARE: f64 = 0.95;

/// For each method and state (and equal iov, depth, threads, files, durability and
/// bytes), the smallest chunk that reaches [`KNEE_SHARE`] of the best, said only where
/// the smallest chunk measured is significantly slower than that knee.
pub fn knees(measured: &Measured) -> Vec<Finding> {
    let mut groups: BTreeMap<(String, u64), Vec<&CaseResult>> = BTreeMap::new();
    for &case in &measured.cases {
        let mut any_chunk = case.case.clone();
        any_chunk.chunk_bytes = 0;
        groups.entry(twin_key(&any_chunk)).or_default().push(case);
    }
    let mut findings = Vec::new();
    for mut group in groups.into_values().filter(|g| g.len() >= 2) {
        group.sort_by_key(|c| c.case.chunk_bytes);
        let best =
            group.iter().copied().max_by(|a, b| buffered(a).mean().total_cmp(&buffered(b).mean())).expect("two cases");
        let reaches = |case: &CaseResult| {
            std::ptr::eq(case, best)
                || buffered(case).mean() >= KNEE_SHARE * buffered(best).mean()
                || test(buffered(case), buffered(best)).is_some_and(|t| !t.significant())
        };
        let Some(knee) = group.iter().copied().find(|c| reaches(c)) else { continue };
        let smallest = group[0];
        if std::ptr::eq(knee, smallest) {
            continue;
        }
        let Some(gain) = test(buffered(smallest), buffered(knee)).filter(|t| t.significant() && t.gain()) else {
            continue;
        };
        let at = if std::ptr::eq(best, knee) {
            String::new()
        } else {
            format!(" at {}", format_size(best.case.chunk_bytes))
        };
        // Claim only what the figures show: a knee found because it cannot be told from
        // the best, while its mean is under 95 % of the best's, says so.
        let share = buffered(knee).mean() / buffered(best).mean();
        let reach = if share >= KNEE_SHARE {
            "reach 95 % of the best".to_string()
        } else {
            format!("reach {:.0} % of the best, and cannot be told from it", (share * 100.0).floor())
        };
        let text = format!(
            "{}: {} calls {reach} ({}{at}); {} is {} slower ({})",
            id_without(&knee.case, &[Token::Chunk]),
            format_size(knee.case.chunk_bytes),
            gbps(buffered(best).mean()),
            format_size(smallest.case.chunk_bytes),
            factor(gain.oriented().0),
            p_value(gain.factor.p)
        );
        let mut figures = gain.figures();
        if !std::ptr::eq(best, knee) {
            figures.extend(buffered(best).figure());
        }
        findings.push(Finding::new("knee", text, figures, Some(gain.comparison()), gain.score()));
    }
    findings
}

/// Threads into one file against one thread; a file per thread against one shared file
/// (or, for methods that cannot share one, against one thread). A thread count that
/// brings nothing significant is said ("no gain" where the interval lies within the
/// equivalence margin, "undecided" otherwise) against one thread only: adding
/// threads is what a user does expecting speed, while choosing a layout is not.
pub fn threads(measured: &Measured) -> Vec<Finding> {
    let mut findings = Vec::new();
    for &case in measured.cases.iter().filter(|c| c.case.threads > 1) {
        let (n, one_file) = (case.case.threads, case.case.files == 1);
        let layout = if one_file { format!("{n} threads into one file") } else { format!("{n} threads, a file each") };
        let shared = if one_file { None } else { measured.twin(case, |d| d.files = 1) };
        if let Some(shared) = shared {
            let Some(t) = test(judged(shared), judged(case)).filter(|t| t.significant()) else { continue };
            let text = format!(
                "{}: a file per thread {} {} than one shared file ({}{}, {})",
                id_without(&case.case, &[Token::Files]),
                factor(t.oriented().0),
                direction(&t),
                gbps_change(judged(shared).mean(), judged(case).mean()),
                durable_word(case),
                p_value(t.factor.p)
            );
            findings.push(Finding::new("file-per-thread", text, t.figures(), Some(t.comparison()), t.score()));
            continue;
        }
        let Some(single) = measured.twin(case, |d| (d.threads, d.files) = (1, 1)) else { continue };
        let Some(t) = test(judged(single), judged(case)) else { continue };
        let tag = id_without(&case.case, &[Token::Threads, Token::Files]);
        let rates = format!("{}{}", gbps_change(judged(single).mean(), judged(case).mean()), durable_word(case));
        let (text, score) = if !t.significant() {
            // Not shown is not "no gain": only an interval within the margin says so.
            let (f, low, high) = t.oriented();
            let numbers = format!(
                "{} {}, {}–{}, {rates}, {}",
                factor(f),
                direction(&t),
                factor(low).trim_end_matches('x'),
                factor(high),
                p_value(t.factor.p)
            );
            let judged = if t.verdict(measured.margin) == Verdict::Tied {
                format!("no gain over one thread, within ±{:.0} %", measured.margin * 100.0)
            } else {
                "undecided against one thread, more runs would tell".to_string()
            };
            (format!("{tag}, {layout}: {judged} ({numbers})"), 0.0)
        } else {
            let change = format!("{} {}", factor(t.oriented().0), direction(&t));
            (format!("{tag}, {layout}: {change} than one thread ({rates}, {})", p_value(t.factor.p)), t.score())
        };
        findings.push(Finding::new("threads", text, t.figures(), Some(t.comparison()), score));
    }
    findings
}

/// What a case of threads is judged on: its durable figure where the mode syncs. With a
/// file per thread at `end`, a writer that ends early syncs its file while the others
/// still write, so its write-alone time holds part of a sync that one shared file
/// makes after the writes: only write and sync together compare the layouts.
fn judged(case: &CaseResult) -> Side<'_> {
    Side::new(case, if case.durable_stats.is_some() { Metric::Durable } else { Metric::Buffered })
}

fn durable_word(case: &CaseResult) -> &'static str {
    if case.durable_stats.is_some() { " durable" } else { "" }
}

fn buffered(case: &CaseResult) -> Side<'_> {
    Side::new(case, Metric::Buffered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advice::testkit::{Build, around, case};

    #[test]
    fn the_knee_is_the_smallest_chunk_within_5_percent_of_the_best() {
        let result = Build::new()
            .add(case("write empty 4KiB t1 none"), &around(3.0))
            .add(case("write empty 64KiB t1 none"), &around(1.03))
            .add(case("write empty 1MiB t1 none"), &around(1.0))
            // Another state: its own group, where no chunk is slower.
            .add(case("write prealloc 4KiB t1 none"), &around(1.0))
            .add(case("write prealloc 1MiB t1 none"), &around(1.0))
            .done();
        let findings = knees(&Measured::of(&result));
        assert_eq!(findings.len(), 1, "{findings:?}");
        let knee = &findings[0].observation;
        assert_eq!(knee.kind, "knee");
        assert_eq!(
            knee.text,
            "write empty t1 none: 64 KiB calls reach 95 % of the best (1.07 GB/s at 1 MiB); 4 KiB is 2.9x slower (p < 0.001)"
        );
        let comparison = knee.comparison.as_ref().unwrap();
        assert_eq!(comparison.better, "write empty 64KiB t1 none");
        assert_eq!(comparison.baseline, "write empty 4KiB t1 none");
        assert!(comparison.significant && comparison.p_value < 0.001);
        let cases: Vec<&str> = knee.figures.iter().map(|f| f.case.as_str()).collect();
        assert_eq!(cases, ["write empty 4KiB t1 none", "write empty 64KiB t1 none", "write empty 1MiB t1 none"]);
    }

    #[test]
    fn a_chunk_within_noise_of_the_best_is_the_knee() {
        // 64 KiB's mean is 10 % below the best, but its runs overlap the best's.
        let noisy = [1.0, 1.4, 0.8, 1.3, 1.0];
        let result = Build::new()
            .add(case("pwrite empty 4KiB t1 none"), &around(3.0))
            .add(case("pwrite empty 64KiB t1 none"), &noisy)
            .add(case("pwrite empty 1MiB t1 none"), &around(1.0))
            .done();
        let findings = knees(&Measured::of(&result));
        // It does not reach 95 % of the best: the sentence says what it does reach.
        assert!(
            findings[0].observation.text.contains(": 64 KiB calls reach 90 % of the best, and cannot be told from it"),
            "{findings:?}"
        );
    }

    #[test]
    fn layouts_that_sync_are_compared_on_write_and_sync_together() {
        // A file each ends its writes sooner, but its writers' syncs, overlapping the
        // others' writes, make up for it: write and sync take as long in both layouts.
        let shared_sync = [0.2, 0.21, 0.19, 0.2, 0.2];
        let result = Build::new()
            .synced(case("pwrite empty 1MiB t2 end"), &around(1.0), &shared_sync)
            .synced(case("pwrite empty 1MiB t2 f2 end"), &around(0.7), &around(0.5))
            .done();
        let findings = threads(&Measured::of(&result));
        assert!(findings.iter().all(|f| f.observation.kind != "file-per-thread"), "{findings:?}");
    }

    #[test]
    fn threads_say_no_gain_against_one_thread_and_a_file_each_its_gain() {
        let result = Build::new()
            .add(case("pwrite empty 1MiB t1 end"), &around(1.0))
            .add(case("pwrite empty 1MiB t2 end"), &[1.0, 0.98, 1.03, 0.99, 1.01])
            .add(case("pwrite empty 1MiB t2 f2 end"), &around(0.6))
            .add(case("write empty 1MiB t1 end"), &around(1.0))
            .add(case("write empty 1MiB t2 f2 end"), &around(0.5))
            .done();
        let findings = threads(&Measured::of(&result));
        let texts: Vec<(&str, &str)> =
            findings.iter().map(|f| (f.observation.kind.as_str(), f.observation.text.as_str())).collect();
        assert_eq!(texts.len(), 3, "{texts:?}");
        let (kind, no_gain) = texts[0];
        assert_eq!(kind, "threads");
        assert!(
            no_gain.starts_with(
                "pwrite empty 1MiB end, 2 threads into one file: no gain over one thread, within ±5 % (1.00x slower, \
                 0.98–1.03x, 1.07 → 1.07 GB/s durable, p = 0.84)"
            ),
            "{no_gain}"
        );
        // A gain neither shown nor ruled out is no "no gain".
        let noisy = Build::new()
            .add(case("pwrite empty 1MiB t1 end"), &[1.0, 1.3, 0.8, 1.2, 0.9])
            .add(case("pwrite empty 1MiB t2 end"), &[0.8, 1.1, 0.7, 1.0, 0.9])
            .done();
        let undecided = threads(&Measured::of(&noisy));
        assert!(
            undecided[0]
                .observation
                .text
                .contains(": undecided against one thread, more runs would tell (1.16x faster, "),
            "{:?}",
            undecided[0].observation.text
        );
        assert!(!findings[0].observation.comparison.as_ref().unwrap().significant);
        assert_eq!(findings[0].score, 0.0);
        let (kind, layout) = texts[1];
        assert_eq!(kind, "file-per-thread");
        assert_eq!(
            layout,
            "pwrite empty 1MiB t2 end: a file per thread 1.67x faster than one shared file (1.07 → 1.79 GB/s durable, \
             p < 0.001)"
        );
        // write cannot share a file: a file each is set against one thread.
        let (kind, write) = texts[2];
        assert_eq!(kind, "threads");
        assert_eq!(
            write,
            "write empty 1MiB end, 2 threads, a file each: 2.0x faster than one thread (1.07 → 2.15 GB/s durable, \
             p < 0.001)"
        );
    }

    #[test]
    fn a_different_layout_that_is_no_faster_is_not_said() {
        let result = Build::new()
            .add(case("pwrite empty 1MiB t2 end"), &around(1.0))
            .add(case("pwrite empty 1MiB t2 f2 end"), &[1.0, 0.98, 1.03, 0.99, 1.01])
            .done();
        assert!(threads(&Measured::of(&result)).is_empty());
    }
}
