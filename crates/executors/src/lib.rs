//! A case's runs and the executor each takes: the in-process engines of `measure`, the
//! runner of another runtime (C, Python, Go, Zig, Java, Node.js: built from the
//! catalogue's toolchains, driven over docs/runtimes.md's protocol), or MPI ranks
//! (docs/scale.md); and the timed loops of latency cases, native or a runner's. Above
//! `measure`, which knows one executor, the in-process one, and none of these.

pub mod case_runs;
pub mod op_loops;
pub mod ranks;
pub mod replay;
pub mod replay_check;
pub mod runtimes;
