//! Many threads producing one file, set beside one writer (docs/answer.md, "At a
//! glance"): the threads goal picks the fastest way to write one file from several
//! threads, but a program that can write it from one thread should know when one is
//! faster. Where the "fastest" goal's pick (one writer, the same new-file figure) is
//! shown faster than the threads goal's pick, by the same test the goals use, the threads
//! goal says so on its own lines: "2 threads: 6.24 GB/s, slower than one writer's 9.93
//! GB/s (pwrite 1 MiB, empty): use one".

use super::figures::{Measured, Metric, Side, test};
use result::Recommendation;

/// Adds the warning to the threads goal's glance where one writer is shown faster.
pub fn annotate(measured: &Measured, answer: &mut [Recommendation]) {
    let case = |id: &str| measured.cases.iter().copied().find(|c| c.case.id == id);
    let pick = |goal: &str| answer.iter().find(|r| r.goal == goal).map(|r| r.best.case.clone());
    let (Some(one), Some(many)) = (pick("fastest"), pick("threads-one-file")) else { return };
    let (Some(one), Some(many)) = (case(&one), case(&many)) else { return };
    // Both goals rank a new file by its one span, preparation included.
    let (one_side, many_side) = (Side::new(one, Metric::NewFile), Side::new(many, Metric::NewFile));
    // The threads' time over the single writer's: above 1 where one writer is faster.
    let Some(t) = test(many_side, one_side) else { return };
    if t.factor.low <= 1.0 {
        return;
    }
    let Some(threads) = answer.iter_mut().find(|r| r.goal == "threads-one-file") else { return };
    let Some(glance) = threads.glance.as_mut() else { return };
    let gbps = super::words::gbps;
    glance.warnings.push(format!(
        "{} threads: {}, slower than one writer's {} ({}, {}): use one",
        many.case.threads,
        gbps(many_side.mean()),
        gbps(one_side.mean()),
        super::words::short(&one.case),
        super::words::factor_range(&t.factor)
    ));
}

#[cfg(test)]
mod tests {
    use crate::advice::recommendations;
    use crate::advice::testkit::{Build, around, case, goal};

    #[test]
    fn the_threads_goal_says_when_one_writer_is_faster_and_only_then() {
        let answer = |threads: f64| {
            let result = Build::new()
                .add(case("pwrite empty 1MiB t1 none"), &around(0.30))
                .add(case("pwrite empty 1MiB t2 none"), &around(threads))
                .add(case("write empty 4KiB t1 none"), &around(1.0))
                .done();
            goal(&recommendations(&result), "threads-one-file").glance.clone().unwrap().warnings
        };
        let slower = answer(0.48);
        assert_eq!(slower.len(), 1, "{slower:?}");
        assert!(
            slower[0]
                .starts_with("2 threads: 2.24 GB/s, slower than one writer's 3.58 GB/s (pwrite 1 MiB, empty, 1.60x"),
            "{slower:?}"
        );
        assert!(slower[0].ends_with("): use one"), "{slower:?}");
        assert!(answer(0.20).is_empty(), "two threads faster: nothing to say");
        assert!(answer(0.30).is_empty(), "not shown slower: nothing to say");
    }
}
