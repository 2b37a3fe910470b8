//! What `run` writes, and how: every write path, file state, layout and durability mode; verification; failures and safety; the filesystems under the path.
//!
//! One test binary for these end-to-end tests (each file a module, its tests named
//! `file::test`), so that CI links it once (docs/code.md).

#[path = "../common/mod.rs"]
mod common;

mod backing;
mod creation;
mod dedup;
mod dio_alignment;
mod durability;
mod failures;
mod fs_type;
mod full_suite;
mod io_uring_disabled;
mod io_uring_paths;
mod layout;
mod new_file;
mod pages;
mod safety;
mod source;
mod stonewall;
mod syncs;
mod verify_option;
mod verify_written_data;
mod write_paths;
