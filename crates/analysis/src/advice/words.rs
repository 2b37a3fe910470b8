//! How the advice writes its numbers and names its strategies: decimal GB/s with three
//! significant digits, factors like `1.8x` with their interval, p-values, durability
//! modes and file states in a programmer's words, and a case as a sentence to act on.

use plan::catalog::Family;
use plan::durability::Commit;
use plan::units::{format_size, format_size_compact};
use plan::{Case, Durability, FileState, Pages};

use super::figures::{Metric, Test, family};
pub use plan::numbers::{factor, gbps, micros, per_second, seconds, seconds_words, three_digits};

/// A change of throughput, from `before` to `after`: "1.07 → 1.93 GB/s".
pub fn gbps_change(before: f64, after: f64) -> String {
    format!("{} → {}", three_digits(before / 1e9), gbps(after))
}

/// A change of a goal's figure under `metric`, from `before` to `after`: "1.07 → 1.93
/// GB/s" for bytes, "3900 → 4100 commits/s" for a latency goal's operations.
pub fn rate_change(metric: Metric, before: f64, after: f64) -> String {
    if !metric.per_operation() {
        return gbps_change(before, after);
    }
    let unit = result::metric::reading(metric.name(), after).unit;
    format!("{} → {} {unit}", per_second(before), per_second(after))
}

/// The certainty line's verdict in the recommendation's sentence, with the comparison
/// it rests on (the same rule and the same candidate as the line, docs/answer.md):
/// "; clearly the fastest of 12 candidates: the closest, X, took 1.30x its time
/// (1.20–1.40x; 3.00 → 3.90 GB/s)", "; the other 11 candidates may not be more than 5 %
/// faster: the closest, X, 1.01x its time (…)", "; not settled among 12 candidates: X may be
/// up to 27 % faster (its time 1.10x the pick's, 0.79–4.40x; …)".
/// `pick` is the pick's figure under `metric`: each candidate named is said with the
/// change from its figure to the pick's, whose ratio is the factor beside it.
pub fn certainty_words(certainty: &result::glance::Certainty, metric: Metric, pick: f64) -> String {
    use result::glance::{Alternative, Certainty};
    let of = |a: &Alternative| {
        let change = rate_change(metric, a.value, pick);
        format!("{}, {:.2}x its time ({:.2}–{:.2}x; {change})", a.case, a.factor, a.low, a.high)
    };
    let all = certainty.against().len() + 1;
    match certainty {
        Certainty::Clear { next, .. } => {
            format!("; clearly the fastest of {all} candidates, each shown slower: the closest, {}", of(next))
        }
        Certainty::Leads { next, margin, .. } => format!(
            "; the fastest of {all} candidates, each shown slower, but the closest, {}, by less than {:.0} %: \
             either will do",
            of(next),
            margin * 100.0
        ),
        Certainty::AsFast { other, margin, .. } => format!(
            "; {} may not be more than {:.0} % faster: the closest, {}",
            if all == 2 { "the other candidate".to_string() } else { format!("the other {} candidates", all - 1) },
            margin * 100.0,
            of(other)
        ),
        Certainty::NotSettled { other, up_to, settle, .. } => {
            // Without an "up to", why there is none (its interval may even say slower: too
            // few runs at the goal's noise to trust it).
            let how = match (up_to, settle) {
                (Some(u), _) => format!("may be up to {:.0} % faster", 100.0 * u),
                (None, Some(why)) => format!("may be faster, {why}"),
                (None, None) => "may be faster".to_string(),
            };
            // An untested candidate's factor is a plain ratio: no range to give.
            let range =
                if other.low < other.high { format!(", {:.2}–{:.2}x", other.low, other.high) } else { String::new() };
            format!(
                "; not settled among {all} candidates: {} {how} (its time {:.2}x the pick's{range}; {})",
                other.case,
                other.factor,
                rate_change(metric, other.value, pick)
            )
        }
        Certainty::Alone => "; the only candidate measured".to_string(),
    }
}

/// `p = 0.04`, `p = 0.40`, `p = 0.004`, `p < 0.001`; a p just under 0.05 with the
/// digits that keep it there (`p = 0.0496`), so that "p = 0.05" is never printed for a
/// difference judged significant.
pub fn p_value(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".to_string()
    } else if p < 0.01 {
        format!("p = {p:.3}")
    } else if p < stats::significance::ALPHA && format!("{p:.2}") == "0.05" {
        format!("p = {p:.4}")
    } else {
        format!("p = {p:.2}")
    }
}

/// "1.60x, 1.02–1.12x": a factor and its interval as computed (not oriented), two
/// decimals each, for a sentence that brackets them itself.
pub fn factor_range(factor: &stats::significance::Factor) -> String {
    format!("{:.2}x, {:.2}–{:.2}x", factor.factor, factor.low, factor.high)
}

/// "1.8x (1.6–2.0x, p = 0.002)": the oriented factor of a test, its interval and p.
pub fn tested(test: &Test) -> String {
    let (f, low, high) = test.oriented();
    format!("{} ({}–{}, {})", factor(f), factor(low).trim_end_matches('x'), factor(high), p_value(test.factor.p))
}

/// "1.06x, 0.86–1.29x, p = 0.48": [`tested`] without its brackets, for a sentence that
/// brackets it itself.
pub fn tested_flat(test: &Test) -> String {
    let (f, _, _) = test.oriented();
    format!("{}, {}, {}", factor(f), interval(test), p_value(test.factor.p))
}

/// "0.95–1.27x": the interval of a test's oriented factor.
pub fn interval(test: &Test) -> String {
    let (_, low, high) = test.oriented();
    format!("{}–{}", factor(low).trim_end_matches('x'), factor(high))
}

/// "faster" or "slower": which way `to` went against `from`.
pub fn direction(test: &Test) -> &'static str {
    if test.gain() { "faster" } else { "slower" }
}

/// A durability mode as a noun: "one fsync at the end", "O_DSYNC", "page cache only".
pub fn mode(durability: Durability) -> String {
    let commit = match durability.commit {
        Commit::None if durability.direct => return "O_DIRECT".to_string(),
        Commit::None => "page cache only".to_string(),
        Commit::End(call) => format!("one {} at the end", call.name()),
        Commit::Every(1, call) => format!("an {} after every call", call.name()),
        Commit::Every(n, call) => format!("an {} every {n} calls", call.name()),
        Commit::OSync => "O_SYNC".to_string(),
        Commit::ODsync => "O_DSYNC".to_string(),
        Commit::RwfSync => "RWF_SYNC on every call".to_string(),
        Commit::RwfDsync => "RWF_DSYNC on every call".to_string(),
        Commit::WriteBehind(window) => format!("write-behind in {} windows", plan::units::format_size(window)),
        Commit::Save => "an fsync of the new file before the rename and of the directory after".to_string(),
    };
    if durability.direct { format!("O_DIRECT with {commit}") } else { commit }
}

/// The tail of a strategy's sentence for its durability: ", then one fdatasync".
/// `with_sync` false leaves the sync out (a buffered figure is timed before it).
fn mode_clause(durability: Durability, with_sync: bool) -> String {
    let mut clause = if durability.direct { ", opened with O_DIRECT".to_string() } else { String::new() };
    if with_sync {
        clause += &match durability.commit {
            Commit::None => String::new(),
            Commit::End(call) => format!(", then one {}", call.name()),
            Commit::Every(1, call) => format!(", with an {} after every call", call.name()),
            Commit::Every(n, call) => format!(", with an {} every {n} calls", call.name()),
            Commit::OSync if durability.direct => " and O_SYNC".to_string(),
            Commit::ODsync if durability.direct => " and O_DSYNC".to_string(),
            Commit::OSync => ", opened with O_SYNC".to_string(),
            Commit::ODsync => ", opened with O_DSYNC".to_string(),
            Commit::RwfSync => ", each call with RWF_SYNC".to_string(),
            Commit::RwfDsync => ", each call with RWF_DSYNC".to_string(),
            Commit::WriteBehind(window) => {
                format!(", writing back every {} behind it, then one fdatasync", plan::units::format_size(window))
            }
            Commit::Save => ", with an fsync of the new file before the rename and of the directory after".to_string(),
        };
    }
    clause
}

/// "a preallocated file"
pub fn state(state: FileState) -> &'static str {
    match state {
        FileState::Empty => "an empty file",
        FileState::Sparse => "a sparse file",
        FileState::Prealloc => "a preallocated file",
        FileState::Overwrite => "a fully written file",
    }
}

/// "preallocated files"
fn states(state: FileState) -> &'static str {
    match state {
        FileState::Empty => "empty files",
        FileState::Sparse => "sparse files",
        FileState::Prealloc => "preallocated files",
        FileState::Overwrite => "fully written files",
    }
}

/// A throughput case as a programmer would act on it: "pwrite in 1 MiB calls into a
/// preallocated file, then one fdatasync". `with_sync` as in [`mode_clause`].
pub fn strategy(case: &Case, with_sync: bool) -> String {
    let chunk = format_size(case.chunk_bytes);
    let calls = match family(&case.method) {
        Some(Family::Vectored) => format!("{} of {} x {chunk} per call", case.method, case.iov),
        Some(Family::Asynchronous) => {
            let depth = case.queue_depth.map(|d| format!(" ({d} in flight)")).unwrap_or_default();
            format!("{} in {chunk} writes{depth}", case.method)
        }
        Some(Family::Mapped) => format!("{} (MAP_SHARED), copied in {chunk} pieces", case.method),
        _ => format!("{} in {chunk} calls", case.method),
    };
    let threads = match (case.ranks.filter(|&r| r > 1), case.threads, case.files) {
        (Some(r), 1, 1) => format!(" from {r} ranks"),
        (Some(r), t, 1) => format!(" from {r} ranks of {t} threads"),
        (Some(r), 1, _) => format!(" from {r} ranks, a file each,"),
        (Some(r), t, _) => format!(" from {r} ranks of {t} threads, a file per rank,"),
        (None, 1, _) => String::new(),
        (None, n, 1) => format!(" from {n} threads"),
        (None, n, _) => format!(" from {n} threads, a file each,"),
    };
    let into = match (case.files, case.state) {
        (1, FileState::Overwrite) => " over a fully written file".to_string(),
        (1, state) => format!(" into {}", self::state(state)),
        (_, FileState::Overwrite) => " over fully written files".to_string(),
        (_, state) => format!(" into {}", states(state)),
    };
    let writers = case.threads * case.ranks.unwrap_or(1);
    let pages = match (case.pages, writers) {
        (Pages::Ordinary, _) => "",
        (Pages::Huge, 1) => " from a buffer in huge pages (2 MiB-aligned, MADV_HUGEPAGE)",
        (Pages::Huge, _) => ", each from a buffer in huge pages (2 MiB-aligned, MADV_HUGEPAGE)",
    };
    format!("{calls}{threads}{into}{pages}{}", mode_clause(case.durability, with_sync))
}

/// A strategy in a few words, for the second and third lines of a goal at a glance:
/// "writev 64 KiB × 128, empty", "pwrite 1 MiB, 2 threads, preallocated, O_DIRECT". The
/// pick itself is said in full ([`strategy`]); these name what it is set beside.
pub fn short(case: &Case) -> String {
    let mut words = format!("{} {}", case.method, format_size(case.chunk_bytes));
    if family(&case.method) == Some(Family::Vectored) {
        words += &format!(" × {}", case.iov);
    }
    if let Some(depth) = case.queue_depth {
        words += &format!(", {depth} in flight");
    }
    match (case.ranks.filter(|&r| r > 1), case.threads, case.files) {
        (Some(r), t, files) => {
            words += &format!(", {r} ranks");
            if t > 1 {
                words += &format!(" of {t} threads");
            }
            if files > 1 {
                words += ", a file each";
            }
        }
        (None, 1, _) => {}
        (None, n, 1) => words += &format!(", {n} threads"),
        (None, n, _) => words += &format!(", {n} threads, a file each"),
    }
    let file = match case.state {
        FileState::Empty => Some("empty"),
        FileState::Sparse => Some("sparse"),
        FileState::Prealloc => Some("preallocated"),
        // Only a rewrite's goal has them, and all its cases are rewrites.
        FileState::Overwrite => None,
    };
    if let Some(file) = file {
        words += &format!(", {file}");
    }
    if case.durability.direct {
        words += ", O_DIRECT";
    }
    if case.pages == Pages::Huge {
        words += ", huge pages";
    }
    match case.durability.commit {
        Commit::None | Commit::End(_) => {}
        _ => words += &format!(", {}", mode(Durability { direct: false, ..case.durability })),
    }
    words
}

/// [`strategy`] in the fewest words, for the first line of a goal at a glance: a
/// vectored call of one buffer is said as a plain call ("pwritev in 1 MiB calls"), and
/// "opened with O_DIRECT" as "with O_DIRECT".
pub fn strategy_brief(case: &Case, with_sync: bool) -> String {
    let full = strategy(case, with_sync).replace(", opened with ", " with ");
    if family(&case.method) == Some(Family::Vectored) && case.iov == 1 {
        let chunk = format_size(case.chunk_bytes);
        return full.replacen(
            &format!("{} of 1 x {chunk} per call", case.method),
            &format!("{} in {chunk} calls", case.method),
            1,
        );
    }
    full
}

/// A case's id without the tokens that an observation states otherwise: the id of
/// `pwrite prealloc 4KiB t1 end` without its state is `pwrite 4KiB t1 end`.
pub fn id_without(case: &Case, tokens: &[Token]) -> String {
    let mut drop: Vec<String> = tokens.iter().map(|t| t.of(case)).collect();
    case.id
        .split(' ')
        .filter(|part| match drop.iter().position(|d| d == part) {
            Some(at) => {
                drop.remove(at);
                false
            }
            None => true,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The parts of an id, for [`id_without`].
#[derive(Debug, Clone, Copy)]
pub enum Token {
    Method,
    State,
    Chunk,
    QueueDepth,
    Threads,
    Files,
    Durability,
    Pages,
}

impl Token {
    fn of(self, case: &Case) -> String {
        match self {
            Token::Method => case.method.clone(),
            Token::State => case.state.name().to_string(),
            Token::Chunk => format_size_compact(case.chunk_bytes),
            Token::QueueDepth => case.queue_depth.map(|d| format!("qd{d}")).unwrap_or_default(),
            Token::Threads => format!("t{}", case.threads),
            Token::Files => format!("f{}", case.files),
            Token::Durability => case.durability.name(),
            Token::Pages => {
                if case.pages == Pages::Huge {
                    "huge-pages".to_string()
                } else {
                    String::new()
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::advice::testkit::case;

    #[test]
    fn numbers_have_three_significant_digits() {
        assert_eq!(gbps(2.1e9), "2.10 GB/s");
        assert_eq!(gbps(12.34e9), "12.3 GB/s");
        assert_eq!(gbps(0.5123e9), "0.512 GB/s");
        assert_eq!(gbps(0.0123e9), "0.0123 GB/s");
        assert_eq!(gbps(123.4e9), "123 GB/s");
        assert_eq!(per_second(4100.4), "4100");
        assert_eq!(per_second(41_000.0), "41.0 k");
        assert_eq!(per_second(1_234_000.0), "1.23 M");
        assert_eq!(micros(410_000.0), "410 µs");
        assert_eq!(micros(1_100.0), "1.10 µs");
        assert_eq!(micros(25e6), "25.0 ms");
        assert_eq!((factor(1.046), factor(3.21), factor(12.4)), ("1.05x".into(), "3.2x".into(), "12x".into()));
        assert_eq!(
            (p_value(0.4), p_value(0.0004), p_value(0.0042)),
            ("p = 0.40".into(), "p < 0.001".into(), "p = 0.004".into())
        );
        assert_eq!(
            (p_value(0.0496), p_value(0.0504), p_value(0.012)),
            ("p = 0.0496".into(), "p = 0.05".into(), "p = 0.01".into())
        );
    }

    #[test]
    fn strategies_read_as_sentences() {
        let pwrite: Durability = "end-fdatasync".parse().unwrap();
        let mut built = case("pwrite prealloc 1MiB t1 end");
        built.durability = pwrite;
        assert_eq!(strategy(&built, true), "pwrite in 1 MiB calls into a preallocated file, then one fdatasync");
        assert_eq!(strategy(&built, false), "pwrite in 1 MiB calls into a preallocated file");
        assert_eq!(
            strategy(&case("pwritev empty 4KiB x128 t1 direct+odsync"), true),
            "pwritev of 128 x 4 KiB per call into an empty file, opened with O_DIRECT and O_DSYNC"
        );
        assert_eq!(
            strategy(&case("write empty 1MiB t2 f2 none"), true),
            "write in 1 MiB calls from 2 threads, a file each, into empty files"
        );
        assert_eq!(
            strategy(&case("io_uring overwrite 4KiB qd32 t1 osync"), true),
            "io_uring in 4 KiB writes (32 in flight) over a fully written file, opened with O_SYNC"
        );
        let huge = case("pwrite empty 1MiB t1 direct+end huge-pages");
        assert_eq!(
            strategy(&huge, true),
            "pwrite in 1 MiB calls into an empty file from a buffer in huge pages (2 MiB-aligned, MADV_HUGEPAGE), \
             opened with O_DIRECT, then one fsync"
        );
        assert_eq!(
            strategy(&case("pwrite empty 1MiB t2 direct+end huge-pages"), true),
            "pwrite in 1 MiB calls from 2 threads into an empty file, each from a buffer in huge pages (2 MiB-aligned, \
             MADV_HUGEPAGE), opened with O_DIRECT, then one fsync"
        );
        assert_eq!(short(&huge), "pwrite 1 MiB, empty, O_DIRECT, huge pages");
        assert_eq!(mode("direct+every:4".parse().unwrap()), "O_DIRECT with an fsync every 4 calls");
        assert_eq!(mode("none".parse().unwrap()), "page cache only");
    }

    #[test]
    fn ranks_are_said_with_their_files() {
        use plan::RankLayout::{FilePerRank, SharedFile};
        let pwrite = || case("pwrite empty 1MiB t1 none");
        let shared = pwrite().with_ranks(4, SharedFile);
        assert_eq!(strategy(&shared, true), "pwrite in 1 MiB calls from 4 ranks into an empty file");
        assert_eq!(short(&shared), "pwrite 1 MiB, 4 ranks, empty");
        let each = pwrite().with_ranks(4, FilePerRank);
        assert_eq!(strategy(&each, true), "pwrite in 1 MiB calls from 4 ranks, a file each, into empty files");
        assert_eq!(short(&each), "pwrite 1 MiB, 4 ranks, a file each, empty");
        let threads = case("pwrite empty 1MiB t2 none").with_ranks(2, FilePerRank);
        assert_eq!(
            strategy(&threads, true),
            "pwrite in 1 MiB calls from 2 ranks of 2 threads, a file per rank, into empty files"
        );
        // One rank is one process: its threads are said as threads.
        assert_eq!(
            short(&case("pwrite empty 1MiB t2 none").with_ranks(1, SharedFile)),
            "pwrite 1 MiB, 2 threads, empty"
        );
    }

    #[test]
    fn ids_lose_the_tokens_an_observation_states() {
        let built = case("pwrite prealloc 4KiB t2 f2 end");
        assert_eq!(id_without(&built, &[Token::State]), "pwrite 4KiB t2 f2 end");
        assert_eq!(id_without(&built, &[Token::Threads, Token::Files]), "pwrite prealloc 4KiB end");
        assert_eq!(
            id_without(&case("io_uring empty 4KiB qd32 t1 end"), &[Token::Method, Token::QueueDepth]),
            "empty 4KiB t1 end"
        );
    }
}
