//! A recording's log in words (`crash --show-log`, docs/crash.md): every block write
//! with what it holds (which writes' stamped data) and the files its blocks belong to
//! (or the journal, or the filesystem's metadata), every flush, and where each call that
//! made a promise returned, to explain a broken promise from what the device received.

use std::collections::BTreeSet;
use std::path::Path;

use super::block_owners::{self, BlockOwners};
use super::filesystems::CrashFs;
use super::promise::{Ack, NEW, OLD, OTHER, SAVED};
use super::record::Recorded;
use super::recorder::Entry;
use super::stamp::{self, Found, SECTOR};
use plan::numbers::thousands;

/// The log of `recorded` in words, its first line saying how its blocks were named: the
/// image as the recording ended is written to `image_file` and read by the filesystem's
/// debugger (`block_owners`), which may use `scratch` for its commands (removed after).
/// A debugger that fails leaves the blocks unnamed, said in that line, not the check.
pub fn named_log(fs: &CrashFs, recorded: &Recorded, image_file: &Path, scratch: &Path) -> Vec<String> {
    let mut blocks = BTreeSet::new();
    for entry in &recorded.entries {
        if let Entry::Write { offset, data } = entry {
            blocks.extend(block_owners::blocks_of(*offset, data.len() as u64));
        }
    }
    let named = super::replay::write_image(image_file, &recorded.last)
        .and_then(|()| block_owners::name(fs, image_file, &blocks, scratch));
    let _ = std::fs::remove_file(scratch);
    let (owners, head) = match named {
        Ok(Some(owners)) => (Some(owners), "each block named by what it belongs to as the recording ended".to_string()),
        Ok(None) => (
            None,
            format!(
                "blocks not named on {}: naming them needs it mounted (docs/crash.md, \"Reading the log\")",
                fs.name
            ),
        ),
        Err(why) => (None, format!("blocks not named: {why}")),
    };
    let mut lines = vec![head];
    lines.extend(log_lines(&recorded.entries, &recorded.acks, owners.as_ref()));
    lines
}

/// The log in words, one line per record, with the calls that returned placed where they
/// did: what `--show-log` prints, to explain a broken promise from what the device got.
/// With `owners`, each write says whose blocks it wrote ("data of write 3 (settings.json)",
/// "journal"); without, what is not stamped data is "metadata or journal".
pub fn log_lines(entries: &[Entry], acks: &[Ack], owners: Option<&BlockOwners>) -> Vec<String> {
    let mut lines = Vec::new();
    let mut flushes = 0;
    let returned = |position: usize, lines: &mut Vec<String>| {
        for ack in acks.iter().filter(|a| a.position == position && a.position > 0) {
            lines.push(format!("        <- {}", ack.what));
        }
    };
    for (index, entry) in entries.iter().enumerate() {
        let line = match entry {
            Entry::Flush => {
                flushes += 1;
                format!("{index:>6}  flush {flushes}")
            }
            Entry::Zero { offset, len } => {
                format!("{index:>6}  zero {} bytes at {}", thousands(*len), thousands(*offset))
            }
            Entry::Write { offset, data } => {
                let mut what: Vec<String> = Vec::new();
                let mut writes: Vec<u32> = Vec::new();
                let mut other = 0;
                for sector in data.chunks(SECTOR) {
                    let name = match stamp::read(sector) {
                        Found::Stamped(s) if s.tag == NEW => {
                            writes.push(s.write);
                            continue;
                        }
                        Found::Stamped(s) if s.tag == SAVED => format!("save {}'s content", s.write),
                        Found::Stamped(s) if s.tag == OLD => "the old content".to_string(),
                        Found::Stamped(s) if s.tag == OTHER => "another file's data".to_string(),
                        Found::Stamped(_) | Found::Zeros | Found::Other => {
                            other += 1;
                            continue;
                        }
                    };
                    if !what.contains(&name) {
                        what.push(name);
                    }
                }
                if !writes.is_empty() {
                    what.insert(0, data_of(writes));
                }
                let what = match owners.map(|o| o.labels(*offset, data.len() as u64)) {
                    Some(whose) if what.is_empty() => whose.join(", "),
                    Some(whose) => format!("{} ({})", what.join(", "), whose.join(", ")),
                    None => {
                        if other > 0 {
                            what.push(if what.is_empty() { "metadata or journal".into() } else { "metadata".into() });
                        }
                        what.join(", ")
                    }
                };
                format!("{index:>6}  write {} bytes at {}: {what}", thousands(data.len() as u64), thousands(*offset))
            }
        };
        lines.push(line);
        returned(index + 1, &mut lines);
    }
    lines
}

/// "data of write 3", "data of writes 1–16", "data of writes 1–4, 7".
fn data_of(mut writes: Vec<u32>) -> String {
    writes.sort_unstable();
    writes.dedup();
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for n in writes {
        match ranges.last_mut() {
            Some((_, end)) if *end + 1 == n => *end = n,
            _ => ranges.push((n, n)),
        }
    }
    let words: Vec<String> =
        ranges.iter().map(|&(a, b)| if a == b { a.to_string() } else { format!("{a}–{b}") }).collect();
    let plural = ranges.len() > 1 || ranges[0].0 != ranges[0].1;
    format!("data of write{} {}", if plural { "s" } else { "" }, words.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_in_words_names_the_writes_a_record_holds_and_where_calls_returned() {
        use crate::promise::{Piece, Promise};
        let data: Vec<u8> = (1..=3).flat_map(|n| crate::stamp::fill(NEW, n, u64::from(n - 1) * 512, 512)).collect();
        let entries =
            vec![Entry::Write { offset: 8192, data }, Entry::Write { offset: 0, data: vec![7; 512] }, Entry::Flush];
        let promise =
            Promise::Holds { file: "data".into(), pieces: vec![Piece { tag: NEW, write: 1, offset: 0, len: 512 }] };
        let acks = vec![Ack { position: 3, what: "the fsync at the end returned".into(), promise }];
        assert_eq!(
            log_lines(&entries, &acks, None),
            [
                "     0  write 1,536 bytes at 8,192: data of writes 1–3",
                "     1  write 512 bytes at 0: metadata or journal",
                "     2  flush 1",
                "        <- the fsync at the end returned",
            ]
        );
        assert_eq!(data_of(vec![7, 1, 2, 3, 4]), "data of writes 1–4, 7");
        assert_eq!(data_of(vec![3]), "data of write 3");
    }
}
