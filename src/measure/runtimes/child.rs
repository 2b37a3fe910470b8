//! One runner process: started with the source memfd as fd 3, spoken to in lines
//! (docs/runtimes.md), ended with `quit`. What the runner says on stderr is kept (its
//! last lines) to explain a runner that died.

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::toolchain::Launch;
use crate::error::CallError;

/// Lines of the runner's stderr kept for the reason of a failure.
const STDERR_LINES: usize = 8;

/// What a runner says first.
#[derive(Debug, Clone, Deserialize)]
pub struct Hello {
    pub runner: String,
    pub protocol: u32,
    #[serde(default)]
    pub version: String,
}

/// A running runner.
pub struct Child {
    runtime: String,
    process: std::process::Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    source: Memfd,
    pub hello: Hello,
}

impl Child {
    /// Starts `runtime`'s runner with a source of `source_len` bytes and reads its hello.
    pub fn start(runtime: &str, launch: &Launch, source_len: usize) -> Result<Child, CallError> {
        let source = Memfd::new(source_len).map_err(|e| CallError::new("memfd_create for the runner's source", e))?;
        let fd = source.fd.as_raw_fd();
        let mut command = Command::new(&launch.program);
        command.args(&launch.args).current_dir(&launch.dir);
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
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
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let mut pipe = process.stderr.take().expect("stderr is piped");
        let kept = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut text = String::new();
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                text.push_str(&String::from_utf8_lossy(&buf[..n]));
                while let Some(end) = text.find('\n') {
                    let line: String = text.drain(..=end).collect();
                    let mut lines = kept.lock().unwrap_or_else(|p| p.into_inner());
                    lines.push_back(line.trim_end().to_string());
                    if lines.len() > STDERR_LINES {
                        lines.pop_front();
                    }
                }
            }
        });
        let placeholder = Hello { runner: String::new(), protocol: 0, version: String::new() };
        let mut child =
            Child { runtime: runtime.to_string(), process, stdin, stdout, stderr, source, hello: placeholder };
        let line = child.reply()?;
        let hello: Hello = serde_json::from_str(&line).map_err(|e| child.protocol_error(&line, &e.to_string()))?;
        if hello.protocol != 1 {
            return Err(child.protocol_error(&line, "protocol 1 expected"));
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
        // Give the stderr reader a moment to collect the last lines.
        let deadline = Instant::now() + Duration::from_millis(500);
        let status = loop {
            match self.process.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
                _ => break None,
            }
        };
        std::thread::sleep(Duration::from_millis(20));
        let said: Vec<String> = self.stderr.lock().unwrap_or_else(|p| p.into_inner()).iter().cloned().collect();
        let mut text = match status {
            Some(status) => format!("the {} runner exited ({status})", self.runtime),
            None => format!("the {} runner stopped answering ({error})", self.runtime),
        };
        if let Some(last) = said.iter().rev().find(|line| !line.trim().is_empty()) {
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
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.process.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
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
        // SAFETY: memfd_create with a valid name; the result is checked.
        let raw = unsafe { libc::memfd_create(c"writebench-source".as_ptr(), libc::MFD_CLOEXEC) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor we just created and own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
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
