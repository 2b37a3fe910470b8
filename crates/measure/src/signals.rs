//! Cleanup on SIGINT, SIGTERM and SIGHUP (docs/design.md §6), and on SIGBUS.
//!
//! Plain handlers that make only async-signal-safe calls (open, getdents64, unlinkat,
//! rmdir, write, _exit): they unlink the files of this run's scratch directory, remove
//! it, say so on stderr and end the process with `_exit(128 + the signal's number)`
//! (SIGBUS too: 135, without the default action's core file in the user's directory).
//! They work even while a writer
//! is deep in a 1 GiB write(2), and an interrupted run writes no result file (docs/design.md
//! §6 allows that; a half-written one is impossible).
//!
//! Why no signal-handling thread: a process with a second thread pays more for every
//! system call on this kind of machine (an idle extra thread made a plain C loop of
//! 1-byte pwrites ~30 % slower, 364 vs 492 ns median), a cost the single-threaded
//! programs being measured do not have. Writer threads block these signals, so the
//! handler runs on the main thread, the only one that creates files in the directory.

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicPtr, Ordering};

use super::death_watch;

/// The scratch path as a C string for the handlers (leaked; a run has one).
static SCRATCH_C: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());

const INTERRUPTS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Installs the handlers; SIGXFSZ is ignored so that a file size limit fails the case
/// with EFBIG instead of killing the run.
pub fn install() -> io::Result<()> {
    // SAFETY: sigaction with handlers that are async-signal-safe (see cleanup).
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigbus as *const () as usize;
        // A second fault inside the handler gets the default action, not a recursion.
        action.sa_flags = libc::SA_RESETHAND;
        // The fault may come on a writer thread: no interrupt cleanup on another one meanwhile.
        libc::sigemptyset(&mut action.sa_mask);
        for signal in INTERRUPTS {
            libc::sigaddset(&mut action.sa_mask, signal);
        }
        if libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut()) != 0 {
            return Err(io::Error::last_os_error());
        }
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_interrupt as *const () as usize;
        // While one handler runs, the others wait: one cleanup, one exit status.
        libc::sigemptyset(&mut action.sa_mask);
        for signal in INTERRUPTS {
            libc::sigaddset(&mut action.sa_mask, signal);
        }
        for signal in INTERRUPTS {
            if libc::sigaction(signal, &action, std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

/// For writer threads: leave SIGINT/SIGTERM/SIGHUP to the main thread.
pub fn block_in_this_thread() {
    let set = interrupt_set();
    // SAFETY: changes only this thread's mask.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
}

/// Runs `create` (which makes the scratch directory) with the signals held back, then
/// registers the directory for removal (by the handlers, and by the `death_watch` where
/// one runs); a signal that came meanwhile is handled after.
pub fn create_scratch<T>(create: impl FnOnce() -> io::Result<T>, path_of: impl Fn(&T) -> &Path) -> io::Result<T> {
    let set = interrupt_set();
    let mut previous: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: changes only this thread's mask, restored below.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut previous) };
    let created = create();
    if let Ok(scratch) = &created {
        let path = path_of(scratch);
        if let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) {
            death_watch::remove_on_death(c_path.as_bytes());
            SCRATCH_C.store(c_path.into_raw(), Ordering::SeqCst);
        }
    }
    // SAFETY: restores the mask saved above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &previous, std::ptr::null_mut()) };
    created
}

/// Runs `work` with SIGINT/SIGTERM/SIGHUP blocked in this thread, so that any thread it
/// starts (an MPI library's) inherits them blocked and leaves them to the main thread.
pub fn held<T>(work: impl FnOnce() -> T) -> T {
    let set = interrupt_set();
    let mut previous: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: changes only this thread's mask, restored below.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut previous) };
    let result = work();
    // SAFETY: restores the mask saved above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &previous, std::ptr::null_mut()) };
    result
}

/// Nothing to remove any more (the run removed or kept its directory).
pub fn forget_scratch() {
    SCRATCH_C.store(std::ptr::null_mut(), Ordering::SeqCst);
    death_watch::forget();
}

fn interrupt_set() -> libc::sigset_t {
    // SAFETY: building a signal set in a local.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in INTERRUPTS {
            libc::sigaddset(&mut set, signal);
        }
        set
    }
}

/// Unlinks the scratch directory's entries and removes it: async-signal-safe calls only.
/// Returns whether there was a directory registered.
fn cleanup() -> bool {
    let path = SCRATCH_C.load(Ordering::SeqCst);
    if path.is_null() {
        return false;
    }
    // SAFETY: `path` is a leaked, NUL-terminated CString.
    unsafe { death_watch::remove_dir(path) };
    true
}

/// SIGINT/SIGTERM/SIGHUP: remove the directory, say so, exit 128 + the signal.
extern "C" fn on_interrupt(signal: libc::c_int) {
    let removed = cleanup();
    let message: &[u8] = match (signal, removed) {
        (libc::SIGINT, true) => b"\nwritebench: interrupted by SIGINT; scratch directory removed\n",
        (libc::SIGTERM, true) => b"\nwritebench: interrupted by SIGTERM; scratch directory removed\n",
        (libc::SIGHUP, true) => b"\nwritebench: interrupted by SIGHUP; scratch directory removed\n",
        (libc::SIGINT, false) => b"\nwritebench: interrupted by SIGINT\n",
        (libc::SIGTERM, false) => b"\nwritebench: interrupted by SIGTERM\n",
        _ => b"\nwritebench: interrupted by SIGHUP\n",
    };
    // SAFETY: write(2) of a static buffer, then _exit (no atexit handlers, no locks).
    unsafe {
        libc::write(2, message.as_ptr().cast(), message.len());
        libc::_exit(128 + signal);
    }
}

/// SIGBUS handler (a fault in a shared map on a full file system): clean up and exit.
extern "C" fn on_sigbus(signal: libc::c_int) {
    let message: &[u8] = if cleanup() {
        b"\nwritebench: SIGBUS (a mapped write found no space?); scratch directory removed\n"
    } else {
        b"\nwritebench: SIGBUS (a mapped write found no space?)\n"
    };
    // SAFETY: write(2) of a static buffer, then _exit (no atexit handlers, no locks).
    unsafe {
        libc::write(2, message.as_ptr().cast(), message.len());
        libc::_exit(128 + signal);
    }
}
