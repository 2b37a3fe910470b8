//! A watcher that removes the scratch directory after this process dies, however it dies:
//! for MPI ranks (docs/scale.md, "Faults").
//!
//! The signal handlers (`signals`) clean up on SIGINT, SIGTERM and SIGHUP. An MPI rank
//! can also be ended where no handler runs: Open MPI's own abort path ends the process
//! with `_exit`, and its launcher sends SIGKILL a second after SIGTERM. On a node-local
//! PATH (`--mpi-local`) nobody else would remove that rank's directory: tests/hosts.rs
//! found a host's directory left with a half-written run file after its neighbour lost
//! its network, no writebench process alive, in about one run of 50 (which of the two
//! ended the rank is not known; the watcher covers both).
//!
//! So a rank forks, before MPI_Init (no library state to share, no fork warnings), a
//! small process that holds the read end of a pipe whose write end only the rank has.
//! The rank tells it the scratch directory when it makes or joins one, and to forget it
//! when it removed or kept it. When the rank ends, by any path, the kernel closes the
//! write end; the watcher reads end-of-file, removes the directory if it still has one
//! to remove, and exits. A rank that ended normally had it forget first, so the watcher
//! then does nothing.
//!
//! Not for single-process runs: there SIGKILL is the only death without a handler, and
//! it leaves the directory to `writebench clean` by design (docs/safety.md). The
//! watcher is a process, not a thread: a second thread in the measured process makes
//! its system calls dearer (see `signals`).

use std::io;
use std::sync::atomic::{AtomicI32, Ordering};

/// The pipe's write end in the watched process; -1 when there is no watcher.
static TO_WATCHER: AtomicI32 = AtomicI32::new(-1);

/// The longest path the watcher takes (a longer one is not watched: it is still removed
/// by the signal handlers and the normal end).
const PATH_MAX: usize = 4096;

/// Forks the watcher. Call it before any other thread exists that could hold a lock the
/// child would need (before MPI_Init): the child only makes async-signal-safe calls.
pub fn start() -> io::Result<()> {
    let mut ends = [0 as libc::c_int; 2];
    // SAFETY: pipe2 into a local array. O_CLOEXEC: a program the rank starts (a runtime
    // runner) must not hold the write end open after the rank is gone.
    if unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let [read_end, write_end] = ends;
    // SAFETY: fork; the child runs only `watch`, which makes async-signal-safe calls and
    // never returns.
    match unsafe { libc::fork() } {
        -1 => {
            let error = io::Error::last_os_error();
            // SAFETY: closing the two ends just made.
            unsafe {
                libc::close(read_end);
                libc::close(write_end);
            }
            Err(error)
        }
        0 => watch(read_end, write_end),
        _child => {
            // SAFETY: the parent keeps only the write end.
            unsafe { libc::close(read_end) };
            TO_WATCHER.store(write_end, Ordering::SeqCst);
            Ok(())
        }
    }
}

/// Tells the watcher (if any) to remove `path` when this process is gone.
pub fn remove_on_death(path: &[u8]) {
    if path.len() > PATH_MAX - 2 || path.contains(&0) || path.contains(&b'\n') {
        return;
    }
    let mut message = [0u8; PATH_MAX];
    message[0] = b'S';
    message[1..=path.len()].copy_from_slice(path);
    message[path.len() + 1] = b'\n';
    send(&message[..path.len() + 2]);
}

/// Tells the watcher (if any) that there is nothing to remove any more.
pub fn forget() {
    send(b"F\n");
}

fn send(message: &[u8]) {
    let fd = TO_WATCHER.load(Ordering::SeqCst);
    if fd < 0 {
        return;
    }
    // One write of at most PIPE_BUF (4096) bytes is atomic; the watcher reads as it comes.
    // A watcher gone (killed) makes it fail with EPIPE, not kill the rank: Rust's
    // runtime ignores SIGPIPE.
    // SAFETY: a write of a local buffer to our own pipe.
    unsafe { libc::write(fd, message.as_ptr().cast(), message.len()) };
}

/// The child: reads messages until end-of-file, then removes what it was told to.
fn watch(read_end: libc::c_int, write_end: libc::c_int) -> ! {
    // SAFETY: async-signal-safe calls only (setsid, signal, open, dup2, close, read,
    // and the cleanup's open/getdents64/unlinkat/rmdir), on local buffers; `_exit`.
    unsafe {
        libc::close(write_end);
        // Out of the rank's process group and session: a kill of the group (a launcher,
        // a terminal's ^C) must not take the watcher before it has done its work.
        libc::setsid();
        libc::signal(libc::SIGINT, libc::SIG_IGN);
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
        // No descriptor of the rank's stays open here: its output pipes (mpirun waits
        // for their end), its files. The read end becomes 3, moved above the standard
        // three first in case one of those was closed and it is one of them.
        let watched = libc::fcntl(read_end, libc::F_DUPFD, 3);
        if watched < 0 {
            libc::_exit(1);
        }
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        for fd in 0..3 {
            if null >= 0 && fd != null {
                libc::dup2(null, fd);
            }
        }
        if watched != 3 {
            libc::dup2(watched, 3);
        }
        if libc::syscall(libc::SYS_close_range, 4u32, u32::MAX, 0u32) != 0 {
            for fd in 4..4096 {
                libc::close(fd);
            }
        }
        let mut path = [0u8; PATH_MAX];
        let mut have_path = false;
        let mut line = [0u8; PATH_MAX + 2];
        let mut used = 0usize;
        loop {
            let room = line.len() - used;
            let read = libc::read(3, line.as_mut_ptr().add(used).cast(), room);
            if read < 0 && *libc::__errno_location() == libc::EINTR {
                continue;
            }
            if read < 0 {
                // Not the end of the watched process: nothing can be told, and nothing
                // of a live process's is removed.
                libc::_exit(1);
            }
            if read == 0 {
                break;
            }
            used += read as usize;
            // Every whole line is a message: "S<path>" or "F".
            while let Some(end) = line[..used].iter().position(|&b| b == b'\n') {
                match line[0] {
                    b'S' if end > 1 && end - 1 < PATH_MAX => {
                        path[..end - 1].copy_from_slice(&line[1..end]);
                        path[end - 1] = 0;
                        have_path = true;
                    }
                    _ => have_path = false,
                }
                line.copy_within(end + 1..used, 0);
                used -= end + 1;
            }
            if used == line.len() {
                // A line longer than any message: not ours to parse; drop it.
                used = 0;
            }
        }
        if have_path {
            remove_dir(path.as_ptr().cast());
        }
        libc::_exit(0);
    }
}

/// Unlinks the entries of the directory `path` and removes it, with async-signal-safe
/// calls only (a signal handler's, or a forked child's): the scratch directory holds
/// files only. Nothing happens where it is gone already.
///
/// # Safety
/// `path` is a NUL-terminated string that stays valid meanwhile.
pub unsafe fn remove_dir(path: *const libc::c_char) {
    // SAFETY: the caller's `path`; the buffers are local.
    unsafe {
        let dir = libc::open(path, libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC);
        if dir < 0 {
            return;
        }
        let mut buffer = [0u8; 4096];
        loop {
            let read = libc::syscall(libc::SYS_getdents64, dir, buffer.as_mut_ptr(), buffer.len());
            if read <= 0 {
                break;
            }
            let mut at = 0usize;
            while at < read as usize {
                // linux_dirent64: u64 ino, i64 off, u16 reclen, u8 type, name.
                let reclen = u16::from_ne_bytes([buffer[at + 16], buffer[at + 17]]) as usize;
                let name = buffer.as_ptr().add(at + 19).cast::<libc::c_char>();
                let dot = *name == b'.' as libc::c_char
                    && (*name.add(1) == 0 || (*name.add(1) == b'.' as libc::c_char && *name.add(2) == 0));
                if !dot {
                    libc::unlinkat(dir, name, 0);
                }
                at += reclen.max(1);
            }
        }
        libc::close(dir);
        libc::rmdir(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A child process that starts a watcher, tells it what `tell` says, then dies with
    /// SIGKILL: what the watcher does after a death no handler sees.
    fn killed_child(tell: impl FnOnce()) {
        // SAFETY: the test child makes only the calls below and is killed.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            if start().is_err() {
                unsafe { libc::_exit(3) };
            }
            tell();
            unsafe {
                libc::raise(libc::SIGKILL);
                libc::_exit(4);
            }
        }
        let mut status = 0;
        // SAFETY: waiting for our own child.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGKILL, "{status}");
    }

    #[test]
    fn the_directory_of_a_process_killed_with_sigkill_is_removed_by_its_watcher() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("scratch");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("case0000-run1-f0.dat"), vec![7u8; 1 << 16]).unwrap();
        killed_child(|| remove_on_death(dir.as_os_str().as_encoded_bytes()));
        gone_within_10_s(&dir);
    }

    #[test]
    fn a_forgotten_directory_is_left_alone() {
        let parent = tempfile::tempdir().unwrap();
        let (kept, later) = (parent.path().join("kept"), parent.path().join("later"));
        for dir in [&kept, &later] {
            std::fs::create_dir(dir).unwrap();
            std::fs::write(dir.join("a"), b"x").unwrap();
        }
        // Told `kept`, then to forget it, then `later`: once `later` is gone the watcher
        // has read every message and done all it will do.
        killed_child(|| {
            remove_on_death(kept.as_os_str().as_encoded_bytes());
            forget();
            remove_on_death(later.as_os_str().as_encoded_bytes());
        });
        gone_within_10_s(&later);
        assert!(kept.join("a").exists(), "a forgotten directory was removed");
    }

    fn gone_within_10_s(dir: &std::path::Path) {
        let started = Instant::now();
        while dir.exists() && started.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!dir.exists(), "the watcher left {}", dir.display());
    }
}
