//! recommend.rs's tests, in a file of their own to keep recommend.rs within ~600 lines.
use super::*;
use crate::advice::testkit::{Build, around, case, goal, latency_case};
use plan::RankLayout;
use result::glance::Certainty;

/// The picks alone, their figures drawn from `result`.
fn recommendations(result: &ResultFile) -> Vec<Recommendation> {
    super::recommendations(result, &Measured::of(result), &result::goals::GOALS)
}

/// The acceptance's doctored result: the best 10 % faster than the runner-up at
/// about 8 % noise, 5 runs each. The runner-up cannot be more than 5 % faster (its
/// time at least 0.95x the best's), so the best is "as fast" as any, but never "tied":
/// the runner-up may also be 27 % slower. The simpler of the two measured 1.10x the
/// fastest's time, more than the 5 % that simplicity may cost, so the fastest is
/// recommended and the simpler one named.
#[test]
fn ten_percent_apart_at_eight_percent_noise_is_as_fast_not_tied() {
    let result = Build::new()
        .add(case("pwritev empty 1MiB x1 t1 none"), &[0.92, 1.10, 0.88, 1.08, 1.02])
        .add(case("pwrite empty 1MiB t1 none"), &[1.00, 1.22, 0.98, 1.18, 1.12])
        .add(case("write empty 4KiB t1 none"), &around(3.0))
        .done();
    let answer = recommendations(&result);
    let fastest = goal(&answer, "fastest");
    assert!(!fastest.tied && !fastest.text.contains("tied"), "{}", fastest.text);
    assert_eq!(fastest.verdict.as_deref(), Some("as-fast"));
    assert_eq!(fastest.best.case, "pwritev empty 1MiB x1 t1 none", "the simpler one measured 1.10x its time");
    assert!(fastest.fastest.is_none(), "the one recommended is the fastest");
    assert!(
        fastest.text.starts_with(
            "pwritev of 1 x 1 MiB per call into an empty file: 1.07 GB/s buffered (pwritev empty 1MiB x1 t1 none); \
             the other 2 candidates may not be more than 5 % faster: the closest, pwrite empty 1MiB t1 none, \
             1.10x its time (0.95–1.27x; 0.976 → 1.07 GB/s); it is simpler, but not shown within 5 % of the fastest; 3.0x ("
        ),
        "{}",
        fastest.text
    );
    // Where the one passed over is not the runner-up, it is named with its interval.
    let behind_another = Build::new()
        .add(case("pwritev empty 1MiB x1 t1 none"), &[0.92, 1.10, 0.88, 1.08, 1.02])
        .add(case("io_uring empty 1MiB qd32 t1 none"), &[0.93, 1.11, 0.89, 1.09, 1.03])
        .add(case("pwrite empty 1MiB t1 none"), &[1.00, 1.22, 0.98, 1.18, 1.12])
        .done();
    let text = goal(&recommendations(&behind_another), "fastest").text.clone();
    assert!(
        text.contains(
            "; the simpler pwrite empty 1MiB t1 none was not shown slower, nor within 5 % of the fastest (its time \
             1.10x, 0.95–1.27x): more runs would tell"
        ),
        "{text}"
    );
    let against = fastest.runner_up.as_ref().unwrap();
    assert!(!against.significant && against.low < 1.0 && against.high > 1.05, "{against:?}");
}

/// Non-inferiority (docs/answer.md): a simpler case measured within the margin of the
/// fastest but whose interval reaches past it is not recommended; once its runs show
/// it at most 5 % slower, it is, "as fast", with the fastest named beside it.
#[test]
fn a_simpler_case_is_recommended_once_shown_within_the_margin() {
    let noisy = Build::new()
        .add(case("pwritev empty 1MiB x1 t1 none"), &[0.92, 1.10, 0.88, 1.08, 1.02])
        .add(case("pwrite empty 1MiB t1 none"), &[0.95, 1.14, 0.90, 1.11, 1.06])
        .add(case("write empty 4KiB t1 none"), &around(3.0))
        .done();
    let fastest = goal(&recommendations(&noisy), "fastest").clone();
    assert_eq!(fastest.best.case, "pwritev empty 1MiB x1 t1 none", "{}", fastest.text);
    assert!(matches!(fastest.glance.unwrap().certainty, Certainty::NotSettled { .. }));
    let precise = Build::new()
        .add(case("pwritev empty 1MiB x1 t1 none"), &[1.000, 1.002, 0.998, 1.001, 0.999])
        .add(case("pwrite empty 1MiB t1 none"), &[1.030, 1.032, 1.028, 1.031, 1.029])
        .add(case("write empty 4KiB t1 none"), &around(3.0))
        .done();
    let fastest = goal(&recommendations(&precise), "fastest").clone();
    assert_eq!(fastest.best.case, "pwrite empty 1MiB t1 none", "{}", fastest.text);
    assert_eq!(fastest.fastest.as_ref().unwrap().case, "pwritev empty 1MiB x1 t1 none");
    assert!(
        fastest.text.contains("; the simplest of 2 shown at most 5 % slower than the fastest measured, pwritev"),
        "{}",
        fastest.text
    );
    let Certainty::AsFast { other, margin, .. } = fastest.glance.unwrap().certainty else { panic!() };
    assert_eq!((other.case.as_str(), margin), ("pwritev empty 1MiB x1 t1 none", 0.05));
    assert!(other.factor < 1.0 && other.low > 1.0 / 1.05, "{other:?}");
}

/// The statistics review's case (docs/answer.md): write truly 2 % slower than pwritev
/// × 128, ten runs at 0.2 % noise. Shown slower, but within the 5 % margin: the simpler
/// write is recommended, as it is with three noisier runs, not flipped by precision.
#[test]
fn a_precise_two_percent_is_within_the_margin_and_the_simpler_case_wins() {
    let runs = |mean: f64| -> Vec<f64> { (0..10).map(|i| mean * (1.0 + 0.002 * ((i % 5) as f64 - 2.0))).collect() };
    let result = Build::new()
        .add(case("pwritev empty 4KiB x128 t1 none"), &runs(1.0))
        .add(case("write empty 1MiB t1 none"), &runs(1.02))
        .done();
    let fastest = goal(&recommendations(&result), "fastest").clone();
    assert_eq!(fastest.best.case, "write empty 1MiB t1 none", "{}", fastest.text);
    let against = fastest.runner_up.as_ref().unwrap();
    assert!(against.significant, "2 % slower is shown: {against:?}");
}

/// Two cases identical within 1 %: tied, and the simpler one is recommended.
#[test]
fn identical_within_one_percent_is_tied_and_the_simpler_one_wins() {
    let result = Build::new()
        .add(case("io_uring empty 1MiB qd32 t1 none"), &[0.500, 0.505, 0.495, 0.502, 0.498])
        .add(case("pwrite empty 1MiB t1 none"), &[0.502, 0.498, 0.505, 0.496, 0.501])
        .add(case("write empty 4KiB t1 none"), &around(1.5))
        .done();
    let answer = recommendations(&result);
    let fastest = goal(&answer, "fastest");
    assert!(fastest.tied, "{}", fastest.text);
    assert_eq!(fastest.best.case, "pwrite empty 1MiB t1 none");
    assert_eq!(fastest.verdict.as_deref(), Some("as-fast"));
    assert!(
        fastest.text.contains(
            "; the simplest of 2 shown at most 5 % slower than the fastest measured, io_uring empty 1MiB qd32 t1 none \
             at 2.15 GB/s; the other 2 candidates may not be more than 5 % faster: the closest, io_uring empty \
             1MiB qd32 t1 none, 1.00x its time (0.99–1.01x; 2.15 → 2.15 GB/s); 3.0x"
        ),
        "{}",
        fastest.text
    );
    // Where the fastest is also the simplest, the runner-up is said to be tied.
    let simplest_first = Build::new()
        .add(case("pwrite empty 1MiB t1 none"), &[0.500, 0.505, 0.495, 0.502, 0.498])
        .add(case("io_uring empty 1MiB qd32 t1 none"), &[0.502, 0.498, 0.505, 0.496, 0.501])
        .done();
    let answer = recommendations(&simplest_first);
    let fastest = goal(&answer, "fastest");
    assert!(fastest.tied && fastest.fastest.is_none(), "{fastest:?}");
    assert!(
        fastest.text.contains(
            "; the other candidate may not be more than 5 % faster: the closest, io_uring empty 1MiB qd32 t1 \
             none, 1.00x its time (0.99–1.01x; 2.15 → 2.15 GB/s)"
        ),
        "{}",
        fastest.text
    );
}

/// The factor printed beside two figures is their ratio, and a significant
/// comparison is one whose interval excludes 1.
#[test]
fn a_factor_beside_two_figures_is_their_ratio() {
    let result = Build::new()
        .add(case("pwrite empty 1MiB t1 none"), &[0.50, 0.52, 0.48, 0.51, 0.49])
        .add(case("write empty 4KiB t1 none"), &[1.5, 1.7, 1.4, 1.6, 1.3])
        .done();
    let fastest = goal(&recommendations(&result), "fastest").clone();
    let naive = fastest.naive.as_ref().unwrap();
    assert!(naive.significant && naive.low > 1.0);
    // "3.0x (…) faster than the naive way, … (0.716 → 2.15 GB/s)": 2.15 / 0.716 = 3.0.
    assert!(fastest.text.contains("; 3.0x ("), "{}", fastest.text);
    assert!(fastest.text.ends_with("into an empty file (0.716 → 2.15 GB/s)"), "{}", fastest.text);
    assert!((naive.factor - fastest.best.mean / (result.cases[1].stats.unwrap().mean)).abs() < 1e-9);
}

/// A preallocated file is judged with its fallocate: free writes after a costly
/// preparation lose to an empty file, and both figures are said.
#[test]
fn preparation_is_counted_for_a_new_file() {
    let result = Build::new()
        .add(case("pwrite prealloc 1MiB t1 none"), &around(0.30))
        .prepared(Some(&around(0.30)), 0.01)
        .add(case("pwrite empty 1MiB t1 none"), &around(0.50))
        .add(case("pwrite sparse 1MiB t1 none"), &around(0.45))
        .prepared(None, 0.0)
        .done();
    let fastest = goal(&recommendations(&result), "fastest").clone();
    assert_eq!(fastest.best.case, "pwrite empty 1MiB t1 none", "{}", fastest.text);
    assert_eq!(fastest.best.metric, "new-file");
    // The runner-up, with its fallocate less its fsync (0.29 s) counted: 2.15 / 1.82 = 1.18.
    assert!(
        fastest.text.contains(
            "clearly the fastest of 2 candidates, each shown slower: the closest, pwrite prealloc 1MiB t1 none, \
             1.18x its time (1.17–1.19x; 1.82 → 2.15 GB/s)"
        ),
        "{}",
        fastest.text
    );
    // The sparse case's preparation was not recorded: no new file's candidate.
    assert!(!fastest.text.contains("sparse"), "{}", fastest.text);
    let prepared_best = Build::new()
        .add(case("pwrite prealloc 1MiB t1 none"), &around(0.30))
        .prepared(Some(&around(0.01)), 0.0)
        .add(case("pwrite empty 1MiB t1 none"), &around(0.50))
        .done();
    let fastest = goal(&recommendations(&prepared_best), "fastest").clone();
    assert!(
        fastest.text.starts_with(
            "pwrite in 1 MiB calls into a preallocated file: 3.46 GB/s buffered with its fallocate (the writes \
             alone: 3.58 GB/s) (pwrite prealloc 1MiB t1 none)"
        ),
        "{}",
        fastest.text
    );
    // At a glance: the figure that ranked it, its fallocate counted and said first, the
    // writes' own figure beside it; the gain over the naive way is the ratio of the two
    // figures printed.
    let glance = fastest.glance.as_ref().unwrap();
    assert_eq!(
        glance.action,
        "fallocate the file to its full size, then pwrite in 1 MiB calls into a preallocated file"
    );
    assert_eq!(glance.figure.value, fastest.best.mean, "the figure printed is the figure ranked");
    assert_eq!(glance.caveats, ["the writes alone, without the fallocate: 3.58 GB/s"]);
}

/// A raced goal's figure carries the range of the noise its verdicts use, pooled over
/// the goal's candidates, not the pick's own: two calm runs of a case among noisy ones
/// say little about its noise (docs/answer.md).
#[test]
fn a_raced_figures_range_is_the_goals_pooled_noise() {
    let build = || {
        Build::new()
            .add(case("pwrite empty 1MiB t1 none"), &[0.500, 0.501])
            .add(case("write empty 1MiB t1 none"), &[0.60, 0.75, 0.55, 0.70])
            .add(case("write empty 4KiB t1 none"), &[1.4, 1.7, 1.3, 1.6])
    };
    let own = goal(&recommendations(&build().done()), "fastest").glance.clone().unwrap().figure;
    let mut raced = build().done();
    raced.race = Some(result::race::RaceReport {
        budget_seconds: Some(30.0),
        seconds: 30.0,
        rounds: 2,
        out_of_budget: false,
        goals: vec![result::race::GoalRace {
            goal: "fastest".into(),
            size: None,
            decision: result::race::Decision::Won,
            round: Some(2),
            seconds: Some(3.0),
            candidates: 3,
            left: vec![result::race::Left {
                case: "pwrite empty 1MiB t1 none".into(),
                factor: None,
                low: None,
                high: None,
            }],
        }],
    });
    let pooled = goal(&recommendations(&raced), "fastest").glance.clone().unwrap().figure;
    assert_eq!(own.value, pooled.value, "the same figure");
    let width = |f: &result::glance::Shown| f.high.unwrap() / f.low.unwrap();
    assert!(width(&pooled) > 1.2 && width(&own) < width(&pooled), "own {own:?}, pooled {pooled:?}");
}

/// A fully written file answers "rewriting in place" only, said to be in memory
/// unless --drop-cache was given.
#[test]
fn an_overwrite_answers_rewriting_in_place_only() {
    let build = || {
        Build::new()
            .add(case("pwrite overwrite 1MiB t1 none"), &around(0.2))
            .add(case("write overwrite 4KiB t1 none"), &around(0.6))
            .add(case("pwrite empty 1MiB t1 none"), &around(0.5))
    };
    let answer = recommendations(&build().done());
    assert_eq!(goal(&answer, "fastest").best.case, "pwrite empty 1MiB t1 none");
    let rewrite = goal(&answer, "rewrite-in-place");
    assert_eq!(rewrite.best.case, "pwrite overwrite 1MiB t1 none");
    assert_eq!(rewrite.naive.as_ref().unwrap().baseline, "write overwrite 4KiB t1 none");
    assert!(
        rewrite.text.ends_with("; pages still in memory (give --drop-cache to rewrite a file whose pages are not)")
    );
    let cold = recommendations(&build().option("drop_cache", serde_json::json!(true)).done());
    assert!(!goal(&cold, "rewrite-in-place").text.contains("in memory"));
}

#[test]
fn a_clear_winner_gives_its_margins_and_durable_goals_need_durable_figures() {
    let result = Build::new()
        .synced(case("pwrite prealloc 1MiB t1 end-fdatasync"), &around(0.5), &around(0.1))
        .synced(case("pwritev prealloc 1MiB x1 t1 end"), &around(0.5), &around(0.5))
        .add(case("write empty 4KiB t1 none"), &around(1.5))
        .synced(case("write empty 4KiB t1 end"), &around(1.5), &around(0.5))
        .done();
    let answer = recommendations(&result);
    let durable = goal(&answer, "durable-at-end");
    assert!(!durable.tied);
    assert_eq!(durable.verdict.as_deref(), Some("clear"));
    assert!(
        durable.text.starts_with("pwrite in 1 MiB calls into a preallocated file, then one fdatasync: 1.79 GB/s durable with its fallocate (the writes alone: 1.79 GB/s) (pwrite prealloc 1MiB t1 end-fdatasync); clearly"),
        "{}",
        durable.text
    );
    assert!(
        durable
            .text
            .contains("clearly the fastest of 3 candidates, each shown slower: the closest, pwritev prealloc 1MiB x1 t1 end, 1.67x its time"),
        "{}",
        durable.text
    );
    assert!(
        durable.text.ends_with(
            "than the naive way, write in 4 KiB calls into an empty file, then one fsync (0.537 → 1.79 GB/s)"
        ),
        "{}",
        durable.text
    );
    assert_eq!(durable.naive.as_ref().unwrap().baseline, "write empty 4KiB t1 end");
    assert_eq!(durable.best.metric, "new-file-durable");
    // The buffered goal sees the end cases' write times once: `write … none` stands for both.
    let fastest = goal(&answer, "fastest");
    assert_eq!(fastest.naive.as_ref().unwrap().baseline, "write empty 4KiB t1 none");
    assert!(answer.iter().all(|r| r.goal != "threads-one-file" && r.goal != "small-durable-commits"));
}

#[test]
fn no_durable_goal_from_cases_that_never_synced() {
    let result = Build::new()
        .add(case("pwrite empty 1MiB t1 none"), &around(1.0))
        .add(case("pwrite empty 1MiB t1 direct"), &around(1.0))
        .done();
    let answer = recommendations(&result);
    assert_eq!(answer.iter().map(|r| r.goal.as_str()).collect::<Vec<_>>(), ["fastest"]);
}

#[test]
fn one_thread_of_each_of_two_ranks_into_one_file_is_many_writers_not_one() {
    let mut shared = case("pwrite empty 1MiB t1 none");
    shared.ranks = Some(2);
    let result = Build::new().add(shared, &around(0.5)).done();
    let goals: Vec<String> = recommendations(&result).into_iter().map(|r| r.goal).collect();
    assert_eq!(goals, ["ranks-one-file"]);
}

/// Ranks into one shared file against a file each: the job's own figures side by side,
/// the shared file picked unless it is shown slower (fewer files is simpler).
#[test]
fn ranks_weigh_one_shared_file_against_a_file_each() {
    let of = |layout| case("pwrite empty 1MiB t1 end").with_ranks(2, layout);
    let answer = |shared: f64, each: f64| {
        let result = Build::new()
            .add(of(RankLayout::SharedFile), &around(shared))
            .add(of(RankLayout::FilePerRank), &around(each))
            .done();
        let answer = recommendations(&result);
        assert_eq!(answer.iter().map(|r| r.goal.as_str()).collect::<Vec<_>>(), ["ranks-one-file"]);
        answer.into_iter().next().unwrap().text
    };
    // A file each twice as fast: it is the answer, said as such.
    let text = answer(1.0, 0.5);
    assert!(text.starts_with("pwrite in 1 MiB calls from 2 ranks, a file each, into empty files"), "{text}");
    assert!(
        text.contains(
            "clearly the fastest of 2 candidates, each shown slower: the closest, pwrite empty 1MiB r2 t1 end, 2.00x"
        ),
        "the shared file beside it: {text}"
    );
    // As fast: the one shared file, the simpler.
    let text = answer(0.5, 0.5);
    assert!(text.starts_with("pwrite in 1 MiB calls from 2 ranks into an empty file"), "{text}");
}

#[test]
fn threads_into_one_file_and_small_commits() {
    let result = Build::new()
        .add(case("pwrite empty 1MiB t2 none"), &around(0.6))
        .add(case("write empty 4KiB t1 none"), &around(1.2))
        .latency(latency_case("overwrite0", "none"), 1_000_000.0, 1_000)
        .latency(latency_case("overwrite0", "odsync"), 4_100.0, 410_000)
        .latency(latency_case("overwrite0", "every-fdatasync:1"), 3_900.0, 520_000)
        .done();
    let answer = recommendations(&result);
    let goals: Vec<&str> = answer.iter().map(|r| r.goal.as_str()).collect();
    assert_eq!(goals, ["fastest", "small-durable-commits", "threads-one-file"]);
    let threads = goal(&answer, "threads-one-file");
    assert!(
        threads.text.starts_with("pwrite in 1 MiB calls from 2 threads into an empty file: 1.79 GB/s buffered"),
        "{}",
        threads.text
    );
    assert!(threads.text.contains("; the only candidate measured; 2.0x ("), "{}", threads.text);
    assert!(threads.text.ends_with("(0.895 → 1.79 GB/s)"), "{}", threads.text);
    let commits = goal(&answer, "small-durable-commits");
    assert_eq!(
        commits.text,
        "pwrite of 8 B at offset 0 with O_DSYNC: 4100 commits/s, p99 410 µs per write, its sync included (latency \
         overwrite0 8B odsync); not settled among 2 candidates: latency overwrite0 8B every-fdatasync:1 may be \
         faster, untested: one timed loop each (its time 1.05x the pick's; 3900 → 4100 commits/s)"
    );
    assert_eq!((commits.best.metric.as_str(), commits.best.median), ("commits_per_second", 4100.0));
    // One timed loop each: untested, so not settled, the ratio said as it is.
    assert_eq!(commits.verdict.as_deref(), Some("not-settled"));
    assert!(!commits.tied);
}

/// The order among methods is the catalogue's (`Method::simplicity`), not a list of names
/// here: every native write method ranks where its entry says, and the families fall in
/// the order docs/answer.md gives.
#[test]
fn each_method_ranks_where_its_catalogue_entry_says() {
    let rank = |method: &str| {
        let entry = plan::catalog::by_name(method).unwrap();
        let case = Case::new(entry, FileState::Empty, 1 << 20, 1, Durability::None, 1 << 26);
        simplicity(&case, 1).4
    };
    for entry in plan::catalog::native().iter().filter(|m| m.creation.is_none()) {
        assert_eq!(rank(entry.name), entry.simplicity, "{}", entry.name);
    }
    let order = ["write", "writev", "fwrite", "pwritev2", "mmap", "io_uring"];
    let ranks: Vec<u8> = order.iter().map(|m| rank(m)).collect();
    assert!(ranks.windows(2).all(|w| w[0] < w[1]), "{order:?}: {ranks:?}");
    assert_eq!(rank("pwrite"), rank("write"));
    assert_eq!(rank("io_uring-sqpoll"), rank("io_uring"));
}

/// A goal is one row: a row added to the table (here, "two threads into one file",
/// answered by two-thread cases) is answered from the cases that answer it, with the
/// same rule as every other, in the row's place; the Answer's own table does not have it.
#[test]
fn a_goal_added_as_a_row_is_answered() {
    use result::goals::{AnsweredBy, GOALS, Writers};
    let result = Build::new()
        .add(case("pwrite empty 1MiB t2 none"), &around(0.5))
        .add(case("pwrite empty 4KiB t2 none"), &around(1.0))
        .add(case("pwrite empty 1MiB t4 none"), &around(0.3))
        .add(case("write empty 4KiB t1 none"), &around(1.2))
        .done();
    let two = Goal {
        key: "two-threads-one-file",
        title: "Two threads producing one file",
        metric: result::metric::Metric::NewFile,
        durable: false,
        writers: Writers::Threads,
        answered_by: AnsweredBy::Throughput(|c| c.threads == 2 && c.files == 1),
    };
    let goals: Vec<Goal> = GOALS.iter().copied().chain([two]).collect();
    let answer = super::recommendations(&result, &Measured::of(&result), &goals);
    let keys: Vec<&str> = answer.iter().map(|r| r.goal.as_str()).collect();
    assert_eq!(keys, ["fastest", "threads-one-file", "two-threads-one-file"]);
    let added = goal(&answer, "two-threads-one-file");
    assert_eq!(added.best.case, "pwrite empty 1MiB t2 none", "the faster of the two-thread cases");
    assert_eq!(added.runner_up.as_ref().map(|r| r.baseline.as_str()), Some("pwrite empty 4KiB t2 none"));
    assert_eq!(goal(&answer, "threads-one-file").best.case, "pwrite empty 1MiB t4 none");
    assert!(recommendations(&result).iter().all(|r| r.goal != "two-threads-one-file"));
}

/// The naive way writes from an ordinary buffer: a pick in huge pages is set beside it,
/// not left without one (a default disk run's durable goal lost its line so).
#[test]
fn a_pick_in_huge_pages_has_the_naive_way_in_ordinary_pages() {
    let result = Build::new()
        .synced(case("pwrite empty 1MiB t1 direct+end huge-pages"), &around(0.3), &around(0.01))
        .synced(case("pwrite empty 1MiB t1 direct+end"), &around(0.6), &around(0.01))
        .add(case("write empty 4KiB t1 none"), &around(1.0))
        .synced(case("write empty 4KiB t1 end"), &around(1.0), &around(0.5))
        .done();
    let answer = recommendations(&result);
    let durable = goal(&answer, "durable-at-end");
    assert_eq!(durable.best.case, "pwrite empty 1MiB t1 direct+end huge-pages");
    assert_eq!(durable.naive.as_ref().unwrap().baseline, "write empty 4KiB t1 end");
    let gain = durable.glance.as_ref().unwrap().gain.as_ref().expect("the naive way at a glance");
    assert!(gain.action.starts_with("write 4 KiB"), "{gain:?}");
}
