//! Doubts that bear on a goal's own figure, said on the goal's own lines (docs/answer.md,
//! "At a glance"), not only among the observations, which are cut at five: a pick whose
//! runs are noisy (its figure is one draw of a wide spread), and a pick whose runs found
//! their memory made ready first (this machine gives freed memory back to its host, and
//! writebench touches it before each run, untimed: a program writing after a pause pays
//! that inside its writes). The figure above the device's or memory's rate has its own
//! warning (`glance::mark_above_device`).

use super::figures::Figures;
use super::figures::Metric;
use super::words::seconds;
use result::{Recommendation, ResultFile};
use stats::Summarize;
use stats::Summary;
use stats::race::NOISY_CV;

/// Adds the noisy warning and the warmed-memory caveat to each goal whose pick has them.
pub fn annotate(result: &ResultFile, answer: &mut [Recommendation]) {
    for recommendation in answer.iter_mut() {
        let Some(case) = result.cases.iter().find(|c| c.case.id == recommendation.best.case) else { continue };
        let Some(glance) = recommendation.glance.as_mut().filter(|g| g.not_applicable.is_none()) else { continue };
        let metric = Metric::ALL.into_iter().find(|m| m.name() == recommendation.best.metric);
        let runs = metric.and_then(|m| m.times(case)).as_deref().and_then(Summary::of);
        if let Some(runs) = runs.filter(|runs| runs.cv() > NOISY_CV) {
            glance.warnings.push(format!(
                "noisy: its {} runs vary by {:.0} % (one standard deviation): trust the range, not the figure",
                runs.n,
                100.0 * runs.cv()
            ));
        }
        let warmed = case.runs.iter().filter_map(|run| run.warm_seconds).fold(0.0, f64::max);
        if warmed > 0.0 {
            glance.caveats.push(format!(
                "each run found its memory ready: writebench touched it first, untimed (up to {} a run), since this \
                 machine gives freed memory back to its host; a program writing after a pause pays that in its writes",
                seconds(warmed)
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::advice::recommendations;
    use crate::advice::testkit::{Build, around, case, goal};

    #[test]
    fn a_noisy_pick_says_so_on_its_goal_and_a_calm_one_does_not() {
        let warnings = |runs: &[f64]| {
            let result = Build::new()
                .add(case("pwrite empty 1MiB t1 none"), runs)
                .add(case("write empty 4KiB t1 none"), &around(1.0))
                .done();
            goal(&recommendations(&result), "fastest").glance.clone().unwrap().warnings
        };
        let noisy = warnings(&[0.2, 0.3, 0.45, 0.25, 0.3]);
        assert!(
            noisy.iter().any(|w| w.starts_with("noisy: its 5 runs vary by 31 % (one standard deviation)")),
            "{noisy:?}"
        );
        let calm = warnings(&around(0.3));
        assert!(calm.iter().all(|w| !w.starts_with("noisy")), "{calm:?}");
    }

    #[test]
    fn a_pick_whose_memory_was_touched_first_says_how_long_it_took() {
        let mut result = Build::new()
            .add(case("pwrite empty 1MiB t1 none"), &around(0.3))
            .add(case("write empty 4KiB t1 none"), &around(1.0))
            .done();
        for (i, run) in result.cases[0].runs.iter_mut().enumerate() {
            run.warm_seconds = Some(0.002 * (i + 1) as f64);
        }
        let caveats = goal(&recommendations(&result), "fastest").glance.clone().unwrap().caveats;
        assert!(
            caveats
                .iter()
                .any(|c| c.starts_with("each run found its memory ready") && c.contains("up to 10.0 ms a run")),
            "{caveats:?}"
        );
        result.cases[0].runs.iter_mut().for_each(|run| run.warm_seconds = None);
        let caveats = goal(&recommendations(&result), "fastest").glance.clone().unwrap().caveats;
        assert!(caveats.iter().all(|c| !c.starts_with("each run found")), "{caveats:?}");
    }
}
