//! What the barrier's exit skew does to a run's figure (docs/scale.md). The ranks leave
//! the barrier before a run at slightly different times; the job's span runs from the
//! earliest rank's start to the latest rank's end, so when every rank writes for `T`
//! seconds the span is `T` plus the range of the starts, and the figure is understated
//! by that range over the span. For `N` ranks whose exits spread uniformly over `skew`
//! seconds, the expected range is `skew (N - 1) / (N + 1)`.
//!
//! A dissemination barrier (what MPI libraries use at scale) tells the last rank that
//! everyone arrived about `ceil(log2 N)` message latencies after the first: that is the
//! model of `skew` the table in docs/scale.md uses, with the latency as a parameter.

/// Expected range of `ranks` exit times spread uniformly over `skew` seconds.
pub fn expected_start_range(ranks: u32, skew: f64) -> f64 {
    let n = f64::from(ranks.max(1));
    skew * (n - 1.0) / (n + 1.0)
}

/// The barrier's exit skew of `ranks` ranks with `latency` seconds per message, for a
/// dissemination barrier: `ceil(log2 N)` rounds of messages.
pub fn barrier_skew(ranks: u32, latency: f64) -> f64 {
    f64::from(ranks.max(1).next_power_of_two().trailing_zeros()) * latency
}

/// How much a run of `seconds` per rank is understated by the skew: the expected start
/// range over the span it lengthens (0.01 is 1 %).
pub fn understatement(ranks: u32, seconds: f64, skew: f64) -> f64 {
    let range = expected_start_range(ranks, skew);
    range / (seconds + range)
}

#[cfg(test)]
mod tests {
    use rand_xoshiro::Xoshiro256PlusPlus;
    use rand_xoshiro::rand_core::{Rng, SeedableRng};

    use super::*;
    use crate::ranks::aggregate::{RankExecution, combine};
    use measure::executor::{Cpu, Execution, PartTimes};

    /// The span `combine` makes of `ranks` ranks that each write for `seconds`, leaving
    /// the barrier at uniform random times over `skew` (one host: their origins known).
    fn simulated_span(ranks: u32, seconds: f64, skew: f64, rng: &mut Xoshiro256PlusPlus) -> f64 {
        let executions: Vec<RankExecution> = (0..ranks)
            .map(|_| {
                let exit = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * skew;
                let part =
                    PartTimes { start: 0.0, end: seconds, synced: None, cpu: Some(Cpu::default()), written: None };
                let execution = Execution {
                    setup_seconds: 0.0,
                    lead_seconds: 0.0,
                    parts: vec![part],
                    sync: None,
                    close: None,
                    cpu: Some(Cpu::default()),
                    ring: None,
                    ranks: Vec::new(),
                };
                RankExecution { execution, origin_monotonic: exit, hostname: "h".into(), bytes: 1 }
            })
            .collect();
        let combined = combine(&executions);
        let start = combined.parts.iter().map(|p| p.start).fold(f64::INFINITY, f64::min);
        combined.parts.iter().map(|p| p.end).fold(0.0, f64::max) - start
    }

    #[test]
    fn the_simulated_aggregation_error_matches_the_calculation() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        for ranks in [2, 16, 128, 1024] {
            let skew = barrier_skew(ranks, 5e-6);
            for seconds in [1e-3, 1e-2, 0.1] {
                let trials = 200;
                let mean =
                    (0..trials).map(|_| simulated_span(ranks, seconds, skew, &mut rng)).sum::<f64>() / trials as f64;
                let simulated = (mean - seconds) / mean;
                let calculated = understatement(ranks, seconds, skew);
                assert!(
                    (simulated - calculated).abs() <= 0.1 * calculated + 1e-9,
                    "{ranks} ranks, {seconds} s: simulated {simulated}, calculated {calculated}"
                );
            }
        }
        assert_eq!(barrier_skew(1, 1.0), 0.0);
        assert_eq!(barrier_skew(1000, 1.0), 10.0);
    }

    /// The table of docs/scale.md: `cargo test --release -p writebench-measure --lib skew_table -- --nocapture`.
    #[test]
    fn skew_table() {
        for latency in [2e-6, 50e-6] {
            println!("\nmessage latency {:.0} µs: figure understated by (%)", latency * 1e6);
            println!("| run length | 2 ranks | 16 ranks | 128 ranks | 1024 ranks | 8192 ranks |");
            println!("| ---: | ---: | ---: | ---: | ---: | ---: |");
            for seconds in [1e-3, 1e-2, 0.1, 1.0, 10.0] {
                let cells: Vec<String> = [2, 16, 128, 1024, 8192]
                    .iter()
                    .map(|&ranks| {
                        format!("{:.3}", 100.0 * understatement(ranks, seconds, barrier_skew(ranks, latency)))
                    })
                    .collect();
                println!("| {seconds} s | {} |", cells.join(" | "));
            }
        }
        assert!(understatement(1024, 1.0, barrier_skew(1024, 2e-6)) < 1e-4);
    }
}
