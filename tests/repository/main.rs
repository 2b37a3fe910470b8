//! The repository itself: the floors of the code, the docs' links, the packaging, the option parsers on generated input.
//!
//! One test binary for these end-to-end tests (each file a module, its tests named
//! `file::test`), so that CI links it once (docs/code.md).

#[path = "../common/mod.rs"]
mod common;

mod docs;
mod fuzz_parsers;
mod install;
mod layers;
mod packaging;
mod sizes;
