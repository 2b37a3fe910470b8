//! writebench: what is the fastest way for a program to write this file here,
//! and what does it cost to make it durable?
//!
//! The code is built in floors (docs/design.md §5), listed here top to bottom; a module
//! imports only from its own floor or a lower one (`tests/repository/layers.rs` holds the order and
//! fails on an import that points up it). At the top are `main.rs`, which parses and dispatches, and
//! `app`: one pipeline per subcommand.
//! - `cli`: parse and validate the command line; the y/N question of `clean`;
//! - `crash`: the crash check's recorder, workloads, states and promises;
//! - `trace`: a program's system calls recorded by strace and folded into how it writes;
//! - `lab`: the filesystem lab, which builds filesystems, runs `run` on each and compares them;
//! - `rounds`: how many runs each case gets and in which order, the race for the Answer,
//!   the estimate of what a run costs: the policy joining `executors` and `analysis`;
//! - `export`: table, JSON, CSV, latency, the Answer, Markdown and HTML (with its charts) and
//!   compare rendering, every word and number format, reading a result (or a comparison)
//!   and computing nothing;
//! - `analysis`: a case's statistics derived from its runs, advice, and the comparison of
//!   saved results;
//! - `executors`: a case's runs and the executor each takes: in process, another runtime's
//!   runner, MPI ranks; the latency loops;
//! - `measure`: the executor seam, the engines, and everything that touches files in this
//!   process (the system calls of a measurement, the sync calls among them), knowing
//!   nothing of statistics;
//! - `result`: the result file as plain data, nothing computed;
//! - `context`: what the result needs to be trusted (host, target); it reads the host's
//!   facts, yet sits below `result`, which holds its data types;
//! - `plan`: the vocabulary (case, state, layout, durability), suites and expansion;
//! - `stats`: statistics, outliers, significance and equivalence, importing nothing else;
//! - `error`: a failed call and its OS text.
//!
//! Every floor below `cli` is a crate of the workspace (`crates/FLOOR/`), depending only
//! on those below it, so that the compiler refuses an import up them; each is re-exported
//! here under its floor's name, so that `crate::plan::Case` reads the same in `app` and
//! `cli` as in the tests (`writebench::plan::Case`).

pub mod app;
pub mod cli;

pub use ::analysis;
pub use ::context;
pub use ::crash;
pub use ::error;
pub use ::executors;
pub use ::export;
pub use ::lab;
pub use ::measure;
pub use ::plan;
pub use ::result;
pub use ::rounds;
pub use ::stats;
pub use ::trace;
