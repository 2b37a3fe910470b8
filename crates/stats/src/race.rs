//! The racing rule (docs/racing.md): among the candidates of one goal of the Answer,
//! after a round of runs, which leave the race and whether the goal is decided. Racing
//! (F-Race, irace; best-arm identification) spends runs where the answer is still open:
//! a candidate significantly slower than the leader will not win the goal, and more runs
//! of it only cost time.
//!
//! One round's rule, on run times (seconds, lower is better):
//! - the leader is the candidate in the race with the lowest mean time;
//! - each other candidate in the race is compared with the leader by the estimator of
//!   the Answer (`significance::factor`: the ratio of mean times, its interval and p
//!   from one statistic), and the p-values are corrected with Holm over the candidates;
//! - a candidate leaves the race only when it is shown slower than the leader by more
//!   than the equivalence margin (non-inferiority, the rule the Answer recommends by:
//!   docs/answer.md): its one-sided p against "at most 1 + margin", corrected with Holm
//!   over the candidates, is below `alpha`. A case shown 2 % slower, whose interval lies
//!   within the margin, stays: the Answer may recommend it for being simpler;
//! - the goal is *won* when one candidate is left, *tied* when every candidate left is
//!   equivalent to the leader within the margin (the interval, widened as Holm's
//!   correction implies, within ±margin), and *open* otherwise.
//!
//! The rule looks again after every round, so a candidate has several chances to be
//! dropped by chance; the simulation test below measures how often the true best is
//! dropped that way, and `RACE_ALPHA` is the per-round level that keeps it within 5 %.

use super::significance::{Factor, cv_upper, holm, pooled_cv2, pooled_factor};

/// The level of one round's test. The rule looks after every round, and with 0.05 a
/// look one of two equal bests left the race in 6.9 % of simulated races (three runs,
/// then up to seven looks more; 8 % noise); with 0.01 a look, in 1.7 % (the simulation
/// test below, docs/racing.md).
pub const RACE_ALPHA: f64 = 0.01;

/// Where a candidate stands after a round.
#[derive(Debug, Clone, PartialEq)]
pub enum Standing {
    /// Still in the race (the leader, or not shown slower than it).
    In,
    /// Left the race: how many times slower than the leader (mean time over the
    /// leader's), with the interval corrected for the goal's candidates.
    Out(Factor),
}

/// Whether the goal is decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Candidates are left that are neither out nor equivalent to the leader.
    Open,
    /// One candidate is left.
    Won(usize),
    /// The candidates left (the leader first) are equivalent to the leader.
    Tied(Vec<usize>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Round {
    /// One per candidate, in the order given; a candidate out before stays out.
    pub standings: Vec<Standing>,
    pub leader: usize,
    pub decision: Decision,
}

/// The leader among the candidates in the race (`times[i]` None: out) with two runs or
/// more, and each other such candidate's factor against it (mean time over the
/// leader's), its noise pooled over `pool` (`significance::pooled_factor`): every
/// candidate of the goal, in the race or out, as the race's focus and the Answer pool
/// it (docs/racing.md, "One noise model"), corrected with Holm over them; None for the
/// leader, for a candidate out or with fewer runs, and where no factor can be drawn.
/// None when no candidate has two runs.
pub fn against_leader(times: &[Option<&[f64]>], pool: &[&[f64]]) -> Option<(usize, Vec<Option<Factor>>)> {
    let mean = |t: &[f64]| t.iter().sum::<f64>() / t.len() as f64;
    let racing: Vec<usize> = (0..times.len()).filter(|&i| times[i].is_some_and(|t| t.len() >= 2)).collect();
    let leader = *racing.iter().min_by(|&&a, &&b| mean(times[a].unwrap()).total_cmp(&mean(times[b].unwrap())))?;
    let leader_times = times[leader].unwrap();
    let others: Vec<usize> = racing.iter().copied().filter(|&i| i != leader).collect();
    let (cv2, df) = pooled_cv2(pool.iter().copied().filter(|t| t.len() >= 2))?;
    let factors: Vec<Option<Factor>> =
        others.iter().map(|&i| pooled_factor(times[i].unwrap(), leader_times, cv2, df)).collect();
    let p: Vec<f64> = factors.iter().map(|f| f.map_or(f64::NAN, |f| f.p)).collect();
    let mut against = vec![None; times.len()];
    for ((&i, f), adjusted_p) in others.iter().zip(&factors).zip(holm(&p)) {
        against[i] = f.map(|f| f.adjusted(adjusted_p));
    }
    Some((leader, against))
}

/// One round of the race. `times[i]` is candidate i's run times, or None when it left
/// the race before (it stays out, with no factor: its standing is `In` only if given);
/// `pool`, the run times whose noise is pooled (see [`against_leader`]). None when no
/// candidate in the race has two runs.
pub fn round(times: &[Option<&[f64]>], pool: &[&[f64]], alpha: f64, margin: f64) -> Option<Round> {
    let (leader, against) = against_leader(times, pool)?;
    // Shown slower than the margin allows, among the candidates judged (Holm).
    let judged: Vec<usize> = (0..times.len()).filter(|&i| against[i].is_some()).collect();
    let beyond: Vec<f64> = judged.iter().map(|&i| against[i].map_or(f64::NAN, |f| f.p_beyond(margin))).collect();
    let mut slower = vec![false; times.len()];
    for (&i, p) in judged.iter().zip(holm(&beyond)) {
        slower[i] = p < alpha;
    }
    let mut standings: Vec<Standing> = vec![Standing::In; times.len()];
    let mut left = vec![leader];
    let mut all_equivalent = true;
    for (i, given) in times.iter().enumerate() {
        if i == leader || given.is_none() {
            continue;
        }
        match against[i] {
            Some(f) if slower[i] => standings[i] = Standing::Out(f),
            Some(f) => {
                left.push(i);
                all_equivalent &= f.equivalent(margin);
            }
            // One run, or no factor: still in, and undecided.
            None => {
                left.push(i);
                all_equivalent = false;
            }
        }
    }
    let decision = match left.len() {
        1 => Decision::Won(leader),
        _ if all_equivalent => Decision::Tied(left),
        _ => Decision::Open,
    };
    Some(Round { standings, leader, decision })
}

/// Above this run-to-run noise (the upper end of the 95 % interval of the goal's pooled
/// coefficient of variation, `significance::cv_upper`), a candidate with fewer than
/// [`NOISY_RUNS`] runs cannot settle a goal, in the race ([`answer_open`]) as in the
/// Answer's certainty line: at high noise the race can drop the true best after a few
/// unlucky runs, and its final runs are those. At 15 % the simulation's "clearly" was
/// wrong in at most 1.9 % of its verdicts (docs/racing.md, "The error a user sees").
pub const NOISY_CV: f64 = 0.20;

/// The runs a candidate needs to settle a goal above [`NOISY_CV`] ([`thin`]). At 30 %
/// noise (30,000 simulated races of five cases, docs/racing.md), "clearly" was wrong in
/// 4.6 % of its verdicts (49 of 1,056); with 4 runs, and every candidate under them held
/// thin, 6.5 % (21 of 321 of 10,000): the runs the rule adds are more looks.
pub const NOISY_RUNS: usize = 6;

/// Whether a candidate with `runs` runs, compared with the pick by a factor (its time
/// over the pick's) whose 99 % interval starts at `low99`, is too thinly measured to
/// settle a goal whose noise may be above [`NOISY_CV`]: fewer than [`NOISY_RUNS`] runs,
/// and not shown slower at 99 %. The wrongly dropped best is such a case; one shown 3x
/// slower after two runs is not, and waiting for its runs would hold open every goal of
/// many candidates (a disk's "durable at the end" has about 80). Where the 99 % interval
/// had to reach only 1/(1 + margin), "clearly" was wrong as often (19 of 342 at 30 %
/// noise).
pub fn thin(low99: f64, runs: usize) -> bool {
    runs < NOISY_RUNS && low99 < 1.0
}

/// Whether the Answer would call a goal settled now (docs/racing.md, "A race that can
/// end"): its pick, the first of `order` (the candidates simplest first, positions in
/// `times`; the leader where the goal has no such order) still in the race (`in_race`)
/// and shown at most the margin slower than the `leader`, against every candidate, in
/// the race or out, by the Answer's test (the noise pooled over them all, 95 %,
/// uncorrected): no lower end of a candidate's time over the pick's below 1/(1 +
/// margin). The rule of the certainty line (docs/answer.md), so that a race ends when
/// the Answer is sure though candidates within the margin are left.
pub fn settled_for_the_answer(
    times: &[Vec<f64>],
    in_race: &[bool],
    leader: usize,
    order: Option<&[usize]>,
    margin: f64,
) -> bool {
    answer_open(times, in_race, leader, order, margin).is_some_and(|(_, open)| open.is_empty())
}

/// The Answer's pick as [`settled_for_the_answer`] finds it, and the candidates that keep
/// it open: neither shown slower than the pick nor shown within the margin of it (or
/// too thinly measured at this noise, [`thin`]), the one that may gain the most (the
/// lowest lower end of its time over the pick's) first. These are the runs that can settle the goal
/// (docs/racing.md, "A race that can end"): a candidate already shown slower, or within
/// the margin, needs none, whether it is in the race or out. None where no noise can be
/// pooled yet.
pub fn answer_open(
    times: &[Vec<f64>],
    in_race: &[bool],
    leader: usize,
    order: Option<&[usize]>,
    margin: f64,
) -> Option<(usize, Vec<usize>)> {
    let (cv2, df) = pooled_cv2(times.iter().map(Vec::as_slice).filter(|t| t.len() >= 2))?;
    let factor = |a: usize, b: usize| pooled_factor(&times[a], &times[b], cv2, df);
    let noisy = cv_upper(cv2, df) > NOISY_CV;
    let contends = |k: usize| k == leader || (in_race[k] && factor(k, leader).is_some_and(|f| f.non_inferior(margin)));
    let pick = order.and_then(|order| order.iter().copied().find(|&k| contends(k))).unwrap_or(leader);
    let mut open: Vec<(usize, f64)> = (0..times.len())
        .filter(|&k| k != pick)
        .filter_map(|k| match factor(k, pick) {
            Some(f) if f.low >= 1.0 / (1.0 + margin) && !(noisy && thin(f.low_at(0.01), times[k].len())) => None,
            Some(f) => Some((k, f.low)),
            None => Some((k, 0.0)),
        })
        .collect();
    open.sort_by(|a, b| a.1.total_cmp(&b.1));
    Some((pick, open.into_iter().map(|(k, _)| k).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_xoshiro::Xoshiro256PlusPlus;
    use rand_xoshiro::rand_core::{Rng, SeedableRng};

    /// A run time of mean `mean` with a coefficient of variation of about `noise`
    /// (log-normal, as run times are: never negative, a longer tail up).
    fn draw(random: &mut Xoshiro256PlusPlus, mean: f64, noise: f64) -> f64 {
        let uniform = |random: &mut Xoshiro256PlusPlus| (random.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let (u, v) = (uniform(random).max(1e-12), uniform(random));
        let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
        mean * (noise * z - noise * noise / 2.0).exp()
    }

    fn samples(means: &[f64], noise: f64, n: usize, random: &mut Xoshiro256PlusPlus) -> Vec<Vec<f64>> {
        means.iter().map(|&m| (0..n).map(|_| draw(random, m, noise)).collect()).collect()
    }

    fn run_round(times: &[Vec<f64>], out: &[bool], margin: f64) -> Round {
        let given: Vec<Option<&[f64]>> =
            times.iter().zip(out).map(|(t, &o)| if o { None } else { Some(t.as_slice()) }).collect();
        let all: Vec<&[f64]> = times.iter().map(Vec::as_slice).collect();
        round(&given, &all, RACE_ALPHA, margin).unwrap()
    }

    /// The race holds a goal open where the Answer would: at a noise that may be above
    /// 20 %, a candidate shown slower (95 %) with fewer than NOISY_RUNS runs, whose 99 %
    /// interval does not show it slower, keeps it open (and gets runs); with the runs, or
    /// shown slower at 99 % too, it does not.
    #[test]
    fn a_candidate_with_too_few_runs_at_high_noise_keeps_the_race_open() {
        // Runs at a 30 % spread: the pick's and a second candidate's about 1, a third's
        // `mean` times that.
        let spread = [0.7, 1.3, 1.0, 0.75, 1.25, 1.0];
        let runs = |mean: f64, n: usize| -> Vec<f64> { (0..n).map(|i| mean * spread[i % spread.len()]).collect() };
        let open_with = |third: Vec<f64>| {
            let times = vec![runs(1.0, 12), runs(1.0, 12), third];
            let (pick, open) = answer_open(&times, &[true; 3], 0, None, 0.05).unwrap();
            assert_eq!(pick, 0);
            let (cv2, df) = pooled_cv2(times.iter().map(Vec::as_slice)).unwrap();
            assert!(cv_upper(cv2, df) > NOISY_CV, "noisy");
            let factor = pooled_factor(&times[2], &times[0], cv2, df).unwrap();
            (open.contains(&2), factor.low, factor.low_at(0.01))
        };
        let (open, low, low99) = open_with(runs(1.6, 3));
        assert!(low > 1.0 && low99 < 1.0, "shown slower at 95 %, not at 99 %: {low} {low99}");
        assert!(open, "3 runs: too few to tell");
        assert!(!open_with(runs(1.6, NOISY_RUNS)).0, "{NOISY_RUNS} runs settle it");
        let (open, _, low99) = open_with(runs(3.0, 2));
        assert!(low99 > 1.0 && !open, "3x slower, shown at 99 % after two runs: no doubt ({low99})");
    }

    #[test]
    fn a_clear_winner_is_decided_after_three_runs() {
        let mut random = Xoshiro256PlusPlus::seed_from_u64(1);
        let times = samples(&[1.0, 2.4, 3.0], 0.05, 3, &mut random);
        let round = run_round(&times, &[false; 3], 0.05);
        assert_eq!(round.leader, 0);
        assert_eq!(round.decision, Decision::Won(0));
        let Standing::Out(slower) = &round.standings[1] else { panic!("{round:?}") };
        assert!((slower.factor - 2.4).abs() < 0.3, "{slower:?}");
    }

    #[test]
    fn an_equivalent_pair_is_tied_and_a_close_one_stays_open() {
        let same: Vec<Vec<f64>> = vec![vec![1.0, 1.01, 0.99, 1.0, 1.005], vec![1.002, 0.998, 1.01, 0.995, 1.0]];
        let round = run_round(&same, &[false; 2], 0.05);
        assert!(matches!(round.decision, Decision::Tied(ref left) if left.len() == 2), "{round:?}");
        let close: Vec<Vec<f64>> = vec![vec![1.0, 1.1, 0.9], vec![1.03, 1.15, 0.95]];
        let round = run_round(&close, &[false; 2], 0.05);
        assert_eq!(round.decision, Decision::Open, "3 runs at 10 % noise cannot tell 3 % apart");
        assert!(round.standings.iter().all(|s| *s == Standing::In));
    }

    /// Non-inferiority: a candidate shown 2 % slower on precise runs lies within the 5 %
    /// margin and stays (the Answer may recommend it for being simpler); one shown 20 %
    /// slower leaves.
    #[test]
    fn a_case_shown_slower_within_the_margin_is_not_dropped() {
        let mut random = Xoshiro256PlusPlus::seed_from_u64(7);
        let times = samples(&[1.0, 1.02, 1.20], 0.002, 10, &mut random);
        let round = run_round(&times, &[false; 3], 0.05);
        assert_eq!(round.leader, 0);
        let all: Vec<&[f64]> = times.iter().map(Vec::as_slice).collect();
        let (_, against) = against_leader(&all.iter().map(|&t| Some(t)).collect::<Vec<_>>(), &all).unwrap();
        assert!(against[1].unwrap().significant(), "2 % slower is shown: {against:?}");
        assert_eq!(round.standings[1], Standing::In, "{round:?}");
        assert!(matches!(round.standings[2], Standing::Out(_)), "{round:?}");
        assert_eq!(round.decision, Decision::Tied(vec![0, 1]), "within ±5 % of each other: tied");
    }

    #[test]
    fn a_candidate_out_before_stays_out_and_one_run_is_not_judged() {
        let times = vec![vec![1.0, 1.0, 1.01], vec![5.0, 5.0, 5.1], vec![1.0]];
        let judged = run_round(&times, &[false, true, false], 0.05);
        assert_eq!(judged.standings[1], Standing::In, "not judged again: the caller keeps it out");
        assert_eq!(judged.decision, Decision::Open, "the one-run candidate is still undecided");
        assert!(round(&[Some(&[1.0][..]), None], &[&[1.0][..]], RACE_ALPHA, 0.05).is_none());
    }

    /// The error rate of the rule as `run` applies it: two runs each, then a look after
    /// every round of one more run per candidate still in, up to ten runs. Over 1,000
    /// seeded races of five candidates whose means are 0 %, 3 %, 10 %, 30 % and 100 %
    /// above the best, at 8 % noise, the true best must leave the race in at most 5 % of
    /// them; so must one of two equal bests, and the best of a large field (40
    /// candidates), and a best whose runs are three times noisier than the others'.
    /// With `--nocapture` it prints the table of docs/racing.md.
    #[test]
    fn the_true_best_leaves_the_race_in_at_most_five_percent_of_simulated_races() {
        // `tail`: the share of runs that take twenty times as long (a journal commit, as
        // on a disk).
        fn dropped_best(alpha: f64, means: &[f64], noises: &[f64], tail: f64, races: u64) -> (f64, f64) {
            let mut dropped = 0;
            let mut runs = 0;
            for seed in 0..races {
                let mut random = Xoshiro256PlusPlus::seed_from_u64(seed);
                let one = |random: &mut Xoshiro256PlusPlus, i: usize| {
                    let slow = ((random.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < tail;
                    draw(random, means[i], noises[i]) * if slow { 20.0 } else { 1.0 }
                };
                let mut times: Vec<Vec<f64>> =
                    (0..means.len()).map(|i| (0..2).map(|_| one(&mut random, i)).collect()).collect();
                let mut out = vec![false; means.len()];
                for looked in 2..=10 {
                    let given: Vec<Option<&[f64]>> =
                        times.iter().zip(&out).map(|(t, &o)| if o { None } else { Some(t.as_slice()) }).collect();
                    let all: Vec<&[f64]> = times.iter().map(Vec::as_slice).collect();
                    let round = round(&given, &all, alpha, 0.05).unwrap();
                    for (i, standing) in round.standings.iter().enumerate() {
                        out[i] |= matches!(standing, Standing::Out(_));
                    }
                    if round.decision != Decision::Open || looked == 10 {
                        break;
                    }
                    for (i, t) in times.iter_mut().enumerate().filter(|(i, _)| !out[*i]) {
                        t.push(one(&mut random, i));
                    }
                }
                dropped += u32::from(out[0]);
                runs += times.iter().map(Vec::len).sum::<usize>();
            }
            (f64::from(dropped) / races as f64, runs as f64 / races as f64)
        }
        let even = |means: &[f64]| vec![0.08; means.len()];
        let spread = [1.0, 1.03, 1.10, 1.30, 2.0];
        let pair = [1.0, 1.0, 1.2];
        let field: Vec<f64> = std::iter::once(1.0).chain((0..39).map(|i| 1.0 + 0.05 * f64::from(i))).collect();
        let mut noisy_best = even(&spread);
        noisy_best[0] = 0.24;
        let scenarios: [(&str, &[f64], Vec<f64>, f64); 8] = [
            ("spread", &spread, even(&spread), 0.0),
            ("two equal bests", &pair, even(&pair), 0.0),
            ("close", &[1.0, 1.01, 1.02, 1.03, 1.04], even(&[0.0; 5]), 0.0),
            ("five equal", &[1.0; 5], even(&[0.0; 5]), 0.0),
            ("a field of 40, two equal bests", &field, even(&field), 0.0),
            ("spread, the best three times noisier", &spread, noisy_best, 0.0),
            ("spread, one run in 50 twenty times as long", &spread, even(&spread), 0.02),
            ("a field of 40, one run in 50 twenty times as long", &field, even(&field), 0.02),
        ];
        for (name, means, noises, tail) in &scenarios {
            let (rate, runs) = dropped_best(RACE_ALPHA, means, noises, *tail, 1000);
            let without = 10 * means.len();
            eprintln!(
                "{name}: best dropped in {:.1} % of races, {runs:.1} runs a race ({without} without racing)",
                rate * 100.0
            );
            assert!(rate <= 0.05, "{name}: the true best left {:.1} % of the races", rate * 100.0);
            if *name == "spread" {
                assert!(runs < 40.0, "racing saves runs: {runs:.1} a race against 50");
            }
        }
        for (name, means, noises, tail) in &scenarios {
            let (rate, runs) = dropped_best(0.05, means, noises, *tail, 1000);
            eprintln!("at 0.05 a round, {name}: best dropped {:.1} %, {runs:.1} runs", rate * 100.0);
        }
    }

    /// A candidate with more runs than another is ranked by its mean time, not its total.
    #[test]
    fn the_leader_is_the_lowest_mean_whatever_the_runs() {
        let four = [1.0, 1.01, 0.99, 1.0];
        let two = [1.5, 1.52];
        let (leader, against) = against_leader(&[Some(&two[..]), Some(&four[..])], &[&two[..], &four[..]]).unwrap();
        assert_eq!(leader, 1);
        assert!((against[0].unwrap().factor - 1.51).abs() < 0.01, "{against:?}");
    }
}
