//! Waiting for a child process with a limit: the one loop every floor that starts a
//! program uses (a runner's exit, the crash check's user program, a volume's command),
//! so that none waits forever on a program that hangs.

use std::io;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// How often an unfinished child is looked at: short against any limit given here.
const POLL: Duration = Duration::from_millis(5);

/// How a wait ended. The child is never killed here: what to do with one that did not
/// end is the caller's to say.
#[derive(Debug)]
pub enum Waited {
    Exited(ExitStatus),
    /// Still running after the limit.
    TimedOut,
    /// `give_up` said so first (a signal to writebench, say).
    GaveUp,
    /// Its status could not be read.
    Failed(io::Error),
}

/// Waits for `child` to exit until `within` has passed or `give_up` returns true.
pub fn wait_within(child: &mut Child, within: Duration, mut give_up: impl FnMut() -> bool) -> Waited {
    let deadline = Instant::now() + within;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Waited::Exited(status),
            Ok(None) => {}
            Err(error) => return Waited::Failed(error),
        }
        if give_up() {
            return Waited::GaveUp;
        }
        if Instant::now() >= deadline {
            return Waited::TimedOut;
        }
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    #[test]
    fn an_exit_a_hang_and_a_give_up_are_told_apart() {
        let mut quick = Command::new("sh").args(["-c", "exit 3"]).spawn().unwrap();
        let Waited::Exited(status) = wait_within(&mut quick, Duration::from_secs(30), || false) else { panic!() };
        assert_eq!(status.code(), Some(3));
        let mut hang = Command::new("sleep").arg("30").spawn().unwrap();
        let started = Instant::now();
        assert!(matches!(wait_within(&mut hang, Duration::from_millis(50), || false), Waited::TimedOut));
        assert!(started.elapsed() >= Duration::from_millis(50));
        assert!(matches!(wait_within(&mut hang, Duration::from_secs(30), || true), Waited::GaveUp));
        hang.kill().unwrap();
        hang.wait().unwrap();
    }
}
