//! What a traced program promised at each of its syncs (docs/trace.md, "Crash check"):
//! the bytes of each file that a crash may no longer take, as the crash check's replay
//! prints them at the same points of any other way of making the calls, and its checker
//! reads them back in each crash state.
//!
//! Every byte a replay writes is the seed's pattern at the file offset's place in it, so
//! a promise is a length: "the first N bytes of f3 are there". The rules
//! (docs/durability.md, "Another way to keep a program's promise"):
//! - fsync or fdatasync of a descriptor promises its file's bytes written so far, from
//!   the start up to the first hole; a write through O_SYNC, O_DSYNC, RWF_SYNC or
//!   RWF_DSYNC promises its own bytes, which lengthen the promise where they continue it.
//! - The name a program created is promised with the file's first sync (ext4, xfs and
//!   btrfs make a new file's entry durable with it; POSIX asks for a directory fsync).
//! - After a rename, either name may hold the file until a directory fsync; the file it
//!   replaced, and a file unlinked or truncated, are promised no more than the program
//!   left of them.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::replay::{FileId, Op, Replay, Slot, SyncKind};

/// One file's promise: the first `bytes` bytes are there under one of `names`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Held {
    pub names: Vec<FileId>,
    pub bytes: u64,
}

/// What was promised once the call of `after` (`plan::replay::Call::order`) returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Point {
    pub after: u64,
    /// Bytes the program's calls had written by then.
    pub written: u64,
    pub held: Vec<Held>,
}

/// What the crash check's replay is given (as JSON in a file): the calls to make (the
/// program's, or another way's), the program's promises, and the data's seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Promised {
    pub seed: u64,
    pub calls: Replay,
    pub points: Vec<Point>,
}

/// A file as the program left it so far.
#[derive(Debug, Default)]
struct Inode {
    /// Bytes written from the start without a hole.
    filled: u64,
    size: u64,
    durable: u64,
    /// The names that may hold it after a crash; none once replaced or unlinked.
    names: Vec<FileId>,
}

/// A descriptor: its file, its offset, and whether its writes sync themselves.
struct Open {
    inode: usize,
    position: u64,
    append: bool,
    syncs: bool,
}

/// The promise after each of `replay`'s durable calls, in the trace's order.
pub fn promises(replay: &Replay) -> Vec<Point> {
    let mut inodes: Vec<Inode> = Vec::new();
    let mut names: HashMap<FileId, usize> = HashMap::new();
    for (id, file) in replay.files.iter().enumerate() {
        if file.before > 0 {
            names.insert(id as FileId, inodes.len());
            let b = file.before;
            inodes.push(Inode { filled: b, size: b, durable: b, names: vec![id as FileId] });
        }
    }
    let mut opens: HashMap<Slot, Open> = HashMap::new();
    let mut points = Vec::new();
    let mut written = 0;
    for (t, i) in replay.in_order() {
        let call = &replay.threads[t][i];
        let promised = match call.op {
            Op::Open { file, slot, flags } => {
                let inode = *names.entry(file).or_insert_with(|| {
                    inodes.push(Inode { names: vec![file], ..Inode::default() });
                    inodes.len() - 1
                });
                if flags & libc::O_TRUNC != 0 {
                    truncate(&mut inodes[inode], 0);
                }
                let syncs = flags & (libc::O_SYNC | libc::O_DSYNC) != 0;
                opens.insert(slot, Open { inode, position: 0, append: flags & libc::O_APPEND != 0, syncs });
                false
            }
            Op::Write { slot, bytes, offset, rwf, .. } => {
                let Some(open) = opens.get_mut(&slot) else { continue };
                let file = &mut inodes[open.inode];
                let start = match offset {
                    Some(offset) => offset,
                    None if open.append => file.size,
                    None => open.position,
                };
                let end = start + bytes;
                written += bytes;
                if offset.is_none() {
                    open.position = end;
                }
                if start <= file.filled {
                    file.filled = file.filled.max(end);
                }
                file.size = file.size.max(end);
                let syncs = open.syncs || rwf & (libc::RWF_SYNC | libc::RWF_DSYNC) != 0;
                if syncs && start <= file.durable {
                    file.durable = file.durable.max(end.min(file.filled));
                }
                syncs
            }
            Op::Sync { slot, kind: SyncKind::Fsync | SyncKind::Fdatasync } => {
                let Some(open) = opens.get(&slot) else { continue };
                let file = &mut inodes[open.inode];
                file.durable = file.filled;
                true
            }
            Op::Sync { kind: SyncKind::SyncFileRange, .. } | Op::Close { .. } => false,
            Op::SyncDirectory => {
                let current: HashMap<usize, FileId> = names.iter().map(|(name, inode)| (*inode, *name)).collect();
                for (index, file) in inodes.iter_mut().enumerate() {
                    file.names = current.get(&index).map(|name| vec![*name]).unwrap_or_default();
                }
                true
            }
            Op::Allocate { slot, keep_size, offset, length } => {
                if let (Some(open), false) = (opens.get(&slot), keep_size) {
                    let file = &mut inodes[open.inode];
                    file.size = file.size.max(offset + length);
                }
                false
            }
            Op::Truncate { slot, length } => {
                if let Some(open) = opens.get(&slot) {
                    truncate(&mut inodes[open.inode], length);
                }
                false
            }
            Op::Rename { from, to } => {
                if let Some(moved) = names.remove(&from) {
                    if let Some(replaced) = names.insert(to, moved) {
                        inodes[replaced].names.clear();
                    }
                    if !inodes[moved].names.contains(&to) {
                        inodes[moved].names.push(to);
                    }
                }
                false
            }
            Op::Unlink { file } => {
                if let Some(gone) = names.remove(&file) {
                    inodes[gone].names.clear();
                }
                false
            }
        };
        if promised {
            let mut held: Vec<Held> = inodes
                .iter()
                .filter(|f| f.durable > 0 && !f.names.is_empty())
                .map(|f| {
                    let mut names = f.names.clone();
                    names.sort_unstable();
                    Held { names, bytes: f.durable }
                })
                .collect();
            held.sort_by(|a, b| a.names.cmp(&b.names));
            points.push(Point { after: call.order, written, held });
        }
    }
    points
}

fn truncate(file: &mut Inode, length: u64) {
    file.size = length;
    file.filled = file.filled.min(length);
    file.durable = file.durable.min(length);
}

/// The calls up to the `count`th promise (all of them when there are fewer), marked cut
/// when calls were left out: the crash check records a prefix (docs/trace.md).
pub fn up_to(replay: &Replay, points: &[Point], count: usize) -> Replay {
    let Some(last) = points.get(count.max(1) - 1).filter(|_| points.len() > count) else { return replay.clone() };
    let mut kept = replay.clone();
    for calls in &mut kept.threads {
        calls.retain(|call| call.order <= last.after);
    }
    kept.threads.retain(|calls| !calls.is_empty());
    kept.bytes =
        kept.threads.iter().flatten().map(|c| if let Op::Write { bytes, .. } = c.op { bytes } else { 0 }).sum();
    kept.syncs = kept.durable_syncs();
    kept.cut = true;
    kept
}

/// The line the crash check's replay prints for the `index`th promise (from 1):
/// "promise 3: f0=900 f1|f2=100".
pub fn line(index: usize, held: &[Held]) -> String {
    let entries: Vec<String> = held
        .iter()
        .map(|h| {
            let names: Vec<String> = h.names.iter().map(|n| format!("f{n}")).collect();
            format!("{}={}", names.join("|"), h.bytes)
        })
        .collect();
    format!("promise {index}: {}", entries.join(" ")).trim_end().to_string()
}

/// The promises of a [`line`]; Err names what is wrong.
pub fn parse(line: &str) -> Result<Vec<Held>, String> {
    let (_, rest) = line
        .strip_prefix("promise ")
        .and_then(|rest| rest.split_once(':'))
        .ok_or_else(|| format!("not a promise: {line:?}"))?;
    rest.split_whitespace()
        .map(|entry| {
            let bad = || format!("not a promise: {entry:?}");
            let (names, bytes) = entry.split_once('=').ok_or_else(bad)?;
            let names = names
                .split('|')
                .map(|n| n.strip_prefix('f').and_then(|n| n.parse().ok()).ok_or_else(bad))
                .collect::<Result<Vec<FileId>, String>>()?;
            Ok(Held { names, bytes: bytes.parse().map_err(|_| bad())? })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::{Call, ReplayFile, WriteKind};

    fn replay(files: &[u64], ops: Vec<Op>) -> Replay {
        Replay {
            files: files.iter().map(|b| ReplayFile { name: String::new(), before: *b }).collect(),
            threads: vec![ops.into_iter().enumerate().map(|(i, op)| Call { order: i as u64, at: 0.0, op }).collect()],
            bytes: 0,
            syncs: 0,
            cut: false,
            pages: crate::Pages::Ordinary,
        }
    }

    fn write(slot: Slot, bytes: u64, offset: Option<u64>) -> Op {
        Op::Write { slot, kind: WriteKind::Write, bytes, offset, buffers: 1, rwf: 0 }
    }

    fn held(point: &Point) -> Vec<(Vec<FileId>, u64)> {
        point.held.iter().map(|h| (h.names.clone(), h.bytes)).collect()
    }

    #[test]
    fn a_log_promises_what_each_fsync_found_written() {
        let fsync = Op::Sync { slot: 0, kind: SyncKind::Fsync };
        let points = promises(&replay(
            &[0],
            vec![
                Op::Open { file: 0, slot: 0, flags: libc::O_CREAT | libc::O_APPEND },
                write(0, 300, None),
                fsync.clone(),
                write(0, 300, None),
                write(0, 300, None),
                fsync,
            ],
        ));
        assert_eq!(points.iter().map(|p| (p.after, p.written)).collect::<Vec<_>>(), [(2, 300), (5, 900)]);
        assert_eq!(held(&points[0]), [(vec![0], 300)]);
        assert_eq!(held(&points[1]), [(vec![0], 900)]);
    }

    #[test]
    fn odsync_writes_promise_their_bytes_and_a_hole_stops_the_promise() {
        let points = promises(&replay(
            &[100],
            vec![
                Op::Open { file: 0, slot: 0, flags: libc::O_DSYNC },
                write(0, 50, Some(100)),
                write(0, 50, Some(400)),
                write(0, 10, Some(150)),
            ],
        ));
        let bytes: Vec<u64> = points.iter().map(|p| p.held[0].bytes).collect();
        assert_eq!(bytes, [150, 150, 160], "the write at 400 leaves a hole");
    }

    #[test]
    fn a_rename_may_be_either_name_until_the_directory_is_synced() {
        let points = promises(&replay(
            &[0, 100],
            vec![
                Op::Open { file: 0, slot: 0, flags: libc::O_CREAT | libc::O_TRUNC },
                write(0, 40, None),
                Op::Sync { slot: 0, kind: SyncKind::Fsync },
                Op::Rename { from: 0, to: 1 },
                Op::SyncDirectory,
            ],
        ));
        assert_eq!(held(&points[0]), [(vec![0], 40), (vec![1], 100)]);
        assert_eq!(held(&points[1]), [(vec![1], 40)], "the old file is replaced, the new one under its new name");
        let unsafe_save = promises(&replay(
            &[0, 100],
            vec![
                Op::Open { file: 0, slot: 0, flags: libc::O_CREAT },
                write(0, 40, None),
                Op::Sync { slot: 0, kind: SyncKind::Fsync },
                Op::Rename { from: 0, to: 1 },
                Op::Open { file: 2, slot: 1, flags: libc::O_CREAT },
                Op::Sync { slot: 1, kind: SyncKind::Fsync },
            ],
        ));
        assert_eq!(held(&unsafe_save[1]), [(vec![0, 1], 40)]);
    }

    #[test]
    fn a_truncation_and_room_never_written_are_not_promised() {
        let points = promises(&replay(
            &[1000],
            vec![
                Op::Open { file: 0, slot: 0, flags: 0 },
                Op::Allocate { slot: 0, keep_size: false, offset: 0, length: 4096 },
                Op::Truncate { slot: 0, length: 10 },
                Op::Sync { slot: 0, kind: SyncKind::Fdatasync },
            ],
        ));
        assert_eq!(held(&points[0]), [(vec![0], 10)]);
    }

    #[test]
    fn lines_read_back_as_written_and_a_prefix_ends_at_a_promise() {
        let held = vec![Held { names: vec![0], bytes: 900 }, Held { names: vec![1, 2], bytes: 100 }];
        assert_eq!(line(3, &held), "promise 3: f0=900 f1|f2=100");
        assert_eq!(parse(&line(3, &held)).unwrap(), held);
        assert_eq!(parse("promise 1:").unwrap(), []);
        assert!(parse("row 17").is_err() && parse("promise 2: f0=x").is_err());
        let fsync = Op::Sync { slot: 0, kind: SyncKind::Fsync };
        let calls = replay(
            &[0],
            vec![
                Op::Open { file: 0, slot: 0, flags: libc::O_CREAT },
                write(0, 5, None),
                fsync.clone(),
                write(0, 5, None),
                fsync,
            ],
        );
        let points = promises(&calls);
        let cut = up_to(&calls, &points, 1);
        assert_eq!((cut.threads[0].len(), cut.bytes, cut.syncs, cut.cut), (3, 5, 1, true));
        assert_eq!(up_to(&calls, &points, 2), calls, "all of it");
    }
}
