//! Everything that touches files and clocks in this process: the executor seam and its
//! in-process executor, the methods (one engine file each), a run's hygiene, the scratch
//! directory, the source data, durability's sync calls, verification, signals and free
//! space. Another runtime's runner and MPI ranks are executors of the floor above
//! (`executors`), which also picks a case's executor.

pub mod big_write;
pub mod clean;
pub mod cpu;
pub mod creation;
pub mod death_watch;
pub mod durability;
pub mod executor;
pub mod fd;
pub mod huge;
pub mod hygiene;
pub mod methods;
pub mod peak;
pub mod placement;
pub mod residency;
pub mod runs;
pub mod save;
pub mod settle;
pub mod signals;
pub mod source;
pub mod space;
pub mod target;
pub mod verify;
