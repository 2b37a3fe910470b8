//! Every distinct finding of one check (docs/crash.md, "Every finding"): the broken
//! states grouped by what their judge said, so that the worst finding is not hidden
//! behind the first. Words that differ only in numbers ("3 commits, 4 promised"), long
//! hexadecimal strings (an object's name) or path components (which object file is
//! empty) are one finding; a corrupt state (it did not mount, needed repair, or the
//! user's checker said so with exit status 2) comes before a lost promise.

use result::crash::{Finding, FindingKind};

/// `words` with placeholders: `N` for a number (with its `,` and `.`; not the digits
/// that end a name, as in `sha1`), `#` for a
/// hexadecimal string of 7 or more characters, `*` for each component of a path.
pub fn pattern(words: &str) -> String {
    words.split(' ').map(token).collect::<Vec<_>>().join(" ")
}

fn token(word: &str) -> String {
    if word.contains('/') {
        return word.split('/').map(|c| if c.is_empty() { "" } else { "*" }).collect::<Vec<_>>().join("/");
    }
    let chars: Vec<char> = word.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let hex = chars[i..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
        // Digits alone are a number, however long.
        if hex >= 7 && chars[i..i + hex].iter().any(char::is_ascii_alphabetic) {
            out.push('#');
            i += hex;
        } else if chars[i].is_ascii_digit() && (i == 0 || !chars[i - 1].is_alphabetic()) {
            while i < chars.len()
                && (chars[i].is_ascii_digit()
                    || (matches!(chars[i], ',' | '.') && chars.get(i + 1).is_some_and(char::is_ascii_digit)))
            {
                i += 1;
            }
            out.push('N');
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// The findings of one check as its states come.
#[derive(Debug, Default)]
pub struct Findings {
    found: Vec<Finding>,
}

impl Findings {
    /// A broken state: `key` is what its judge said, `first` the state and it in words.
    pub fn add(&mut self, kind: FindingKind, key: &str, first: impl FnOnce() -> String) {
        let pattern = pattern(key);
        match self.found.iter_mut().find(|f| f.kind == kind && f.pattern == pattern) {
            Some(finding) => finding.states += 1,
            None => self.found.push(Finding { kind, pattern, states: 1, first: first() }),
        }
    }

    /// Corrupt first, then the most states first, then as first seen.
    pub fn sorted(mut self) -> Vec<Finding> {
        // A stable sort keeps the order in which they were first seen among equals.
        self.found.sort_by(|a, b| a.kind.cmp(&b.kind).then(b.states.cmp(&a.states)));
        self.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_hashes_and_paths_become_placeholders() {
        assert_eq!(pattern("3 commits, 4 promised"), "N commits, N promised");
        assert_eq!(pattern("app.log holds 1,200 of the 2,100.5 bytes"), "app.log holds N of the N bytes");
        assert_eq!(
            pattern("error: object file .git/objects/b2/1f3a9c0d is empty"),
            "error: object file */*/*/* is empty"
        );
        assert_eq!(pattern("bad sha1 e83c5163316f89bfbde7d9ab23ca2e25604af290"), "bad sha1 #");
        assert_eq!(pattern("/var/log/app.log: short"), "/*/*/* short");
        assert_eq!(pattern("row 17 is torn"), "row N is torn");
        assert_eq!(pattern("at 281941880"), "at N");
        assert_eq!(pattern("fsck:"), "fsck:", "short hexadecimal words stay");
    }

    #[test]
    fn states_saying_the_same_are_one_finding_and_corrupt_ones_come_first() {
        let mut findings = Findings::default();
        findings.add(FindingKind::Lost, "3 commits, 4 promised", || "first lost".into());
        findings.add(FindingKind::Lost, "2 commits, 4 promised", || unreachable!("the same finding"));
        findings.add(FindingKind::Corrupt, "error: object file .git/objects/b2/1f3a9c0d is empty", || "corrupt".into());
        findings.add(FindingKind::Lost, "the repository is gone", || "gone".into());
        findings.add(FindingKind::Lost, "the repository is gone", || unreachable!());
        findings.add(FindingKind::Lost, "the repository is gone", || unreachable!());
        let sorted = findings.sorted();
        let shown: Vec<(FindingKind, usize, &str)> =
            sorted.iter().map(|f| (f.kind, f.states, f.first.as_str())).collect();
        assert_eq!(
            shown,
            [
                (FindingKind::Corrupt, 1, "corrupt"),
                (FindingKind::Lost, 3, "gone"),
                (FindingKind::Lost, 2, "first lost")
            ]
        );
    }
}
