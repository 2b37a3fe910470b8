//! Where a run's writer threads start. A run's threads are new, and the scheduler
//! places new and just-woken threads near the thread that made or woke them: two
//! writers of a 2-CPU machine were seen sharing one CPU, 4 ms each in turn, for a whole
//! 25 ms run while the other CPU idled, so 2 threads wrote a quarter slower than 2
//! processes. A program's long-lived threads would have been spread long before. So,
//! when there are no more writers than CPUs this process may use, each writer moves to
//! a CPU of its own before the start line and is let free again after it: the run
//! starts from the placement a balanced machine has, and the scheduler may still move
//! any thread during it (this is placement, not pinning). With more writers than CPUs
//! the scheduler places them as it likes.
//!
//! The CPUs are handed out one of each physical core first, SMT siblings after: two
//! hardware threads of one core share its execution units and caches, so two writers
//! on siblings while another core idles would measure one core shared, not two
//! writers. The cores come from sysfs (`topology/thread_siblings_list`); a CPU it does
//! not describe counts as a core of its own, so without it the order is by number.

use std::collections::BTreeMap;
use std::io;
use std::mem;
use std::sync::OnceLock;

/// The CPUs this thread may run on.
fn allowed() -> io::Result<libc::cpu_set_t> {
    // SAFETY: cpu_set_t is plain data; all zeros is the empty set.
    let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
    // SAFETY: `set` is a valid cpu_set_t of the size passed; 0 is the calling thread.
    if unsafe { libc::sched_getaffinity(0, mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(set)
}

fn set(set: &libc::cpu_set_t) -> io::Result<()> {
    // SAFETY: `set` is a valid cpu_set_t of the size passed; 0 is the calling thread.
    if unsafe { libc::sched_setaffinity(0, mem::size_of::<libc::cpu_set_t>(), set) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn members(set: &libc::cpu_set_t) -> Vec<usize> {
    // SAFETY: CPU_ISSET reads the set within CPU_SETSIZE.
    (0..libc::CPU_SETSIZE as usize).filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, set) }).collect()
}

/// `cpus` (ascending) in the order writers get them: the first CPU of each core, by
/// number, then the second of each, and so on. `core_of` names a CPU's core (any key
/// its siblings share, unique to the core).
fn by_core(cpus: &[usize], core_of: impl Fn(usize) -> usize) -> Vec<usize> {
    let mut seen: BTreeMap<usize, usize> = BTreeMap::new();
    let mut ranked: Vec<(usize, usize)> = cpus
        .iter()
        .map(|&cpu| {
            let count = seen.entry(core_of(cpu)).or_insert(0);
            *count += 1;
            (*count, cpu)
        })
        .collect();
    ranked.sort_unstable();
    ranked.into_iter().map(|(_, cpu)| cpu).collect()
}

/// A kernel CPU list ("0-3,8,10-11"), or None where it does not parse.
fn parse_cpu_list(text: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for range in text.trim().split(',').filter(|range| !range.is_empty()) {
        let (first, last): (usize, usize) = match range.split_once('-') {
            Some((first, last)) => (first.parse().ok()?, last.parse().ok()?),
            None => {
                let cpu = range.parse().ok()?;
                (cpu, cpu)
            }
        };
        cpus.extend(first..=last);
    }
    Some(cpus)
}

/// Each CPU's core as sysfs tells it (its lowest sibling), read once: the topology of
/// a running machine does not change, and writers ask for it before the start line.
fn sysfs_cores() -> &'static BTreeMap<usize, usize> {
    static CORES: OnceLock<BTreeMap<usize, usize>> = OnceLock::new();
    CORES.get_or_init(|| {
        let Ok(entries) = std::fs::read_dir("/sys/devices/system/cpu") else {
            return BTreeMap::new();
        };
        entries
            .flatten()
            .filter_map(|entry| {
                let cpu: usize = entry.file_name().to_str()?.strip_prefix("cpu")?.parse().ok()?;
                let siblings = std::fs::read_to_string(entry.path().join("topology/thread_siblings_list")).ok()?;
                Some((cpu, parse_cpu_list(&siblings)?.into_iter().min()?))
            })
            .collect()
    })
}

/// The CPUs in `set`, in the order writers get them ([`by_core`] over sysfs; a CPU it
/// does not describe is a core of its own).
fn ordered(set: &libc::cpu_set_t) -> Vec<usize> {
    let cores = sysfs_cores();
    by_core(&members(set), |cpu| cores.get(&cpu).copied().unwrap_or(cpu))
}

/// A writer moved to a CPU of its own; [`Placed::release`] gives it back its CPUs.
pub struct Placed {
    original: libc::cpu_set_t,
    pub cpu: usize,
}

/// The CPU writer `index` of `writers` gets among `cpus` (those it may use, in
/// [`ordered`]'s order): the `index`-th, where there are two writers or more and a CPU
/// for each; else none, and the scheduler places them. The one rule for native writers and a runner's.
fn cpu_of(index: usize, writers: usize, cpus: &[usize]) -> Option<usize> {
    if writers < 2 || writers > cpus.len() {
        return None;
    }
    cpus.get(index).copied()
}

/// Moves the calling thread, writer `index` of `writers`, to the `index`-th CPU it may
/// use ([`ordered`]: distinct cores first), if there are at least `writers` of them.
/// None where there are too few, or the kernel refuses (a placement is a courtesy: the
/// run goes on without it).
pub fn place(index: usize, writers: usize) -> Option<Placed> {
    let original = allowed().ok()?;
    let cpu = cpu_of(index, writers, &ordered(&original))?;
    // SAFETY: plain data; all zeros is the empty set, then one CPU added within range.
    let mut one: libc::cpu_set_t = unsafe { mem::zeroed() };
    unsafe { libc::CPU_SET(cpu, &mut one) };
    set(&one).ok()?;
    Some(Placed { original, cpu })
}

/// Where the writers of a run in another process (a runtime's runner) should start, so
/// that they start where native writers would: one writer on the CPU the calling thread
/// is on now (a native run's only writer is the thread that filled its buffer and made
/// its file: running a runner elsewhere made C's loop 2-13 % slower than the same loop
/// in-process, while both on one CPU measured 0.97-1.00x); two or more as [`place`]
/// would put them. None where native leaves them to the scheduler.
pub fn cpus_for(writers: usize) -> Option<Vec<usize>> {
    let cpus = ordered(&allowed().ok()?);
    match writers {
        0 => None,
        1 => {
            // SAFETY: sched_getcpu has no preconditions; -1 is an error.
            let here = unsafe { libc::sched_getcpu() };
            usize::try_from(here).ok().filter(|cpu| cpus.contains(cpu)).map(|cpu| vec![cpu])
        }
        n => (0..n).map(|index| cpu_of(index, n, &cpus)).collect(),
    }
}

impl Placed {
    /// The thread may run on every CPU it could before; it stays where it is until the
    /// scheduler has a reason to move it.
    pub fn release(self) {
        let _ = set(&self.original);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writer_runs_on_its_own_cpu_until_released_and_one_writer_is_left_alone() {
        let all = allowed().unwrap();
        let cpus = ordered(&all);
        assert!(place(0, 1).is_none(), "one writer needs no placement");
        assert!(place(0, cpus.len() + 1).is_none(), "more writers than CPUs are the scheduler's");
        if cpus.len() < 2 {
            return;
        }
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let placed = place(1, 2).expect("two writers on two or more CPUs are placed");
                assert_eq!(placed.cpu, cpus[1]);
                assert_eq!(members(&allowed().unwrap()), [cpus[1]]);
                // SAFETY: sched_getcpu has no preconditions.
                assert_eq!(unsafe { libc::sched_getcpu() } as usize, cpus[1], "moved at once");
                placed.release();
                assert_eq!(members(&allowed().unwrap()), members(&all), "free again after the start line");
            });
        });
    }

    #[test]
    fn a_runners_writers_go_where_native_writers_would() {
        let cpus = ordered(&allowed().unwrap());
        let one = cpus_for(1).expect("one writer goes where this thread runs");
        assert_eq!(one.len(), 1);
        assert!(cpus.contains(&one[0]));
        assert_eq!(cpus_for(0), None);
        assert_eq!(cpus_for(cpus.len() + 1), None, "more writers than CPUs are the scheduler's");
        if cpus.len() >= 2 {
            assert_eq!(cpus_for(2), Some(cpus[..2].to_vec()), "as place() puts writers 0 and 1");
        }
    }

    #[test]
    fn writers_take_one_cpu_of_each_core_before_a_sibling() {
        let two_writers = |cpus: &[usize]| [cpu_of(0, 2, cpus), cpu_of(1, 2, cpus)];
        // 4 CPUs, 0 and 2 one core's hardware threads, 1 and 3 another's (as many Intel
        // machines number them): the order by number already spreads them.
        let cpus = by_core(&[0, 1, 2, 3], |cpu| cpu % 2);
        assert_eq!(cpus, [0, 1, 2, 3]);
        assert_eq!(two_writers(&cpus), [Some(0), Some(1)], "not 0 and 2");
        // Siblings numbered next to each other, 0,1 and 2,3 (as on many AMD machines):
        // the order by number would put two writers on one core.
        let cpus = by_core(&[0, 1, 2, 3], |cpu| cpu / 2);
        assert_eq!(cpus, [0, 2, 1, 3]);
        assert_eq!(two_writers(&cpus), [Some(0), Some(2)], "not 0 and 1");
        // Only the CPUs this process may use, and a core with one of them allowed.
        assert_eq!(by_core(&[1, 2, 3, 5], |cpu| cpu / 2), [1, 2, 5, 3]);
        // No SMT: the order by number.
        assert_eq!(by_core(&[0, 1, 2], |cpu| cpu), [0, 1, 2]);
    }

    #[test]
    fn kernel_cpu_lists_parse() {
        assert_eq!(parse_cpu_list("0,2\n"), Some(vec![0, 2]));
        assert_eq!(parse_cpu_list("0-3,8,10-11"), Some(vec![0, 1, 2, 3, 8, 10, 11]));
        assert_eq!(parse_cpu_list("5"), Some(vec![5]));
        assert_eq!(parse_cpu_list("x"), None);
    }

    #[test]
    fn sysfs_gives_every_allowed_cpu_a_core_among_its_siblings() {
        let cpus = members(&allowed().unwrap());
        let cores = sysfs_cores();
        for cpu in &cpus {
            let core = cores.get(cpu).unwrap_or_else(|| panic!("no topology for CPU {cpu}: {cores:?}"));
            assert!(core <= cpu, "CPU {cpu}'s core is its lowest sibling: {core}");
        }
        let mut sorted = ordered(&allowed().unwrap());
        sorted.sort_unstable();
        assert_eq!(sorted, cpus, "the same CPUs, reordered");
    }
}
