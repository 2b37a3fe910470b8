//! A recording's log in words (`crash --show-log`, docs/crash.md): every block write
//! with what it holds (which writes' stamped data, or metadata and journal), every
//! flush, and where each call that made a promise returned, to explain a broken promise
//! from what the device received.

use super::promise::{Ack, NEW, OLD, OTHER, SAVED};
use super::recorder::Entry;
use super::stamp::{self, Found, SECTOR};
use plan::numbers::thousands;

/// The log in words, one line per record, with the calls that returned placed where they
/// did: what `--show-log` prints, to explain a broken promise from what the device got.
pub fn log_lines(entries: &[Entry], acks: &[Ack]) -> Vec<String> {
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
                if other > 0 {
                    what.push(if what.is_empty() { "metadata or journal".into() } else { "metadata".into() });
                }
                format!(
                    "{index:>6}  write {} bytes at {}: {}",
                    thousands(data.len() as u64),
                    thousands(*offset),
                    what.join(", ")
                )
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
            log_lines(&entries, &acks),
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
