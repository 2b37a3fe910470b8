//! What becomes of a result: the Answer, the exports, `report`, `compare`, the terminal, the HTML report in a real browser.
//!
//! One test binary for these end-to-end tests (each file a module, its tests named
//! `file::test`), so that CI links it once (docs/code.md).

#[path = "../common/mod.rs"]
mod common;

mod answer;
mod compare;
mod exports;
mod glance;
mod golden;
mod html_chromium;
mod report;
mod terminal;
