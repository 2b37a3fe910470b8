//! What the ranks of an `--mpi` run do together, as a small trait: the MPI binding
//! (`executors::ranks::mpi`, cargo feature `mpi`) implements it over MPI_COMM_WORLD, and
//! tests implement it with threads, so that everything built on it (the rank executor,
//! the aggregation, the agreement on failures) is tested without an MPI library.

use std::fmt::Debug;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// The collective calls writebench needs. Every rank must make the same calls in the
/// same order (as MPI requires): the code calls them on every path, failing or not.
pub trait Collective: Debug {
    /// This process's rank, 0 to `size() - 1`.
    fn rank(&self) -> usize;
    /// How many ranks run together.
    fn size(&self) -> usize;
    /// Returns once every rank has called it.
    fn barrier(&self);
    /// Every rank's bytes, in rank order, on every rank.
    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>>;
    /// Rank 0's bytes on every rank (the others' `mine` is ignored).
    fn broadcast(&self, mine: &[u8]) -> Vec<u8>;
    /// Ends every rank of the job at once, with `code` (MPI_Abort): for a rank that can
    /// no longer take part, so that the others do not wait for it.
    fn abort(&self, code: i32) -> !;
}

/// Every rank's `value`, in rank order, on every rank.
pub fn gather<T: Serialize + DeserializeOwned>(comm: &dyn Collective, value: &T) -> Vec<T> {
    let mine = serde_json::to_vec(value).expect("plain data serializes");
    comm.all_gather(&mine)
        .iter()
        .map(|bytes| match serde_json::from_slice(bytes) {
            Ok(value) => value,
            // Every rank runs the same binary; anything else is no run to go on with.
            Err(_) => comm.abort(70),
        })
        .collect()
}

/// Rank 0's `value` on every rank (the others' is ignored).
pub fn broadcast<T: Serialize + DeserializeOwned>(comm: &dyn Collective, value: &T) -> T {
    let mine = serde_json::to_vec(value).expect("plain data serializes");
    serde_json::from_slice(&comm.broadcast(&mine)).unwrap_or_else(|_| comm.abort(70))
}

/// Every rank's outcome of the same step: Ok when all succeeded, else the failure of the
/// lowest rank that failed, on every rank, with that rank named (the step fails on all
/// ranks). A failure that every rank already reports alike (agreed earlier) is passed
/// on as it is.
pub fn agree<E: Serialize + DeserializeOwned + PartialEq>(
    comm: &dyn Collective,
    host: &str,
    local: Result<(), E>,
    name: impl Fn(E, usize, &str) -> E,
) -> Result<(), E> {
    let mine: Option<(E, String)> = local.err().map(|error| (error, host.to_string()));
    let all = gather(comm, &mine);
    let failed: Vec<(usize, &(E, String))> =
        all.iter().enumerate().filter_map(|(rank, outcome)| outcome.as_ref().map(|o| (rank, o))).collect();
    let Some(&(rank, _)) = failed.first() else { return Ok(()) };
    let everyone_alike = failed.len() == all.len() && failed.iter().all(|(_, (error, _))| *error == failed[0].1.0);
    let (error, host) = all.into_iter().nth(rank).flatten().expect("the failed rank's outcome");
    Err(if everyone_alike { error } else { name(error, rank, &host) })
}

/// CLOCK_MONOTONIC now, in seconds: ranks on one host share it, so their times can be
/// put on one axis exactly; ranks on different hosts do not.
pub fn monotonic_seconds() -> f64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime fills the struct we pass; CLOCK_MONOTONIC cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    now.tv_sec as f64 + now.tv_nsec as f64 * 1e-9
}

/// Ranks as threads of one process: the tests' stand-in for MPI.
#[cfg(test)]
pub mod threads {
    use std::sync::{Arc, Barrier, Mutex};

    use super::Collective;

    #[derive(Debug)]
    struct Shared {
        barrier: Barrier,
        slots: Mutex<Vec<Vec<u8>>>,
    }

    #[derive(Debug, Clone)]
    pub struct ThreadRanks {
        rank: usize,
        size: usize,
        shared: Arc<Shared>,
    }

    impl ThreadRanks {
        /// `size` ranks, one for each thread that will run one.
        pub fn world(size: usize) -> Vec<ThreadRanks> {
            let shared = Arc::new(Shared { barrier: Barrier::new(size), slots: Mutex::new(vec![Vec::new(); size]) });
            (0..size).map(|rank| ThreadRanks { rank, size, shared: shared.clone() }).collect()
        }
    }

    impl Collective for ThreadRanks {
        fn rank(&self) -> usize {
            self.rank
        }
        fn size(&self) -> usize {
            self.size
        }
        fn barrier(&self) {
            self.shared.barrier.wait();
        }
        fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
            self.shared.slots.lock().unwrap()[self.rank] = mine.to_vec();
            self.barrier();
            let all = self.shared.slots.lock().unwrap().clone();
            // Nobody writes the next round's slot before everyone read this one.
            self.barrier();
            all
        }
        fn broadcast(&self, mine: &[u8]) -> Vec<u8> {
            self.all_gather(mine).swap_remove(0)
        }
        fn abort(&self, code: i32) -> ! {
            panic!("rank {} aborted the job with {code}", self.rank)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::threads::ThreadRanks;
    use super::*;

    fn on_ranks<T: Send>(size: usize, each: impl Fn(&ThreadRanks) -> T + Sync) -> Vec<T> {
        let world = ThreadRanks::world(size);
        std::thread::scope(|scope| {
            let handles: Vec<_> = world.iter().map(|comm| scope.spawn(|| each(comm))).collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }

    #[test]
    fn one_ranks_failure_fails_the_step_on_every_rank_with_the_rank_named() {
        let outcomes = on_ranks(3, |comm| {
            let local = if comm.rank() == 1 { Err("pwrite: No space left on device".to_string()) } else { Ok(()) };
            agree(comm, "node7", local, |error, rank, host| format!("rank {rank} on {host}: {error}"))
        });
        for outcome in outcomes {
            assert_eq!(outcome, Err("rank 1 on node7: pwrite: No space left on device".to_string()));
        }
        let fine = on_ranks(2, |comm| agree(comm, "h", Ok::<(), String>(()), |e, _, _| e));
        assert_eq!(fine, [Ok(()), Ok(())]);
        // Already agreed: every rank says the same, and it is not named twice.
        let alike =
            on_ranks(2, |comm| agree(comm, "h", Err("rank 0 on h: x".to_string()), |e, r, _| format!("{r}{e}")));
        assert_eq!(alike, [Err("rank 0 on h: x".to_string()), Err("rank 0 on h: x".to_string())]);
    }

    #[test]
    fn broadcast_gives_rank_zeros_value_to_all() {
        let got = on_ranks(3, |comm| broadcast(comm, &format!("plan of rank {}", comm.rank())));
        assert_eq!(got, vec!["plan of rank 0".to_string(); 3]);
        let gathered = on_ranks(2, |comm| gather(comm, &comm.rank()));
        assert_eq!(gathered, [vec![0, 1], vec![0, 1]]);
    }
}
