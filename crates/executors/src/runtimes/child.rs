//! One runner process: started with the source memfd as fd 3, spoken to in lines
//! (docs/runtimes.md), ended with `quit`. What the runner says on stderr goes to an
//! anonymous file whose last lines explain a runner that died.
//!
//! No thread of ours waits on the runner: while a process has a second thread, every
//! `write`/`pwrite` it makes pays for the shared descriptor table (an atomic reference
//! count per call, and `write`'s file-position lock). Measured here: 1-byte `pwrite`
//! calls of native cases took 620 ns alone and 650–670 ns while a thread reading a
//! runner's stderr pipe existed (C's own loop: 612 ns), which made native look slower
//! than the C runner.

use std::io::{self, BufRead, BufReader, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use serde::Deserialize;

use super::toolchain::Launch;
use error::CallError;
use error::wait::{Waited, wait_within};
use plan::catalog;

/// How much of the end of the runner's stderr is read for the reason of a failure.
const STDERR_TAIL: usize = 16 * 1024;

/// What a runner says first.
#[derive(Debug, Clone, Deserialize)]
pub struct Hello {
    pub runner: String,
    pub protocol: u32,
    #[serde(default)]
    pub version: String,
    /// The methods the runner offers: the catalogue's list for its runtime, or it does
    /// not start.
    #[serde(default)]
    pub methods: Vec<String>,
}

/// A running runner.
pub struct Child {
    runtime: String,
    process: std::process::Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    /// The runner's stderr: an anonymous file, read only when it died.
    stderr: std::fs::File,
    source: Memfd,
    pub hello: Hello,
}

impl Child {
    /// Starts `runtime`'s runner with a source of `source_len` bytes and reads its hello,
    /// which must offer the methods the catalogue lists for the runtime: a runner built
    /// from other sources than the catalogue describes stops here, not case by case.
    pub fn start(runtime: &str, launch: &Launch, source_len: usize) -> Result<Child, CallError> {
        let source = Memfd::new(source_len).map_err(|e| CallError::new("memfd_create for the runner's source", e))?;
        let fd = source.fd.as_raw_fd();
        let mut command = Command::new(&launch.program);
        command.args(&launch.args).current_dir(&launch.dir);
        let stderr = anonymous_file(c"writebench-runner-stderr")
            .map_err(|e| CallError::new("memfd_create for the runner's stderr", e))?;
        let for_child = stderr.try_clone().map_err(|e| CallError::new("dup of the runner's stderr", e))?;
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::from(for_child));
        // SAFETY: dup2 and fcntl are async-signal-safe; the closure touches nothing else.
        unsafe {
            command.pre_exec(move || {
                if fd == 3 {
                    // dup2 onto itself keeps close-on-exec: clear it instead.
                    if libc::fcntl(3, libc::F_SETFD, 0) < 0 {
                        return Err(io::Error::last_os_error());
                    }
                } else if libc::dup2(fd, 3) < 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut process = command
            .spawn()
            .map_err(|e| CallError::new(format!("start the {runtime} runner ({})", launch.program.display()), e))?;
        let stdin = process.stdin.take();
        let stdout = BufReader::new(process.stdout.take().expect("stdout is piped"));
        let placeholder = Hello { runner: String::new(), protocol: 0, version: String::new(), methods: Vec::new() };
        let mut child =
            Child { runtime: runtime.to_string(), process, stdin, stdout, stderr, source, hello: placeholder };
        let line = child.reply()?;
        let hello: Hello = serde_json::from_str(&line).map_err(|e| child.protocol_error(&line, &e.to_string()))?;
        if hello.protocol != 1 {
            return Err(child.protocol_error(&line, "protocol 1 expected"));
        }
        let listed = catalog::runtime(runtime).ok_or_else(|| format!("the catalogue has no runtime {runtime}"));
        if let Err(reason) = listed.and_then(|entry| entry.check_offer(&hello.methods)) {
            let error = io::Error::new(io::ErrorKind::InvalidData, reason);
            return Err(CallError::new(format!("start the {runtime} runner"), error));
        }
        child.hello = hello;
        Ok(child)
    }

    /// The source the runner maps, to fill before a run.
    pub fn source_mut(&mut self) -> &mut [u8] {
        self.source.bytes_mut()
    }

    /// Gives the source's memory back between runs (its size stays): a case's runner
    /// waits while the other cases of a round run, and should not hold a run's bytes.
    pub fn release_source(&mut self) {
        self.source.release();
    }

    /// Sends `text` (whole lines).
    pub fn send(&mut self, text: &str) -> Result<(), CallError> {
        let stdin = self.stdin.as_mut().expect("stdin is open until drop");
        if let Err(error) = stdin.write_all(text.as_bytes()).and_then(|()| stdin.flush()) {
            return Err(self.died(error));
        }
        Ok(())
    }

    /// The runner's next line.
    pub fn reply(&mut self) -> Result<String, CallError> {
        let mut line = String::new();
        match self.stdout.read_line(&mut line) {
            Ok(0) => Err(self.died(io::Error::new(io::ErrorKind::UnexpectedEof, "no reply"))),
            Ok(_) => Ok(line),
            Err(error) => Err(self.died(error)),
        }
    }

    /// Closes the runner's stdin, which ends it (docs/runtimes.md), and waits up to
    /// `within` for its exit status; None where it had not ended by then (it is killed
    /// when dropped).
    pub fn end(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        drop(self.stdin.take());
        match wait_within(&mut self.process, within, || false) {
            Waited::Exited(status) => Some(status),
            _ => None,
        }
    }

    /// A reply that does not follow the protocol.
    pub fn protocol_error(&self, line: &str, why: &str) -> CallError {
        let shown: String = line.trim().chars().take(200).collect();
        CallError::new(
            format!("the {} runner's reply '{shown}'", self.runtime),
            io::Error::new(io::ErrorKind::InvalidData, why.to_string()),
        )
    }

    /// The runner stopped answering: its exit status and last words are the reason.
    fn died(&mut self, error: io::Error) -> CallError {
        // Give the runner a moment to finish its last words and exit.
        let status = match wait_within(&mut self.process, Duration::from_millis(500), || false) {
            Waited::Exited(status) => Some(status),
            _ => None,
        };
        let said = tail(&self.stderr, STDERR_TAIL);
        let mut text = match status {
            Some(status) => format!("the {} runner exited ({status})", self.runtime),
            None => format!("the {} runner stopped answering ({error})", self.runtime),
        };
        if let Some(last) = said.lines().rev().find(|line| !line.trim().is_empty()) {
            text.push_str(": ");
            text.push_str(last.trim());
        }
        CallError::new(format!("{} runner", self.runtime), io::Error::other(text))
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = stdin.write_all(b"quit\n");
        }
        // A runner that does not end on `quit` within a few seconds is killed.
        if !matches!(wait_within(&mut self.process, Duration::from_secs(5), || false), Waited::Exited(_)) {
            let _ = self.process.kill();
            let _ = self.process.wait();
        }
    }
}

/// A memfd as a file (close-on-exec here; a child gets it through `Stdio`).
fn anonymous_file(name: &std::ffi::CStr) -> io::Result<std::fs::File> {
    // SAFETY: memfd_create with a valid name; the result is checked.
    let raw = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor we just created and own.
    Ok(std::fs::File::from(unsafe { OwnedFd::from_raw_fd(raw) }))
}

/// The last `most` bytes of `file` as text (lossy), read at offsets so that the
/// shared file position the runner writes at is left alone.
fn tail(file: &std::fs::File, most: usize) -> String {
    use std::os::unix::fs::FileExt;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(most as u64);
    let mut buf = vec![0u8; (len - start) as usize];
    let read = file.read_at(&mut buf, start).unwrap_or(0);
    String::from_utf8_lossy(&buf[..read]).into_owned()
}

/// An anonymous file in memory, mapped read-write here; the runner maps it read-only.
struct Memfd {
    fd: OwnedFd,
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the map is only written through `&mut self`.
unsafe impl Send for Memfd {}

impl Memfd {
    fn new(len: usize) -> io::Result<Memfd> {
        let fd = OwnedFd::from(anonymous_file(c"writebench-source")?);
        let raw = fd.as_raw_fd();
        let mapped = len.max(1);
        // SAFETY: ftruncate and mmap of our own memfd; results checked.
        let ptr = unsafe {
            if libc::ftruncate(raw, mapped as libc::off_t) < 0 {
                return Err(io::Error::last_os_error());
            }
            libc::mmap(std::ptr::null_mut(), mapped, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, raw, 0)
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Memfd { fd, ptr: ptr.cast(), len })
    }

    fn release(&mut self) {
        // SAFETY: punching a hole in our own memfd; failure only keeps the memory.
        unsafe {
            libc::fallocate(
                self.fd.as_raw_fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                0,
                self.len.max(1) as libc::off_t,
            );
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: `len` bytes (at least) are mapped read-write for our lifetime.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for Memfd {
    fn drop(&mut self) {
        // SAFETY: unmapping our own map once.
        unsafe { libc::munmap(self.ptr.cast(), self.len.max(1)) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(script: &str) -> Launch {
        Launch {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            dir: std::env::temp_dir(),
            version: "sh".into(),
        }
    }

    #[test]
    fn a_runner_that_dies_is_explained_by_its_exit_and_last_stderr_line() {
        let script = r#"echo '{"runner":"zig","protocol":1,"methods":["io_uring","write","pwrite"]}'; read line; echo 'first words' >&2; echo 'cannot map fd 3' >&2; exit 3"#;
        let mut child = Child::start("zig", &shell(script), 4096).expect("the runner starts");
        assert_eq!(child.hello.runner, "zig");
        child.send("case\n").expect("the runner reads its line");
        let error = child.reply().expect_err("the runner died").to_string();
        assert!(error.contains("exited (exit status: 3)"), "{error}");
        assert!(error.ends_with("cannot map fd 3"), "{error}");
    }

    #[test]
    fn a_runner_that_offers_other_methods_than_the_catalogue_does_not_start() {
        let script = r#"echo '{"runner":"go","protocol":1,"methods":["write","pwrite"]}'; read line"#;
        let error = Child::start("go", &shell(script), 4096).err().expect("the runner is refused").to_string();
        assert_eq!(
            error,
            "start the go runner: the go runner offers write, pwrite but the catalogue lists write, bufio, pwrite, io_uring"
        );
    }
}
