//! The user's own program under the crash check (`crash --run CMD --check CMD`,
//! docs/crash.md): its promises are its own words, every line it writes to standard
//! output, stamped with the recorder's position when writebench reads it (a line printed
//! after `commit()` returned promises what that commit made durable; a line read late
//! is judged in fewer states, never in more); and each crash state is judged by the
//! user's checker, run in the recovered filesystem, not by writebench.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::promise::{Ack, Promise};
use super::sandbox::{self, End, Spec};

/// The commands and their limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// Run once per filesystem, in its root (`sh -c`).
    pub run: String,
    /// Run in each crash state, in the recovered filesystem's root (`sh -c`).
    pub check: String,
    pub run_limit: Duration,
    pub check_limit: Duration,
    /// The directory writebench was started in (`WB_CRASH_FROM`), where a command's own
    /// scripts are: `--run 'python3 "$WB_CRASH_FROM/app.py"'`.
    pub from: PathBuf,
    /// Only the standard output's lines that start with it are promises
    /// (`--promise-prefix`): the program's other output is not.
    pub prefix: Option<String>,
    /// What the progress lines call it, when not its command (`trace --crash-check`'s
    /// ways of making a program's calls).
    pub label: Option<String>,
}

/// How the program's recording ended, for the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// "exit status 0".
    pub status: String,
    /// Its standard error (the last 16 KiB).
    pub stderr: String,
}

/// What one state's checker said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Kept,
    /// The checker's first line of output (or its exit status when it said nothing).
    Broken(String),
    /// Exit status 2: the data is corrupt, not only short of a promise (docs/crash.md,
    /// "Writing a checker"); its first line.
    Corrupt(String),
    /// It could not say: it crashed, timed out or could not start (why).
    Failed(String),
}

impl Program {
    /// Runs the program in `dir`, with `hide` out of its sight; `position` reads the
    /// recorder's log position. Its promises in order, with how it ended. Err (one line)
    /// when it cannot be checked: it timed out, a signal came, or it failed before its
    /// first promise (a command not found, a wrong option).
    pub fn record(
        &self,
        dir: &Path,
        hide: Vec<PathBuf>,
        position: &(dyn Fn() -> usize + Sync),
    ) -> Result<(Vec<Ack>, Ended), String> {
        let spec = Spec {
            command: &self.run,
            dir,
            env: vec![
                ("WB_CRASH_DIR", dir.display().to_string()),
                ("WB_CRASH_FROM", self.from.display().to_string()),
                ("WB_CRASH_PROMISE_FD", sandbox::PROMISE_FD.to_string()),
            ],
            hide,
            limit: self.run_limit,
            promise_fd: true,
        };
        let mut ran = sandbox::run(&spec, &|line| Ack {
            position: position(),
            what: format!("the program said \"{line}\""),
            promise: Promise::Said(line),
        })?;
        // Once the program writes to its promise descriptor, only those lines are
        // promises; else its standard output's (those with the prefix, if one is given).
        if !ran.promise_lines.is_empty() {
            ran.lines = std::mem::take(&mut ran.promise_lines);
        } else if let Some(prefix) = &self.prefix {
            ran.lines.retain(|ack| matches!(&ack.promise, Promise::Said(line) if line.starts_with(prefix.as_str())));
        }
        let first_error = || first_line(&ran.stderr).map(|line| format!(": {line}")).unwrap_or_default();
        let status = match &ran.end {
            End::Exited(status) => *status,
            End::TimedOut => {
                return Err(format!(
                    "the program did not finish within {} (--timeout), after {} promises{}",
                    seconds(self.run_limit),
                    ran.lines.len(),
                    first_error()
                ));
            }
            End::Interrupted(signal) => return Err(format!("interrupted by {signal}")),
        };
        if !status.success() && ran.lines.is_empty() {
            return Err(format!(
                "the program ended with {} before its first promise{}",
                sandbox::status_words(&status),
                first_error()
            ));
        }
        let ended = Ended { status: sandbox::status_words(&status), stderr: ran.stderr };
        Ok((ran.lines, ended))
    }

    /// Runs the checker in the recovered filesystem at `dir`, told the promises made
    /// before the power loss (`made`, in order; written to `promises_file`) and the state
    /// in words.
    pub fn judge(
        &self,
        dir: &Path,
        hide: Vec<PathBuf>,
        made: &[&str],
        state: &str,
        promises_file: &Path,
    ) -> Result<Verdict, String> {
        let mut text = made.join("\n");
        if !made.is_empty() {
            text.push('\n');
        }
        std::fs::write(promises_file, text)
            .map_err(|e| format!("cannot write {}: {}", promises_file.display(), error::plain(&e)))?;
        let spec = Spec {
            command: &self.check,
            dir,
            env: vec![
                ("WB_CRASH_DIR", dir.display().to_string()),
                ("WB_CRASH_FROM", self.from.display().to_string()),
                ("WB_CRASH_PROMISE", made.last().map(|s| s.to_string()).unwrap_or_default()),
                ("WB_CRASH_PROMISES", promises_file.display().to_string()),
                ("WB_CRASH_STATE", state.to_string()),
            ],
            hide,
            limit: self.check_limit,
            promise_fd: false,
        };
        let ran = sandbox::run(&spec, &|line| line);
        let _ = std::fs::remove_file(promises_file);
        let ran = ran?;
        Ok(verdict(&ran.end, &ran.lines, &ran.stderr, self.check_limit))
    }
}

/// What a checker's end says: exit 0 kept; another exit status broken, in its first
/// words; a signal, its limit, or a shell that could not run it (126, 127) a failure.
fn verdict(end: &End, lines: &[String], stderr: &str, limit: Duration) -> Verdict {
    let said = |fallback: String| {
        lines
            .iter()
            .map(|l| l.trim())
            .find(|l| !l.is_empty())
            .map(str::to_string)
            .or_else(|| first_line(stderr))
            .unwrap_or(fallback)
    };
    let why = |what: String| match first_line(stderr) {
        Some(line) => format!("{what}: {line}"),
        None => what,
    };
    match end {
        End::Exited(status) if status.success() => Verdict::Kept,
        End::Exited(status) => match status.code() {
            Some(126 | 127) => {
                Verdict::Failed(why(format!("the checker could not run ({})", sandbox::status_words(status))))
            }
            // A shell reports a command killed by signal N as 128 + N.
            Some(code @ 129..=192) => {
                Verdict::Failed(why(format!("the checker was killed by signal {} (exit status {code})", code - 128)))
            }
            Some(2) => Verdict::Corrupt(said("the checker ended with exit status 2 (corrupt)".to_string())),
            Some(_) => Verdict::Broken(said(format!("the checker ended with {}", sandbox::status_words(status)))),
            None => Verdict::Failed(why(format!("the checker was {}", sandbox::status_words(status)))),
        },
        End::TimedOut => {
            Verdict::Failed(format!("the checker did not finish within {} (--check-timeout)", seconds(limit)))
        }
        End::Interrupted(signal) => Verdict::Failed(format!("interrupted by {signal}")),
    }
}

fn first_line(text: &str) -> Option<String> {
    text.lines().map(str::trim).find(|l| !l.is_empty()).map(str::to_string)
}

/// "60 s", "1.5 s".
fn seconds(duration: Duration) -> String {
    format!("{} s", duration.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;

    fn exited(code: i32) -> End {
        End::Exited(ExitStatus::from_raw(code << 8))
    }

    #[test]
    fn a_checker_s_end_is_kept_broken_in_its_words_or_a_failure() {
        let limit = Duration::from_secs(10);
        let lines = vec![String::new(), "17 rows, 18 promised".to_string()];
        assert_eq!(verdict(&exited(0), &lines, "", limit), Verdict::Kept);
        assert_eq!(verdict(&exited(1), &lines, "", limit), Verdict::Broken("17 rows, 18 promised".into()));
        assert_eq!(verdict(&exited(1), &[], "Traceback\n", limit), Verdict::Broken("Traceback".into()));
        assert_eq!(verdict(&exited(3), &[], "", limit), Verdict::Broken("the checker ended with exit status 3".into()));
        assert_eq!(verdict(&exited(2), &lines, "", limit), Verdict::Corrupt("17 rows, 18 promised".into()));
        assert_eq!(
            verdict(&exited(127), &[], "sh: 1: mycheck: not found\n", limit),
            Verdict::Failed("the checker could not run (exit status 127): sh: 1: mycheck: not found".into())
        );
        assert_eq!(
            verdict(&End::Exited(ExitStatus::from_raw(libc::SIGSEGV)), &lines, "", limit),
            Verdict::Failed("the checker was killed by signal 11 (SIGSEGV)".into())
        );
        assert_eq!(
            verdict(&exited(139), &lines, "Segmentation fault\n", limit),
            Verdict::Failed("the checker was killed by signal 11 (exit status 139): Segmentation fault".into())
        );
        assert_eq!(
            verdict(&End::TimedOut, &lines, "", limit),
            Verdict::Failed("the checker did not finish within 10 s (--check-timeout)".into())
        );
    }
}
