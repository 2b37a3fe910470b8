//! `writebench latency`: small writes one by one, and crash-safe saves.
//!
//! One test binary for these end-to-end tests (each file a module, its tests named
//! `file::test`), so that CI links it once (docs/code.md).

#[path = "../common/mod.rs"]
mod common;

mod latency;
mod replace;
