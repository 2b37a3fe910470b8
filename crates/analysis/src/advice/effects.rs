//! One dimension changed across many matched pairs of cases: the file's state against
//! an empty file, O_DIRECT against the page cache, io_uring against pwrite, mmap against
//! write. Each is a family of tests, corrected together with Holm's method, and said in
//! one line per direction: how many of the matched cases changed, by how much, and the
//! case where it changed most.

use std::collections::BTreeMap;

use super::figures::{Finding, Measured, Metric, Side, Test, family, holm_adjusted, test};
use super::words::{Token, direction, factor, gbps_change, id_without, mode, p_value, state};
use plan::catalog::Family;
use plan::durability::Commit;
use plan::{Case, Durability, FileState, Pages};

/// One line per direction that has significant tests after Holm's correction over the
/// family: "`subject`: 1.10–1.60x faster in 5 of 9 cases; most `tag`: 1.20 → 1.92 GB/s
/// (p < 0.001)", where `tag` names the case of the largest change. The figures are the
/// means (bytes / mean time), whose ratio is the factor; the p is Holm's adjusted one.
/// A test whose whole interval lies within ±`margin` is no effect at that margin, shown
/// or not (docs/answer.md, "Tied, undecided, faster"), and is not counted as one.
pub fn aggregate(
    kind: &str,
    subject: &str,
    tests: Vec<Test>,
    tag: &dyn Fn(&Case) -> String,
    margin: f64,
) -> Vec<Finding> {
    let adjusted = holm_adjusted(&tests);
    let mut findings = Vec::new();
    for gain in [true, false] {
        let mut these: Vec<&Test> =
            adjusted.iter().filter(|t| t.significant() && !t.factor.equivalent(margin) && t.gain() == gain).collect();
        if these.is_empty() {
            continue;
        }
        these.sort_by(|a, b| b.score().total_cmp(&a.score()));
        let most = these[0];
        let (largest, smallest) = (most.oriented().0, these[these.len() - 1].oriented().0);
        let range = if factor(largest) == factor(smallest) {
            factor(largest)
        } else {
            format!("{}–{}", factor(smallest).trim_end_matches('x'), factor(largest))
        };
        let text = format!(
            "{subject}: {range} {} in {} of {} cases; most {}: {} ({})",
            direction(most),
            these.len(),
            tests.len(),
            tag(&most.to.case.case),
            gbps_change(most.from.mean(), most.to.mean()),
            p_value(most.factor.p)
        );
        let mut figures = Vec::new();
        for figure in these.iter().flat_map(|t| t.figures()) {
            if !figures.contains(&figure) {
                figures.push(figure);
            }
        }
        findings.push(Finding::new(kind, text, figures, Some(most.comparison()), most.score()));
    }
    findings
}

/// Sparse, preallocated and fully written files against an empty one.
pub fn states(measured: &Measured) -> Vec<Finding> {
    let mut findings = Vec::new();
    for to in [FileState::Sparse, FileState::Prealloc, FileState::Overwrite] {
        let tests: Vec<Test> = measured
            .cases
            .iter()
            .filter(|c| c.case.state == to)
            .filter_map(|&c| {
                let empty = measured.twin(c, |d| d.state = FileState::Empty)?;
                test(Side::new(empty, Metric::Buffered), Side::new(c, Metric::Buffered))
            })
            .collect();
        // The writes alone, where the Answer's new-file goals count the preparation too
        // (docs/answer.md): said, so that a preallocated file "2x faster" here does not
        // read as a contradiction of an Answer that recommends an empty one.
        let unit = if to == FileState::Prealloc { ", not counting the preallocation" } else { "" };
        let subject = format!("{} vs an empty one{unit}", state(to));
        findings.extend(aggregate("state", &subject, tests, &|c| id_without(c, &[Token::State]), measured.margin));
    }
    findings
}

/// O_DIRECT against the same commit through the page cache: durable figures where the
/// mode syncs (that is what O_DIRECT is chosen for), buffered ones where it does not.
pub fn direct(measured: &Measured) -> Vec<Finding> {
    let mut families: BTreeMap<Durability, Vec<Test>> = BTreeMap::new();
    for &case in measured.cases.iter().filter(|c| c.case.durability.direct) {
        let cached = Durability { direct: false, ..case.case.durability };
        let Some(twin) = measured.twin(case, |d| d.durability = cached) else { continue };
        let metric = if cached.syncs() { Metric::Durable } else { Metric::Buffered };
        families.entry(cached).or_default().extend(test(Side::new(twin, metric), Side::new(case, metric)));
    }
    let mut findings = Vec::new();
    for (cached, tests) in families {
        let subject = match cached.commit {
            Commit::None => "O_DIRECT vs the page cache".to_string(),
            _ => format!("O_DIRECT vs the page cache, with {}, durable", mode(cached)),
        };
        findings.extend(aggregate(
            "direct",
            &subject,
            tests,
            &|c| id_without(c, &[Token::Durability]),
            measured.margin,
        ));
    }
    findings
}

/// A buffer in huge pages against the same case's ordinary one: what an O_DIRECT
/// write's request size is worth (plan::pages). Durable figures where the mode syncs,
/// buffered ones where it does not, as for O_DIRECT.
pub fn pages(measured: &Measured) -> Vec<Finding> {
    let tests: Vec<Test> = measured
        .cases
        .iter()
        .filter(|c| c.case.pages == Pages::Huge)
        .filter_map(|&case| {
            let ordinary = measured.twin(case, |c| c.pages = Pages::Ordinary)?;
            let metric = if case.case.durability.syncs() { Metric::Durable } else { Metric::Buffered };
            test(Side::new(ordinary, metric), Side::new(case, metric))
        })
        .collect();
    let subject = "a buffer in huge pages vs ordinary pages";
    aggregate("pages", subject, tests, &|c| id_without(c, &[Token::Pages]), measured.margin)
}

/// io_uring (each variant and depth) against pwrite, the blocking call with offsets.
pub fn io_uring(measured: &Measured) -> Vec<Finding> {
    let mut families: BTreeMap<(String, Option<u32>), Vec<Test>> = BTreeMap::new();
    for &case in measured.cases.iter().filter(|c| family(&c.case.method) == Some(Family::Asynchronous)) {
        let Some(pwrite) = measured.twin(case, |d| (d.method, d.queue_depth) = ("pwrite".into(), None)) else {
            continue;
        };
        let key = (case.case.method.clone(), case.case.queue_depth);
        families
            .entry(key)
            .or_default()
            .extend(test(Side::new(pwrite, Metric::Buffered), Side::new(case, Metric::Buffered)));
    }
    let mut findings = Vec::new();
    for ((method, depth), tests) in families {
        let cause = io_wq_cause(tests.iter().map(|t| t.to.case));
        let depth = depth.map(|d| format!(" ({d} in flight)")).unwrap_or_default();
        let subject = format!("{method}{depth} vs pwrite");
        let mut found = aggregate(
            "io_uring",
            &subject,
            tests,
            &|c| id_without(c, &[Token::Method, Token::QueueDepth]),
            measured.margin,
        );
        for finding in &mut found {
            finding.observation.text += cause.as_deref().unwrap_or_default();
        }
        findings.extend(found);
    }
    findings
}

/// Why io_uring is slow here, where it was measured: the share of the cases' write time
/// that io_uring's kernel worker threads (io-wq) spent on the CPU serving their requests
/// (`RingRecord::io_wq_cpu_seconds`). Above 5 %, the filesystem could not take a buffered
/// write without blocking, and the kernel handed each request to a worker: on this
/// machine's tmpfs and ext4 (kernel 6.18, 2026-11-29) 30–40 % of a 4 KiB run at one in
/// flight, which took 40 times pwrite's time.
///
/// An O_DIRECT write is handed over the same way where it cannot be taken at once (a
/// new or preallocated file's blocks to allocate or convert): the line names the kind
/// of write its cases made.
fn io_wq_cause<'a>(cases: impl Iterator<Item = &'a result::CaseResult>) -> Option<String> {
    let (mut worker, mut write) = (0.0, 0.0);
    // The kinds of write of the cases whose own workers passed the share.
    let (mut direct, mut buffered) = (false, false);
    for case in cases {
        let (mut case_worker, mut case_write) = (0.0, 0.0);
        for run in &case.runs {
            let Some(cpu) = run.ring.as_ref().and_then(|ring| ring.io_wq_cpu_seconds) else { continue };
            case_worker += cpu;
            case_write += run.write_seconds;
        }
        if case_write > 0.0 && case_worker / case_write > 0.05 {
            (direct, buffered) = (direct || case.case.durability.direct, buffered || !case.case.durability.direct);
        }
        (worker, write) = (worker + case_worker, write + case_write);
    }
    let kind = match (direct, buffered) {
        (true, false) => "an O_DIRECT write",
        (false, true) => "a buffered write",
        (true, true) => "a buffered or an O_DIRECT write",
        (false, false) => "these writes",
    };
    (write > 0.0 && worker / write > 0.05).then(|| {
        format!(
            "; the kernel handed its writes to io_uring's worker threads (io-wq), which spent {:.0} % of the write \
             time on the CPU: this filesystem cannot take {kind} without blocking",
            100.0 * worker / write
        )
    })
}

/// The mmap variants against write (pwrite where threads share one file, as write
/// cannot): durable figures where both sync, since a mapping's writeback waits for its
/// msync as a write's waits for its fsync, buffered ones otherwise.
pub fn mmap(measured: &Measured) -> Vec<Finding> {
    let mut families: BTreeMap<(String, String), Vec<Test>> = BTreeMap::new();
    for &case in measured.cases.iter().filter(|c| family(&c.case.method) == Some(Family::Mapped)) {
        let twin = ["write", "pwrite"]
            .into_iter()
            .find_map(|method| measured.twin(case, |d| (d.method, d.queue_depth) = (method.into(), None)));
        let Some(twin) = twin else { continue };
        let both_sync = case.durable_stats.is_some() && twin.durable_stats.is_some();
        let metric = if both_sync { Metric::Durable } else { Metric::Buffered };
        let key = (case.case.method.clone(), twin.case.method.clone());
        families.entry(key).or_default().extend(test(Side::new(twin, metric), Side::new(case, metric)));
    }
    let mut findings = Vec::new();
    for ((method, against), tests) in families {
        let subject = format!("{method} vs {against}");
        findings.extend(aggregate("mmap", &subject, tests, &|c| id_without(c, &[Token::Method]), measured.margin));
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advice::testkit::{Build, around, case};

    #[test]
    fn a_significant_preallocation_effect_is_said_and_an_insignificant_one_is_not() {
        let significant = Build::new()
            .add(case("pwrite empty 4KiB t1 end"), &around(1.6))
            .add(case("pwrite prealloc 4KiB t1 end"), &around(1.0))
            .add(case("pwrite empty 1MiB t1 end"), &around(1.0))
            .add(case("pwrite prealloc 1MiB t1 end"), &[1.0, 0.98, 1.03, 0.99, 1.01])
            .done();
        let findings = states(&Measured::of(&significant));
        assert_eq!(findings.len(), 1, "{findings:?}");
        let said = &findings[0].observation;
        assert_eq!(said.kind, "state");
        assert!(
            said.text.starts_with(
                "a preallocated file vs an empty one, not counting the preallocation: 1.60x faster in 1 of 2 cases; most pwrite 4KiB t1 end: 0.671 → 1.07 GB/s (p < 0.001)"
            ),
            "{}",
            said.text
        );
        let comparison = said.comparison.as_ref().unwrap();
        assert_eq!((comparison.better.as_str(), comparison.significant), ("pwrite prealloc 4KiB t1 end", true));
        assert_eq!(said.figures.len(), 2);

        let insignificant = Build::new()
            .add(case("pwrite empty 4KiB t1 end"), &around(1.0))
            .add(case("pwrite prealloc 4KiB t1 end"), &[1.0, 0.97, 1.04, 0.99, 1.0])
            .done();
        assert!(states(&Measured::of(&insignificant)).is_empty());
    }

    /// 2 % faster on calm runs is shown (p < 0.001) but lies within the 5 % margin: no
    /// effect at that margin, and not said as one; with a margin of 1 % it is.
    #[test]
    fn an_effect_within_the_margin_is_not_said_even_when_shown() {
        let result = Build::new()
            .add(case("pwrite empty 1MiB t1 end"), &around(1.0))
            .add(case("pwrite prealloc 1MiB t1 end"), &around(0.98))
            .done();
        let mut measured = Measured::of(&result);
        let shown =
            test(Side::new(measured.cases[0], Metric::Buffered), Side::new(measured.cases[1], Metric::Buffered))
                .unwrap();
        assert!(shown.significant() && shown.factor.equivalent(0.05), "{:?}", shown.factor);
        assert!(states(&measured).is_empty());
        measured.margin = 0.01;
        let said = states(&measured);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].observation.text.contains(": 1.02x faster in 1 of 1 cases"), "{}", said[0].observation.text);
    }

    #[test]
    fn holm_keeps_a_lone_p_of_0_04_among_many_from_being_said() {
        // One pair at p ≈ 0.04 alone would be significant; among 10 pairs it is not.
        let mut build = Build::new();
        for (index, chunk) in ["1KiB", "2KiB", "4KiB", "8KiB", "16KiB", "32KiB", "64KiB", "128KiB", "256KiB", "512KiB"]
            .into_iter()
            .enumerate()
        {
            let slower = if index == 0 { [1.06, 1.1, 1.0, 1.08, 1.04] } else { [1.0, 1.02, 0.98, 1.01, 0.99] };
            build = build
                .add(case(&format!("write empty {chunk} t1 none")), &slower)
                .add(case(&format!("write sparse {chunk} t1 none")), &[1.0, 1.02, 0.98, 1.01, 0.99]);
        }
        let result = build.done();
        let measured = Measured::of(&result);
        let first =
            test(Side::new(measured.cases[0], Metric::Buffered), Side::new(measured.cases[1], Metric::Buffered));
        let p = first.unwrap().factor.p;
        assert!(p < 0.05, "alone it would count: p = {p}");
        assert!(states(&measured).is_empty());
    }

    /// io_uring slower than pwrite names its cause where its worker threads were
    /// measured doing the writes, and only there.
    #[test]
    fn a_slow_io_uring_names_its_worker_threads_where_they_did_the_writes() {
        let said = |worker_cpu: f64| {
            let mut result = Build::new()
                .add(case("pwrite prealloc 4KiB t1 none"), &around(0.03))
                .add(case("io_uring prealloc 4KiB qd1 t1 none"), &around(1.0))
                .done();
            for run in &mut result.cases[1].runs {
                run.ring = Some(result::RingRecord { io_wq_cpu_seconds: Some(worker_cpu), ..Default::default() });
            }
            let uring = io_uring(&Measured::of(&result));
            assert_eq!(uring.len(), 1, "{uring:?}");
            uring[0].observation.text.clone()
        };
        let punted = said(0.35);
        assert!(punted.starts_with("io_uring (1 in flight) vs pwrite: 33x slower"), "{punted}");
        assert!(
            punted.ends_with(
                "; the kernel handed its writes to io_uring's worker threads (io-wq), which spent 35 % of the write \
                 time on the CPU: this filesystem cannot take a buffered write without blocking"
            ),
            "{punted}"
        );
        assert!(!said(0.01).contains("io-wq"), "1 % is no cause");
        // A family with an O_DIRECT case its workers did not serve still names the kind
        // they did serve.
        let mut result = Build::new()
            .add(case("pwrite prealloc 4KiB t1 none"), &around(0.03))
            .add(case("io_uring prealloc 4KiB qd1 t1 none"), &around(1.0))
            .add(case("pwrite prealloc 4KiB t1 direct"), &around(0.5))
            .add(case("io_uring prealloc 4KiB qd1 t1 direct"), &around(0.5))
            .done();
        for (index, cpu) in [(1, 0.35), (3, 0.0)] {
            for run in &mut result.cases[index].runs {
                run.ring = Some(result::RingRecord { io_wq_cpu_seconds: Some(cpu), ..Default::default() });
            }
        }
        let mixed = io_uring(&Measured::of(&result));
        assert!(mixed[0].observation.text.ends_with("cannot take a buffered write without blocking"), "{mixed:?}");
        // An O_DIRECT write handed over is said as one.
        let mut result = Build::new()
            .add(case("pwrite overwrite 4MiB t1 direct"), &around(0.03))
            .add(case("io_uring overwrite 4MiB qd16 t1 direct"), &around(0.06))
            .done();
        for run in &mut result.cases[1].runs {
            run.ring = Some(result::RingRecord { io_wq_cpu_seconds: Some(0.01), ..Default::default() });
        }
        let direct = io_uring(&Measured::of(&result));
        assert!(
            direct[0]
                .observation
                .text
                .ends_with("time on the CPU: this filesystem cannot take an O_DIRECT write without blocking"),
            "{direct:?}"
        );
    }

    #[test]
    fn io_uring_mmap_and_direct_against_their_blocking_twins() {
        let result = Build::new()
            .add(case("pwrite prealloc 4KiB t1 none"), &around(2.0))
            .add(case("io_uring prealloc 4KiB qd32 t1 none"), &around(1.0))
            .add(case("io_uring prealloc 4KiB qd1 t1 none"), &[2.0, 2.04, 1.96, 2.02, 1.98])
            .add(case("write sparse 1MiB t1 end"), &around(1.0))
            .synced(case("mmap sparse 1MiB t1 end"), &around(0.5), &around(1.5))
            .synced(case("pwrite empty 1MiB t1 end"), &around(1.0), &around(1.0))
            .synced(case("pwrite empty 1MiB t1 direct+end"), &around(1.5), &around(0.1))
            .done();
        let measured = Measured::of(&result);
        let uring = io_uring(&measured);
        assert_eq!(uring.len(), 1, "depth 1 is no different: {uring:?}");
        assert!(
            uring[0].observation.text.starts_with(
                "io_uring (32 in flight) vs pwrite: 2.0x faster in 1 of 1 cases; most prealloc 4KiB t1 none"
            ),
            "{}",
            uring[0].observation.text
        );
        // mmap's own write span is shorter, but with its msync it is 2x slower durable.
        let mapped = mmap(&measured);
        assert!(mapped[0].observation.text.starts_with("mmap vs write: 2.0x slower in 1 of 1 cases"), "{mapped:?}");
        assert!(mapped[0].observation.figures.iter().all(|f| f.metric == "durable"));
        let direct = direct(&measured);
        assert!(
            direct[0].observation.text.starts_with(
                "O_DIRECT vs the page cache, with one fsync at the end, durable: 1.25x faster in 1 of 1 cases"
            ),
            "{direct:?}"
        );
        assert!(pages(&measured).is_empty(), "no case in huge pages");
    }

    #[test]
    fn huge_pages_against_the_same_case_in_ordinary_pages_durable() {
        let result = Build::new()
            .synced(case("pwrite empty 1MiB t1 direct+end"), &around(1.5), &around(0.1))
            .synced(case("pwrite empty 1MiB t1 direct+end huge-pages"), &around(0.9), &around(0.1))
            .synced(case("write empty 1MiB t1 direct+end"), &around(1.5), &around(0.1))
            .synced(case("write empty 1MiB t1 direct+end huge-pages"), &around(1.5), &around(0.1))
            .done();
        let said = pages(&Measured::of(&result));
        assert_eq!(said.len(), 1, "{said:?}");
        let text = &said[0].observation.text;
        assert!(
            text.starts_with(
                "a buffer in huge pages vs ordinary pages: 1.60x faster in 1 of 2 cases; most pwrite empty 1MiB t1 \
                 direct+end:"
            ),
            "{text}"
        );
        assert!(said[0].observation.figures.iter().all(|f| f.metric == "durable"));
    }
}
