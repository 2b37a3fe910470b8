//! What a workload promised, when, and the check of a promise against the files found
//! after a simulated power loss (docs/crash.md). A promise names stamped pieces of a
//! file (`stamp`), so that what is found instead can be told in plain words: zeros,
//! another write's data, the old content, nothing.

use super::stamp::{self, Found, SECTOR};
use plan::numbers::thousands;

/// The tag of data a workload writes during its recording.
pub const NEW: u32 = 1;
/// The tag of what a file held before the recording began (the old content of a save,
/// the records an overwrite replaces).
pub const OLD: u32 = 2;
/// The tag of a save's new content (its `write` is the save's number).
pub const SAVED: u32 = 3;
/// The tag of the data of another file, that no promise is about (the file a save
/// workload syncs after its saves).
pub const OTHER: u32 = 4;

/// Bytes `offset..offset + len` of a file as write `write` of `tag` stamped them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    pub tag: u32,
    pub write: u32,
    pub offset: u64,
    pub len: u64,
}

impl Piece {
    pub fn bytes(&self) -> Vec<u8> {
        stamp::fill(self.tag, self.write, self.offset, self.len as usize)
    }

    fn end(&self) -> u64 {
        self.offset + self.len
    }
}

/// One whole content a file may have: its pieces, end to end from offset 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    /// "the old content", "the new content".
    pub name: String,
    pub pieces: Vec<Piece>,
}

impl Version {
    fn len(&self) -> u64 {
        self.pieces.iter().map(Piece::end).max().unwrap_or(0)
    }

    fn bytes(&self) -> Vec<u8> {
        let mut out = vec![0; self.len() as usize];
        for piece in &self.pieces {
            out[piece.offset as usize..piece.end() as usize].copy_from_slice(&piece.bytes());
        }
        out
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Promise {
    /// Every piece is in the file (it may hold more).
    Holds { file: String, pieces: Vec<Piece> },
    /// The file is one of these versions, whole: never missing, empty, partial or mixed.
    /// `older` are versions it had before, no longer allowed: named when found.
    OneOf { file: String, versions: Vec<Version>, older: Vec<Version> },
    /// A line a user's program printed (`crash --run`): what it means only the program's
    /// own checker knows, so it is checked by that checker, not here.
    Said(String),
}

/// A promise and the moment it was made: the recorder's position when the call that
/// makes it returned (0: before the recording, so it holds in every state).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ack {
    pub position: usize,
    /// What returned, in words: "fsync returned", "the directory's fsync returned (save 2)".
    pub what: String,
    pub promise: Promise,
}

/// How a check reads a file: Ok(None) when there is no such file, Err(why) when it
/// cannot be read.
pub type Read<'a> = dyn FnMut(&str) -> Result<Option<Vec<u8>>, String> + 'a;

/// Checks `promise` against the files as `read` gives them. Err: what was found instead,
/// in plain words.
pub fn check(promise: &Promise, read: &mut Read) -> Result<(), String> {
    match promise {
        Promise::Said(_) => Ok(()),
        Promise::Holds { file, pieces } => {
            let Some(data) = read(file)? else { return Err(format!("{file} was missing")) };
            let acknowledged = pieces.iter().map(Piece::end).max().unwrap_or(0);
            for piece in pieces {
                if (data.len() as u64) < piece.end() {
                    let short = if data.is_empty() {
                        format!("{file} was empty")
                    } else {
                        format!("{file} was {} bytes long", thousands(data.len() as u64))
                    };
                    let missing = span(piece.offset.max(data.len() as u64), acknowledged);
                    return Err(format!("{short}; bytes {missing} had been acknowledged"));
                }
                let found = &data[piece.offset as usize..piece.end() as usize];
                if let Some(wrong) = first_wrong(found, &piece.bytes(), piece.offset) {
                    return Err(format!("{file}: {wrong}"));
                }
            }
            Ok(())
        }
        Promise::OneOf { file, versions, older } => {
            let Some(data) = read(file)? else { return Err(format!("{file} was missing")) };
            if versions.iter().any(|v| v.bytes() == data) {
                return Ok(());
            }
            if data.is_empty() {
                return Err(format!("{file} was empty"));
            }
            if let Some(older) = older.iter().find(|v| v.bytes() == data) {
                return Err(format!("{file} still held {}", older.name));
            }
            let names = versions.iter().map(|v| format!("{} ({} bytes)", v.name, thousands(v.len())));
            let names = names.collect::<Vec<_>>().join(" nor ");
            // Same length as a version: say where it differs.
            if let Some(version) = versions.iter().find(|v| v.len() == data.len() as u64) {
                let wrong = first_wrong(&data, &version.bytes(), 0).unwrap_or_default();
                return Err(format!("{file} had the length of {} but {wrong}", version.name));
            }
            Err(format!("{file} was {} bytes, neither {names}", thousands(data.len() as u64)))
        }
    }
}

/// The first sector of `found` that is not `expected`, said as what it holds.
fn first_wrong(found: &[u8], expected: &[u8], base: u64) -> Option<String> {
    let at = found.chunks(SECTOR).zip(expected.chunks(SECTOR)).position(|(f, e)| f != e)?;
    let start = at * SECTOR;
    let sector = &found[start..(start + SECTOR).min(found.len())];
    // How far the same kind of wrong goes, for "bytes A–B were zeros".
    let kind = kind_of(sector);
    let mut end = start;
    for (f, e) in found[start..].chunks(SECTOR).zip(expected[start..].chunks(SECTOR)) {
        if f == e || kind_of(f) != kind {
            break;
        }
        end += f.len();
    }
    let bytes = span(base + start as u64, base + end as u64);
    Some(match stamp::read(sector) {
        Found::Zeros => format!("bytes {bytes} were zeros"),
        Found::Stamped(s) if s.offset != base + start as u64 => {
            format!("bytes {bytes} held data written for offset {}", thousands(s.offset))
        }
        Found::Stamped(s) if s.tag == OLD => format!("bytes {bytes} still held the old content"),
        Found::Stamped(s) if s.tag == SAVED => format!("bytes {bytes} held save {}'s data", s.write),
        Found::Stamped(s) => format!("bytes {bytes} held write {}'s data, an older one", s.write),
        Found::Other => format!("bytes {bytes} held data no write of the workload made"),
    })
}

/// A coarse class of a sector, so that a run of zeros is told as one span.
fn kind_of(sector: &[u8]) -> u8 {
    match stamp::read(sector) {
        Found::Zeros => 0,
        Found::Stamped(s) if s.tag == OLD => 1,
        Found::Stamped(s) => 2 + s.tag as u8,
        Found::Other => 3,
    }
}

fn span(start: u64, end: u64) -> String {
    format!("{}–{}", thousands(start), thousands(end.saturating_sub(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(tag: u32, write: u32, offset: u64, len: u64) -> Piece {
        Piece { tag, write, offset, len }
    }

    fn version(name: &str, tag: u32, len: u64) -> Version {
        Version { name: name.into(), pieces: vec![piece(tag, 1, 0, len)] }
    }

    fn files(content: Option<Vec<u8>>) -> impl FnMut(&str) -> Result<Option<Vec<u8>>, String> {
        move |_| Ok(content.clone())
    }

    #[test]
    fn a_replaced_file_is_the_old_or_the_new_whole_and_nothing_else() {
        let promise = Promise::OneOf {
            file: "settings.json".into(),
            versions: vec![version("the old content", OLD, 4096), version("the new content", NEW, 8192)],
            older: vec![version("the first content", NEW, 2048)],
        };
        let old = piece(OLD, 1, 0, 4096).bytes();
        let new = piece(NEW, 1, 0, 8192).bytes();
        assert_eq!(check(&promise, &mut files(Some(old.clone()))), Ok(()));
        assert_eq!(check(&promise, &mut files(Some(new.clone()))), Ok(()));
        assert_eq!(check(&promise, &mut files(Some(Vec::new()))), Err("settings.json was empty".into()));
        assert_eq!(check(&promise, &mut files(None)), Err("settings.json was missing".into()));
        let first = piece(NEW, 1, 0, 2048).bytes();
        assert_eq!(check(&promise, &mut files(Some(first))), Err("settings.json still held the first content".into()));
        let partial = [new[..4096].to_vec(), vec![0; 4096]].concat();
        assert_eq!(
            check(&promise, &mut files(Some(partial))),
            Err("settings.json had the length of the new content but bytes 4,096–8,191 were zeros".into())
        );
        let error = check(&promise, &mut files(Some(new[..512].to_vec()))).unwrap_err();
        assert_eq!(
            error,
            "settings.json was 512 bytes, neither the old content (4,096 bytes) nor the new content (8,192 bytes)"
        );
        let mixed = [new[..4096].to_vec(), old.clone()].concat();
        assert!(
            check(&promise, &mut files(Some(mixed)))
                .unwrap_err()
                .contains("4,096–8,191 held data written for offset 0")
        );
    }

    #[test]
    fn synced_pieces_must_all_be_there_and_a_missing_commit_is_named() {
        let commits: Vec<Piece> = (0..4).map(|n| piece(NEW, n + 1, u64::from(n) * 4096, 4096)).collect();
        let promise = Promise::Holds { file: "log".into(), pieces: commits.clone() };
        let all: Vec<u8> = commits.iter().flat_map(Piece::bytes).collect();
        assert_eq!(check(&promise, &mut files(Some(all.clone()))), Ok(()));
        let longer = [all.clone(), vec![1; 100]].concat();
        assert_eq!(check(&promise, &mut files(Some(longer))), Ok(()), "more than promised is fine");
        assert_eq!(
            check(&promise, &mut files(Some(all[..12288].to_vec()))),
            Err("log was 12,288 bytes long; bytes 12,288–16,383 had been acknowledged".into())
        );
        let mut lost = all.clone();
        lost[8192..12288].copy_from_slice(&piece(NEW, 1, 8192, 4096).bytes());
        assert_eq!(
            check(&promise, &mut files(Some(lost))),
            Err("log: bytes 8,192–12,287 held write 1's data, an older one".into())
        );
        let mut old = all;
        old[0..4096].copy_from_slice(&piece(OLD, 1, 0, 4096).bytes());
        assert_eq!(check(&promise, &mut files(Some(old))), Err("log: bytes 0–4,095 still held the old content".into()));
        assert_eq!(
            check(&promise, &mut files(Some(Vec::new()))).unwrap_err(),
            "log was empty; bytes 0–16,383 had been acknowledged"
        );
    }
}
