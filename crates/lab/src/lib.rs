//! The filesystem lab (`writebench lab`): builds filesystems on RAM-backed loop devices,
//! runs the suite on each, tears each down, and compares them.
//!
//! - `names`: how every object the lab creates is named, so that it (and `writebench
//!   clean` after a SIGKILL) can tell its own objects from anyone else's;
//! - `shell`: the external commands (losetup, mkfs, mdadm, mount), run and recorded;
//! - `loopdev` and `md`: loop devices and md arrays, found through their backing files;
//! - `objects`: what one build created, torn down in reverse order;
//! - `filesystems`: the table of filesystems, one builder each;
//! - `hosts`: namespace hosts and a GlusterFS volume over them, for the distributed rows;
//! - `netns`: the processes of those hosts, found by namespace and ended;
//! - `leftovers`: what a killed lab left, for `writebench clean`;
//! - `driver`: the lab itself, filesystem after filesystem, then the comparison.

pub mod crash_fs;
pub mod driver;
pub mod filesystems;
pub mod hosts;
pub mod leftovers;
pub mod loopdev;
pub mod md;
pub mod names;
pub mod namespaces;
pub mod netns;
pub mod objects;
pub mod shell;
