//! writebench: what is the fastest way for a program to write this file here,
//! and what does it cost to make it durable?
//!
//! The code is layered (docs/design.md §5); each folder says what it is and imports only from
//! the layers below it:
//! - `cli`: parse and validate the command line;
//! - `plan`: the vocabulary (case, state, layout, durability), suites and expansion;
//! - `measure`: the runner, the executor, the methods, and everything that touches files;
//! - `context`: what the result needs to be trusted (host, target);
//! - `analysis`: statistics over runs, significance, advice, and the comparison of saved results;
//! - `export`: table, JSON, CSV, latency, the Answer, Markdown and HTML (with its charts) and
//!   compare rendering, reading a result (or a comparison) and nothing else;
//! - `lab`: the filesystem lab, which builds filesystems, runs `run` on each and compares them;
//! - `result`: the result file as plain data; `error`: a failed call and its OS text.

pub mod analysis;
pub mod cli;
pub mod context;
pub mod error;
pub mod export;
pub mod lab;
pub mod measure;
pub mod plan;
pub mod result;
pub mod stats;
