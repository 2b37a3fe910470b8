//! One run's executions on every rank made into the execution of the whole job, as IOR
//! aggregates: the write span runs from the earliest rank's start to the latest rank's
//! last write, the sync span from there to the latest rank's last sync. Each rank's own
//! times, CPU and bytes are kept beside it, so the spread and the slowest rank show.
//!
//! Times come from each rank in seconds from its own origin, its exit from the barrier
//! before the run. Ranks on one host read one CLOCK_MONOTONIC, so their origins are
//! placed exactly (each rank sends its origin's monotonic reading). Ranks on several
//! hosts have no common clock: their origins are taken as simultaneous, which is off by
//! the barrier's exit skew (docs/scale.md estimates what that does to a figure).

use serde::{Deserialize, Serialize};

use measure::executor::{Cpu, Execution, Interval, PartTimes};
use result::RankRun;

/// What one rank sends of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankExecution {
    pub execution: Execution,
    /// CLOCK_MONOTONIC at the rank's origin, in seconds.
    pub origin_monotonic: f64,
    pub hostname: String,
    /// Bytes the rank's parts wrote.
    pub bytes: u64,
}

/// How ranks' origins are put on one axis.
pub fn clock_of(hosts: &[&str]) -> &'static str {
    if hosts.windows(2).all(|pair| pair[0] == pair[1]) {
        "one host: every rank's times on its CLOCK_MONOTONIC"
    } else {
        "several hosts: each rank's times from its exit of the barrier before the run, taken as simultaneous"
    }
}

/// The job's execution, from every rank's, in rank order.
pub fn combine(ranks: &[RankExecution]) -> Execution {
    let one_host = ranks.windows(2).all(|pair| pair[0].hostname == pair[1].hostname);
    let first_origin = ranks.iter().map(|r| r.origin_monotonic).fold(f64::INFINITY, f64::min);
    // Each rank's shift onto the common axis.
    let shift = |rank: &RankExecution| if one_host { rank.origin_monotonic - first_origin } else { 0.0 };
    let mut parts = Vec::new();
    let mut rank_runs = Vec::with_capacity(ranks.len());
    let (mut syncs, mut closes) = (false, false);
    let (mut written, mut durable, mut closed) = (f64::NEG_INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY);
    for (index, rank) in ranks.iter().enumerate() {
        let (at, execution) = (shift(rank), &rank.execution);
        let start = execution.parts.iter().map(|p| p.start).fold(f64::INFINITY, f64::min) + at;
        let end = execution.parts.iter().map(|p| p.end).fold(f64::NEG_INFINITY, f64::max) + at;
        let last_synced = execution.parts.iter().filter_map(|p| p.synced).reduce(f64::max).map(|s| s + at);
        let synced = [last_synced, execution.sync.map(|s| s.end + at)].into_iter().flatten().reduce(f64::max);
        let close_end = execution.close.map(|c| c.end + at);
        let rank_syncs = synced.is_some();
        // A rank's own end: closing steps end its write span unless it syncs (as for one process).
        let rank_end = if rank_syncs { end } else { close_end.map_or(end, |c| c.max(end)) };
        let rank_synced = synced.map(|s| close_end.map_or(s, |c| c.max(s)));
        syncs |= rank_syncs;
        closes |= close_end.is_some();
        written = written.max(end);
        closed = closed.max(rank_end);
        durable = durable.max(rank_synced.unwrap_or(rank_end));
        let rank_cpu = Cpu::sum(std::iter::once(execution.cpu).chain(execution.parts.iter().map(|part| part.cpu)));
        for part in &execution.parts {
            parts.push(PartTimes { start: part.start + at, end: part.end + at, synced: None, ..*part });
        }
        rank_runs.push(RankRun {
            rank: index as u32,
            start_seconds: start,
            end_seconds: rank_end,
            synced_seconds: rank_synced,
            user_seconds: rank_cpu.map(|cpu| cpu.user),
            sys_seconds: rank_cpu.map(|cpu| cpu.sys),
            bytes: rank.bytes,
        });
    }
    // The axis starts at the earliest rank's start.
    let origin = rank_runs.iter().map(|r| r.start_seconds).fold(f64::INFINITY, f64::min);
    for run in &mut rank_runs {
        run.start_seconds -= origin;
        run.end_seconds -= origin;
        run.synced_seconds = run.synced_seconds.map(|s| s - origin);
    }
    let sync = syncs.then(|| Interval { start: written, end: durable.max(written) });
    let close = (!syncs && closes).then(|| Interval { start: written, end: closed.max(written) });
    let setup_seconds = ranks.iter().map(|r| r.execution.setup_seconds).fold(0.0, f64::max);
    Execution {
        setup_seconds,
        // The slowest rank's set-up; the barrier the ranks met at is not a program's.
        lead_seconds: setup_seconds,
        parts,
        sync,
        close,
        // The executing threads'; each part carries its writer's.
        cpu: Cpu::sum(ranks.iter().map(|r| r.execution.cpu)),
        ring: ranks.first().and_then(|r| r.execution.ring.clone()),
        ranks: rank_runs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(start: f64, end: f64, synced: Option<f64>) -> PartTimes {
        PartTimes { start, end, synced, cpu: Some(Cpu { user: 0.5, sys: 0.25 }), written: None }
    }

    fn rank(parts: Vec<PartTimes>, sync: Option<Interval>, origin: f64, host: &str) -> RankExecution {
        let execution = Execution {
            setup_seconds: origin,
            lead_seconds: origin,
            parts,
            sync,
            close: None,
            cpu: Some(Cpu { user: 0.0, sys: 0.125 }),
            ring: None,
            ranks: Vec::new(),
        };
        RankExecution { execution, origin_monotonic: origin, hostname: host.into(), bytes: 1000 }
    }

    #[test]
    fn on_one_host_the_span_runs_from_the_earliest_start_to_the_latest_end_on_one_clock() {
        // Rank 1 left the barrier 0.5 s after rank 0 (its origin is later on the shared clock).
        let ranks = [
            rank(vec![part(0.0, 2.0, None)], Some(Interval { start: 2.0, end: 2.25 }), 100.0, "a"),
            rank(vec![part(0.0, 2.0, None)], Some(Interval { start: 2.0, end: 3.0 }), 100.5, "a"),
        ];
        let combined = combine(&ranks);
        assert_eq!(combined.parts.iter().map(|p| (p.start, p.end)).collect::<Vec<_>>(), [(0.0, 2.0), (0.5, 2.5)]);
        assert_eq!(combined.sync, Some(Interval { start: 2.5, end: 3.5 }), "the last rank's sync ends the span");
        let per_rank: Vec<(f64, f64, Option<f64>)> =
            combined.ranks.iter().map(|r| (r.start_seconds, r.end_seconds, r.synced_seconds)).collect();
        assert_eq!(per_rank, [(0.0, 2.0, Some(2.25)), (0.5, 2.5, Some(3.5))]);
        assert_eq!(combined.ranks[1].user_seconds, Some(0.5));
        assert_eq!(combined.ranks[1].sys_seconds, Some(0.375));
        assert_eq!(combined.ranks[0].bytes_per_second(), 500.0);
        assert_eq!(combined.cpu, Some(Cpu { user: 0.0, sys: 0.25 }));
        assert_eq!(combined.setup_seconds, 100.5);
    }

    #[test]
    fn on_several_hosts_the_barrier_exits_are_the_common_origin() {
        let ranks = [
            rank(vec![part(0.0, 1.0, Some(1.5))], None, 5.0, "a"),
            rank(vec![part(0.25, 2.0, Some(2.125))], None, 9000.0, "b"),
        ];
        let combined = combine(&ranks);
        assert_eq!(combined.parts[1].start, 0.25, "no shift across hosts");
        assert!(combined.parts.iter().all(|p| p.synced.is_none()), "the one sync span replaces them");
        assert_eq!(combined.sync, Some(Interval { start: 2.0, end: 2.125 }));
        assert!(clock_of(&["a", "b"]).starts_with("several hosts"));
        assert!(clock_of(&["a", "a"]).starts_with("one host"));
    }

    #[test]
    fn without_a_sync_the_latest_closing_step_ends_the_write_span() {
        let mut closing = rank(vec![part(0.0, 1.0, None)], None, 0.0, "a");
        closing.execution.close = Some(Interval { start: 1.0, end: 1.75 });
        let plain = rank(vec![part(0.0, 1.5, None)], None, 0.0, "a");
        let combined = combine(&[closing, plain]);
        assert_eq!(combined.sync, None);
        assert_eq!(combined.close, Some(Interval { start: 1.5, end: 1.75 }));
        assert_eq!(combined.ranks[0].end_seconds, 1.75);
    }
}
