//! A user's command (`crash --run`, `--check`; docs/crash.md) run where it cannot see the
//! recorder and cannot outlive its check: `sh -c COMMAND` in a mount namespace of its own
//! (so that a hidden path, the recorder's image, is covered there by an empty read-only
//! tmpfs or `/dev/null`, and nothing changes in the machine's own mounts), in a process
//! group of its own, with a time limit. Whatever it started is found by that namespace,
//! not by name, and killed when it ends, times out or a signal comes: a program that left
//! a writer behind would keep the filesystem busy and write into the next state.
//!
//! Its standard output is a terminal (a pseudo-terminal in raw mode), so that a program's
//! C stdio or Python `print` writes each line when it ends, as on a terminal, and a line is
//! read when it is said rather than when a pipe's buffer fills at exit.

use error::wait::{Waited, wait_within};
use std::ffi::CString;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What to run, and how.
pub struct Spec<'a> {
    pub command: &'a str,
    /// Its working directory.
    pub dir: &'a Path,
    pub env: Vec<(&'static str, String)>,
    /// Paths it must not see: directories (covered with an empty tmpfs) or files
    /// (covered with /dev/null).
    pub hide: Vec<PathBuf>,
    pub limit: Duration,
    /// Give it [`PROMISE_FD`], a pipe whose lines are read as its standard output's are.
    pub promise_fd: bool,
}

/// The descriptor a program may write its promises to, one line each
/// (`WB_CRASH_PROMISE_FD`, docs/crash.md).
pub const PROMISE_FD: libc::c_int = 3;

/// How it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// It exited (with this status) or was killed by a signal of its own.
    Exited(ExitStatus),
    /// It ran past its limit and was killed.
    TimedOut,
    /// A signal came to writebench (its name): it was killed.
    Interrupted(&'static str),
}

/// What it said and how it ended.
#[derive(Debug)]
pub struct Ran<T> {
    pub end: End,
    /// What `on_line` made of each line of its standard output, in order.
    pub lines: Vec<T>,
    /// And of each line written to [`PROMISE_FD`].
    pub promise_lines: Vec<T>,
    /// Its standard error (the last 16 KiB).
    pub stderr: String,
}

/// How much of standard error is kept.
const STDERR_KEPT: usize = 16 << 10;

/// Runs `spec`; `on_line` is called with each line of standard output when it is read
/// (from another thread: it stamps the line with the recorder's position).
pub fn run<T: Send>(spec: &Spec, on_line: &(dyn Fn(String) -> T + Sync)) -> Result<Ran<T>, String> {
    let (master, slave) = terminal().map_err(|e| format!("cannot open a terminal for its output: {}", plain(&e)))?;
    let (err_read, err_write) = pipe().map_err(|e| format!("cannot make a pipe: {}", plain(&e)))?;
    let hide = Hidden::new(&spec.hide)?;
    let promises =
        if spec.promise_fd { Some(pipe().map_err(|e| format!("cannot make a pipe: {}", plain(&e)))?) } else { None };
    let promise_writer = promises.as_ref().map(|(_, write)| write.as_raw_fd());
    // In a PID namespace of its own (util-linux's `unshare`, whose child is the
    // namespace's first process and is killed when `unshare` dies): when writebench dies
    // by any signal, even SIGKILL, the kernel ends `unshare` (its parent-death signal,
    // set below), then its child, and with it every process of the namespace, daemons
    // included, which would otherwise go on writing into a filesystem nobody checks.
    // The namespace's first process is a shell of ours that runs the command's and
    // waits (`; exit $?` keeps it from exec'ing it): the first process of a namespace
    // ignores signals it has no handler for, and the command should not be it. The
    // parent-death signal comes when the thread that spawned it ends: every caller
    // spawns from a thread that waits for the command.
    let mut command = Command::new("unshare");
    command
        .args(["--pid", "--fork", "--kill-child=SIGKILL", "/bin/sh", "-c", "/bin/sh -c \"$1\"; exit $?", "sh"])
        .arg(spec.command)
        .current_dir(spec.dir)
        .stdin(Stdio::null())
        .stdout(Stdio::from(slave))
        .stderr(Stdio::from(err_write))
        .process_group(0);
    for (name, value) in &spec.env {
        command.env(name, value);
    }
    let (ours, theirs) = socket_pair().map_err(|e| format!("cannot make a socket pair: {}", plain(&e)))?;
    let theirs_fd = theirs.as_raw_fd();
    // SAFETY: the closure makes system calls only (no allocation, no locks): prctl, unshare,
    // mount, open, dup2, fcntl, sendmsg, on strings and buffers made before the fork or on its stack.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(io::Error::last_os_error());
            }
            hide.apply()?;
            // dup2 leaves the copy open across the exec (the pipe's own end is O_CLOEXEC);
            // a pipe that got the descriptor itself is only made to stay open.
            if let Some(writer) = promise_writer {
                let kept = if writer == PROMISE_FD {
                    libc::fcntl(writer, libc::F_SETFD, 0)
                } else {
                    libc::dup2(writer, PROMISE_FD)
                };
                if kept < 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            send_namespace(theirs_fd)
        });
    }
    let started = Instant::now();
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start unshare (Debian package util-linux) for /bin/sh: {}", plain(&e)))?;
    // The terminal's other end and the pipe's writing end are the child's now: once
    // every process holding them is gone, the reads below end.
    drop(command);
    drop(theirs);
    let (promise_reader, promise_writer) = promises.unzip();
    drop(promise_writer);
    // The command's namespace, sent by the child before its exec, held open until
    // everything in it is gone: a namespace's number is reused once it is freed, and a
    // number alone could then name another command's (another check beside this one);
    // and a command that ends at once is no longer in it when the spawn returns.
    let held = receive_namespace(&ours);
    let namespace = held.as_ref().and_then(|file| file.metadata().ok()).map(|m| {
        use std::os::unix::fs::MetadataExt;
        format!("mnt:[{}]", m.ino())
    });
    if namespace.is_none() {
        // Cannot happen (the child sends it or does not exec); never wait on what could
        // not be ended.
        // SAFETY: the child's own group, the child not yet reaped.
        unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
        let _ = child.wait();
        return Err("cannot hold the command's mount namespace".into());
    }
    std::thread::scope(|scope| {
        let output = scope.spawn(move || read_lines(master, on_line));
        let promised = scope.spawn(move || promise_reader.map(|from| read_lines(from, on_line)).unwrap_or_default());
        let errors = scope.spawn(move || read_tail(err_read));
        let end = wait(&mut child, started, spec.limit, namespace.as_deref());
        // What it left running (a background writer) goes with it.
        if let Some(namespace) = &namespace {
            kill_namespace(namespace);
        }
        drop(held);
        let lines = output.join().unwrap_or_default();
        let promise_lines = promised.join().unwrap_or_default();
        let stderr = errors.join().unwrap_or_default();
        Ok(Ran { end, lines, promise_lines, stderr })
    })
}

/// Waits for `child` to exit, for its limit, or for a signal to writebench.
fn wait(child: &mut Child, started: Instant, limit: Duration, namespace: Option<&str>) -> End {
    let kill = |child: &mut Child| {
        // SAFETY: its process group is its own (process_group(0)).
        unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
        if let Some(namespace) = namespace {
            kill_namespace(namespace);
        }
        let _ = child.kill();
        let _ = child.wait();
    };
    let left = limit.saturating_sub(started.elapsed());
    let mut signal = None;
    match wait_within(child, left, || {
        signal = error::interrupt::received();
        signal.is_some()
    }) {
        Waited::Exited(status) => End::Exited(status),
        Waited::GaveUp => {
            kill(child);
            End::Interrupted(error::interrupt::name(signal.expect("given up on a signal")))
        }
        Waited::TimedOut | Waited::Failed(_) => {
            kill(child);
            End::TimedOut
        }
    }
}

/// The words for how it ended: "exit status 3", "killed by signal 11 (SIGSEGV)".
pub fn status_words(status: &ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit status {code}"),
        (None, Some(signal)) => format!("killed by signal {signal} ({})", signal_name(signal)),
        (None, None) => "ended".to_string(),
    }
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGINT => "SIGINT",
        libc::SIGPIPE => "SIGPIPE",
        _ => "a signal",
    }
}

/// The paths to cover, as C strings made before the fork.
struct Hidden {
    dirs: Vec<CString>,
    files: Vec<CString>,
}

impl Hidden {
    fn new(paths: &[PathBuf]) -> Result<Hidden, String> {
        let c =
            |path: &Path| CString::new(path.as_os_str().as_bytes()).map_err(|_| format!("a NUL in {}", path.display()));
        let mut hidden = Hidden { dirs: Vec::new(), files: Vec::new() };
        for path in paths {
            match std::fs::metadata(path) {
                Ok(meta) if meta.is_dir() => hidden.dirs.push(c(path)?),
                Ok(_) => hidden.files.push(c(path)?),
                Err(_) => {}
            }
        }
        Ok(hidden)
    }

    /// In the child: a mount namespace of its own, in which no mount propagates back,
    /// and the paths covered.
    fn apply(&self) -> io::Result<()> {
        let check = |result: libc::c_int| if result == 0 { Ok(()) } else { Err(io::Error::last_os_error()) };
        // SAFETY: system calls on NUL-terminated strings that outlive them.
        unsafe {
            check(libc::unshare(libc::CLONE_NEWNS))?;
            check(libc::mount(
                c"none".as_ptr(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            for dir in &self.dirs {
                check(libc::mount(
                    c"none".as_ptr(),
                    dir.as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    c"size=4k".as_ptr().cast(),
                ))?;
            }
            for file in &self.files {
                check(libc::mount(
                    c"/dev/null".as_ptr(),
                    file.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND,
                    std::ptr::null(),
                ))?;
            }
        }
        Ok(())
    }
}

/// In the child, before its exec: its mount namespace, opened and sent to writebench.
fn send_namespace(socket: libc::c_int) -> io::Result<()> {
    // SAFETY: open, sendmsg and close on descriptors of this process; the message's
    // buffers live on this stack for the call.
    unsafe {
        let fd = libc::open(c"/proc/self/ns/mnt".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let (mut byte, mut iov, mut space) = ([0u8; 1], empty_iovec(), [0u64; 8]);
        let message = fd_message(&mut byte, &mut iov, &mut space);
        let header = libc::CMSG_FIRSTHDR(&message);
        (*header).cmsg_level = libc::SOL_SOCKET;
        (*header).cmsg_type = libc::SCM_RIGHTS;
        (*header).cmsg_len = libc::CMSG_LEN(size_of::<libc::c_int>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(header).cast::<libc::c_int>(), fd);
        let sent = libc::sendmsg(socket, &message, 0);
        libc::close(fd);
        if sent < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The namespace the child sent (None if none came: it is then not held, nor killed).
fn receive_namespace(socket: &OwnedFd) -> Option<File> {
    // SAFETY: recvmsg into buffers of this stack; a descriptor received is owned at once.
    unsafe {
        let (mut byte, mut iov, mut space) = ([0u8; 1], empty_iovec(), [0u64; 8]);
        let mut message = fd_message(&mut byte, &mut iov, &mut space);
        if libc::recvmsg(socket.as_raw_fd(), &mut message, libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC) < 1 {
            return None;
        }
        let header = libc::CMSG_FIRSTHDR(&message);
        if header.is_null() || (*header).cmsg_type != libc::SCM_RIGHTS {
            return None;
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(header).cast::<libc::c_int>());
        Some(File::from_raw_fd(fd))
    }
}

fn empty_iovec() -> libc::iovec {
    libc::iovec { iov_base: std::ptr::null_mut(), iov_len: 0 }
}

/// The message that carries one descriptor, sent and received alike: one byte of data
/// (`byte`, through `iov`) and room for one `SCM_RIGHTS` record in `space` (u64s: a
/// control message is aligned as its header). Every buffer is the caller's, on its stack:
/// the child builds it between fork and exec, where nothing may be allocated.
fn fd_message(byte: &mut [u8; 1], iov: &mut libc::iovec, space: &mut [u64; 8]) -> libc::msghdr {
    *iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
    // SAFETY: msghdr is plain data, all zeros its empty value; CMSG_SPACE is arithmetic.
    let mut message: libc::msghdr = unsafe { std::mem::zeroed() };
    message.msg_iov = iov;
    message.msg_iovlen = 1;
    message.msg_control = space.as_mut_ptr().cast();
    message.msg_controllen = unsafe { libc::CMSG_SPACE(size_of::<libc::c_int>() as u32) } as _;
    message
}

fn socket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: socketpair fills the two descriptors, owned at once.
    if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both just made.
    unsafe { Ok((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]))) }
}

/// Kills every process in mount namespace `namespace` ("mnt:[…]"), at most for a second.
/// The caller holds the namespace open, so that its number names it alone.
fn kill_namespace(namespace: &str) {
    lab::namespaces::kill_all("mnt", namespace, Duration::from_secs(1), || {});
}

/// A pseudo-terminal in raw mode (no "\r\n" for "\n", no echo): (the side writebench
/// reads, the side given to the command).
fn terminal() -> io::Result<(File, File)> {
    // SAFETY: posix_openpt's result is checked and owned at once.
    let master = unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) };
    if master < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened, owned by nothing else.
    let master = unsafe { File::from_raw_fd(master) };
    let mut name = [0 as libc::c_char; 128];
    // SAFETY: calls on an open descriptor; the name's buffer is as long as said.
    unsafe {
        if libc::grantpt(master.as_raw_fd()) != 0
            || libc::unlockpt(master.as_raw_fd()) != 0
            || libc::ptsname_r(master.as_raw_fd(), name.as_mut_ptr(), name.len()) != 0
        {
            return Err(io::Error::last_os_error());
        }
    }
    // SAFETY: ptsname_r wrote a NUL-terminated name.
    let name = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) };
    // SAFETY: open(2) with a valid name; the result is checked.
    let slave = unsafe { libc::open(name.as_ptr(), libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC) };
    if slave < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor just opened.
    let slave = unsafe { File::from_raw_fd(slave) };
    // SAFETY: termios calls on an open terminal, with a struct they fill.
    unsafe {
        let mut settings: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(slave.as_raw_fd(), &mut settings) != 0 {
            return Err(io::Error::last_os_error());
        }
        libc::cfmakeraw(&mut settings);
        if libc::tcsetattr(slave.as_raw_fd(), libc::TCSANOW, &settings) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok((master, slave))
}

fn pipe() -> io::Result<(File, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two descriptors, owned at once.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both just made.
    unsafe { Ok((File::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]))) }
}

/// Each line of `from` given to `on_line` as soon as it is read; a last line without
/// its newline too. A terminal whose other side is closed by all reads EIO: the end.
fn read_lines<T>(mut from: File, on_line: &(dyn Fn(String) -> T + Sync)) -> Vec<T> {
    let mut out = Vec::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match from.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                pending.extend_from_slice(&buffer[..n]);
                while let Some(at) = pending.iter().position(|&b| b == b'\n') {
                    let line: Vec<u8> = pending.drain(..=at).collect();
                    let text = String::from_utf8_lossy(&line[..line.len() - 1]);
                    out.push(on_line(text.trim_end_matches('\r').to_string()));
                }
            }
        }
    }
    if !pending.is_empty() {
        out.push(on_line(String::from_utf8_lossy(&pending).to_string()));
    }
    out
}

/// The last [`STDERR_KEPT`] bytes of `from`, read to its end.
fn read_tail(mut from: File) -> String {
    let mut kept: Vec<u8> = Vec::new();
    let mut buffer = [0u8; 4096];
    while let Ok(n) = from.read(&mut buffer) {
        if n == 0 {
            break;
        }
        kept.extend_from_slice(&buffer[..n]);
        if kept.len() > 2 * STDERR_KEPT {
            kept.drain(..kept.len() - STDERR_KEPT);
        }
    }
    if kept.len() > STDERR_KEPT {
        kept.drain(..kept.len() - STDERR_KEPT);
    }
    String::from_utf8_lossy(&kept).to_string()
}

fn plain(error: &io::Error) -> String {
    error::plain(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec<'a>(command: &'a str, dir: &'a Path) -> Spec<'a> {
        Spec { command, dir, env: Vec::new(), hide: Vec::new(), limit: Duration::from_secs(20), promise_fd: false }
    }

    /// Needs root (a mount namespace), as `writebench crash` does.
    #[test]
    fn lines_are_read_as_said_on_a_terminal_and_stderr_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let ran = run(
            &spec(
                "test -t 1 && echo terminal; printf 'a\\nb'; echo oops >&2; python3 -c 'print(\"from python\")'; exit 3",
                dir.path(),
            ),
            &|line| line,
        )
        .unwrap();
        assert_eq!(ran.lines, vec!["terminal", "a", "bfrom python"]);
        assert_eq!(ran.stderr, "oops\n");
        assert!(matches!(&ran.end, End::Exited(s) if s.code() == Some(3)), "{:?}", ran.end);
    }

    #[test]
    fn a_hidden_path_is_not_seen_and_the_machine_s_mounts_are_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        std::fs::create_dir(&secret).unwrap();
        std::fs::write(secret.join("image"), b"recorder").unwrap();
        let file = dir.path().join("state.img");
        std::fs::write(&file, b"state").unwrap();
        let mounts_before = std::fs::read_to_string("/proc/self/mountinfo").unwrap().lines().count();
        let mut spec = spec("ls secret | wc -l; wc -c < state.img", dir.path());
        spec.hide = vec![secret.clone(), file.clone()];
        let ran = run(&spec, &|line| line.trim().to_string()).unwrap();
        assert_eq!(ran.lines, vec!["0", "0"], "an empty directory and an empty file in its place");
        assert_eq!(std::fs::read(secret.join("image")).unwrap(), b"recorder");
        assert_eq!(std::fs::read_to_string("/proc/self/mountinfo").unwrap().lines().count(), mounts_before);
    }

    #[test]
    fn a_command_past_its_limit_is_killed_with_what_it_left_running() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("left");
        // A background writer that outlives the shell, in a session of its own.
        let command = format!("setsid sh -c 'sleep 30; touch {}' & echo started; sleep 30", marker.display());
        let mut spec = spec(&command, dir.path());
        spec.limit = Duration::from_millis(500);
        let started = Instant::now();
        let ran = run(&spec, &|line| line).unwrap();
        assert_eq!(ran.end, End::TimedOut);
        assert_eq!(ran.lines, vec!["started"]);
        assert!(started.elapsed() < Duration::from_secs(10), "killed, not waited for");
        let left = std::process::Command::new("pgrep").args(["-f", &marker.display().to_string()]).output().unwrap();
        assert!(left.stdout.is_empty(), "nothing left running: {}", String::from_utf8_lossy(&left.stdout));
    }

    #[test]
    fn how_it_ended_in_words() {
        assert_eq!(status_words(&ExitStatus::from_raw(3 << 8)), "exit status 3");
        assert_eq!(status_words(&ExitStatus::from_raw(11)), "killed by signal 11 (SIGSEGV)");
    }
}
