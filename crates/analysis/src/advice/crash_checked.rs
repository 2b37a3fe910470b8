//! What the result's crash checks (docs/crash.md) say of each durable recommendation:
//! "crash-checked on ext4 (defaults): 24 states, none broken", or a warning where the
//! recommended mode broke its promise in a simulated power loss on this filesystem with
//! these mount options. A durable figure is then one writebench has seen survive.

use plan::crash::workload_of;
use result::crash::CrashCheck;
use result::{CrashChecked, Recommendation, ResultFile};

/// Adds the crash check of each recommendation's case, where the result has one.
pub fn annotate(result: &ResultFile, answer: &mut [Recommendation]) {
    if result.crash.is_empty() {
        return;
    }
    for recommendation in answer {
        let Some(case) = result.cases.iter().find(|c| c.case.id == recommendation.best.case) else { continue };
        let Some(workload) = workload_of(&case.case) else { continue };
        let checks: Vec<&CrashCheck> =
            result.crash.iter().filter(|c| c.workload == workload && c.refused.is_none() && c.states > 0).collect();
        let Some(first) = checks.first() else { continue };
        let states = checks.iter().map(|c| c.states).sum();
        let broken = checks.iter().map(|c| c.broken).sum();
        let options = if first.mount_options.is_empty() { "defaults" } else { &first.mount_options };
        let place = format!("{} ({options})", first.fs);
        recommendation.text += &if broken == 0 {
            format!("; crash-checked on {place}: {states} states, no broken promise found")
        } else {
            format!(
                "; warning: {workload} broke its promise in {broken} of {states} simulated power losses on {place} \
                 (docs/crash.md)"
            )
        };
        recommendation.crash_checked = Some(CrashChecked { workload, states, broken });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advice::testkit::{Build, around, case, goal};

    fn check(workload: &str, states: usize, broken: usize) -> CrashCheck {
        CrashCheck {
            fs: "ext4".into(),
            mount_options: if broken > 0 { "barrier=0".into() } else { String::new() },
            workload: workload.into(),
            refused: None,
            writes: 10,
            flushes: 4,
            promises: 1,
            states,
            repairs: 0,
            broken,
            examples: Vec::new(),
            repair_example: None,
            seconds: 0.1,
            ..CrashCheck::default()
        }
    }

    #[test]
    fn a_durable_recommendation_says_what_its_crash_check_found_and_a_buffered_one_nothing() {
        let mut result = Build::new()
            .add(case("pwrite empty 1MiB t1 none"), &around(0.5))
            .synced(case("pwrite empty 1MiB t1 end"), &around(0.5), &around(0.2))
            .done();
        result.crash = vec![check("end", 24, 0)];
        let mut answer = crate::advice::recommendations(&result);
        let durable = goal(&answer, "durable-at-end");
        assert!(
            durable.text.ends_with("; crash-checked on ext4 (defaults): 24 states, no broken promise found"),
            "{}",
            durable.text
        );
        assert_eq!(durable.crash_checked, Some(CrashChecked { workload: "end".into(), states: 24, broken: 0 }));
        assert!(goal(&answer, "fastest").crash_checked.is_none());
        result.crash = vec![check("end", 5, 4)];
        answer = crate::advice::recommendations(&result);
        let warned = goal(&answer, "durable-at-end");
        assert!(
            warned.text.ends_with(
                "; warning: end broke its promise in 4 of 5 simulated power losses on ext4 (barrier=0) (docs/crash.md)"
            ),
            "{}",
            warned.text
        );
    }
}
