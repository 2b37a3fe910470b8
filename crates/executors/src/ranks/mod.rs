//! `writebench run --mpi`: the ranks of an MPI job as executors (docs/design.md §5). What the
//! ranks do together is a trait ([`collective::Collective`]); the MPI library is behind
//! it only in the `mpi` cargo feature, so the default build neither needs nor links it.

pub mod aggregate;
pub mod collective;
pub mod executor;
#[cfg(feature = "mpi")]
pub mod mpi;
// A calculation behind docs/scale.md's table, checked against a simulation by its own
// test: nothing that ships calls it, so it is built for the tests only.
#[cfg(test)]
mod skew;

use crate::ranks::collective::Collective;

/// Where this process stands in the job: what the runner needs to run its share of a
/// case and to agree with the other ranks.
#[derive(Debug, Clone, Copy)]
pub struct Ranks {
    pub comm: &'static dyn Collective,
    /// This rank's host name.
    pub host: &'static str,
    /// Every rank's host name, in rank order.
    pub hosts: &'static [String],
}

impl Ranks {
    pub fn rank(&self) -> usize {
        self.comm.rank()
    }

    pub fn size(&self) -> usize {
        self.comm.size()
    }
}
