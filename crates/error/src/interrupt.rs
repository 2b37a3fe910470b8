//! SIGINT, SIGTERM and SIGHUP while writebench drives another program (a lab's `run`
//! child, a crash check's program, a traced program): the handler only records the
//! signal and passes it on to the one child registered (`set_child`), which ends in its
//! own way (a `run` removes its scratch directory; the tracer stops the program and
//! keeps its log); writebench sees the flag between steps and tears down in normal code.
//! Teardown runs umount, mdadm and losetup, which a signal handler cannot do safely;
//! this is also why each filesystem of a lab is measured by a child process and not in
//! this one, whose `run` handlers end the process at once (measure::signals).

use std::sync::atomic::{AtomicI32, Ordering};

static SIGNAL: AtomicI32 = AtomicI32::new(0);
static CHILD: AtomicI32 = AtomicI32::new(0);

const INTERRUPTS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Installs the handlers (SA_RESTART: a wait for a child goes on after the signal).
pub fn install() -> std::io::Result<()> {
    // SAFETY: the handler makes async-signal-safe calls only (atomics, kill).
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as *const () as usize;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        for signal in INTERRUPTS {
            if libc::sigaction(signal, &action, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

extern "C" fn on_signal(signal: libc::c_int) {
    SIGNAL.store(signal, Ordering::SeqCst);
    let child = CHILD.load(Ordering::SeqCst);
    if child > 0 {
        // SAFETY: kill(2) is async-signal-safe.
        unsafe { libc::kill(child, signal) };
    }
}

/// The signal that came, if one did.
pub fn received() -> Option<libc::c_int> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// The child that gets the signals passed on (0: none). A signal that came just before
/// the child was registered is passed on here.
pub fn set_child(pid: u32) {
    CHILD.store(pid as i32, Ordering::SeqCst);
    if let Some(signal) = received() {
        if pid > 0 {
            // SAFETY: plain kill of our own child.
            unsafe { libc::kill(pid as i32, signal) };
        }
    }
}

pub fn name(signal: libc::c_int) -> &'static str {
    match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}
