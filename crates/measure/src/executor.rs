//! The executor seam (docs/design.md §5, after hyperfine's `benchmark/executor.rs`). `case_runs`
//! prepares a run's files; an executor writes the parts behind a start line, syncs as
//! the durability mode says, and returns when each part started and ended, when each
//! sync ended, and the CPU time of each writer. `case_runs` turns that into a `Run`.
//!
//! [`InProcess`] runs the native methods on threads of this process. Child processes
//! (the other runtimes) and MPI ranks fit the same shape: they report times in seconds
//! from one origin of their own and CPU times per writer. [`Mock`] returns given times,
//! so that the arithmetic on top of it is tested without a clock.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::methods::{Engine, Job, Prepared};
use error::CallError;

pub use crate::cpu::{Cpu, CpuClock};

/// A stretch of a run, in seconds from the executor's origin.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub start: f64,
    pub end: f64,
}

impl Interval {
    pub fn seconds(self) -> f64 {
        self.end - self.start
    }
}

/// One part as its writer saw it, in seconds from the executor's origin.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PartTimes {
    /// The writer passed the start line: every writer had arrived.
    pub start: f64,
    /// Its last write call returned.
    pub end: f64,
    /// Its own sync returned (file-per-thread layouts with an `end` mode).
    pub synced: Option<f64>,
    /// The writer thread's CPU time over its part and its sync; None where the
    /// writer could not read it (a runner with no per-thread CPU clock).
    pub cpu: Option<Cpu>,
    /// Under `--stonewall`: the bytes it wrote, and whether the wall stopped it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written: Option<(u64, bool)>,
}

/// What an executor reports of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Execution {
    /// The method's set-up (rings, maps), recorded apart: outside the write span.
    pub setup_seconds: f64,
    /// From the executor's call to its origin (the set-up and what else came before the
    /// origin), for a new file's one span; where an executor cannot see it (a runner
    /// process), its set-up.
    #[serde(default)]
    pub lead_seconds: f64,
    /// One per part, in part order.
    pub parts: Vec<PartTimes>,
    /// The one sync after every part (one-file layouts with an `end` mode).
    pub sync: Option<Interval>,
    /// The closing steps after the parts and the sync (munmap, close).
    pub close: Option<Interval>,
    /// CPU time of the executing thread over the sync and the closing steps; None
    /// where it could not be read.
    pub cpu: Option<Cpu>,
    /// What an io_uring run submitted (see [`Prepared::ring_record`]).
    pub ring: Option<result::RingRecord>,
    /// Under `--mpi`: each rank's own times and CPU, on the run's common axis (empty
    /// for one process).
    #[serde(default)]
    pub ranks: Vec<result::RankRun>,
}

/// Writes the parts of a prepared run (docs/design.md §5).
pub trait Executor {
    /// What the executor itself adds to what it measures, in words.
    fn overhead(&self) -> &'static str;
    /// Writes every part of `job` behind a start line, syncs as `job.durability` says
    /// (see [`Prepared`] for which span each call is in), and reports the times.
    fn execute(&self, job: &Job) -> Result<Execution, CallError>;
    /// The outcome of an untimed step of a run (preparing, opening, verifying its files)
    /// once every executor that runs together has had its own: for one process, its
    /// own; for MPI ranks, a failure of any rank fails the step on all of them, so that
    /// no rank waits at the next start line for one that has given up.
    fn agree(&self, local: Option<&CallError>) -> Result<(), CallError> {
        local.map_or(Ok(()), |error| Err(error.copy()))
    }
}

/// The native methods on threads of this process.
pub struct InProcess {
    method: &'static dyn Engine,
    /// Runs in each writer thread before it arrives at the start line (tests make
    /// start-up slow with it).
    startup: fn(usize),
    /// Each writer moved to a CPU of its own at the start line (`placement`): not for an
    /// MPI rank, which cannot see where the other ranks' threads go, and whose CPUs Open
    /// MPI may share with other ranks (bound to a socket).
    place: bool,
}

impl InProcess {
    /// What this executor adds, recorded in the result's options.
    pub const OVERHEAD: &'static str =
        "in-process threads, no copy: each writer calls the method on its own source buffer";

    pub fn new(method: &'static dyn Engine) -> InProcess {
        InProcess { method, startup: |_| {}, place: true }
    }

    /// As [`InProcess::new`], leaving the writers where the scheduler puts them.
    pub fn unplaced(method: &'static dyn Engine) -> InProcess {
        InProcess { place: false, ..InProcess::new(method) }
    }

    /// As [`InProcess::new`], with `startup(part)` run by each writer thread before it
    /// arrives at the start line.
    pub fn with_startup(method: &'static dyn Engine, startup: fn(usize)) -> InProcess {
        InProcess { method, startup, place: true }
    }

    /// Writes every part, each from its own thread when there are several, and with
    /// `own_sync` syncs each part's file from its writer right after the part.
    ///
    /// The start line: every writer thread is created and has arrived before any of
    /// them goes, so no thread's start-up (creation, stack, signal mask) is inside the
    /// span. Each writer then reads its own start as it passes the line, and the span
    /// opens at the earliest of them: what remains in it is the wake-up of the writers
    /// that waited, which any program that starts threads together pays too, and
    /// neither a clock read by another thread nor its scheduling is in it. Times
    /// relative to an origin are also what a child process or an MPI rank can report.
    fn write_parts(
        &self,
        prepared: &dyn Prepared,
        count: usize,
        own_sync: bool,
        origin: Instant,
    ) -> Result<Vec<PartTimes>, CallError> {
        let seconds = || origin.elapsed().as_secs_f64();
        let write = |index: usize| -> Result<PartTimes, CallError> {
            prepared.around_part(index, false);
            let cpu = CpuClock::now();
            let start = seconds();
            prepared.write_part(index)?;
            let end = seconds();
            let synced = if own_sync {
                prepared.sync_part(index)?;
                Some(seconds())
            } else {
                None
            };
            let cpu = Some(CpuClock::now().since(cpu));
            prepared.around_part(index, true);
            Ok(PartTimes { start, end, synced, cpu, written: None })
        };
        if count == 1 {
            return Ok(vec![write(0)?]);
        }
        let line = StartLine::new(count);
        std::thread::scope(|scope| {
            let mut workers = Vec::with_capacity(count);
            for index in 0..count {
                let (line, write, startup, place) = (&line, &write, self.startup, self.place);
                let spawned =
                    std::thread::Builder::new().name(format!("writer-{index}")).spawn_scoped(scope, move || {
                        crate::signals::block_in_this_thread();
                        startup(index);
                        // Untimed: a CPU of its own at the start line (see `placement`).
                        let placed = if place { crate::placement::place(index, count) } else { None };
                        let go = line.arrive();
                        if let Some(placed) = placed {
                            placed.release();
                        }
                        if !go {
                            return Ok(None);
                        }
                        write(index).map(Some)
                    });
                match spawned {
                    Ok(worker) => workers.push(worker),
                    Err(error) => {
                        // Release the threads already waiting, without letting them write.
                        line.call_off();
                        return Err(CallError::new(format!("start writer thread {index} of {count}"), error));
                    }
                }
            }
            let mut parts = Vec::with_capacity(count);
            let mut first_error = None;
            for worker in workers {
                match worker.join().expect("a writer thread panicked") {
                    Ok(times) => parts.extend(times),
                    Err(error) => first_error = first_error.or(Some(error)),
                }
            }
            first_error.map_or(Ok(parts), Err)
        })
    }
}

impl Executor for InProcess {
    fn overhead(&self) -> &'static str {
        InProcess::OVERHEAD
    }

    fn execute(&self, job: &Job) -> Result<Execution, CallError> {
        self.execute_behind(job, &|| {})
    }
}

impl InProcess {
    /// As [`Executor::execute`], with `gate` called after the method's set-up and right
    /// before the run's origin, whether the set-up succeeded or not: an MPI rank meets
    /// the other ranks there (a rank whose set-up failed still comes, so none waits).
    pub fn execute_behind(&self, job: &Job, gate: &dyn Fn()) -> Result<Execution, CallError> {
        let setup_started = Instant::now();
        let prepared = self.method.prepare(job);
        let setup_seconds = setup_started.elapsed().as_secs_f64();
        gate();
        let mut prepared = prepared?;
        let end_sync = job.durability.end_sync().is_some();
        // A file per thread: each writer syncs its own file, so N files do not pay N
        // syncs one after another.
        let own_sync = end_sync && job.files.len() > 1;
        // Instant is CLOCK_MONOTONIC on Linux; it is read only outside the write loops.
        let origin = Instant::now();
        let lead_seconds = (origin - setup_started).as_secs_f64();
        let seconds = || origin.elapsed().as_secs_f64();
        let mut parts = self.write_parts(prepared.as_ref(), job.parts.len(), own_sync, origin)?;
        if let Some(wall) = job.stonewall {
            for (index, part) in parts.iter_mut().enumerate() {
                part.written = Some(wall.written(index, job.parts[index].len));
            }
        }
        let cpu = CpuClock::now();
        let sync = if end_sync && !own_sync {
            let start = seconds();
            prepared.sync()?;
            Some(Interval { start, end: seconds() })
        } else {
            None
        };
        let close = if prepared.closes() {
            let start = seconds();
            prepared.finish()?;
            Some(Interval { start, end: seconds() })
        } else {
            None
        };
        let cpu = CpuClock::now().since(cpu);
        Ok(Execution {
            setup_seconds,
            lead_seconds,
            parts,
            sync,
            close,
            cpu: Some(cpu),
            ring: prepared.ring_record(),
            ranks: Vec::new(),
        })
    }
}

/// An executor that writes nothing and reports the times it was given: tests of what
/// `case_runs` makes of an execution.
pub struct Mock(pub Execution);

impl Executor for Mock {
    fn overhead(&self) -> &'static str {
        "none: given times, nothing written"
    }

    fn execute(&self, _job: &Job) -> Result<Execution, CallError> {
        Ok(self.0.clone())
    }
}

/// The start line of a run's writer threads: each one arrives and waits; when the last
/// one arrives, all go. Unlike `std::sync::Barrier`, it can be called off (when
/// starting thread k failed), and then the waiting threads give up instead of writing.
///
/// Where every writer has a CPU of its own, the early arrivals spin instead of sleeping.
/// A sleeping thread woken by the last arrival is often put on the waker's CPU (the
/// scheduler's wake-affine placement), so two writers share one CPU until the load
/// balancer parts them, milliseconds later: on tmpfs, where a 128 MiB part takes 25 ms,
/// that cost 2 threads a quarter of their throughput against 2 processes (each a thread
/// of its own) in the same run. With more writers than CPUs spinning would keep the late
/// ones from arriving, so they sleep at once.
struct StartLine {
    arrived: AtomicUsize,
    /// Undecided, go, or called off.
    decision: AtomicU8,
    /// Taken to set the decision and to sleep on it, so that no wake-up is lost.
    state: Mutex<()>,
    decided: Condvar,
    writers: usize,
    spin: Duration,
}

const UNDECIDED: u8 = 0;
const GO: u8 = 1;
const CALLED_OFF: u8 = 2;
/// Longer than starting a few dozen threads takes; bounded, in case one never arrives.
const START_SPIN: Duration = Duration::from_millis(50);

impl StartLine {
    fn new(writers: usize) -> StartLine {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let spin = if writers <= cpus { START_SPIN } else { Duration::ZERO };
        StartLine {
            arrived: AtomicUsize::new(0),
            decision: AtomicU8::new(UNDECIDED),
            state: Mutex::new(()),
            decided: Condvar::new(),
            writers,
            spin,
        }
    }

    /// Arrives and waits for the others; true: go, false: the run was called off.
    fn arrive(&self) -> bool {
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.writers {
            self.decide(GO);
        }
        let spinning_since = Instant::now();
        while self.decision.load(Ordering::Acquire) == UNDECIDED && spinning_since.elapsed() < self.spin {
            std::hint::spin_loop();
        }
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match self.decision.load(Ordering::Acquire) {
                UNDECIDED => state = self.decided.wait(state).unwrap_or_else(|e| e.into_inner()),
                decision => return decision == GO,
            }
        }
    }

    fn call_off(&self) {
        self.decide(CALLED_OFF);
    }

    /// The first decision stands.
    fn decide(&self, decision: u8) {
        let _state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let _ = self.decision.compare_exchange(UNDECIDED, decision, Ordering::AcqRel, Ordering::Acquire);
        self.decided.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use std::os::fd::RawFd;
    use std::thread::ThreadId;
    use std::time::Duration;

    use super::*;
    use crate::durability::Pacing;
    use crate::methods::Part;
    use crate::source::{Shape, Source, Streams};
    use plan::Durability;

    /// What a fake method was asked to do, and by which thread.
    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Call {
        Write(usize),
        SyncPart(usize),
        Sync,
        Finish,
    }

    /// A method that writes nothing and records its calls; `finish` takes `closing`.
    struct Fake {
        calls: Mutex<Vec<(Call, ThreadId)>>,
        closing: Duration,
    }

    impl Fake {
        const fn new(closing: Duration) -> Fake {
            Fake { calls: Mutex::new(Vec::new()), closing }
        }

        fn record(&self, call: Call) {
            self.calls.lock().unwrap().push((call, std::thread::current().id()));
        }

        fn calls(&self) -> Vec<(Call, ThreadId)> {
            self.calls.lock().unwrap().clone()
        }
    }

    struct FakeRun<'a>(&'a Fake);

    impl Engine for Fake {
        fn name(&self) -> &'static str {
            "fake"
        }
        fn prepare<'a>(&'a self, _job: &'a Job<'a>) -> Result<Box<dyn Prepared + 'a>, CallError> {
            Ok(Box::new(FakeRun(self)))
        }
    }

    impl Prepared for FakeRun<'_> {
        fn write_part(&self, index: usize) -> Result<(), CallError> {
            self.0.record(Call::Write(index));
            Ok(())
        }
        fn sync(&self) -> Result<(), CallError> {
            self.0.record(Call::Sync);
            Ok(())
        }
        fn sync_part(&self, index: usize) -> Result<(), CallError> {
            self.0.record(Call::SyncPart(index));
            Ok(())
        }
        fn closes(&self) -> bool {
            !self.0.closing.is_zero()
        }
        fn finish(&mut self) -> Result<(), CallError> {
            std::thread::sleep(self.0.closing);
            self.0.record(Call::Finish);
            Ok(())
        }
    }

    /// Runs two parts of `fake` into `files` files under `durability`.
    fn execute(fake: &'static Fake, startup: fn(usize), files: usize, durability: Durability) -> Execution {
        let source = Source::new(1);
        let fds: Vec<RawFd> = vec![-1; files];
        let parts: Vec<Part> = (0..2).map(|i| Part { file: i % files, offset: 0, len: 4096 }).collect();
        let names: Vec<String> = (0..files).map(|file| format!("f{file}")).collect();
        let part_files: Vec<usize> = parts.iter().map(|part| part.file).collect();
        let streams = Streams::new(&source, &names, &part_files, Shape::new(2, 4096, 1, None, 8192)).unwrap();
        let job = Job {
            paths: &[],
            files: &fds,
            file_lens: &[4096, 4096][..files],
            parts: &parts,
            chunk: 4096,
            iov: 1,
            queue_depth: 1,
            source: &streams,
            durability,
            pacing: Pacing::of(durability, 2, files),
            stonewall: None,
        };
        InProcess::with_startup(fake, startup).execute(&job).unwrap()
    }

    #[test]
    fn a_slow_writer_start_up_is_not_in_the_span() {
        static FAKE: Fake = Fake::new(Duration::ZERO);
        // The second writer takes a second to start; the writes themselves take nothing.
        let slow_second = |index| {
            if index == 1 {
                std::thread::sleep(Duration::from_secs(1));
            }
        };
        let execution = execute(&FAKE, slow_second, 1, Durability::None);
        let start = execution.parts.iter().map(|p| p.start).fold(f64::INFINITY, f64::min);
        let end = execution.parts.iter().map(|p| p.end).fold(0.0, f64::max);
        assert!(end - start < 0.5, "the span holds the start-up: {execution:?}");
        assert!(start >= 1.0, "the clock started before every writer had arrived: {execution:?}");
    }

    #[test]
    fn with_a_file_each_every_writer_syncs_its_own_file_right_after_its_part() {
        static FAKE: Fake = Fake::new(Duration::ZERO);
        let execution = execute(&FAKE, |_| {}, 2, Durability::End);
        let calls = FAKE.calls();
        for index in 0..2 {
            let writer = calls.iter().find(|(call, _)| *call == Call::Write(index)).unwrap().1;
            let syncer = calls.iter().find(|(call, _)| *call == Call::SyncPart(index)).unwrap().1;
            assert_eq!(writer, syncer, "part {index} is synced by its writer: {calls:?}");
            assert_ne!(writer, std::thread::current().id());
            let part = execution.parts[index];
            assert!(part.synced.is_some_and(|synced| synced >= part.end), "{part:?}");
        }
        assert!(!calls.iter().any(|(call, _)| *call == Call::Sync), "no sync of all files after: {calls:?}");
        assert_eq!(execution.sync, None);
    }

    #[test]
    fn one_file_gets_one_sync_after_every_part_then_the_closing_steps() {
        static FAKE: Fake = Fake::new(Duration::from_millis(200));
        let execution = execute(&FAKE, |_| {}, 1, Durability::End);
        let calls: Vec<Call> = FAKE.calls().into_iter().map(|(call, _)| call).collect();
        assert_eq!(calls[2..], [Call::Sync, Call::Finish], "{calls:?}");
        let (sync, close) = (execution.sync.unwrap(), execution.close.unwrap());
        let written = execution.parts.iter().map(|p| p.end).fold(0.0, f64::max);
        assert!(written <= sync.start && sync.end <= close.start, "{execution:?}");
        assert!(close.seconds() >= 0.2, "the closing steps are timed where they happen: {execution:?}");
        assert!(execution.parts.iter().all(|part| part.synced.is_none()));
    }

    #[test]
    fn the_start_line_waits_for_every_writer_and_can_be_called_off() {
        // Two of three arrive: nobody goes until the third, or until called off.
        let two_arrive_then_call_off = |line: &StartLine| {
            std::thread::scope(|scope| {
                let waiting: Vec<_> = (0..2).map(|_| scope.spawn(|| line.arrive())).collect();
                while line.arrived.load(Ordering::Acquire) < 2 {
                    std::thread::yield_now();
                }
                line.call_off();
                waiting.into_iter().map(|w| w.join().unwrap()).collect::<Vec<_>>()
            })
        };
        assert_eq!(two_arrive_then_call_off(&StartLine::new(3)), [false, false]);
        let line = StartLine::new(2);
        let went = std::thread::scope(|scope| {
            let other = scope.spawn(|| line.arrive());
            line.arrive() && other.join().unwrap()
        });
        assert!(went);
        // Spinning arrivals see the call-off too, long before their spin would end.
        let started = Instant::now();
        let spun = two_arrive_then_call_off(&StartLine { spin: Duration::from_secs(60), ..StartLine::new(3) });
        assert_eq!(spun, [false, false]);
        assert!(started.elapsed() < Duration::from_secs(30));
    }
}
