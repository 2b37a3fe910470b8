//! What makes written data durable (docs/design.md §1 "durability"): the modes, their
//! spelling, the open flags and the sync calls they need, as data. Making a sync call,
//! the rule that syncs every N calls at run time and the O_DIRECT alignment are in
//! `measure::durability`.
//!
//! Spellings (`--durability`, comma-separated):
//! - `none`: page cache only;
//! - `end` / `end-fdatasync`: one fsync / fdatasync after the last write (the sync span);
//!   with a file per thread, each thread syncs its own file as soon as its part is
//!   written, and the sync span runs from the last write's end to the last sync's end;
//! - `every:N` / `every-fdatasync:N`: fsync / fdatasync after every N calls *of the
//!   case*, counted across all its threads (T threads make as many syncs as one thread
//!   would), inside the write span (the loop cannot go on until the sync returns); the
//!   thread whose call makes the count a multiple of N syncs, and the calls left at the
//!   end are synced once (one file: by the last thread to finish; a file per thread: by
//!   each thread whose file has such calls). For mmap, the sync is msync, plus an
//!   fsync for `every:N` (msync is a data sync, like fdatasync);
//! - `osync` / `odsync`: the file is opened with O_SYNC / O_DSYNC: every call is durable
//!   when it returns;
//! - `rwf-sync` / `rwf-dsync`: each call is `pwritev2` with `RWF_SYNC` / `RWF_DSYNC`, the
//!   per-call counterparts of O_SYNC / O_DSYNC (Linux 4.7): the descriptor stays plain,
//!   so a program can make only some writes durable (the `pwritev2` methods only);
//! - `writebehind:SIZE`: write-behind: as each window of SIZE bytes of a writer's part
//!   is written, `sync_file_range(SYNC_FILE_RANGE_WRITE)` starts its writeback and the
//!   window before it is waited for (`WAIT_BEFORE | WRITE | WAIT_AFTER`), inside the
//!   write span; one `fdatasync` at the end is the sync span. Dirty memory stays near
//!   two windows per writer (methods that write through a descriptor at known offsets);
//! - `direct`, or `direct+MODE`: O_DIRECT (bypass the page cache) with any mode above.
//!
//! One more spelling is a case's, never a mode to choose: `fsync-file+dir`, the
//! durability of `latency`'s saves (`replace`, `replace-tmpfile`), which make their own
//! syncs: an fsync of the new file before the rename and of the directory after it.
//! Result files carry it, so it parses; [`parse_mode`] refuses it for `--durability`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The call that makes a file's data durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SyncCall {
    Fsync,
    Fdatasync,
}

impl SyncCall {
    pub fn name(self) -> &'static str {
        match self {
            SyncCall::Fsync => "fsync",
            SyncCall::Fdatasync => "fdatasync",
        }
    }
}

/// When the data is committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Commit {
    None,
    /// Once after the last write, timed as the sync span.
    End(SyncCall),
    /// After every N calls, inside the write span.
    Every(u32, SyncCall),
    /// O_SYNC: each call returns when data and metadata are durable.
    OSync,
    /// O_DSYNC: each call returns when the data (and the metadata to read it) is durable.
    ODsync,
    /// `RWF_SYNC` on each `pwritev2` call: O_SYNC's effect, per call.
    RwfSync,
    /// `RWF_DSYNC` on each `pwritev2` call: O_DSYNC's effect, per call.
    RwfDsync,
    /// Write-behind in windows of this many bytes, then one fdatasync (the sync span).
    WriteBehind(u64),
    /// A save's own: fsync of the new file, rename over the old, fsync of the directory.
    Save,
}

/// A durability mode: a commit rule, with or without O_DIRECT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Durability {
    pub commit: Commit,
    pub direct: bool,
}

/// Largest N of `every:N`.
pub const MAX_EVERY: u32 = 1_000_000_000;

#[allow(non_upper_case_globals)] // spelled like the enum variants they replaced
impl Durability {
    pub const None: Durability = Durability { commit: Commit::None, direct: false };
    pub const End: Durability = Durability { commit: Commit::End(SyncCall::Fsync), direct: false };

    pub const fn of(commit: Commit) -> Durability {
        Durability { commit, direct: false }
    }

    pub const fn direct(commit: Commit) -> Durability {
        Durability { commit, direct: true }
    }

    pub fn name(self) -> String {
        let commit = match self.commit {
            Commit::None if self.direct => return "direct".to_string(),
            Commit::None => "none".to_string(),
            Commit::End(SyncCall::Fsync) => "end".to_string(),
            Commit::End(SyncCall::Fdatasync) => "end-fdatasync".to_string(),
            Commit::Every(n, SyncCall::Fsync) => format!("every:{n}"),
            Commit::Every(n, SyncCall::Fdatasync) => format!("every-fdatasync:{n}"),
            Commit::OSync => "osync".to_string(),
            Commit::ODsync => "odsync".to_string(),
            Commit::RwfSync => "rwf-sync".to_string(),
            Commit::RwfDsync => "rwf-dsync".to_string(),
            Commit::WriteBehind(window) => format!("writebehind:{}", crate::units::format_size_compact(window)),
            Commit::Save => SAVE.to_string(),
        };
        if self.direct { format!("direct+{commit}") } else { commit }
    }

    /// Flags the timed run's descriptor is opened with (besides O_RDWR).
    pub fn open_flags(self) -> libc::c_int {
        let sync = match self.commit {
            Commit::OSync => libc::O_SYNC,
            Commit::ODsync => libc::O_DSYNC,
            _ => 0,
        };
        sync | if self.direct { libc::O_DIRECT } else { 0 }
    }

    /// The sync the runner times after the write span, if any.
    pub fn end_sync(self) -> Option<SyncCall> {
        match self.commit {
            Commit::End(call) => Some(call),
            Commit::WriteBehind(_) => Some(SyncCall::Fdatasync),
            _ => None,
        }
    }

    /// The `RWF_*` flags each `pwritev2` call carries for this mode (0 for the others).
    pub fn rwf_flags(self) -> libc::c_int {
        match self.commit {
            Commit::RwfSync => libc::RWF_SYNC,
            Commit::RwfDsync => libc::RWF_DSYNC,
            _ => 0,
        }
    }

    /// The write-behind window, if the mode has one.
    pub fn write_behind(self) -> Option<u64> {
        match self.commit {
            Commit::WriteBehind(window) => Some(window),
            _ => None,
        }
    }

    /// Whether the mode makes the data durable at all: `end`, `every:N`, `osync` and
    /// `odsync` do; `none` does not, nor does `direct` alone (O_DIRECT bypasses the page
    /// cache but flushes neither the device's cache nor the metadata). A case whose mode
    /// does not sync has no durable figure (docs/design.md §2.10).
    pub fn syncs(self) -> bool {
        self.commit != Commit::None
    }

    /// The sync every N calls, if any.
    pub fn every(self) -> Option<(u32, SyncCall)> {
        match self.commit {
            Commit::Every(n, call) => Some((n, call)),
            _ => None,
        }
    }
}

/// The spelling of [`Commit::Save`].
const SAVE: &str = "fsync-file+dir";

/// A `--durability` item: any mode but a save's own, which is not one to choose.
pub fn parse_mode(text: &str) -> Result<Durability, String> {
    let mode: Durability = text.parse()?;
    if mode.commit == Commit::Save {
        return Err(format!("'{text}' is the durability of latency's replace patterns, not a mode (known: {KNOWN})"));
    }
    Ok(mode)
}

const KNOWN: &str = "none, end, end-fdatasync, every:N, every-fdatasync:N, osync, odsync, rwf-sync, rwf-dsync, writebehind:SIZE, direct, direct+MODE";
/// Smallest write-behind window: a page (sync_file_range works in pages).
pub const MIN_WINDOW: u64 = 4096;

impl FromStr for Durability {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let unknown = || format!("unknown durability '{text}' (known: {KNOWN})");
        let (direct, rest) = match text.strip_prefix("direct") {
            Some("") => return Ok(Durability::direct(Commit::None)),
            Some(rest) => (true, rest.strip_prefix('+').ok_or_else(unknown)?),
            None => (false, text),
        };
        let commit = match rest {
            "none" => Commit::None,
            "end" => Commit::End(SyncCall::Fsync),
            "end-fdatasync" => Commit::End(SyncCall::Fdatasync),
            "osync" => Commit::OSync,
            "odsync" => Commit::ODsync,
            "rwf-sync" => Commit::RwfSync,
            "rwf-dsync" => Commit::RwfDsync,
            _ if rest.starts_with("writebehind:") => {
                let size = &rest["writebehind:".len()..];
                let window = crate::units::parse_size(size).map_err(|e| format!("'{text}': {e}"))?;
                if window < MIN_WINDOW || window % MIN_WINDOW != 0 {
                    return Err(format!("'{text}': the window must be a multiple of 4KiB, 4KiB or more"));
                }
                Commit::WriteBehind(window)
            }
            SAVE if !direct => Commit::Save,
            _ => {
                let (call, count) = if let Some(count) = rest.strip_prefix("every:") {
                    (SyncCall::Fsync, count)
                } else if let Some(count) = rest.strip_prefix("every-fdatasync:") {
                    (SyncCall::Fdatasync, count)
                } else {
                    return Err(unknown());
                };
                let n: u32 = count.parse().map_err(|_| format!("'{text}': N must be a whole number, 1 or more"))?;
                if n == 0 || n > MAX_EVERY {
                    return Err(format!("'{text}': N must be between 1 and {MAX_EVERY}"));
                }
                Commit::Every(n, call)
            }
        };
        Ok(Durability { commit, direct })
    }
}

impl From<Durability> for String {
    fn from(durability: Durability) -> String {
        durability.name()
    }
}

impl TryFrom<String> for Durability {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        text.parse()
    }
}

impl fmt::Display for Durability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_round_trips() {
        for text in [
            "none",
            "end",
            "end-fdatasync",
            "every:1",
            "every:64",
            "every-fdatasync:8",
            "osync",
            "odsync",
            "direct",
            "direct+end",
            "direct+odsync",
            "direct+every-fdatasync:4",
            "rwf-sync",
            "rwf-dsync",
            "writebehind:8MiB",
            "writebehind:4KiB",
            "direct+rwf-dsync",
            "fsync-file+dir",
        ] {
            let mode: Durability = text.parse().unwrap();
            assert_eq!(mode.name(), text);
            let json = serde_json::to_value(mode).unwrap();
            assert_eq!(json, text);
            assert_eq!(serde_json::from_value::<Durability>(json).unwrap(), mode);
        }
        assert_eq!("direct+none".parse::<Durability>().unwrap().name(), "direct");
        assert_eq!("end".parse::<Durability>(), Ok(Durability::End));
        assert!(parse_mode("fsync-file+dir").unwrap_err().contains("replace patterns"));
        assert!("direct+fsync-file+dir".parse::<Durability>().is_err());
        assert_eq!(parse_mode("every:2"), "every:2".parse());
    }

    #[test]
    fn bad_spellings_are_one_line_errors() {
        for text in [
            "sometimes",
            "every:0",
            "every:x",
            "every:",
            "direct+",
            "directly",
            "every-fdatasync:-1",
            "direct+direct",
            "writebehind:",
            "writebehind:1000",
            "writebehind:2KiB",
            "rwf-",
        ] {
            let error = text.parse::<Durability>().unwrap_err();
            assert!(error.contains(text) && !error.contains('\n'), "{text}: {error}");
        }
    }

    #[test]
    fn none_and_direct_alone_do_not_sync_the_others_do() {
        for (text, syncs) in [
            ("none", false),
            ("direct", false),
            ("end", true),
            ("end-fdatasync", true),
            ("every:4", true),
            ("every-fdatasync:1", true),
            ("osync", true),
            ("odsync", true),
            ("direct+end", true),
            ("direct+odsync", true),
            ("rwf-dsync", true),
            ("writebehind:1MiB", true),
            ("fsync-file+dir", true),
        ] {
            assert_eq!(text.parse::<Durability>().unwrap().syncs(), syncs, "{text}");
        }
    }

    #[test]
    fn per_call_flags_and_write_behind() {
        assert_eq!("rwf-dsync".parse::<Durability>().unwrap().rwf_flags(), libc::RWF_DSYNC);
        assert_eq!("rwf-sync".parse::<Durability>().unwrap().rwf_flags(), libc::RWF_SYNC);
        assert_eq!("rwf-sync".parse::<Durability>().unwrap().open_flags(), 0, "the descriptor stays plain");
        assert_eq!(Durability::End.rwf_flags(), 0);
        let behind: Durability = "writebehind:8MiB".parse().unwrap();
        assert_eq!(behind.write_behind(), Some(8 << 20));
        assert_eq!(behind.end_sync(), Some(SyncCall::Fdatasync));
        assert_eq!(behind.every(), None);
    }

    #[test]
    fn open_flags_follow_the_mode() {
        assert_eq!(Durability::None.open_flags(), 0);
        assert_eq!("odsync".parse::<Durability>().unwrap().open_flags(), libc::O_DSYNC);
        assert_eq!("direct+osync".parse::<Durability>().unwrap().open_flags(), libc::O_SYNC | libc::O_DIRECT);
    }
}
