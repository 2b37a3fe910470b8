//! The external commands the lab runs (losetup, mkfs.*, mdadm, mount, bindfs): each is
//! run with no input, its output captured, and its failure turned into one line naming
//! the command and the tool's own first line of complaint. Every command line is kept,
//! so that the result file says exactly how its filesystem was built.

use std::ffi::OsStr;
use std::process::{Command, Stdio};

/// A command to run: the program and its arguments, as text for the record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub program: String,
    pub args: Vec<String>,
}

impl Step {
    pub fn new(program: &str) -> Step {
        Step { program: program.to_string(), args: Vec::new() }
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Step {
        self.args.push(arg.as_ref().to_string_lossy().into_owned());
        self
    }

    pub fn args<S: AsRef<OsStr>>(mut self, args: impl IntoIterator<Item = S>) -> Step {
        self.args.extend(args.into_iter().map(|arg| arg.as_ref().to_string_lossy().into_owned()));
        self
    }

    /// Options split on white space (`--mkfs-opt ext4='-E lazy_itable_init=0'`).
    pub fn words(mut self, text: &str) -> Step {
        self.args.extend(text.split_whitespace().map(String::from));
        self
    }

    /// The command line as a shell would read it (arguments with spaces quoted).
    pub fn line(&self) -> String {
        let mut line = self.program.clone();
        for arg in &self.args {
            line.push(' ');
            if arg.is_empty() || arg.contains(|c: char| c.is_whitespace() || c == '\'' || c == '"') {
                line.push_str(&format!("'{}'", arg.replace('\'', "'\\''")));
            } else {
                line.push_str(arg);
            }
        }
        line
    }

    /// Runs it; Ok(its standard output) or Err(one line). In a process group of its
    /// own: a Ctrl-C on the terminal reaches the lab (which then tears down) but does not
    /// kill an mkfs, an mdadm or an umount half-way.
    pub fn run(&self) -> Result<String, String> {
        use std::os::unix::process::CommandExt;
        let output = Command::new(&self.program)
            .args(&self.args)
            .process_group(0)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("{}: cannot run {}: {}", self.line(), self.program, error::plain(&e)))?;
        if output.status.success() {
            return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let why = stderr.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no message").to_string();
        let status = match output.status.code() {
            Some(code) => format!("exit status {code}"),
            None => "killed by a signal".to_string(),
        };
        Err(format!("{} failed ({status}): {why}", self.line()))
    }
}

/// The commands one build ran, in order: recorded in the result.
#[derive(Debug, Default, Clone)]
pub struct Log {
    pub lines: Vec<String>,
}

impl Log {
    /// Runs `step` and records it (also when it fails: the record says what was tried).
    pub fn run(&mut self, step: Step) -> Result<String, String> {
        self.lines.push(step.line());
        step.run()
    }
}

/// True when `program` is on PATH (or /sbin, /usr/sbin, where root's tools live even
/// when PATH lacks them).
pub fn have(program: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).chain(["/sbin", "/usr/sbin", "/bin", "/usr/bin"].map(std::path::PathBuf::from)).any(
        |dir| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::metadata(dir.join(program)).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_reads_as_its_command_line_and_fails_in_one_line() {
        let step = Step::new("mkfs.ext4").arg("-q").words(" -O  ^has_journal ").arg("/dev/loop7").arg("a b");
        assert_eq!(step.line(), "mkfs.ext4 -q -O ^has_journal /dev/loop7 'a b'");
        let error = Step::new("sh").arg("-c").arg("echo one >&2; echo two >&2; exit 3").run().unwrap_err();
        assert!(error.ends_with("failed (exit status 3): one"), "{error}");
        let error = Step::new("/nonexistent/tool").run().unwrap_err();
        assert!(error.contains("cannot run") && !error.contains('\n'), "{error}");
        assert_eq!(Step::new("echo").arg("hi").run().unwrap(), "hi\n");
        assert!(have("sh") && !have("no-such-tool-writebench"));
    }
}
