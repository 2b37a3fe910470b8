//! The executor of the other runtimes: a runner process per case, started at the case's
//! first run and kept for its others. Per run, the source memfd gets the run's bytes
//! (untimed, the same streams native writes), the runner gets the paths of the files the
//! runner prepared, and its reply becomes an [`Execution`] like the in-process one.

use std::fmt::Write as _;
use std::io;
use std::sync::Mutex;

use serde::Deserialize;

use super::child::Child;
use super::toolchain::Launch;
use error::CallError;
use measure::executor::{Cpu, Execution, Executor, Interval, PartTimes};
use measure::methods::Job;
use plan::durability::{Commit, Durability, SyncCall};

pub struct External {
    runtime: String,
    method: String,
    launch: Launch,
    state: Mutex<Option<(Child, u32)>>,
}

impl External {
    pub const OVERHEAD: &'static str =
        "a runner process per case (docs/runtimes.md): it times its own parts with its language's monotonic clock";

    pub fn new(runtime: &str, method: &str, launch: Launch) -> External {
        External { runtime: runtime.to_string(), method: method.to_string(), launch, state: Mutex::new(None) }
    }

    /// The toolchain's version line, for the result.
    pub fn version(&self) -> &str {
        &self.launch.version
    }
}

/// The `open=`, `end=`, `every=` and `everycall=` words of a durability mode.
pub fn durability_words(durability: Durability) -> String {
    let mut open = Vec::new();
    match durability.commit {
        Commit::OSync => open.push("sync"),
        Commit::ODsync => open.push("dsync"),
        _ => {}
    }
    if durability.direct {
        open.push("direct");
    }
    let open = if open.is_empty() { "-".to_string() } else { open.join(",") };
    let end = durability.end_sync().map_or("none", SyncCall::name);
    let (every, call) = durability.every().map_or((0, SyncCall::Fsync), |(n, call)| (n, call));
    format!("open={open} end={end} every={every} everycall={}", call.name())
}

/// The first message: the case and its parts.
fn case_message(method: &str, job: &Job) -> String {
    let bases = bases(job.file_lens);
    let mut text = format!(
        "case method={method} threads={} chunk={} iov={} qd={} files={} {} source={}\n",
        job.parts.len(),
        job.chunk,
        job.iov,
        job.queue_depth,
        job.files.len(),
        durability_words(job.durability),
        job.file_lens.iter().sum::<u64>()
    );
    for part in job.parts {
        let _ = writeln!(text, "part {} {} {} {}", part.file, part.offset, part.len, bases[part.file] + part.offset);
    }
    text
}

/// Where each file's bytes start in the source.
fn bases(lens: &[u64]) -> Vec<u64> {
    lens.iter().scan(0, |next, len| Some(std::mem::replace(next, *next + len))).collect()
}

/// A run's message: its number, the files' paths, and where its writers start.
fn run_message(number: u32, job: &Job, cpus: Option<&[usize]>) -> Result<String, CallError> {
    let mut text = format!("run {number}\n");
    for path in job.paths {
        let _ = writeln!(text, "file {}", path_line(path)?);
    }
    text.push_str(&cpus_line(cpus));
    text.push_str("go\n");
    Ok(text)
}

/// The `cpus` line: the CPU each writer moves to before the start line and leaves
/// after it (docs/runtimes.md), or nothing where native writers are not placed either.
pub fn cpus_line(cpus: Option<&[usize]>) -> String {
    match cpus {
        Some(cpus) => format!("cpus {}\n", cpus.iter().map(usize::to_string).collect::<Vec<_>>().join(" ")),
        None => String::new(),
    }
}

/// A path as the protocol's `file` line takes it: UTF-8 without a newline.
pub fn path_line(path: &std::path::Path) -> Result<&str, CallError> {
    path.to_str().filter(|p| !p.contains('\n')).ok_or_else(|| {
        let why = "a runner takes paths as lines of UTF-8 text";
        CallError::new(format!("pass {} to the runner", path.display()), io::Error::other(why))
    })
}

#[derive(Debug, Deserialize)]
struct PartReply {
    start: f64,
    end: f64,
    synced: Option<f64>,
    user: Option<f64>,
    sys: Option<f64>,
}

#[derive(Debug, Deserialize)]
struct Reply {
    run: i64,
    error: Option<String>,
    errno: Option<i32>,
    setup: Option<f64>,
    parts: Option<Vec<PartReply>>,
    sync: Option<[f64; 2]>,
    close: Option<[f64; 2]>,
    user: Option<f64>,
    sys: Option<f64>,
}

/// The runner's error line as a call error: its text, with the OS error when there is one.
pub fn runner_error(runtime: &str, text: &str, errno: Option<i32>) -> CallError {
    match errno.filter(|&errno| errno > 0) {
        Some(errno) => {
            // "pwrite: No space left on device" -> call "python pwrite", and the OS error.
            let call = text.split(": ").next().unwrap_or(text);
            CallError::new(format!("{runtime} {call}"), io::Error::from_raw_os_error(errno))
        }
        None => CallError::new(format!("{runtime} runner"), io::Error::other(text.to_string())),
    }
}

/// A runner's CPU time for a thread: None where it replied none (Node.js has no
/// per-thread CPU clock), never a 0 standing in for it.
pub(super) fn cpu_of(user: Option<f64>, sys: Option<f64>) -> Option<Cpu> {
    Some(Cpu { user: user?, sys: sys? })
}

/// A reply's execution, checked against the job.
fn execution_of(reply: Reply, parts: usize) -> Result<Execution, String> {
    let replied = reply.parts.ok_or("no parts")?;
    if replied.len() != parts {
        return Err(format!("{} parts, {parts} expected", replied.len()));
    }
    let interval = |pair: Option<[f64; 2]>| pair.map(|[start, end]| Interval { start, end });
    let mut times = Vec::with_capacity(parts);
    for part in &replied {
        let sane = part.start.is_finite() && part.end >= part.start && part.synced.is_none_or(|s| s >= part.end);
        if !sane {
            return Err(format!("a part's times do not make sense: {part:?}"));
        }
        let cpu = cpu_of(part.user, part.sys);
        times.push(PartTimes { start: part.start, end: part.end, synced: part.synced, cpu, written: None });
    }
    for pair in [reply.sync, reply.close].into_iter().flatten() {
        if !(pair[0].is_finite() && pair[1] >= pair[0]) {
            return Err(format!("an interval does not make sense: {pair:?}"));
        }
    }
    let setup_seconds = reply.setup.unwrap_or(0.0).max(0.0);
    Ok(Execution {
        setup_seconds,
        // The runner's own clock starts after we called it: its set-up is what we know
        // of the time before its origin.
        lead_seconds: setup_seconds,
        parts: times,
        sync: interval(reply.sync),
        close: interval(reply.close),
        cpu: cpu_of(reply.user, reply.sys),
        ring: None,
        ranks: Vec::new(),
    })
}

impl Executor for External {
    fn overhead(&self) -> &'static str {
        External::OVERHEAD
    }

    fn execute(&self, job: &Job) -> Result<Execution, CallError> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.is_none() {
            let len = job.file_lens.iter().sum::<u64>() as usize;
            let mut child = Child::start(&self.runtime, &self.launch, len)?;
            child.send(&case_message(&self.method, job))?;
            *state = Some((child, 0));
        }
        let (child, number) = state.as_mut().expect("started above");
        *number += 1;
        // Untimed: the run's bytes, file after file, as native writes them.
        let source = job.source.source();
        let mut base = 0usize;
        for (index, &len) in job.file_lens.iter().enumerate() {
            let bytes = &mut child.source_mut()[base..base + len as usize];
            job.source.file(index).fill(source, 0, bytes);
            base += len as usize;
        }
        // After the source is filled, on this thread's CPU (see `placement::cpus_for`).
        let cpus = measure::placement::cpus_for(job.parts.len());
        child.send(&run_message(*number, job, cpus.as_deref())?)?;
        let line = child.reply();
        child.release_source();
        let line = line?;
        let reply: Reply = serde_json::from_str(&line).map_err(|e| child.protocol_error(&line, &e.to_string()))?;
        if reply.run != i64::from(*number) {
            return Err(child.protocol_error(&line, &format!("the reply of run {number} expected")));
        }
        if let Some(error) = &reply.error {
            return Err(runner_error(&self.runtime, error, reply.errno));
        }
        execution_of(reply, job.parts.len()).map_err(|why| child.protocol_error(&line, &why))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durability_modes_in_the_protocols_words() {
        let words = |mode: &str| durability_words(mode.parse().unwrap());
        assert_eq!(words("none"), "open=- end=none every=0 everycall=fsync");
        assert_eq!(words("end-fdatasync"), "open=- end=fdatasync every=0 everycall=fsync");
        assert_eq!(words("every-fdatasync:8"), "open=- end=none every=8 everycall=fdatasync");
        assert_eq!(words("direct+odsync"), "open=dsync,direct end=none every=0 everycall=fsync");
        assert_eq!(words("osync"), "open=sync end=none every=0 everycall=fsync");
        assert_eq!(words("direct+end"), "open=direct end=fsync every=0 everycall=fsync");
    }

    #[test]
    fn files_follow_each_other_in_the_source() {
        assert_eq!(bases(&[10, 20, 5]), vec![0, 10, 30]);
    }

    #[test]
    fn replies_become_executions_and_nonsense_is_refused() {
        let good = r#"{"run":1,"setup":0.5,"parts":[{"start":1.0,"end":2.0,"synced":null,"user":0.1,"sys":0.2}],"sync":[2.0,2.5],"close":null,"user":0.0,"sys":0.01}"#;
        let execution = execution_of(serde_json::from_str(good).unwrap(), 1).unwrap();
        assert_eq!(execution.sync, Some(Interval { start: 2.0, end: 2.5 }));
        assert_eq!(execution.parts[0].cpu, Some(Cpu { user: 0.1, sys: 0.2 }));
        // A runner with no per-thread CPU clock replies null: no CPU time, not 0.
        let unread = good.replace("\"user\":0.1,\"sys\":0.2", "\"user\":null,\"sys\":null");
        let unread = execution_of(serde_json::from_str(&unread).unwrap(), 1).unwrap();
        assert_eq!((unread.parts[0].cpu, unread.cpu), (None, Some(Cpu { user: 0.0, sys: 0.01 })));
        assert!(execution_of(serde_json::from_str(good).unwrap(), 2).unwrap_err().contains("2 expected"));
        let backwards = good.replace("\"end\":2.0", "\"end\":0.5");
        assert!(execution_of(serde_json::from_str(&backwards).unwrap(), 1).is_err());
    }

    #[test]
    fn an_error_line_keeps_the_os_error() {
        let error = runner_error("python", "pwrite: No space left on device", Some(28));
        assert_eq!(error.call, "python pwrite");
        assert_eq!(error.error.raw_os_error(), Some(28));
        let other = runner_error("go", "io_uring: no module", Some(0));
        assert_eq!(other.to_string(), "go runner: io_uring: no module");
    }
}
