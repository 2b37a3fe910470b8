//! A case's statistics, derived once from its runs: its throughput summaries, its
//! outlying runs, each run's CPU share and whether the case was CPU-bound, and the width
//! of the confidence interval that `--target-ci` and the noisy flag judge. The result
//! stores them as plain data (docs/design.md §5); they are computed here, with the
//! statistics of [`stats`].

use plan::{Case, CaseKind};
use result::{CPU_BOUND, CaseResult, ResultFile, Run, Status};
use stats::Summarize;
use stats::outliers::outliers;
use stats::significance::pooled_cv2;
use stats::{Summary, ci_relative_half_width, median, t_975};

/// The runs a case's figures and comparisons count: every run but those whose settle
/// step gave up with earlier work's writeback still under way (`settle_timed_out`: such
/// a run paid for another's work), unless fewer than two would be left, then all of them
/// (the Answer's observation names the case either way). Outlier marks and run numbers
/// still count every run.
pub fn counted_runs(runs: &[Run]) -> Vec<&Run> {
    let settled: Vec<&Run> = runs.iter().filter(|run| !run.settle_timed_out).collect();
    if settled.len() >= 2 || settled.len() == runs.len() { settled } else { runs.iter().collect() }
}

/// A case with runs and its statistics, derived here, once, from the run times; `cpus`
/// is how many CPUs the writers could run on at once (this machine's, as
/// `std::thread::available_parallelism` gives them).
pub fn measured(case: Case, mut runs: Vec<Run>, cpus: usize) -> CaseResult {
    for run in &mut runs {
        run.cpu_share = cpu_share(run, cpus);
    }
    // Only where every run's CPU time was read: a median of some would speak for all.
    let shares: Option<Vec<f64>> = runs.iter().map(|run| run.cpu_share).collect();
    let cpu_bound = shares.is_some_and(|shares| !shares.is_empty() && median(&shares) >= CPU_BOUND);
    let bytes = case.bytes as f64;
    let syncs = case.durability.syncs();
    // Stonewalled runs: the times scaled to the case's bytes (Run::write_time). The runs
    // that started on earlier work's writeback are left out (`counted_runs`).
    let counted = counted_runs(&runs);
    let write: Vec<f64> = counted.iter().map(|run| run.write_time()).collect();
    let durable: Vec<f64> = counted.iter().map(|run| run.durable_time()).collect();
    // Outliers by run number, among every run.
    let mut outlying = outliers(&runs.iter().map(Run::write_time).collect::<Vec<f64>>());
    if syncs {
        outlying.extend(outliers(&runs.iter().map(Run::durable_time).collect::<Vec<f64>>()));
    }
    outlying.sort_unstable();
    outlying.dedup();
    let outliers: Vec<u32> = outlying.into_iter().map(|index| index as u32 + 1).collect();
    // A creation moves no data: a 64 MiB ftruncate in 3 µs would read "24000 GB/s". Its
    // figures are microseconds per call instead of rates.
    let creation = case.kind == CaseKind::Creation;
    let micros = |seconds: &[f64]| Summary::of(&seconds.iter().map(|s| s * 1e6).collect::<Vec<_>>());
    CaseResult {
        first_run_outlier: outliers.first() == Some(&1),
        case,
        status: Status::Ok,
        error: None,
        stats: if creation { None } else { Summary::throughput(bytes, &write) },
        durable_stats: if syncs && !creation { Summary::throughput(bytes, &durable) } else { None },
        call_us: if creation { micros(&write) } else { None },
        durable_call_us: if creation && syncs { micros(&durable) } else { None },
        runs,
        latency_ns: None,
        sync_latency_ns: None,
        ops_per_second: None,
        ops_stats: None,
        outliers,
        target_ci: None,
        cpu_bound,
        ceiling: None,
        race: None,
        // Drawn once the runs and the conclusions are final (`case_facts::annotate`).
        facts: Default::default(),
    }
}

/// A file creation of a result saved before creations had figures per call (its
/// `stats` were rates no data moved at): its µs per call from its runs, and no rates.
pub fn creations_per_call(result: &mut ResultFile) {
    for case in result.cases.iter_mut().filter(|c| c.case.kind == CaseKind::Creation && c.call_us.is_none()) {
        if case.status == Status::Ok && !case.runs.is_empty() {
            let figures = measured(case.case.clone(), case.runs.clone(), 1);
            (case.call_us, case.durable_call_us) = (figures.call_us, figures.durable_call_us);
            (case.stats, case.durable_stats) = (None, None);
        }
    }
}

/// A run's CPU share (see [`Run::cpu_share`]) with `cpus` CPUs to run on; None where
/// its CPU time was not read.
pub fn cpu_share(run: &Run, cpus: usize) -> Option<f64> {
    let writers = run.thread_seconds.len().clamp(1, cpus.max(1)) as f64;
    let seconds = run.durable_seconds() * writers;
    let cpu = run.cpu_seconds()?;
    Some(if seconds > 0.0 { cpu / seconds } else { 0.0 })
}

/// A latency case whose runs are loops of `per_loop` operations each: its operations
/// per second over the loops (`ops_stats`, from the loop times as `stats` is from the
/// run times) and their mean (`ops_per_second`).
pub fn set_loop_rates(result: &mut CaseResult, per_loop: u64) {
    let times: Vec<f64> = result.runs.iter().map(|run| run.write_seconds).collect();
    result.ops_stats = Summary::throughput(per_loop as f64, &times);
    result.ops_per_second = result.ops_stats.map(|ops| ops.mean);
}

/// The half-width of the 95 % CI of a case's mean run time, as a fraction of the mean:
/// the worse of the write time and, where the case syncs, the write + sync time.
pub fn case_ci_relative(result: &CaseResult) -> Option<f64> {
    ci_relative(&result.runs, result.case.durability.syncs())
}

/// See [`case_ci_relative`].
pub fn ci_relative(runs: &[Run], syncs: bool) -> Option<f64> {
    ci_relative_at(runs, syncs, &Noise::default())
}

/// How noisy a run is on this machine now: the squared coefficient of variation of run
/// times pooled over the cases measured so far, and its degrees of freedom
/// (`significance::pooled_cv2`, which leaves out a case whose own is more than 20
/// times the typical), for the write time and for the write + sync time of the cases
/// that sync. What `--target-ci` holds a case's own spread against (docs/measurement.md,
/// "How many runs").
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Noise {
    pub write: Option<(f64, f64)>,
    pub durable: Option<(f64, f64)>,
}

impl Noise {
    /// Pooled over every case with two or more runs in `cases` (each a case's runs and
    /// whether it syncs).
    pub fn of<'a>(cases: impl IntoIterator<Item = (&'a [Run], bool)>) -> Noise {
        let (mut write, mut durable) = (Vec::new(), Vec::new());
        for (runs, syncs) in cases {
            if runs.len() < 2 {
                continue;
            }
            write.push(runs.iter().map(Run::write_time).collect::<Vec<f64>>());
            if syncs {
                durable.push(runs.iter().map(Run::durable_time).collect::<Vec<f64>>());
            }
        }
        Noise {
            write: pooled_cv2(write.iter().map(Vec::as_slice)),
            durable: pooled_cv2(durable.iter().map(Vec::as_slice)),
        }
    }
}

/// What `--target-ci` judges after each run: [`ci_relative`], each time's half-width
/// the larger of the case's own and the one the pooled noise gives at its number of
/// runs. A case's own spread over a few runs says little on a machine whose noise
/// comes and goes: a case whose first runs fell in a calm minute agrees with itself to
/// ±2 % and stopped there, and its mean is then that minute's (docs/measurement.md).
pub fn ci_relative_at(runs: &[Run], syncs: bool, noise: &Noise) -> Option<f64> {
    let write: Vec<f64> = runs.iter().map(Run::write_time).collect();
    let buffered = half_width_at(&write, noise.write)?;
    if !syncs {
        return Some(buffered);
    }
    let durable: Vec<f64> = runs.iter().map(Run::durable_time).collect();
    Some(buffered.max(half_width_at(&durable, noise.durable)?))
}

/// The larger of `ci_relative_half_width(seconds)` and the half-width that the pooled
/// squared CV `pool.0` with `pool.1` degrees of freedom gives for a mean of as many runs.
fn half_width_at(seconds: &[f64], pool: Option<(f64, f64)>) -> Option<f64> {
    let own = ci_relative_half_width(seconds)?;
    let Some((cv2, df)) = pool else { return Some(own) };
    let pooled = t_975(df.floor().max(1.0) as usize) * (cv2 / seconds.len() as f64).sqrt();
    Some(own.max(pooled))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advice::Figures;
    use plan::FileState;
    use plan::catalog;

    fn run(write_seconds: f64, sync_seconds: f64) -> Run {
        Run { write_seconds, sync_seconds, thread_seconds: vec![write_seconds], ..Run::default() }
    }

    fn case(durability: &str, bytes: u64) -> Case {
        Case::new(catalog::by_name("write").unwrap(), FileState::Empty, 4096, 1, durability.parse().unwrap(), bytes)
    }

    /// A run whose settle step gave up paid for earlier work: out of the figures and
    /// of the times comparisons rest on, while two runs or more are left; its outlier
    /// mark still counts it by its number.
    #[test]
    fn runs_that_started_on_earlier_writeback_are_left_out_while_two_remain() {
        let late = Run { settle_timed_out: true, ..run(4.0, 0.0) };
        let result = measured(case("none", 1_000_000), vec![run(1.0, 0.0), late.clone(), run(1.0, 0.0)], 1);
        assert_eq!(result.stats.unwrap().mean, 1_000_000.0, "the slow run left out");
        let times = crate::advice::Metric::Buffered.times(&result).unwrap();
        assert_eq!(times, [1.0, 1.0]);
        assert_eq!(counted_runs(&result.runs).len(), 2);
        // One settled run would be no figure: all three count.
        let few = measured(case("none", 1_000_000), vec![late.clone(), run(1.0, 0.0), late], 1);
        assert_eq!(counted_runs(&few.runs).len(), 3);
        assert!(few.stats.unwrap().mean < 1_000_000.0);
    }

    #[test]
    fn a_creation_has_microseconds_per_call_and_no_rate_also_when_saved_before() {
        let ftruncate = catalog::by_name("ftruncate").unwrap();
        let creation = Case::new(ftruncate, FileState::Empty, 1 << 26, 1, "end".parse().unwrap(), 1 << 26);
        let result = measured(creation, vec![run(3e-6, 1e-6), run(5e-6, 1e-6)], 1);
        assert!(result.stats.is_none() && result.durable_stats.is_none());
        assert!((result.call_us.unwrap().mean - 4.0).abs() < 1e-9);
        assert!((result.durable_call_us.unwrap().mean - 5.0).abs() < 1e-9);

        // As a writebench before saved it: rates, and no figure per call.
        let mut saved = result.clone();
        (saved.call_us, saved.durable_call_us) = (None, None);
        saved.stats = Summary::throughput(saved.case.bytes as f64, &[3e-6, 5e-6]);
        let mut older = crate::advice::testkit::Build::new().saved(saved).done();
        creations_per_call(&mut older);
        let upgraded = &older.cases[0];
        assert!(upgraded.stats.is_none() && upgraded.durable_stats.is_none());
        assert_eq!((upgraded.call_us, upgraded.durable_call_us), (result.call_us, result.durable_call_us));
    }

    #[test]
    fn measured_derives_buffered_and_durable_throughput() {
        let result = measured(case("end", 1000), vec![run(1.0, 1.0), run(2.0, 0.0)], 1);
        let stats = result.stats.unwrap();
        assert_eq!((stats.min, stats.max), (500.0, 1000.0));
        let durable = result.durable_stats.unwrap();
        assert_eq!((durable.min, durable.max), (500.0, 500.0));
    }

    #[test]
    fn the_cpu_share_counts_the_writers_that_can_run_at_once() {
        // 4 writers, 1 s write + 1 s sync, 3 CPU-seconds in all.
        let run = Run {
            write_seconds: 1.0,
            sync_seconds: 1.0,
            thread_seconds: vec![1.0; 4],
            user_seconds: Some(1.0),
            sys_seconds: Some(2.0),
            ..Run::default()
        };
        assert_eq!(cpu_share(&run, 8), Some(3.0 / 8.0));
        // On 2 CPUs only two of them can run at once.
        assert_eq!(cpu_share(&run, 2), Some(3.0 / 4.0));
        let no_time = Run { user_seconds: Some(0.0), sys_seconds: Some(0.0), ..Run::default() };
        assert_eq!(cpu_share(&no_time, 2), Some(0.0));
        let no_cpu = Run::default();
        assert_eq!(cpu_share(&no_cpu, 2), None, "no CPU time read: no share, not 0");
        let run_of = |user: f64| Run {
            write_seconds: 1.0,
            thread_seconds: vec![1.0],
            user_seconds: Some(user),
            sys_seconds: Some(0.0),
            ..Run::default()
        };
        let (busy, idle) = (run_of(0.95), run_of(0.5));
        assert!(measured(case("none", 1), vec![busy.clone(), busy.clone(), idle.clone()], 2).cpu_bound);
        assert!(!measured(case("none", 1), vec![busy.clone(), idle.clone(), idle], 2).cpu_bound);
        // A run whose CPU time was not read makes no case CPU-bound, and has no share.
        let unread = measured(case("none", 1), vec![busy.clone(), busy, Run { write_seconds: 1.0, ..no_cpu }], 2);
        assert!(!unread.cpu_bound);
        assert_eq!(unread.runs[2].cpu_share, None);
    }

    #[test]
    fn the_mean_is_bytes_over_the_mean_time() {
        // Defect 1.6: runs of 1 s and 2 s gave 750 B/s (the mean of 1000 and 500).
        let result = measured(case("end", 1000), vec![run(1.0, 0.5), run(2.0, 0.5)], 1);
        let mean = result.stats.unwrap().mean;
        assert!((mean * 1.5 - 1000.0).abs() < 1e-9, "{mean}");
        let durable = result.durable_stats.unwrap().mean;
        assert!((durable * 2.0 - 1000.0).abs() < 1e-9, "{durable}");
    }

    #[test]
    fn a_case_that_never_syncs_has_no_durable_figure() {
        // Defect 1.3: none and direct alone stored a durable figure equal to the buffered one.
        for mode in ["none", "direct"] {
            let result = measured(case(mode, 1000), vec![run(1.0, 0.0), run(1.1, 0.0)], 1);
            assert!(result.stats.is_some(), "{mode}");
            assert_eq!(result.durable_stats, None, "{mode}");
            let json = serde_json::to_value(&result).unwrap();
            assert!(json["durable_stats"].is_null(), "{mode}: {json}");
        }
        for mode in ["end", "every:2", "osync", "odsync", "direct+end"] {
            let result = measured(case(mode, 1000), vec![run(1.0, 0.0), run(1.1, 0.0)], 1);
            assert!(result.durable_stats.is_some(), "{mode}");
        }
    }

    #[test]
    fn outliers_are_numbered_from_1_kept_and_a_slow_first_run_is_flagged() {
        let times = [3.0, 1.0, 1.02, 0.98, 1.01, 0.99];
        let result = measured(case("none", 1000), times.iter().map(|&t| run(t, 0.0)).collect(), 1);
        assert_eq!(result.outliers, vec![1]);
        assert!(result.first_run_outlier);
        assert_eq!(result.stats.unwrap().n, 6, "never dropped");
        // An outlier of the sync alone shows in the durable time.
        let runs = vec![run(1.0, 0.1), run(1.0, 0.1), run(1.0, 0.11), run(1.0, 0.09), run(1.0, 5.0)];
        let result = measured(case("end", 1000), runs, 1);
        assert_eq!((result.outliers.clone(), result.first_run_outlier), (vec![5], false));
    }
}
