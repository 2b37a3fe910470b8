//! The other ways to make a traced program's writes (docs/trace.md, "Alternatives"): each
//! a change to its calls (`plan::replay`), raced against the program's own way. A change
//! either keeps the program's promise (what was durable after each of its syncs is
//! durable at the same point, and a crash leaves nothing its way would not) or is a
//! different promise, said with what it risks (docs/durability.md).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::Pages;
use crate::replay::{Call, Op, Replay, Slot, SyncKind, WriteKind};

/// A change to the program's calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// fdatasync where it calls fsync: the data and the size are made durable as before;
    /// only the timestamps may be older after a crash.
    Fdatasync,
    /// Where every sync follows one write, the file opened with O_DSYNC and no sync
    /// call: each write returns once it is durable, as the write and its sync did.
    Odsync,
    /// The writes between two syncs, where each continues the last, in calls of up to
    /// [`LARGER`] bytes.
    LargerCalls,
    /// A growing file's room reserved first (fallocate with FALLOC_FL_KEEP_SIZE: the
    /// size a reader sees is still the bytes written).
    Preallocate,
    /// Where it opens a file with O_DIRECT, its writes made from a buffer in huge pages:
    /// the same calls, in larger requests to the device (plan::pages). The program's own
    /// buffer's pages are not in a trace: its way is replayed from ordinary ones.
    HugePages,
    /// A different promise: a sync after every `n`th of the program's syncs only.
    Group(u32),
    /// A different promise: the last sync of each file only.
    SyncAtEnd,
}

impl Change {
    /// Keeps the program's promise.
    pub fn same_promise(self) -> bool {
        !matches!(self, Change::Group(_) | Change::SyncAtEnd)
    }
}

/// How many of the program's syncs a grouped alternative makes one.
pub const GROUP: u32 = 8;

/// The largest call `LargerCalls` makes of the program's smaller ones.
pub const LARGER: u64 = 1 << 20;

/// Every change that applies to `replay`, with the calls it makes.
pub fn changes(replay: &Replay) -> Vec<(Change, Replay)> {
    let candidates = [
        Change::Fdatasync,
        Change::Odsync,
        Change::LargerCalls,
        Change::Preallocate,
        Change::HugePages,
        Change::Group(GROUP),
        Change::SyncAtEnd,
    ];
    candidates.into_iter().filter_map(|change| apply(replay, change).map(|changed| (change, changed))).collect()
}

/// The calls with `change` made, or None where it changes nothing.
pub fn apply(replay: &Replay, change: Change) -> Option<Replay> {
    let mut changed = replay.clone();
    let differs = match change {
        Change::Fdatasync => map_ops(&mut changed, |op| match op {
            Op::Sync { slot, kind: SyncKind::Fsync } => Some(Op::Sync { slot: *slot, kind: SyncKind::Fdatasync }),
            _ => None,
        }),
        Change::Odsync => odsync(&mut changed),
        Change::LargerCalls => larger_calls(&mut changed),
        Change::Preallocate => preallocate(&mut changed),
        Change::HugePages => huge_pages(&mut changed),
        Change::Group(n) => {
            thin_syncs(&mut changed, |index, count| (index + 1) % n as usize == 0 || index + 1 == count)
        }
        Change::SyncAtEnd => thin_syncs(&mut changed, |index, count| index + 1 == count),
    };
    if !differs {
        return None;
    }
    changed.syncs = changed.durable_syncs();
    Some(changed)
}

/// Huge pages for a replay that opens a file with O_DIRECT, in ordinary pages till now.
fn huge_pages(replay: &mut Replay) -> bool {
    let direct =
        replay.threads.iter().flatten().any(|c| matches!(c.op, Op::Open { flags, .. } if flags & libc::O_DIRECT != 0));
    let applies = direct && replay.pages == Pages::Ordinary;
    if applies {
        replay.pages = Pages::Huge;
    }
    applies
}

/// Replaces each op `change` gives a replacement for; true if one was.
fn map_ops(replay: &mut Replay, change: impl Fn(&Op) -> Option<Op>) -> bool {
    let mut any = false;
    for call in replay.threads.iter_mut().flatten() {
        if let Some(op) = change(&call.op) {
            call.op = op;
            any = true;
        }
    }
    any
}

/// O_DSYNC for each descriptor whose every durable sync follows exactly one write, and
/// that was not already synced by its flags.
fn odsync(replay: &mut Replay) -> bool {
    let mut writes_since: HashMap<Slot, u32> = HashMap::new();
    let mut fits: HashMap<Slot, bool> = HashMap::new();
    for (t, i) in replay.in_order() {
        match &replay.threads[t][i].op {
            Op::Open { slot, flags, .. } => {
                fits.insert(*slot, flags & (libc::O_SYNC | libc::O_DSYNC) == 0);
            }
            Op::Write { slot, rwf, .. } => {
                *writes_since.entry(*slot).or_default() += 1;
                if rwf & (libc::RWF_DSYNC | libc::RWF_SYNC) != 0 {
                    fits.insert(*slot, false);
                }
            }
            Op::Sync { slot, kind: SyncKind::Fsync | SyncKind::Fdatasync } => {
                let before = writes_since.insert(*slot, 0).unwrap_or(0);
                if before != 1 {
                    fits.insert(*slot, false);
                }
            }
            _ => {}
        }
    }
    // A descriptor with writes never synced keeps its way: O_DSYNC would sync them too.
    for (slot, left) in writes_since {
        if left > 0 {
            fits.insert(slot, false);
        }
    }
    let chosen: Vec<Slot> = fits.into_iter().filter(|(_, fits)| *fits).map(|(slot, _)| slot).collect();
    if chosen.is_empty() {
        return false;
    }
    for calls in &mut replay.threads {
        calls.retain(|c| !matches!(c.op, Op::Sync { slot, kind: SyncKind::Fsync | SyncKind::Fdatasync } if chosen.contains(&slot)));
        for call in calls.iter_mut() {
            if let Op::Open { slot, flags, .. } = &mut call.op {
                if chosen.contains(slot) {
                    *flags |= libc::O_DSYNC;
                }
            }
        }
    }
    true
}

/// Writes of one thread on one descriptor that follow each other with nothing between
/// (no other call of that thread) and continue where the last ended, as one call.
fn larger_calls(replay: &mut Replay) -> bool {
    let mut any = false;
    for calls in &mut replay.threads {
        let mut merged: Vec<Call> = Vec::with_capacity(calls.len());
        for call in calls.drain(..) {
            if let (Some(last), Op::Write { slot, kind, bytes, offset, rwf, .. }) = (merged.last_mut(), &call.op) {
                if let Op::Write { slot: s, bytes: b, offset: o, rwf: r, kind: k, .. } = &mut last.op {
                    let continues = match (o, offset) {
                        (Some(o), Some(offset)) => *o + *b == *offset,
                        (None, None) => true,
                        _ => false,
                    };
                    let same_kind = matches!(
                        (*k, kind),
                        (WriteKind::Write | WriteKind::Writev, WriteKind::Write | WriteKind::Writev)
                    ) || (*k == *kind);
                    if *s == *slot && *r == *rwf && *r == 0 && continues && same_kind && *b + *bytes <= LARGER {
                        *b += *bytes;
                        any = true;
                        continue;
                    }
                }
            }
            merged.push(call);
        }
        for call in &mut merged {
            // A merged vectored call writes its bytes from one buffer.
            if let Op::Write { kind, buffers, .. } = &mut call.op {
                if *kind == WriteKind::Writev {
                    *kind = WriteKind::Write;
                    *buffers = 1;
                }
            }
        }
        *calls = merged;
    }
    any
}

/// A fallocate with FALLOC_FL_KEEP_SIZE after the first open of each file that grows by
/// appends, for the bytes it grows by.
fn preallocate(replay: &mut Replay) -> bool {
    let mut grows: HashMap<Slot, u64> = HashMap::new();
    let mut appends: HashMap<Slot, bool> = HashMap::new();
    for (t, i) in replay.in_order() {
        match &replay.threads[t][i].op {
            Op::Open { slot, flags, .. } => {
                appends.insert(*slot, flags & libc::O_APPEND != 0);
            }
            Op::Write { slot, bytes, offset, .. } if appends.get(slot) == Some(&true) || offset.is_none() => {
                *grows.entry(*slot).or_default() += bytes;
            }
            Op::Allocate { slot, .. } => {
                grows.remove(slot);
                appends.insert(*slot, false);
            }
            _ => {}
        }
    }
    let mut any = false;
    for calls in &mut replay.threads {
        let mut with: Vec<Call> = Vec::with_capacity(calls.len() + 1);
        for call in calls.drain(..) {
            let reserve = match call.op {
                Op::Open { slot, .. } => grows.remove(&slot).filter(|&bytes| bytes > 0).map(|bytes| (slot, bytes)),
                _ => None,
            };
            let (order, at) = (call.order, call.at);
            with.push(call);
            if let Some((slot, length)) = reserve {
                // Right after its open, in the same place of the trace's order.
                with.push(Call { order, at, op: Op::Allocate { slot, keep_size: true, offset: 0, length } });
                any = true;
            }
        }
        *calls = with;
    }
    any
}

/// Keeps, of each descriptor's durable syncs, those `keep(index, count)` says.
fn thin_syncs(replay: &mut Replay, keep: impl Fn(usize, usize) -> bool) -> bool {
    let mut count: HashMap<Slot, usize> = HashMap::new();
    for call in replay.threads.iter().flatten() {
        if let Op::Sync { slot, kind: SyncKind::Fsync | SyncKind::Fdatasync } = call.op {
            *count.entry(slot).or_default() += 1;
        }
    }
    if count.values().all(|&n| n < 2) {
        return false;
    }
    let mut seen: HashMap<Slot, usize> = HashMap::new();
    let mut drop: Vec<(usize, usize)> = Vec::new();
    for (t, i) in replay.in_order() {
        if let Op::Sync { slot, kind: SyncKind::Fsync | SyncKind::Fdatasync } = replay.threads[t][i].op {
            let index = seen.entry(slot).or_default();
            if !keep(*index, count[&slot]) {
                drop.push((t, i));
            }
            *index += 1;
        }
    }
    drop.sort_unstable_by(|a, b| b.cmp(a));
    for (t, i) in &drop {
        replay.threads[*t].remove(*i);
    }
    !drop.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::ReplayFile;

    /// A logger: open O_APPEND, then `records` × (a 300 B write, an fsync), close.
    fn logger(records: u64) -> Replay {
        let mut calls =
            vec![Call { order: 0, at: 0.0, op: Op::Open { file: 0, slot: 0, flags: libc::O_CREAT | libc::O_APPEND } }];
        for r in 0..records {
            let write = Op::Write { slot: 0, kind: WriteKind::Write, bytes: 300, offset: None, buffers: 1, rwf: 0 };
            calls.push(Call { order: 1 + 2 * r, at: 0.0, op: write });
            calls.push(Call { order: 2 + 2 * r, at: 0.0, op: Op::Sync { slot: 0, kind: SyncKind::Fsync } });
        }
        calls.push(Call { order: 1000, at: 0.0, op: Op::Close { slot: 0 } });
        Replay {
            files: vec![ReplayFile { name: "/log".into(), before: 0 }],
            threads: vec![calls],
            bytes: 300 * records,
            syncs: records,
            cut: false,
            pages: crate::Pages::Ordinary,
        }
    }

    fn count(replay: &Replay, matches: impl Fn(&Op) -> bool) -> usize {
        replay.threads.iter().flatten().filter(|c| matches(&c.op)).count()
    }

    #[test]
    fn a_logger_gets_every_change_that_applies() {
        let names: Vec<Change> = changes(&logger(20)).into_iter().map(|(change, _)| change).collect();
        assert_eq!(
            names,
            [Change::Fdatasync, Change::Odsync, Change::Preallocate, Change::Group(8), Change::SyncAtEnd]
        );
        let odsync = apply(&logger(20), Change::Odsync).unwrap();
        assert_eq!(count(&odsync, |op| matches!(op, Op::Sync { .. })), 0);
        assert!(matches!(odsync.threads[0][0].op, Op::Open { flags, .. } if flags & libc::O_DSYNC != 0));
        let grouped = apply(&logger(20), Change::Group(8)).unwrap();
        assert_eq!(
            (grouped.syncs, count(&grouped, |op| matches!(op, Op::Write { .. }))),
            (3, 20),
            "the 8th, 16th and last"
        );
        let at_end = apply(&logger(20), Change::SyncAtEnd).unwrap();
        assert_eq!(at_end.syncs, 1);
        let reserved = apply(&logger(20), Change::Preallocate).unwrap();
        assert!(matches!(reserved.threads[0][1].op, Op::Allocate { keep_size: true, length: 6000, .. }));
        assert_eq!(apply(&logger(20), Change::LargerCalls), None, "a sync between every two writes");
    }

    /// Huge pages only for a program that opens a file with O_DIRECT: its calls as they
    /// were, its buffer in huge pages; the same promise.
    #[test]
    fn o_direct_writes_get_huge_pages_and_buffered_ones_do_not() {
        assert_eq!(apply(&logger(4), Change::HugePages), None, "buffered writes");
        let mut direct = logger(4);
        direct.threads[0][0].op = Op::Open { file: 0, slot: 0, flags: libc::O_CREAT | libc::O_DIRECT };
        let huge = apply(&direct, Change::HugePages).unwrap();
        assert_eq!(huge.pages, Pages::Huge);
        assert_eq!((huge.threads.clone(), huge.syncs), (direct.threads.clone(), direct.syncs));
        assert!(Change::HugePages.same_promise());
        assert_eq!(apply(&huge, Change::HugePages), None, "in huge pages already");
        assert!(changes(&direct).iter().any(|(change, _)| *change == Change::HugePages));
    }

    #[test]
    fn writes_that_continue_each_other_become_one_call() {
        let mut replay = logger(0);
        let write = |offset| Op::Write {
            slot: 0,
            kind: WriteKind::Pwrite,
            bytes: 4096,
            offset: Some(offset),
            buffers: 1,
            rwf: 0,
        };
        let mut calls = vec![replay.threads[0][0].clone()];
        for i in 0..4 {
            calls.push(Call { order: 1 + i, at: 0.0, op: write(i * 4096) });
        }
        calls.push(Call { order: 10, at: 0.0, op: write(100_000) });
        calls.push(Call { order: 11, at: 0.0, op: Op::Sync { slot: 0, kind: SyncKind::Fsync } });
        replay.threads[0] = calls;
        let larger = apply(&replay, Change::LargerCalls).unwrap();
        let writes: Vec<(u64, Option<u64>)> = larger.threads[0]
            .iter()
            .filter_map(|c| if let Op::Write { bytes, offset, .. } = c.op { Some((bytes, offset)) } else { None })
            .collect();
        assert_eq!(writes, [(16384, Some(0)), (4096, Some(100_000))]);
        assert_eq!(apply(&replay, Change::Odsync), None, "five writes before the one sync");
        assert_eq!(apply(&replay, Change::SyncAtEnd), None, "one sync already");
    }
}
