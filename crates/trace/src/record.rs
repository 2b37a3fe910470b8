//! Running the user's program under strace (docs/trace.md): its arguments, directory and
//! environment as given, every process and thread followed (-f), each descriptor named
//! (-yy), each call timed (-ttt -T), no data copied (-s 0). strace writes its log into a
//! FIFO in a private directory, read while the program runs, so a long program's log
//! never lands on a disk: the fold keeps counts, not lines.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use error::interrupt;
use error::wait::{Waited, wait_within};

use crate::fold::{Fold, Folded};
use crate::strace::Reader;

/// The calls that shape how a program writes, and those the fold needs to follow it
/// (descriptors, offsets, sizes, threads, directories). `?`: a call this kernel's
/// architecture lacks is no error.
const CALLS: &[&str] = &[
    "open",
    "openat",
    "openat2",
    "creat",
    "close",
    "dup",
    "dup2",
    "dup3",
    "fcntl",
    "lseek",
    "fstat",
    "newfstatat",
    "statx",
    "write",
    "pwrite64",
    "writev",
    "pwritev",
    "pwritev2",
    "copy_file_range",
    "sendfile",
    "splice",
    "fsync",
    "fdatasync",
    "sync_file_range",
    "sync",
    "syncfs",
    "msync",
    "mmap",
    "fallocate",
    "ftruncate",
    "truncate",
    "rename",
    "renameat",
    "renameat2",
    "link",
    "linkat",
    "unlink",
    "unlinkat",
    "clone",
    "clone3",
    "fork",
    "vfork",
    "chdir",
    "fchdir",
    "io_uring_setup",
    "io_uring_enter",
];

/// How long a program has to end after a signal was passed on to it, before it is killed.
const GRACE: Duration = Duration::from_secs(5);

/// A traced run.
#[derive(Debug)]
pub struct Traced {
    pub folded: Folded,
    /// "strace 6.1".
    pub tracer: String,
    /// How the program ended, in words ("exit status 0", "killed by SIGINT").
    pub ended: String,
    pub succeeded: bool,
    /// The signal that stopped writebench, passed on to the program.
    pub interrupted: Option<i32>,
}

/// strace's name and version, or the one line saying how to get it.
pub fn tracer() -> Result<String, String> {
    let missing = || {
        "trace needs strace, which is not installed here (Debian, Ubuntu: apt-get install strace; Fedora: dnf \
         install strace)"
            .to_string()
    };
    let output = Command::new("strace").arg("-V").stderr(Stdio::null()).output().map_err(|_| missing())?;
    let first = String::from_utf8_lossy(&output.stdout).lines().next().unwrap_or_default().to_string();
    // "strace -- version 6.1"
    let version = first.rsplit(' ').next().unwrap_or("").to_string();
    if !output.status.success() || version.is_empty() {
        return Err(missing());
    }
    Ok(format!("strace {version}"))
}

/// The program `name` as the shell would find it, or the one line saying it is not.
pub fn find_program(name: &str) -> Result<PathBuf, String> {
    let executable =
        |path: &Path| path.is_file() && std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
    if name.contains('/') {
        let path = PathBuf::from(name);
        return if executable(&path) { Ok(path) } else { Err(format!("no program {name} (not an executable file)")) };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| executable(candidate))
        .ok_or_else(|| format!("no program '{name}' found in PATH"))
}

/// Runs `command` under strace in the current directory, folding its calls as they come;
/// `keep_log` also writes strace's lines to that file; `replay`: the calls are kept for
/// a replay, up to that many bytes written.
pub fn run(command: &[String], tracer: String, keep_log: Option<&Path>, replay: Option<u64>) -> Result<Traced, String> {
    let private = PrivateDir::new()?;
    run_through(command, tracer, keep_log, replay, &private.path.join("strace.log"))
}

fn run_through(
    command: &[String],
    tracer: String,
    keep_log: Option<&Path>,
    replay: Option<u64>,
    fifo: &Path,
) -> Result<Traced, String> {
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: a valid C string; mkfifo has no other precondition.
    if unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) } != 0 {
        return Err(format!("cannot make the tracer's FIFO: {}", error::plain(&std::io::Error::last_os_error())));
    }
    let mut kept = match keep_log {
        Some(path) => {
            Some(File::create(path).map_err(|e| format!("--keep-log {}: {}", path.display(), error::plain(&e)))?)
        }
        None => None,
    };
    interrupt::install().map_err(|e| format!("cannot install signal handlers: {}", error::plain(&e)))?;
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the working directory: {}", error::plain(&e)))?;
    let reader_fifo = fifo.to_path_buf();
    let outputs: Vec<String> = [1, 2]
        .iter()
        .filter_map(|fd| std::fs::read_link(format!("/proc/self/fd/{fd}")).ok())
        .map(|path| path.to_string_lossy().into_owned())
        .collect();
    let cwd_text = cwd.to_string_lossy().into_owned();
    let reader = std::thread::spawn(move || -> Result<Folded, String> {
        // Blocks until strace opens the FIFO (or writebench does, to end a failed start).
        let file = File::open(&reader_fifo).map_err(|e| error::plain(&e))?;
        let mut lines = Reader::default();
        let mut fold = Fold::new(Some(&cwd_text)).inheriting(outputs);
        if let Some(limit) = replay {
            fold = fold.recording(Some(limit));
        }
        for line in BufReader::with_capacity(1 << 20, file).lines() {
            let line = line.map_err(|e| error::plain(&e))?;
            if let Some(kept) = kept.as_mut() {
                let _ = writeln!(kept, "{line}");
            }
            if let Some(event) = lines.line(&line) {
                fold.event(event);
            }
        }
        Ok(fold.finish())
    });
    let trace_list: Vec<String> = CALLS.iter().map(|call| format!("?{call}")).collect();
    let spawned = Command::new("strace")
        .args(["-f", "-yy", "-ttt", "-T", "-v", "-s", "0", "-o"])
        .arg(fifo)
        .args(["-e", &format!("trace={}", trace_list.join(","))])
        .arg("--")
        .args(command)
        .spawn();
    let mut strace = match spawned {
        Ok(child) => child,
        Err(error) => {
            unblock(fifo);
            let _ = reader.join();
            return Err(format!("cannot start strace: {}", error::plain(&error)));
        }
    };
    let mut interrupted = None;
    let status = loop {
        match wait_within(&mut strace, Duration::from_secs(24 * 3600), || interrupt::received().is_some()) {
            Waited::Exited(status) => break Some(status),
            Waited::Failed(_) => break None,
            Waited::TimedOut => continue,
            Waited::GaveUp => {
                let signal = interrupt::received().expect("given up on a signal");
                interrupted = Some(signal);
                // strace blocks fatal signals while it writes to a file (-I 3): the
                // program gets the signal, strace logs to its end and exits with it.
                pass_on(strace.id(), signal);
                match wait_within(&mut strace, GRACE, || false) {
                    Waited::Exited(status) => break Some(status),
                    _ => {
                        pass_on(strace.id(), libc::SIGKILL);
                        let _ = strace.kill();
                        break strace.wait().ok();
                    }
                }
            }
        }
    };
    // Ctrl-C reaches the program as well as writebench: it may end before the wait saw
    // the signal.
    let interrupted = interrupted.or_else(interrupt::received);
    // strace that failed before opening its log leaves the reader waiting for a writer.
    unblock(fifo);
    let folded = reader.join().map_err(|_| "the tracer's log could not be read".to_string())??;
    let (ended, succeeded) = match (&folded.exit, status) {
        (Some(exit), _) => (exit.clone(), exit == "exited with 0"),
        (None, Some(status)) => (in_words(status), status.success()),
        (None, None) => ("ended in a way not known".to_string(), false),
    };
    Ok(Traced { folded, tracer, ended, succeeded, interrupted })
}

/// "exited with 3", "killed by SIGINT", as strace says them.
fn in_words(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        _ => "ended".to_string(),
    }
}

/// Opens the FIFO for writing without waiting, so that a reader still waiting for
/// strace to open it sees an empty log end.
fn unblock(fifo: &Path) {
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::OpenOptions::new().write(true).custom_flags(libc::O_NONBLOCK).open(fifo);
}

/// Sends `signal` to the processes strace started (the program, not strace).
fn pass_on(strace: u32, signal: i32) {
    for pid in children(strace) {
        // SAFETY: kill(2) of a process we started, by its pid.
        unsafe { libc::kill(pid as i32, signal) };
    }
}

/// The processes whose parent is `parent`, from /proc.
fn children(parent: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                // The fields after the command's closing parenthesis: state, ppid, …
                stat.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok())
                    .is_some_and(|ppid| ppid == parent)
            })
        })
        .collect()
}

/// A directory of ours alone (0700) under the system's temporary directory, removed with
/// what it holds when dropped: the tracer's FIFO, the crash check's ways.
pub struct PrivateDir {
    pub path: PathBuf,
}

impl PrivateDir {
    pub fn new() -> Result<PrivateDir, String> {
        let base = std::env::temp_dir();
        for attempt in 0..100u32 {
            let path = base.join(format!("writebench-trace.{}.{attempt}", std::process::id()));
            let mut builder = std::fs::DirBuilder::new();
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            match builder.create(&path) {
                Ok(()) => return Ok(PrivateDir { path }),
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(error) => {
                    return Err(format!("cannot make a directory in {}: {}", base.display(), error::plain(&error)));
                }
            }
        }
        Err(format!("cannot make a directory of its own in {}", base.display()))
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Reads an existing strace log (`--from-log`), made with `-f -yy` at least for paths,
/// in the directory it ran in (`cwd`, where the log does not say).
pub fn read_log(path: &Path, cwd: Option<&str>, replay: Option<u64>) -> Result<Folded, String> {
    let file = File::open(path).map_err(|e| format!("--from-log {}: {}", path.display(), error::plain(&e)))?;
    let mut lines = Reader::default();
    let mut fold = Fold::new(cwd);
    if let Some(limit) = replay {
        fold = fold.recording(Some(limit));
    }
    for line in BufReader::new(file).lines() {
        let line = line.map_err(|e| format!("--from-log {}: {}", path.display(), error::plain(&e)))?;
        if let Some(event) = lines.line(&line) {
            fold.event(event);
        }
    }
    Ok(fold.finish())
}
