//! Cleanup on SIGINT, SIGTERM and SIGHUP (DESIGN §6). The signals are blocked in every
//! thread (the mask is set before any thread starts and inherited) and taken by one
//! thread with `sigwait`, so they are handled at once even while the writers are deep
//! in a 1 GiB write(2). That thread removes this run's scratch directory, writes the
//! results so far (marked incomplete) when the caller registered a way to, and exits
//! 128 + the signal's number. A second signal while that is under way removes the
//! scratch directory and exits at once, without the partial results.
//!
//! SIGBUS (a page fault in a shared map on a full file system; the mmap methods check
//! the free space first, so it should not happen) gets a plain handler that does only
//! async-signal-safe calls: it unlinks the files in the scratch directory, removes it,
//! says so on stderr, and lets the signal kill the process as before (status 135).
//! SIGXFSZ is ignored, so a file size limit (`ulimit -f`) fails the case with EFBIG
//! instead of killing the run.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use crate::clean::remove_scratch;

type Hook = Box<dyn FnMut(&str) + Send>;

static SCRATCH: Mutex<Option<PathBuf>> = Mutex::new(None);
/// Set by the signal thread before it touches anything: from then on the main thread's
/// failures are the interruption's doing, and only the signal thread may end the process.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static PARTIAL: Mutex<Option<Hook>> = Mutex::new(None);
/// The scratch path as a C string for the SIGBUS handler (leaked; a run has one).
static SCRATCH_C: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());

/// Blocks the signals and starts the thread that waits for them. Call it before any
/// other thread exists (threads started earlier would still get the default action).
pub fn install() -> io::Result<()> {
    let set = handled_set();
    // SAFETY: setting this thread's mask from a valid set.
    let error = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if error != 0 {
        return Err(io::Error::from_raw_os_error(error));
    }
    // SAFETY: SIG_IGN for SIGXFSZ; a sigaction for SIGBUS whose handler is
    // async-signal-safe (see on_sigbus).
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigbus as *const () as usize;
        action.sa_flags = libc::SA_RESETHAND;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
    }
    std::thread::Builder::new().name("signals".into()).spawn(move || wait_for_signals(set))?;
    Ok(())
}

/// Runs `create` (which makes the scratch directory) so that a signal arriving during
/// it waits for it, then registers the directory for removal on a signal.
pub fn create_scratch<T>(create: impl FnOnce() -> io::Result<T>, path_of: impl Fn(&T) -> &Path) -> io::Result<T> {
    let mut slot = SCRATCH.lock().unwrap_or_else(|e| e.into_inner());
    let scratch = create()?;
    let path = path_of(&scratch).to_path_buf();
    if let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) {
        SCRATCH_C.store(c_path.into_raw(), Ordering::SeqCst);
    }
    *slot = Some(path);
    Ok(scratch)
}

/// Nothing to remove any more (the run removed or kept its directory).
pub fn forget_scratch() {
    SCRATCH_C.store(std::ptr::null_mut(), Ordering::SeqCst);
    *SCRATCH.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// What to do on a signal after the scratch directory is gone: write the results so
/// far. The hook gets the signal's name. `None` removes it (the run is writing its
/// complete results).
pub fn on_interrupt(hook: Option<Hook>) {
    *PARTIAL.lock().unwrap_or_else(|e| e.into_inner()) = hook;
}

fn handled_set() -> libc::sigset_t {
    // SAFETY: building a signal set in a local.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, signal);
        }
        set
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

fn wait_for_signals(set: libc::sigset_t) {
    let mut first = true;
    loop {
        let mut signal = 0;
        // SAFETY: sigwait on a valid set; the signals are blocked in every thread.
        if unsafe { libc::sigwait(&set, &mut signal) } != 0 {
            continue;
        }
        if first {
            first = false;
            INTERRUPTED.store(true, Ordering::SeqCst);
            // Cleaning up and writing results may take a moment: do it on another
            // thread so that a second signal is still seen here.
            let spawned = std::thread::Builder::new().name("cleanup".into()).spawn(move || {
                remove_this_scratch();
                let hook = PARTIAL.lock().unwrap_or_else(|e| e.into_inner()).take();
                eprintln!("\nwritebench: interrupted by {}; scratch directory removed", signal_name(signal));
                if let Some(mut hook) = hook {
                    hook(signal_name(signal));
                }
                exit(signal);
            });
            if spawned.is_ok() {
                continue;
            }
        }
        // A second signal, or no thread for the first: remove and leave now.
        remove_this_scratch();
        eprintln!("\nwritebench: interrupted by {} again; exiting now", signal_name(signal));
        exit(signal);
    }
}

/// Called by the main thread before it records a case or finishes: once a signal has
/// been taken, the cases still running fail only because their directory was removed,
/// and the process must end with the signal's status, so this thread waits for the exit.
pub fn park_if_interrupted() {
    while INTERRUPTED.load(Ordering::SeqCst) {
        std::thread::park();
    }
}

fn remove_this_scratch() {
    let path = SCRATCH.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if let Some(path) = path {
        // Files may still be being created by a writer while we remove them: retry.
        let mut outcome = remove_scratch(&path);
        for _ in 0..20 {
            if outcome.is_ok() || !path.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
            outcome = remove_scratch(&path);
        }
        if let Err(error) = outcome {
            eprintln!("writebench: could not remove scratch directory {}: {error}", path.display());
        }
    }
}

fn exit(signal: i32) -> ! {
    // _exit: no atexit handlers or stdio flushing that could wait on a lock another
    // thread holds; stderr is unbuffered and the result files are synced.
    // SAFETY: ends the process.
    unsafe { libc::_exit(128 + signal) }
}

/// SIGBUS handler: only async-signal-safe calls (open, getdents64, unlinkat, rmdir,
/// write). SA_RESETHAND restored the default action, so re-raising kills the process.
extern "C" fn on_sigbus(_signal: libc::c_int) {
    let path = SCRATCH_C.load(Ordering::SeqCst);
    if !path.is_null() {
        // SAFETY: `path` is a leaked, NUL-terminated CString; the buffers are local.
        unsafe {
            let dir = libc::open(path, libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC);
            if dir >= 0 {
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
        let message = b"\nwritebench: SIGBUS (a mapped write found no space?); scratch directory removed\n";
        // SAFETY: write(2) of a static buffer.
        unsafe { libc::write(2, message.as_ptr().cast(), message.len()) };
    }
    // SAFETY: the action is back to the default: the signal ends the process.
    unsafe { libc::raise(libc::SIGBUS) };
}
