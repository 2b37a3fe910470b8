//! Between runs (docs/design.md §2.4): every run, of every kind, starts after the previous
//! run's data and metadata are committed. A run syncs its own files before it returns
//! (untimed where its mode did not); then its files are removed and the removal is
//! committed with an fsync of the scratch directory, so that neither the writeback nor
//! the unlink of one run is paid inside the next run's timed span.

use std::io;

use crate::target::Scratch;
use error::CallError;
use result::{Run, Status};

/// The files of one case's runs: their names, and their removal after each run.
pub struct RunFiles<'a> {
    scratch: &'a Scratch,
    /// `case0003`, `latency0001`: unique per case within a scratch directory.
    prefix: String,
    files: u32,
    /// `--keep`: leave every run's files in place (tests read them back, and compare
    /// two runs of one case).
    keep: bool,
}

impl<'a> RunFiles<'a> {
    pub fn new(scratch: &'a Scratch, prefix: String, files: u32, keep: bool) -> RunFiles<'a> {
        RunFiles { scratch, prefix, files, keep }
    }

    /// `case0003-run2-f0.dat`...: the files of run `number`.
    pub fn names(&self, number: u32) -> Vec<String> {
        (0..self.files).map(|file| format!("{}-run{number}-f{file}.dat", self.prefix)).collect()
    }

    /// Run `number`: `run` gets the names of its files and returns with their data
    /// committed; then they are removed and the removal committed. An error ends the
    /// case: its status and the OS text.
    pub fn run<T>(
        &mut self,
        number: u32,
        run: impl FnOnce(&[String]) -> Result<T, CallError>,
    ) -> Result<T, (Status, String)> {
        let names = self.names(number);
        let outcome = run(&names);
        let removal = if self.keep && outcome.is_ok() { None } else { self.remove(&names) };
        after_removal(outcome, removal)
    }

    /// [`RunFiles::run`] for a timed run that puts `memory` bytes in the page cache and
    /// `room` bytes in its files: first the settle step (`measure::settle`), recorded
    /// with the run.
    pub fn run_settled(
        &mut self,
        number: u32,
        (memory, room): (u64, u64),
        run: impl FnOnce(&[String]) -> Result<Run, CallError>,
    ) -> Result<Run, (Status, String)> {
        let settled = self.scratch.settle(memory, room);
        self.run(number, run).map(|mut run| {
            run.settle_seconds = Some(settled.seconds);
            run.settle_timed_out = settled.timed_out;
            run.warm_seconds = settled.warm_seconds;
            run
        })
    }

    /// Removes files and commits the removal; the first failure, described.
    fn remove(&self, names: &[String]) -> Option<String> {
        if names.is_empty() {
            return None;
        }
        names
            .iter()
            .find_map(|name| self.scratch.remove(name).err().map(|error| format!("remove {name}: {error}")))
            .or_else(|| self.scratch.sync_dir().err().map(|error| format!("fsync of the scratch directory: {error}")))
    }
}

/// A run's outcome once its files were removed. The run's own error is the finding (an
/// EIO from fsync, say); a removal that failed after it (the filesystem went read-only)
/// only follows it. A removal that failed after a good run fails the case.
pub fn after_removal<T>(outcome: Result<T, CallError>, removal: Option<String>) -> Result<T, (Status, String)> {
    match (outcome, removal) {
        (Err(error), removal) => {
            let then = removal.map(|removal| format!("; then {removal}")).unwrap_or_default();
            Err((status_of(&error.error), format!("{error}{then}")))
        }
        (Ok(_), Some(removal)) => Err((Status::Failed, removal)),
        (Ok(value), None) => Ok(value),
    }
}

/// Errors that mean "this system cannot do that", as opposed to "it went wrong".
pub fn status_of(error: &io::Error) -> Status {
    match error.raw_os_error() {
        Some(libc::EOPNOTSUPP) | Some(libc::ENOSYS) => Status::Unsupported,
        _ => Status::Failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runs_own_error_comes_before_the_removal_error_that_followed_it() {
        let eio = CallError::new("fsync", io::Error::from_raw_os_error(libc::EIO));
        let (status, reason) = after_removal::<()>(Err(eio), Some("remove f: Read-only".into())).unwrap_err();
        assert_eq!(status, Status::Failed);
        assert!(reason.starts_with("fsync: Input/output error"), "{reason}");
        assert!(reason.ends_with("; then remove f: Read-only"), "{reason}");
        let unsupported = CallError::new("fallocate", io::Error::from_raw_os_error(libc::EOPNOTSUPP));
        assert_eq!(after_removal::<()>(Err(unsupported), None).unwrap_err().0, Status::Unsupported);
        // A good run whose files cannot be removed fails the case; otherwise the run stands.
        assert_eq!(after_removal(Ok(1), Some("remove f: x".into())), Err((Status::Failed, "remove f: x".into())));
        assert_eq!(after_removal(Ok(1), None), Ok(1));
    }

    #[test]
    fn unsupported_and_failed_are_told_apart() {
        assert_eq!(status_of(&io::Error::from_raw_os_error(libc::EOPNOTSUPP)), Status::Unsupported);
        assert_eq!(status_of(&io::Error::from_raw_os_error(libc::ENOSPC)), Status::Failed);
    }

    #[test]
    fn files_are_removed_after_each_run_and_with_keep_every_runs_stay() {
        let parent = tempfile::tempdir().unwrap();
        let scratch = Scratch::create(parent.path()).unwrap();
        let listing = || scratch.listing();
        let create = |names: &[String]| -> Result<(), CallError> {
            for name in names {
                scratch.create_empty(name).map_err(|e| CallError::new("create", e))?;
            }
            Ok(())
        };
        let mut files = RunFiles::new(&scratch, "case0007".into(), 2, false);
        files.run(0, create).unwrap();
        assert!(listing().is_empty());
        let mut kept = RunFiles::new(&scratch, "case0008".into(), 1, true);
        kept.run(0, create).unwrap();
        kept.run(1, create).unwrap();
        assert_eq!(listing(), ["case0008-run0-f0.dat", "case0008-run1-f0.dat"]);
        // A failed run's files go, and its error is the case's.
        let failed = kept.run(2, |names| {
            create(names)?;
            Err::<(), _>(CallError::new("write", io::Error::from_raw_os_error(libc::EIO)))
        });
        assert_eq!(failed.unwrap_err().0, Status::Failed);
        assert_eq!(listing(), ["case0008-run0-f0.dat", "case0008-run1-f0.dat"]);
    }
}
