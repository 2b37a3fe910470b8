//! The engines' tests that run a case the way `run` and `latency` do, through the
//! rounds' driver (`run_case`, `run_alone`): here, above `measure`, which knows nothing of
//! the rounds.

mod case_runs;
mod op_loops;
