//! What a reader should know beside a case's figures, in the words every output uses:
//! whether it is noisy, outlying runs, stragglers among its threads, CPU-bound, dirty
//! memory at the start, busy neighbours, device traffic, residency, and what the race
//! did with it. The figures are the facts analysis drew from the runs
//! (`result::facts`); the table, the Markdown and the HTML only lay these out
//! (`wording` composes them with the ceiling's share).

use plan::numbers::three_digits;
use plan::units::format_size;
use result::{CaseResult, NOISY_CI, ResultFile};

/// The size most cases write; lines of other sizes name theirs.
pub fn most_common_size(result: &ResultFile) -> u64 {
    let mut sizes: Vec<(u64, usize)> = Vec::new();
    for case in &result.cases {
        match sizes.iter_mut().find(|(size, _)| *size == case.case.bytes) {
            Some((_, count)) => *count += 1,
            None => sizes.push((case.case.bytes, 1)),
        }
    }
    sizes.iter().max_by_key(|(_, count)| *count).map(|(size, _)| *size).unwrap_or(0)
}

/// "stonewalled: 22 % of 2 GiB written (median run); the ranks' bytes 1.46x apart
/// (median run), rank 1 the least": how much of the size a stonewalled case wrote, and
/// how uneven its writers were (its ranks under `--mpi`, else its threads).
pub fn stonewall_note(result: &CaseResult) -> Option<String> {
    let wall = result.facts.stonewall?;
    let mut note = format!(
        "stonewalled: {:.0} % of {} written (median run)",
        100.0 * wall.written_share,
        format_size(wall.of_bytes)
    );
    if let Some(apart) = wall.apart {
        let who = if apart.ranks { "rank" } else { "thread" };
        note += &format!("; the {who}s' bytes {:.2}x apart", apart.ratio);
        if let Some(index) = apart.least {
            note += &format!(", {who} {index} the least");
        }
    }
    if wall.finished > 0 {
        note += &format!(
            "; {} of {} writers finished their part before the wall (a larger --size keeps them writing)",
            wall.finished, wall.writers
        );
    }
    Some(note)
}

/// The notes other than the noise and the ceiling share, which the compact table shows
/// in columns of their own.
pub fn detail_notes(result: &CaseResult) -> Vec<String> {
    let mut notes: Vec<String> = new_file_note(result).into_iter().collect();
    notes.extend(race_note(result));
    notes.extend(observed_note(result));
    notes.extend(outlier_note(result));
    match stonewall_note(result) {
        // Stonewalled writers all stop at the wall: their bytes differ, not their times.
        Some(note) => notes.push(note),
        None => {
            notes.extend(result.facts.thread_spread.map(|spread| format!("threads spread {:.0} %", 100.0 * spread)))
        }
    }
    notes.extend(cpu_note(result));
    notes.extend(sqpoll_note(result));
    notes.extend(dirty_note(result));
    notes.extend(others_note(result));
    notes.extend(device_note(result));
    notes.extend(resident_note(result));
    notes
}

/// "as a new file, its fallocate counted: 4.62 GB/s (durable 1.49)": the figure a
/// program making this file gets, the one the Answer ranks and shows for its new-file
/// goals (docs/answer.md, "One span a program pays"), where it reads other than the
/// table's figures, which time the writes (and the sync) alone. With it, the Answer's
/// figure for its pick is in the pick's row of every table.
fn new_file_note(result: &CaseResult) -> Option<String> {
    let figures = result.facts.new_file?;
    let differs = |a: f64, b: f64| three_digits(a / 1e9) != three_digits(b / 1e9);
    if !differs(figures.new_file, figures.written) && figures.durable.is_none_or(|(a, b)| !differs(a, b)) {
        return None;
    }
    let preparation = match result.case.state {
        plan::FileState::Empty => "its create",
        plan::FileState::Sparse => "its create and ftruncate",
        plan::FileState::Prealloc => "its create and fallocate",
        plan::FileState::Overwrite => return None,
    };
    let durable = figures.durable.map(|(d, _)| format!(" (durable {})", three_digits(d / 1e9))).unwrap_or_default();
    Some(format!("as a new file, {preparation} counted: {} GB/s{durable}", three_digits(figures.new_file / 1e9)))
}

/// "another process busy on CPU (up to 98 % of one CPU in 3 runs)": the figures
/// shared the machine.
fn others_note(result: &CaseResult) -> Option<String> {
    let (count, most) = result.facts.others_busy?;
    let runs = if count == 1 { "1 run".to_string() } else { format!("{count} runs") };
    Some(format!("another process busy on CPU (up to {:.0} % of one CPU in {runs})", 100.0 * most))
}

/// "page cache kept 3 % of the file": the median run's residency once durable, for the
/// pwritev2 methods, where RWF_DONTCACHE and the default policy sit side by side.
fn resident_note(result: &CaseResult) -> Option<String> {
    let share = result.facts.resident_share?;
    Some(format!("page cache kept {:.0} % of the file", 100.0 * share.min(1.0)))
}

/// "to device 64.0 MiB, 35 % busy" for the median run by bytes written.
fn device_note(result: &CaseResult) -> Option<String> {
    let median = result.facts.device?;
    if median.bytes_written == 0 {
        return Some("to device 0 B: page cache only".to_string());
    }
    Some(format!("to device {}, {:.0} % busy", format_size(median.bytes_written), median.util_pct))
}

/// "2 runs started with 310 MiB dirty": earlier work's writeback overlapped them.
fn dirty_note(result: &CaseResult) -> Option<String> {
    result.facts.dirty_at_start.map(|(count, most)| dirty_words(count, most))
}

/// [`dirty_note`]'s words for `count` runs that started with up to `most` bytes dirty.
pub fn dirty_words(count: usize, most: u64) -> String {
    let runs = if count == 1 { "1 run".to_string() } else { format!("{count} runs") };
    format!("{runs} started with up to {} dirty (earlier writeback overlapped)", format_size(most))
}

/// "CPU-bound (writers on CPU 97 % of the time)": the calls and copies, not the
/// device, set such a case's pace.
pub fn cpu_note(result: &CaseResult) -> Option<String> {
    if !result.cpu_bound {
        return None;
    }
    let share = result.facts.cpu_share.unwrap_or(f64::NAN);
    Some(format!("CPU-bound (writers on CPU {:.0} % of the time)", 100.0 * share.min(1.0)))
}

/// "SQPOLL thread CPU 0.120 s a run, not in the CPU figures": the kernel thread that
/// polls an io_uring-sqpoll ring is no writer, so the writers' CPU clocks miss it.
fn sqpoll_note(result: &CaseResult) -> Option<String> {
    let median = result.facts.sqpoll_seconds?;
    Some(format!("SQPOLL thread CPU {median:.3} s a run, not in the CPU figures"))
}

/// "dropped after 2 runs: 2.4x slower than the best for fastest": a raced case that
/// left every goal's race behind, with the goal it came closest in, and the runs it got
/// after that for the observations ("; 4 runs more for the observations").
pub fn race_note(result: &CaseResult) -> Option<String> {
    let race = result.race.as_ref()?;
    let behind = race.behind.as_ref().filter(|_| race.exit == result::race::Exit::Slower)?;
    Some(format!(
        "dropped after {}: {:.2}x slower than the best for {} ({:.2}–{:.2}x){}",
        runs_words(result, race.runs),
        behind.factor,
        behind.goal,
        behind.low,
        behind.high,
        if race.observed > 0 {
            format!("; {} more for the observations", runs_words(result, race.observed))
        } else {
            String::new()
        }
    ))
}

/// "2 runs for the Answer's goals, 4 more for the observations": a raced case that got
/// runs after the goals let it go, other than a dropped one ([`race_note`] says it there).
fn observed_note(result: &CaseResult) -> Option<String> {
    let race = result.race.as_ref().filter(|race| race.observed > 0)?;
    (race.exit != result::race::Exit::Slower).then(|| {
        format!("{} for the Answer's goals, {} more for the observations", runs_words(result, race.runs), race.observed)
    })
}

/// "1 run", "2 runs"; a latency case's runs are its loops of operations.
fn runs_words(result: &CaseResult, count: u32) -> String {
    let run = if plan::latency::is_latency_case(&result.case) { "loop" } else { "run" };
    if count == 1 { format!("1 {run}") } else { format!("{count} {run}s") }
}

/// "noisy" only where the case missed its `--target-ci`, or, without one, where the
/// 95 % CI of the mean time is wider than ±5 %; the interval is stated either way. A
/// case dropped from a race has few runs on purpose: its note says so instead.
pub fn noise_note(result: &CaseResult) -> Option<String> {
    if race_note(result).is_some() {
        return None;
    }
    match result.target_ci {
        Some(target) if !target.met => Some(match (target.reached_pct, target.judged_pct) {
            // Its own runs agreed better than the machine's runs typically do: judged by the latter.
            (Some(reached), Some(judged)) => format!(
                "noisy: CI ±{reached:.1} % after {} runs, ±{judged:.1} % at the noise typical of this run",
                target.runs
            ),
            (Some(reached), None) => format!("noisy: CI ±{reached:.1} % after {} runs", target.runs),
            (None, _) => format!("noisy: no CI from {} run", target.runs),
        }),
        Some(_) => None,
        None => {
            let ci = result.facts.ci_relative?;
            (ci > NOISY_CI).then(|| format!("noisy: CI ±{:.1} %", 100.0 * ci))
        }
    }
}

/// The outlying runs by number; a first run among them suggests too short a warm-up.
fn outlier_note(result: &CaseResult) -> Option<String> {
    if result.outliers.is_empty() {
        return None;
    }
    let numbers: Vec<String> = result.outliers.iter().map(u32::to_string).collect();
    let plural = if numbers.len() > 1 { "s" } else { "" };
    let warmup = if result.first_run_outlier { " (first run: warm-up too short?)" } else { "" };
    Some(format!("outlier run{plural} {}{warmup}", numbers.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use result::Status;
    use result::race::{Behind, CaseRace, Exit};

    /// A throughput case with the race record given.
    fn raced(exit: Exit, runs: u32, observed: u32) -> CaseResult {
        let pwrite = plan::catalog::by_name("pwrite").unwrap();
        let case = plan::Case::new(pwrite, plan::FileState::Empty, 4096, 1, plan::Durability::None, 1 << 20);
        let behind = (exit == Exit::Slower).then(|| Behind {
            goal: "fastest".into(),
            leader: "write empty 1MiB t1 none".into(),
            factor: 2.41,
            low: 1.9,
            high: 3.1,
            p_value: 0.001,
        });
        let race = CaseRace { runs, round: 2, exit, behind, observed };
        CaseResult { race: Some(race), ..CaseResult::without_result(case, Status::Ok, String::new()) }
    }

    /// A prepared file's figure as a new file (its fallocate counted) is the Answer's
    /// figure for it, and the table gives it where it reads other than the writes
    /// alone; an overwrite is no new file, and a figure that reads the same is not said
    /// twice.
    #[test]
    fn a_prepared_case_says_its_figure_as_a_new_file_where_it_reads_otherwise() {
        use analysis::advice::testkit::{Build, case};
        let result = Build::new()
            .add(case("write prealloc 1MiB t1 none"), &[0.2, 0.2])
            .prepared(Some(&[0.05, 0.05]), 0.0)
            .add(case("write overwrite 1MiB t1 none"), &[0.2, 0.2])
            .add(case("write empty 1MiB t1 none"), &[0.2, 0.2])
            .done();
        let [prepared, overwrite, empty] = &result.cases[..] else { panic!() };
        // 1 GiB in 0.2 s alone, 0.25 s with the fallocate.
        assert_eq!(
            new_file_note(prepared).as_deref(),
            Some("as a new file, its create and fallocate counted: 4.29 GB/s")
        );
        assert_eq!(detail_notes(prepared)[0], "as a new file, its create and fallocate counted: 4.29 GB/s");
        assert_eq!(new_file_note(overwrite), None);
        assert_eq!(new_file_note(empty), None, "no create recorded apart: the same figure");
    }

    #[test]
    fn a_raced_case_says_its_runs_for_the_goals_and_for_the_observations_apart() {
        let dropped = "dropped after 2 runs: 2.41x slower than the best for fastest (1.90–3.10x)";
        assert_eq!(race_note(&raced(Exit::Slower, 2, 0)).as_deref(), Some(dropped));
        assert_eq!(observed_note(&raced(Exit::Slower, 2, 0)), None);
        let observed = race_note(&raced(Exit::Slower, 2, 4));
        assert_eq!(observed, Some(format!("{dropped}; 4 runs more for the observations")));
        assert_eq!(observed_note(&raced(Exit::Slower, 2, 4)), None, "said once, in the dropped note");
        assert_eq!(
            observed_note(&raced(Exit::NoGoal, 2, 1)).as_deref(),
            Some("2 runs for the Answer's goals, 1 more for the observations")
        );
        assert_eq!((race_note(&raced(Exit::NoGoal, 2, 1)), observed_note(&raced(Exit::Decided, 3, 0))), (None, None));
        assert_eq!(
            detail_notes(&raced(Exit::Decided, 3, 2))[0],
            "3 runs for the Answer's goals, 2 more for the observations"
        );
    }
}
