//! `writebench latency --runtimes ...` through a runner: the runner times each
//! operation and returns the samples; writebench makes the histograms and percentiles,
//! as for native (docs/runtimes.md, "Latency").

use std::path::Path;

use serde::Deserialize;

use super::child::Child;
use super::external::{cpu_of, cpus_line, durability_words, path_line, runner_error};
use super::toolchain::Launch;
use error::CallError;
use measure::executor::Cpu;
use plan::durability::Durability;

/// What one latency run of a runner measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Samples {
    /// Each recorded operation, in nanoseconds.
    pub ops: Vec<u64>,
    /// Each sync call on its own (every:N), in nanoseconds.
    pub syncs: Vec<u64>,
    pub loop_seconds: f64,
    /// The `end` sync, 0 without one.
    pub sync_seconds: f64,
    /// None where the runner could not read its thread's CPU time.
    pub cpu: Option<Cpu>,
}

/// The request: `count` timed operations of `source.len()` bytes after `warmup` more.
pub struct Request<'a> {
    pub method: &'a str,
    pub pattern: &'a str,
    pub count: u64,
    pub warmup: u64,
    pub durability: Durability,
    pub path: &'a Path,
    pub source: &'a [u8],
}

#[derive(Debug, Deserialize)]
struct Reply {
    run: i64,
    error: Option<String>,
    errno: Option<i32>,
    #[serde(rename = "loop")]
    timed_loop: Option<[f64; 2]>,
    ops: Option<Vec<u64>>,
    syncs: Option<Vec<u64>>,
    sync: Option<[f64; 2]>,
    user: Option<f64>,
    sys: Option<f64>,
}

/// Runs one latency case in `runtime`'s runner.
pub fn measure(runtime: &str, launch: &Launch, request: &Request) -> Result<Samples, CallError> {
    let mut child = Child::start(runtime, launch, request.source.len())?;
    child.source_mut()[..request.source.len()].copy_from_slice(request.source);
    let path = path_line(request.path)?;
    child.send(&format!(
        "latency method={} pattern={} bytes={} count={} warmup={} {} source={}\nrun 0\nfile {path}\n{}go\n",
        request.method,
        request.pattern,
        request.source.len(),
        request.count,
        request.warmup,
        durability_words(request.durability),
        request.source.len(),
        // Where native's latency loop runs: on this thread's CPU.
        cpus_line(measure::placement::cpus_for(1).as_deref()),
    ))?;
    let line = child.reply()?;
    let reply: Reply = serde_json::from_str(&line).map_err(|e| child.protocol_error(&line, &e.to_string()))?;
    if let Some(error) = &reply.error {
        return Err(runner_error(runtime, error, reply.errno));
    }
    let bad = |why: &str| child.protocol_error(&line, why);
    if reply.run != 0 {
        return Err(bad("the reply of run 0 expected"));
    }
    let ops = reply.ops.ok_or_else(|| bad("no ops"))?;
    if ops.len() as u64 != request.count {
        return Err(bad(&format!("{} ops, {} expected", ops.len(), request.count)));
    }
    let [start, end] = reply.timed_loop.ok_or_else(|| bad("no loop"))?;
    if !(start.is_finite() && end >= start) {
        return Err(bad("the loop's times do not make sense"));
    }
    let sync_seconds = reply.sync.map_or(0.0, |[start, end]| (end - start).max(0.0));
    Ok(Samples {
        ops: ops.into_iter().map(|ns| ns.max(1)).collect(),
        syncs: reply.syncs.unwrap_or_default().into_iter().map(|ns| ns.max(1)).collect(),
        loop_seconds: end - start,
        sync_seconds,
        cpu: cpu_of(reply.user, reply.sys),
    })
}
