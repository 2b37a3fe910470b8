//! `writebench trace` (docs/trace.md): how a program writes, learnt from its system
//! calls.
//!
//! - `record`: the program run under strace (or an existing strace log read);
//! - `strace`: one line of strace's log read into a call;
//! - `fold`: the calls followed through descriptors, threads and renames;
//! - `paths`: paths made absolute and plain, pseudo-files told apart;
//! - `sequence`: the calls kept in order for a replay (`plan::replay`);
//! - `file_state`: what is known of one file while the calls are read;
//! - `spread`: values counted exactly, and their order statistics.
//!
//! The traced run is never timed for an Answer: a traced call is slowed by the tracer.

pub mod file_state;
pub mod fold;
pub mod paths;
pub mod record;
pub mod sequence;
pub mod spread;
pub mod strace;

#[cfg(test)]
mod fold_tests;
