//! Hand-made results for the advice's unit tests: cases named by their ids, runs given
//! as times, so that each test states the numbers its observation must come from.

use serde_json::json;

use context::calibration::{Calibration, Ceiling};
use context::copy::CopyClass;
use context::{Host, TargetInfo};
use plan::catalog;
use plan::units::{format_size_compact, parse_size};
use plan::{Case, FileState, Layout, Pages};
use result::{CaseResult, Recommendation, ResultFile, Run, SCHEMA, Status, TargetCi, Tool};

/// Bytes every case writes unless [`sized`] says otherwise.
pub const BYTES: u64 = 1 << 30;

/// The case whose id is `id` (`pwritev prealloc 4KiB x128 qd32 t2 f2 end`), of
/// [`BYTES`]; panics if the id is not the one the plan would give it.
pub fn case(id: &str) -> Case {
    let (id_without_pages, pages) = match id.strip_suffix(" huge-pages") {
        Some(rest) => (rest, Pages::Huge),
        None => (id, Pages::Ordinary),
    };
    let tokens: Vec<&str> = id_without_pages.split(' ').collect();
    let method = catalog::by_name(tokens[0]).unwrap_or_else(|| panic!("method in {id}"));
    let state: FileState = tokens[1].parse().unwrap();
    let chunk = parse_size(tokens[2]).unwrap();
    let number = |prefix: &str| {
        tokens[3..tokens.len() - 1].iter().find_map(|t| t.strip_prefix(prefix).and_then(|n| n.parse::<u32>().ok()))
    };
    let durability = tokens[tokens.len() - 1].parse().unwrap();
    let threads = number("t").unwrap_or(1);
    let files = number("f").unwrap_or(1);
    let layout = if files > 1 { Layout::FilePerThread } else { Layout::OneFile };
    let mut built =
        Case::new(method, state, chunk, number("x").unwrap_or(1), durability, BYTES).with_threads(threads, layout);
    if let Some(depth) = number("qd") {
        built = built.with_queue_depth(depth);
    }
    let built = built.with_pages(pages);
    assert_eq!(built.id, id, "the id the plan gives");
    built
}

/// The same case writing `bytes` per run, its size in its id as the full suite does.
pub fn sized(mut case: Case, bytes: u64) -> Case {
    case.bytes = bytes;
    case.id = format!("{} {}", case.id, format_size_compact(bytes));
    case
}

/// The latency case of `pattern` and mode `durability`, as `plan::latency` makes it.
pub fn latency_case(pattern: &str, durability: &str) -> Case {
    latency_sized(pattern, durability, 8)
}

/// The latency case of `pattern` and mode `durability` writing `bytes` a call.
pub fn latency_sized(pattern: &str, durability: &str, bytes: u64) -> Case {
    let plan = plan::latency::LatencyPlan {
        count: 1000,
        loops: 1,
        sizes: vec![bytes as usize],
        warmup: 0,
        patterns: vec![],
        durability: vec![],
        seed: 1,
        runtimes: vec![],
    };
    let pattern: plan::latency::Pattern = pattern.parse().unwrap();
    let method = plan::latency::methods_of("native", pattern)[0];
    let unit = plan::latency::Unit { pattern, runtime: "native".into(), method, bytes: bytes as usize };
    plan::latency::case_of(&plan, &unit, durability.parse().unwrap())
}

/// The recommendation for goal `key` in `answer`.
pub fn goal<'a>(answer: &'a [Recommendation], key: &str) -> &'a Recommendation {
    answer.iter().find(|r| r.goal == key).unwrap_or_else(|| panic!("no {key} in {answer:?}"))
}

/// A candidate beside a pick, its time over the pick's `factor` (`low`–`high`), the 99 %
/// lower end at the 95 % one, five runs.
pub fn alternative(factor: f64, low: f64, high: f64) -> result::glance::Alternative {
    result::glance::Alternative {
        case: "c".into(),
        action: "a".into(),
        value: 1.0,
        factor,
        low,
        high,
        p_value: 0.5,
        low99: Some(low),
        runs: 5,
    }
}

/// Runs around `mean` seconds, ±1 %, five of them: the same spread everywhere.
pub fn around(mean: f64) -> Vec<f64> {
    [1.0, 1.01, 0.99, 1.005, 0.995].iter().map(|f| f * mean).collect()
}

pub struct Build {
    result: ResultFile,
}

impl Default for Build {
    fn default() -> Build {
        Build::new()
    }
}

impl Build {
    pub fn new() -> Build {
        Build {
            result: ResultFile {
                schema: SCHEMA.to_string(),
                tool: Tool::this(),
                host: Host {
                    kernel: "Linux".into(),
                    cpu_model: "cpu".into(),
                    cpus: 2,
                    memory_bytes: 1 << 33,
                    ..Host::default()
                },
                target: TargetInfo {
                    path: "/mnt".into(),
                    fs_type: "ext4".into(),
                    device: "/dev/loop0".into(),
                    mount_point: "/mnt".into(),
                    mount_options: "rw".into(),
                    dio_mem_align: Some(512),
                    dio_offset_align: Some(512),
                    dio_align_source: None,
                    ..TargetInfo::default()
                },
                options: Default::default(),
                cases: Vec::new(),
                observations: Vec::new(),
                observation_tests: None,
                answer: Vec::new(),
                calibration: None,
                crash: Vec::new(),
                race: None,
                complete: true,
            },
        }
    }

    /// A measured case with these write times and no sync time.
    pub fn add(self, case: Case, write_seconds: &[f64]) -> Build {
        self.synced(case, write_seconds, &vec![0.0; write_seconds.len()])
    }

    /// A measured case with these write and sync times, run by run.
    pub fn synced(mut self, case: Case, write_seconds: &[f64], sync_seconds: &[f64]) -> Build {
        let runs = write_seconds
            .iter()
            .zip(sync_seconds)
            // Preparation recorded as free unless `prepared` says otherwise; CPU time
            // read (as every native run reads it), none.
            .map(|(&write_seconds, &sync_seconds)| Run {
                write_seconds,
                sync_seconds,
                user_seconds: Some(0.0),
                sys_seconds: Some(0.0),
                prepare_seconds: Some(0.0),
                prepare_sync_seconds: Some(0.0),
                ..Run::default()
            })
            .collect();
        self.result.cases.push(crate::summarize::measured(case, runs, 1));
        self
    }

    /// A latency case as results from before loops have it: one timed loop of 1000
    /// operations at `ops_per_second`, no summary over loops.
    pub fn latency(mut self, case: Case, ops_per_second: f64, p99_ns: u64) -> Build {
        let seconds = 1000.0 / ops_per_second;
        let mut result = crate::summarize::measured(case, vec![Run { write_seconds: seconds, ..Run::default() }], 1);
        result.latency_ns = Some(json!({"count": 1000, "mean": 1e9 / ops_per_second, "p50": p99_ns / 2,
                                        "p90": p99_ns / 2, "p99": p99_ns, "p999": p99_ns, "max": p99_ns}));
        result.ops_per_second = Some(ops_per_second);
        self.result.cases.push(result);
        self
    }

    /// A latency case of loops of 1000 operations each, at these operations per second.
    pub fn loops(mut self, case: Case, ops_per_second: &[f64], p99_ns: u64) -> Build {
        let runs = ops_per_second
            .iter()
            .map(|&ops| Run { write_seconds: 1000.0 / ops, ops_per_second: Some(ops), ..Run::default() })
            .collect();
        let mut result = crate::summarize::measured(case, runs, 1);
        let count = 1000 * ops_per_second.len();
        result.latency_ns = Some(json!({"count": count, "mean": 1e9 / ops_per_second[0], "p50": p99_ns / 2,
                                        "p90": p99_ns / 2, "p99": p99_ns, "p999": p99_ns, "max": p99_ns}));
        crate::summarize::set_loop_rates(&mut result, 1000);
        self.result.cases.push(result);
        self
    }

    /// A case as a saved result holds it.
    pub fn saved(mut self, case: CaseResult) -> Build {
        self.result.cases.push(case);
        self
    }

    /// The last case's runs took these times to prepare their file, `sync` of each of
    /// them its fsync; None: not recorded, as in results from before it was.
    pub fn prepared(mut self, prepare: Option<&[f64]>, sync: f64) -> Build {
        let last = self.result.cases.last_mut().expect("a case to prepare");
        for (index, run) in last.runs.iter_mut().enumerate() {
            run.prepare_seconds = prepare.map(|p| p[index]);
            run.prepare_sync_seconds = prepare.map(|_| sync);
        }
        self
    }

    /// An option of the run, as `options` holds it.
    pub fn option(mut self, key: &str, value: serde_json::Value) -> Build {
        self.result.options.extend([(key.to_string(), value)].into_iter().collect());
        self
    }

    /// A case that failed: no figure.
    pub fn failed(mut self, case: Case) -> Build {
        self.result.cases.push(CaseResult::without_result(case, Status::Failed, "write: EIO".into()));
        self
    }

    /// The last case missed a CI target of `pct` %, reaching `reached` %.
    pub fn missed_ci(mut self, pct: f64, reached: f64) -> Build {
        let last = self.result.cases.last_mut().expect("a case to mark");
        last.target_ci = Some(TargetCi {
            pct,
            met: false,
            runs: last.runs.len() as u32,
            reached_pct: Some(reached),
            judged_pct: None,
        });
        self
    }

    /// A calibration whose memory copy runs at `memcpy` bytes/s on one CPU and on all,
    /// and a device at `device` bytes/s where given.
    pub fn calibrated_with(mut self, memcpy: f64, device: Option<f64>) -> Build {
        self.result.calibration = Some(Calibration {
            memcpy_bytes_per_s: memcpy,
            memcpy_all_bytes_per_s: memcpy,
            memcpy_threads: 2,
            device: Ceiling { bytes_per_s: device, how: String::new(), why_not: None },
            ..Calibration::default()
        });
        self
    }

    pub fn calibrated(self, memcpy: f64) -> Build {
        self.calibrated_with(memcpy, None)
    }

    /// The calibration's memory copy by size class: (bytes, bytes/s on one CPU and on
    /// all), ascending; the last is the large-buffer figure `calibrated` gave.
    pub fn copy_classes(mut self, classes: &[(u64, f64)]) -> Build {
        let calibration = self.result.calibration.as_mut().expect("calibrated first");
        calibration.memcpy_classes = classes
            .iter()
            .map(|&(bytes, rate)| CopyClass { bytes, bytes_per_s: rate, all_bytes_per_s: rate })
            .collect();
        calibration.memcpy_bytes = classes.last().map_or(0, |&(bytes, _)| bytes);
        self
    }

    /// The result, its cases' facts drawn again (a change after `add` changed the runs).
    pub fn done(mut self) -> ResultFile {
        crate::case_facts::annotate(&mut self.result);
        self.result
    }
}

/// A case summarized from its runs, its facts drawn, as a finished result has them.
pub fn measured(case: Case, runs: Vec<Run>, cpus: usize) -> CaseResult {
    let mut result = crate::summarize::measured(case, runs, cpus);
    result.facts = crate::case_facts::facts(&result);
    result
}
