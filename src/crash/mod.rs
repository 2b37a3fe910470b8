//! `writebench crash` (docs/crash.md), built in steps: a recorder of every block write and
//! flush a real filesystem sends to its device (`recorder`); the workloads, crash states
//! and promise checks come next.

pub mod image;
pub mod recorder;
