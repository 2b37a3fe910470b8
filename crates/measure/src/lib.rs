//! Everything that touches files and clocks: the runner (cases, runs, hygiene), the
//! methods (one file each), the scratch directory, the source data, verification,
//! signals and free space.

pub mod big_write;
pub mod case_runs;
pub mod clean;
pub mod cpu;
pub mod creation;
pub mod death_watch;
pub mod durability;
pub mod executor;
pub mod fd;
pub mod hygiene;
pub mod methods;
pub mod op_loops;
pub mod peak;
pub mod placement;
pub mod ranks;
pub mod residency;
pub mod runs;
pub mod runtimes;
pub mod save;
pub mod settle;
pub mod signals;
pub mod source;
pub mod space;
pub mod target;
pub mod verify;
