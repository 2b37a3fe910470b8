//! writebench: what is the fastest way for a program to write this file here,
//! and what does it cost to make it durable?
//!
//! One case can be followed from the command line to the result file in a handful
//! of modules: `cli` → `plan` → `runner` (with `target`, `source`, `methods`) →
//! `result` (with `stats`) → `export`.

pub mod clean;
pub mod cli;
pub mod context;
pub mod creation;
pub mod durability;
pub mod estimate;
pub mod export;
pub mod latency;
pub mod methods;
pub mod plan;
pub mod result;
pub mod runner;
pub mod signals;
pub mod source;
pub mod space;
pub mod stats;
pub mod suites;
pub mod target;
pub mod units;
pub mod verify;
