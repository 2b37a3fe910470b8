//! Whether preallocating pays once its cost is counted (docs/answer.md, "At a glance"):
//! a new-file goal's pick is set beside its twin in the other state (an empty file for
//! a preallocated pick, a preallocated one for an empty pick: the same method, chunk,
//! threads and mode), both on the goal's new-file figure, the `fallocate` counted, by
//! the goals' own test. Said under the goal's lines (the caveats: the Markdown, the HTML
//! and `--explain`), since an observation that a preallocated file is faster "not
//! counting the preallocation" does not say what a program creating the file gets.

use super::figures::{Measured, Side, test};
use super::words::{factor_range, gbps};
use plan::FileState;
use result::Recommendation;

/// Adds to each new-file goal whose pick has a twin in the other state whether
/// preallocating paid.
pub fn annotate(measured: &Measured, answer: &mut [Recommendation]) {
    for recommendation in answer.iter_mut() {
        // The goals that rank a new file, with the figure each ranks it by.
        let Some(metric) = result::goals::by_key(&recommendation.goal).filter(|g| g.new_file()).map(|g| g.metric)
        else {
            continue;
        };
        let Some(pick) = measured.cases.iter().copied().find(|c| c.case.id == recommendation.best.case) else {
            continue;
        };
        let other = match pick.case.state {
            FileState::Prealloc => FileState::Empty,
            FileState::Empty => FileState::Prealloc,
            _ => continue,
        };
        let Some(twin) = measured.twin(pick, |dims| dims.state = other) else { continue };
        let (preallocated, empty) = if other == FileState::Empty { (pick, twin) } else { (twin, pick) };
        let (pre, plain) = (Side::new(preallocated, metric), Side::new(empty, metric));
        // The empty file's time over the preallocated one's: above 1 where preallocating pays.
        let Some(t) = test(plain, pre) else { continue };
        let verdict = if t.factor.low > 1.0 {
            "preallocating pays, its fallocate counted"
        } else if t.factor.high < 1.0 {
            "preallocating does not pay once its fallocate is counted"
        } else {
            "preallocating is not shown to pay or to cost, its fallocate counted"
        };
        let Some(glance) = recommendation.glance.as_mut() else { continue };
        glance.caveats.push(format!(
            "{verdict}: {} preallocated against {} into an empty file ({})",
            gbps(pre.mean()),
            gbps(plain.mean()),
            factor_range(&t.factor)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advice::testkit::{Build, around, case, goal};

    /// A preallocated file written in 0.20 s after a 0.05 s fallocate, against an empty
    /// one in 0.30 s: it pays (0.30/0.25); with a 0.15 s fallocate it does not (0.35
    /// against 0.30); the empty pick of the second says so of its own twin.
    #[test]
    fn a_new_file_goal_says_whether_preallocating_pays_once_counted() {
        let said = |fallocate: f64| {
            let result = Build::new()
                .add(case("write prealloc 1MiB t1 none"), &around(0.20))
                .prepared(Some(&[fallocate; 5]), 0.0)
                .add(case("write empty 1MiB t1 none"), &around(0.30))
                .done();
            let mut answer = crate::advice::recommendations(&result);
            answer.iter_mut().for_each(|r| r.glance.iter_mut().for_each(|g| g.caveats.clear()));
            annotate(&Measured::of(&result), &mut answer);
            let fastest = goal(&answer, "fastest");
            (fastest.best.case.clone(), fastest.glance.as_ref().unwrap().caveats.clone())
        };
        let (pick, caveats) = said(0.05);
        assert_eq!(pick, "write prealloc 1MiB t1 none");
        assert_eq!(caveats.len(), 1, "{caveats:?}");
        assert!(caveats[0].starts_with("preallocating pays, its fallocate counted: 4.29 GB/s preallocated against 3.58 GB/s into an empty file (1.20x"), "{}", caveats[0]);
        let (pick, caveats) = said(0.15);
        assert_eq!(pick, "write empty 1MiB t1 none");
        assert!(
            caveats[0].starts_with("preallocating does not pay once its fallocate is counted: 3.07 GB/s preallocated"),
            "{}",
            caveats[0]
        );
    }
}
