//! The MPI binding (cargo feature `mpi`): [`Collective`] over MPI_COMM_WORLD with rsmpi.
//! Only the main thread of a rank calls MPI (writer threads never do), so the library is
//! initialised for single-threaded use.

use mpi::Count;
use mpi::collective::{CommunicatorCollectives, Root};
use mpi::datatype::PartitionMut;
use mpi::topology::{Communicator, SimpleCommunicator};

use crate::ranks::collective::Collective;
use measure::signals;

/// The MPI library for the life of the command: MPI_Finalize when dropped, which every
/// rank must reach (Open MPI counts a rank that exits without it as failed).
pub struct Mpi {
    _universe: mpi::environment::Universe,
    world: &'static World,
}

pub struct World {
    comm: SimpleCommunicator,
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MPI_COMM_WORLD (rank {} of {})", self.rank(), self.size())
    }
}

impl Mpi {
    /// MPI_Init, with SIGINT/SIGTERM/SIGHUP held so that the library's own threads are
    /// started with them blocked: they then reach the main thread, whose handler
    /// removes the scratch directory (measure::signals). None when MPI is already up.
    pub fn init() -> Option<Mpi> {
        let universe = signals::held(mpi::initialize)?;
        let world = Box::leak(Box::new(World { comm: universe.world() }));
        Some(Mpi { _universe: universe, world })
    }

    pub fn world(&self) -> &'static World {
        self.world
    }

    /// MPI_Get_library_version: the implementation and its version, on one line.
    pub fn library_version() -> String {
        let text = mpi::environment::library_version().unwrap_or_else(|_| "unknown MPI library".to_string());
        // The C string's NUL may come along; the text may span lines.
        let text = text.trim_end_matches('\0');
        text.split_whitespace().collect::<Vec<_>>().join(" ").trim_end_matches(',').to_string()
    }
}

impl Collective for World {
    fn rank(&self) -> usize {
        self.comm.rank() as usize
    }

    fn size(&self) -> usize {
        self.comm.size() as usize
    }

    fn barrier(&self) {
        self.comm.barrier();
    }

    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        let size = self.size();
        let length = Count::try_from(mine.len()).unwrap_or_else(|_| self.abort(70));
        let mut lengths = vec![0 as Count; size];
        self.comm.all_gather_into(&length, &mut lengths[..]);
        let displacements: Vec<Count> = lengths
            .iter()
            .scan(0 as Count, |at, &length| {
                let this = *at;
                *at += length;
                Some(this)
            })
            .collect();
        let total: usize = lengths.iter().map(|&n| n as usize).sum();
        let mut all = vec![0u8; total];
        {
            let mut partition = PartitionMut::new(&mut all[..], &lengths[..], &displacements[..]);
            self.comm.all_gather_varcount_into(mine, &mut partition);
        }
        lengths
            .iter()
            .zip(&displacements)
            .map(|(&length, &at)| all[at as usize..(at + length) as usize].to_vec())
            .collect()
    }

    fn broadcast(&self, mine: &[u8]) -> Vec<u8> {
        let root = self.comm.process_at_rank(0);
        let mut length = mine.len() as u64;
        root.broadcast_into(&mut length);
        let mut bytes = if self.rank() == 0 { mine.to_vec() } else { vec![0u8; length as usize] };
        root.broadcast_into(&mut bytes[..]);
        bytes
    }

    fn abort(&self, code: i32) -> ! {
        self.comm.abort(code)
    }
}
