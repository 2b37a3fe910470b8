//! Crash states from a recorded log (docs/crash.md, "the model"): what a device may hold
//! when power is lost. Everything written before a flush was received is on the device
//! after it; the writes between two flushes may have reached it in any subset (the loop
//! driver, the block layer and a disk's cache all reorder). So a power loss in epoch `i`
//! (after flush `i`, before flush `i + 1` completes) leaves every write before flush `i`
//! and some subset of epoch `i`'s; and every call that returned before flush `i + 1`
//! was received may have returned before the power went.
//!
//! Which subsets are checked, within the budget: for every epoch none of its writes
//! (which is also every write of the epoch before, judged against more returned calls),
//! all of the last epoch's, the writes received before each line a user's program said
//! (the power lost right after it), each prefix, then seeded random subsets.

use std::collections::HashSet;

use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::{Rng, SeedableRng};

use super::image::Image;
use super::recorder::Entry;
use plan::numbers::thousands;

/// One simulated power loss.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CrashState {
    /// The epoch: flushes received before the power went.
    pub epoch: usize,
    /// Log index of the epoch's first record.
    pub start: usize,
    /// Log index of the flush that ends the epoch (the log's length for the last): calls
    /// that returned at a position up to it may have returned before the power went.
    pub end: usize,
    /// Log indices, within `start..end`, of the epoch's writes the device kept.
    pub kept: Vec<usize>,
}

/// The epochs of a log: `(start, end)` with `end` the index of the flush closing it, or
/// the log's length.
pub fn epochs(entries: &[Entry]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (index, entry) in entries.iter().enumerate() {
        if *entry == Entry::Flush {
            out.push((start, index));
            start = index + 1;
        }
    }
    out.push((start, entries.len()));
    out
}

/// At most `budget` states of `entries`, the same for the same `seed`. `said`: the log
/// positions at which a user's program said its promises.
pub fn choose(entries: &[Entry], said: &[usize], budget: usize, seed: u64) -> Vec<CrashState> {
    let epochs = epochs(entries);
    let last = epochs.len() - 1;
    let state = |epoch: usize, kept: Vec<usize>| {
        let (start, end) = epochs[epoch];
        CrashState { epoch, start, end, kept }
    };
    let writes = |epoch: usize| -> Vec<usize> { (epochs[epoch].0..epochs[epoch].1).collect() };
    let mut tiers: Vec<Vec<CrashState>> = vec![Vec::new(); 5];
    for &position in said {
        // Its epoch: the writes received before it are kept, none after.
        if let Some(epoch) = epochs.iter().position(|&(start, end)| start < position && position <= end) {
            tiers[2].push(state(epoch, (epochs[epoch].0..position).collect()));
        }
    }
    for epoch in 0..epochs.len() {
        tiers[0].push(state(epoch, Vec::new()));
        let all = writes(epoch);
        for n in 1..all.len() {
            tiers[3].push(state(epoch, all[..n].to_vec()));
        }
        let mut random = Xoshiro256PlusPlus::seed_from_u64(seed ^ (epoch as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        // Subsets that are neither empty, whole nor a prefix; a few per epoch, so that a
        // long epoch does not take the whole budget.
        for _ in 0..all.len().min(8) {
            let kept: Vec<usize> = all.iter().copied().filter(|_| random.next_u64() & 1 == 1).collect();
            let prefix = kept.iter().enumerate().all(|(i, &index)| index == all[0] + i);
            if !prefix && kept.len() < all.len() && !tiers[4].iter().any(|s| s.epoch == epoch && s.kept == kept) {
                tiers[4].push(state(epoch, kept));
            }
        }
    }
    if epochs[last].1 > epochs[last].0 {
        tiers[1].push(state(last, writes(last)));
    }
    // A state already chosen, or twice in a tier (two lines said at one position, a
    // prefix that is also the state after a line), is taken once: by hash, as a long
    // epoch has thousands of prefixes.
    let mut chosen: Vec<CrashState> = Vec::new();
    let mut taken: HashSet<CrashState> = HashSet::new();
    for tier in tiers {
        let mut in_tier: HashSet<CrashState> = HashSet::new();
        let fresh: Vec<CrashState> =
            tier.into_iter().filter(|state| !taken.contains(state) && in_tier.insert(state.clone())).collect();
        let room = budget.saturating_sub(chosen.len());
        for state in spread(fresh, room) {
            taken.insert(state.clone());
            chosen.push(state);
        }
    }
    chosen
}

/// `room` of `items`, spread evenly over them (all when they fit).
fn spread<T>(items: Vec<T>, room: usize) -> Vec<T> {
    let len = items.len();
    if len <= room {
        return items;
    }
    let wanted: Vec<usize> = (0..room).map(|i| i * len / room).collect();
    items.into_iter().enumerate().filter(|(i, _)| wanted.binary_search(i).is_ok()).map(|(_, item)| item).collect()
}

/// The device's image in `state`: `base` (what it held when recording began), every
/// write before the epoch, and the epoch's kept ones in their order.
pub fn build(base: &Image, entries: &[Entry], state: &CrashState) -> Image {
    let mut image = base.clone();
    let apply = |image: &mut Image, entry: &Entry| match entry {
        Entry::Write { offset, data } => {
            image.write(*offset, data);
        }
        Entry::Zero { offset, len } => image.zero(*offset, *len),
        Entry::Flush => {}
    };
    for entry in &entries[..state.start] {
        apply(&mut image, entry);
    }
    for &index in &state.kept {
        apply(&mut image, &entries[index]);
    }
    image
}

/// The state in words: "after flush 3 of 5 (log record 1,234), 2 of the 4 writes after it
/// kept", the log record being the flush's own, as `--show-log` numbers it.
pub fn describe(state: &CrashState, entries: &[Entry]) -> String {
    let flushes = entries.iter().filter(|e| **e == Entry::Flush).count();
    let pending = state.end - state.start;
    let (when, since) = if state.epoch == 0 {
        ("before the first flush".to_string(), "since the recording began")
    } else {
        (
            format!("after flush {} of {flushes} (log record {})", state.epoch, thousands(state.start as u64 - 1)),
            "after it",
        )
    };
    let kept = match (state.kept.len(), pending) {
        (_, 0) => format!("nothing written {since}"),
        (0, 1) => format!("the write {since} not kept"),
        (1, 1) => format!("the write {since} kept"),
        (0, _) => format!("none of the {pending} writes {since} kept"),
        (k, p) if k == p => format!("all {p} writes {since} kept"),
        (k, p) => format!("{k} of the {p} writes {since} kept"),
    };
    format!("{when}, {kept}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(offset: u64, byte: u8) -> Entry {
        Entry::Write { offset, data: vec![byte; 4096] }
    }

    /// w0 w1 F w2 w3 w4 F w5
    fn log() -> Vec<Entry> {
        vec![
            write(0, 1),
            write(4096, 2),
            Entry::Flush,
            write(0, 3),
            write(8192, 4),
            write(12288, 5),
            Entry::Flush,
            write(4096, 6),
        ]
    }

    #[test]
    fn epochs_end_at_each_flush_and_the_last_at_the_end() {
        assert_eq!(epochs(&log()), vec![(0, 2), (3, 6), (7, 8)]);
        assert_eq!(epochs(&[]), vec![(0, 0)]);
        assert_eq!(epochs(&[Entry::Flush]), vec![(0, 0), (1, 1)]);
    }

    #[test]
    fn a_state_built_from_a_hand_made_log_is_the_expected_image() {
        let entries = log();
        let base = {
            let mut image = Image::new(16384);
            image.write(0, &[9; 16384]);
            image
        };
        // Power lost in epoch 1, with w4 kept but not w2 or w3.
        let state = CrashState { epoch: 1, start: 3, end: 6, kept: vec![4] };
        let image = build(&base, &entries, &state);
        assert_eq!(image.read(0, 4096), vec![1; 4096], "w0, before the flush, is there; w3 is not");
        assert_eq!(image.read(4096, 4096), vec![2; 4096]);
        assert_eq!(image.read(8192, 4096), vec![4; 4096], "the kept write");
        assert_eq!(image.read(12288, 4096), vec![9; 4096], "w5 not kept: the base's bytes");
        let zeroed = vec![write(0, 1), Entry::Zero { offset: 0, len: 4096 }];
        let all = CrashState { epoch: 0, start: 0, end: 2, kept: vec![0, 1] };
        assert_eq!(build(&base, &zeroed, &all).read(0, 4096), vec![0; 4096]);
        assert_eq!(describe(&state, &entries), "after flush 1 of 2 (log record 2), 1 of the 3 writes after it kept");
        // `--show-log` numbers the same record the same flush.
        let log = super::super::log_text::log_lines(&entries, &[], None);
        assert_eq!(log[2].trim(), "2  flush 1", "{log:?}");
    }

    #[test]
    fn the_choice_covers_every_flush_first_stays_in_budget_and_repeats_with_its_seed() {
        let entries = log();
        let all = choose(&entries, &[], 1000, 7);
        let nones: Vec<usize> = all.iter().filter(|s| s.kept.is_empty()).map(|s| s.epoch).collect();
        assert_eq!(nones, vec![0, 1, 2], "every epoch with none of its writes kept");
        assert!(all.iter().any(|s| s.epoch == 2 && s.kept == vec![7]), "the whole log");
        assert!(all.iter().any(|s| s.epoch == 1 && s.kept == vec![3, 4]), "a prefix");
        for state in &all {
            assert!(state.kept.iter().all(|&i| i >= state.start && i < state.end && entries[i] != Entry::Flush));
        }
        let mut unique = all.clone();
        unique.dedup();
        assert_eq!(unique.len(), all.len());
        assert_eq!(choose(&entries, &[], 1000, 7), all);
        let few = choose(&entries, &[], 3, 7);
        assert_eq!(few.len(), 3);
        assert!(few.iter().all(|s| s.kept.is_empty()), "the flush points come first");
    }

    #[test]
    fn a_state_right_after_each_promise_comes_after_the_flush_points() {
        let entries = log();
        // Said after w2 and w3 were received (position 5), after the second flush
        // (position 7: the state with none of epoch 2 kept, there already), and at the end.
        let chosen = choose(&entries, &[5, 7, 8], 5, 7);
        let after: Vec<(usize, Vec<usize>)> = chosen.iter().map(|s| (s.epoch, s.kept.clone())).collect();
        assert_eq!(after, vec![(0, vec![]), (1, vec![]), (2, vec![]), (2, vec![7]), (1, vec![3, 4])]);
        let all = choose(&entries, &[5, 7, 8], 1000, 7);
        let mut unique = all.clone();
        unique.dedup();
        assert_eq!(unique.len(), all.len(), "no state twice");
    }
}
