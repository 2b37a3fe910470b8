//! The vocabulary of `writebench latency`: write patterns and saves, the plan of one
//! invocation, and the case each pattern, size and mode becomes in the result file.
//!
//! Two kinds of operation:
//! - a *write* (`overwrite0`, `append`): one call of `--bytes` into one file, under each
//!   `--durability` mode;
//! - a *save* (`replace`, `replace-tmpfile`, `replace-unsafe`): a whole file of `--bytes`
//!   written anew and renamed over the old one, as a program saves a document. A save
//!   makes its own syncs (or, unsafe, none), so the `--durability` modes do not apply:
//!   each save pattern runs once per size, whatever the modes, and its case records the
//!   pattern's own durability (`fsync-file+dir`, or `none` for `replace-unsafe`). Saves
//!   are native only (the runners have no rename protocol): other runtimes get no save
//!   case, and [`LatencyPlan::native_only`] says which patterns were left out for them.

use crate::durability::Durability;
use crate::units::format_size_compact;
use crate::{Case, CaseKind, FileState};

pub use crate::pattern::Pattern;

/// The id's word for a case that is not durable: `latency replace-unsafe 4KiB not-durable`.
pub const NOT_DURABLE: &str = "not-durable";

/// What one `latency` invocation measures.
#[derive(Debug, Clone)]
pub struct LatencyPlan {
    /// Timed operations per case (`--count`), split over its loops.
    pub count: u64,
    /// Timed loops per case (`latency --repeat`; `run`'s runs per case), each a run of
    /// its own in the rounds (docs/measurement.md). `run` with `--target-ci` may add
    /// loops up to its `--max-runs`, each of [`LatencyPlan::per_loop`] operations.
    pub loops: u32,
    /// Bytes per write, or per saved file (`--bytes`, a list): each size its own case.
    pub sizes: Vec<usize>,
    /// Untimed operations before each loop's timed ones (its file is new each loop).
    pub warmup: u64,
    pub patterns: Vec<Pattern>,
    pub durability: Vec<Durability>,
    pub seed: u64,
    /// `native` and the runners (`--runtimes`); empty means native.
    pub runtimes: Vec<String>,
}

/// One pattern of one size written by one call of one runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    pub pattern: Pattern,
    pub runtime: String,
    pub method: &'static str,
    /// Bytes per write, or of the whole file per save.
    pub bytes: usize,
}

/// The calls a runtime makes for a pattern, as its catalogue entry lists them: at
/// offset 0 with `pwrite` (Node's positional `writeSync`), at the file position with
/// `write` and each of the language's file objects; a save is native's `write` calls into
/// the new file, and the runners make none. Nothing for a runtime the catalogue lacks.
pub fn methods_of(runtime: &str, pattern: Pattern) -> &'static [&'static str] {
    let Some(runtime) = crate::catalog::runtime(runtime) else { return &[] };
    match pattern {
        p if p.is_save() => runtime.saves,
        Pattern::Overwrite0 => runtime.overwrite0,
        _ => runtime.append,
    }
}

impl LatencyPlan {
    /// Timed operations per loop: `--count` over the loops, rounded up, at least one,
    /// so that a case times about `--count` operations in all.
    pub fn per_loop(&self) -> u64 {
        self.count.div_ceil(u64::from(self.loops.max(1))).max(1)
    }

    /// Operations a case makes in all, the untimed ones before each loop included.
    pub fn operations(&self) -> u64 {
        u64::from(self.loops.max(1)) * (self.per_loop() + self.warmup)
    }

    fn runtimes(&self) -> Vec<String> {
        if self.runtimes.is_empty() { vec![crate::catalog::NATIVE.to_string()] } else { self.runtimes.clone() }
    }

    /// Every pattern, then every size, then every runtime and its calls for it, in the
    /// order they run.
    pub fn units(&self) -> Vec<Unit> {
        let mut units = Vec::new();
        for &pattern in &self.patterns {
            for &bytes in &self.sizes {
                for runtime in self.runtimes() {
                    for &method in methods_of(&runtime, pattern) {
                        units.push(Unit { pattern, runtime: runtime.clone(), method, bytes });
                    }
                }
            }
        }
        units
    }

    /// Every case to run, in order: each write unit under every mode (mode by mode, as
    /// before saves existed), then each save unit once, under its own durability.
    pub fn cases(&self) -> Vec<(Unit, Durability)> {
        let units = self.units();
        let mut cases = Vec::new();
        for &mode in &self.durability {
            cases.extend(units.iter().filter(|u| !u.pattern.is_save()).map(|u| (u.clone(), mode)));
        }
        cases.extend(units.iter().filter_map(|u| u.pattern.own_durability().map(|own| (u.clone(), own))));
        cases
    }

    /// The runtimes other than native that the save patterns leave out, and the
    /// patterns: said once on stderr, so that a missing case is no surprise.
    pub fn native_only(&self) -> Option<(Vec<String>, Vec<&'static str>)> {
        let saves: Vec<&'static str> = self.patterns.iter().filter(|p| p.is_save()).map(|p| p.name()).collect();
        let others: Vec<String> = self.runtimes().into_iter().filter(|r| r != crate::catalog::NATIVE).collect();
        (!saves.is_empty() && !others.is_empty()).then_some((others, saves))
    }

    /// The plan as applied, for the result file's `options`: the lists parsed and
    /// spelled canonically (`every-fdatasync:1`, not whatever the user typed).
    pub fn applied(&self) -> serde_json::Value {
        serde_json::json!({
            "count": self.count,
            "loops": self.loops,
            "per_loop": self.per_loop(),
            "bytes": self.sizes,
            "warmup": self.warmup,
            "patterns": self.patterns.iter().map(|p| p.name()).collect::<Vec<_>>(),
            "durability": self.durability.iter().map(|d| d.name()).collect::<Vec<_>>(),
            "seed": self.seed,
            "runtimes": self.runtimes(),
        })
    }
}

/// Whether a case of a result is a latency case (they share the result file with the
/// throughput cases of `run`'s quick suite).
pub fn is_latency_case(case: &Case) -> bool {
    matches!(case.kind, CaseKind::Latency(_))
}

/// The pattern of a latency case.
pub fn pattern_of(case: &Case) -> Option<Pattern> {
    match case.kind {
        CaseKind::Latency(pattern) => Some(pattern),
        _ => None,
    }
}

/// Whether a case is a save that leaves the data not durable (`replace-unsafe`): no table
/// line, observation or answer may call it durable.
pub fn is_not_durable_save(case: &Case) -> bool {
    pattern_of(case).is_some_and(|pattern| pattern.is_save() && !case.durability.syncs())
}

/// The case of one unit and mode, for the result file. Native's write ids stay as they
/// were (`latency append 8B osync`); the runners' name the runtime and the call
/// (`latency python buffered append 8B osync`). A save's id has the size as the other
/// ids of the tool print it (`latency replace 4KiB`), no mode (it has its own), and
/// `not-durable` when it is not (`latency replace-unsafe 4KiB not-durable`).
pub fn case_of(plan: &LatencyPlan, unit: &Unit, durability: Durability) -> Case {
    let pattern = unit.pattern;
    let state = match pattern {
        Pattern::Overwrite0 => FileState::Overwrite,
        // A save writes a new file (the target it replaces exists).
        _ => FileState::Empty,
    };
    let method = unit.method;
    let bytes = unit.bytes as u64;
    let who =
        if unit.runtime == crate::catalog::NATIVE { String::new() } else { format!("{} {method} ", unit.runtime) };
    let id = if pattern.is_save() {
        let size = if bytes % 1024 == 0 { format_size_compact(bytes) } else { format!("{bytes}B") };
        let label = if durability.syncs() { String::new() } else { format!(" {NOT_DURABLE}") };
        format!("latency {who}{} {size}{label}", pattern.name())
    } else {
        format!("latency {who}{} {bytes}B {durability}", pattern.name())
    };
    Case {
        id,
        runtime: unit.runtime.clone(),
        method: method.into(),
        state,
        chunk_bytes: bytes,
        iov: 1,
        queue_depth: None,
        threads: 1,
        files: 1,
        durability,
        // Per run, as for every case: one loop's.
        bytes: bytes * plan.per_loop(),
        ranks: None,
        kind: CaseKind::Latency(pattern),
        pages: crate::Pages::Ordinary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(patterns: &[Pattern], runtimes: &[&str]) -> LatencyPlan {
        LatencyPlan {
            count: 10,
            loops: 1,
            sizes: vec![4096, 1 << 20],
            warmup: 1,
            patterns: patterns.to_vec(),
            durability: vec![Durability::None, "every-fdatasync:1".parse().unwrap()],
            seed: 1,
            runtimes: runtimes.iter().map(|r| r.to_string()).collect(),
        }
    }

    #[test]
    fn writes_run_under_every_mode_and_saves_once_under_their_own() {
        let plan = plan(&[Pattern::Append, Pattern::Replace, Pattern::ReplaceUnsafe], &[]);
        let ids: Vec<String> = plan.cases().iter().map(|(u, d)| case_of(&plan, u, *d).id).collect();
        assert_eq!(
            ids,
            [
                "latency append 4096B none",
                "latency append 1048576B none",
                "latency append 4096B every-fdatasync:1",
                "latency append 1048576B every-fdatasync:1",
                "latency replace 4KiB",
                "latency replace 1MiB",
                "latency replace-unsafe 4KiB not-durable",
                "latency replace-unsafe 1MiB not-durable",
            ]
        );
        let cases: Vec<Case> = plan.cases().iter().map(|(u, d)| case_of(&plan, u, *d)).collect();
        assert_eq!(cases[4].durability.name(), "fsync-file+dir");
        assert_eq!(cases[6].durability, Durability::None);
        assert!(is_not_durable_save(&cases[6]) && !is_not_durable_save(&cases[4]) && !is_not_durable_save(&cases[0]));
        assert_eq!(pattern_of(&cases[6]), Some(Pattern::ReplaceUnsafe));
        assert_eq!(pattern_of(&cases[0]), Some(Pattern::Append));
    }

    #[test]
    fn the_count_is_split_over_the_loops_and_a_case_writes_one_loops_bytes_per_run() {
        let split = |count, loops| LatencyPlan { count, loops, ..plan(&[Pattern::Append], &[]) };
        assert_eq!(split(10_000, 5).per_loop(), 2000);
        assert_eq!(split(1001, 5).per_loop(), 201, "rounded up: never fewer than --count in all");
        assert_eq!(split(3, 5).per_loop(), 1);
        assert_eq!(split(10, 0).per_loop(), 10, "no loops reads as one");
        let plan = split(10_000, 5);
        assert_eq!(plan.operations(), 5 * (2000 + 1), "each loop after its own warm-up");
        let (unit, mode) = plan.cases()[0].clone();
        assert_eq!(case_of(&plan, &unit, mode).bytes, 4096 * 2000);
    }

    #[test]
    fn saves_are_native_only_and_the_others_are_named() {
        let plan = plan(&[Pattern::Overwrite0, Pattern::ReplaceTmpfile], &["native", "c"]);
        let saves: Vec<Unit> = plan.units().into_iter().filter(|u| u.pattern.is_save()).collect();
        assert_eq!(saves.len(), 2, "native only, each size: {saves:?}");
        assert!(saves.iter().all(|u| u.runtime == "native"));
        assert!(plan.units().iter().any(|u| u.runtime == "c" && u.pattern == Pattern::Overwrite0));
        assert_eq!(plan.native_only(), Some((vec!["c".to_string()], vec!["replace-tmpfile"])));
        let c_only = LatencyPlan { runtimes: vec!["c".into()], ..plan.clone() };
        assert!(c_only.cases().iter().all(|(u, _)| !u.pattern.is_save()));
        assert_eq!(LatencyPlan { runtimes: vec![], ..plan }.native_only(), None);
        let runner = case_of(&c_only, &c_only.units()[0], Durability::None);
        assert_eq!(pattern_of(&runner), Some(Pattern::Overwrite0));
        // A result saved before cases had a kind: read from the runner's id.
        let older = CaseKind::of_older_case("latency python buffered append 8B none", "buffered");
        assert_eq!(older, CaseKind::Latency(Pattern::Append));
        assert_eq!(CaseKind::of_older_case("latency replace 4KiB", "write"), CaseKind::Latency(Pattern::Replace));
        assert_eq!(CaseKind::of_older_case("ftruncate empty 1GiB t1 none", "ftruncate"), CaseKind::Creation);
        assert_eq!(CaseKind::of_older_case("write empty 4KiB t1 none", "write"), CaseKind::Throughput);
        let saved = serde_json::to_value(&runner).unwrap();
        assert_eq!(saved["kind"], serde_json::json!({"latency": "overwrite0"}));
        let mut older_json = saved.clone();
        older_json.as_object_mut().unwrap().remove("kind");
        let read: Case = serde_json::from_value(older_json).unwrap();
        assert_eq!(read.kind, CaseKind::Latency(Pattern::Overwrite0), "a case saved without its kind");
    }
}
