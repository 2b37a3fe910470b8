//! The size rules of docs/code.md, kept by a test rather than by review: no source file
//! past 600 lines and no function past 120 without the reason at its top, and no block
//! of six lines written twice in the code that ships.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::layers::{modules, shipped_code};

/// Every Rust file of the program and its crates, tests beside the code included.
fn sources(repo: &Path) -> Vec<PathBuf> {
    let mut roots = vec![repo.join("src")];
    roots.extend(std::fs::read_dir(repo.join("crates")).unwrap().map(|e| e.unwrap().path().join("src")));
    let mut found = Vec::new();
    while let Some(dir) = roots.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                roots.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// `line` without its string and character literals and its line comment, for counting
/// braces.
fn code_of(line: &str) -> String {
    let mut code = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => break,
            '"' => {
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            // A character literal ('{', '\''), not a lifetime ('a).
            '\'' if line.contains("'{'") || line.contains("'}'") || line.contains("'\\''") => {
                let literal: String = chars.by_ref().take_while(|&c| c != '\'').collect();
                if literal == "\\" {
                    chars.next();
                }
            }
            _ => code.push(c),
        }
    }
    code
}

/// Each function of `text` with a body: its name, first line (from 1) and its length
/// in lines.
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(at) = words.iter().position(|w| *w == "fn") else { continue };
        let leading = words[..at]
            .iter()
            .all(|w| ["pub", "const", "async", "unsafe", "extern", "\"C\""].contains(w) || w.starts_with("pub("));
        if !leading || line.trim_start().starts_with("//") || at + 1 >= words.len() {
            continue;
        }
        let name: String = words[at + 1].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let (mut depth, mut opened) = (0i64, false);
        for (offset, body) in lines[start..].iter().enumerate() {
            let code = code_of(body);
            if !opened && code.contains(';') && !code.contains('{') {
                break; // a declaration without a body
            }
            for c in code.chars() {
                match c {
                    '{' => (depth, opened) = (depth + 1, true),
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if opened && depth <= 0 {
                found.push((name.clone(), start + 1, offset + 1));
                break;
            }
        }
    }
    found
}

#[test]
fn no_file_past_600_lines_nor_function_past_120_without_its_reason() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut unexplained = Vec::new();
    for path in sources(repo) {
        let text = std::fs::read_to_string(&path).unwrap();
        let shown = path.strip_prefix(repo).unwrap().display().to_string();
        let lines: Vec<&str> = text.lines().collect();
        if lines.len() > 600 && !lines.iter().take(10).any(|line| line.contains("600 lines")) {
            unexplained.push(format!("{shown}: {} lines, no reason in its first lines", lines.len()));
        }
        for (name, start, length) in functions(&text) {
            let above = &lines[start.saturating_sub(9)..start - 1];
            if length > 120 && !above.iter().any(|line| line.contains("120 lines")) {
                unexplained.push(format!("{shown}:{start}: fn {name} is {length} lines, no reason above it"));
            }
        }
    }
    assert!(unexplained.is_empty(), "(docs/code.md, \"Size\"):\n{}", unexplained.join("\n"));
}

/// A line that says something: not blank, a comment, an import, an attribute, or
/// punctuation alone.
fn says_something(line: &str) -> bool {
    let line = line.trim();
    !line.is_empty()
        && !line.starts_with("use ")
        && !line.starts_with("#[")
        && !line.chars().all(|c| "{}()[];,.?&|=> ".contains(c))
}

/// Every run of six lines that say something, written alike in two places of the code
/// that ships (its tests left out): each place by module and the run's first line.
fn copied_blocks(modules: &BTreeMap<String, String>) -> Vec<String> {
    let mut seen: BTreeMap<Vec<String>, (String, usize)> = BTreeMap::new();
    let mut copied = Vec::new();
    for (module, text) in modules {
        let code = shipped_code(text);
        let lines: Vec<String> = code.lines().filter(|l| says_something(l)).map(|l| l.trim().to_string()).collect();
        let mut last_copy = None;
        for at in 0..lines.len().saturating_sub(5) {
            let run = lines[at..at + 6].to_vec();
            match seen.get(&run) {
                // One copied block is said once, not for each of its overlapping runs.
                Some((first, first_at)) if last_copy.is_none_or(|last: usize| at > last + 5) => {
                    copied.push(format!("{module} ~ {first} (line {first_at} of its code): {}", run[0]));
                    last_copy = Some(at);
                }
                Some(_) => {}
                None => {
                    seen.insert(run, (module.clone(), at + 1));
                }
            }
        }
    }
    copied
}

#[test]
fn no_block_of_six_lines_is_written_twice_in_the_shipped_code() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let copied = copied_blocks(&modules(repo));
    assert!(copied.is_empty(), "blocks of six lines written twice (make them one):\n{}", copied.join("\n"));
}

#[test]
fn the_readers_find_long_functions_and_copied_blocks() {
    let body = "    let x = 1;\n".repeat(130);
    let text =
        format!("/// doc\npub fn long() {{\n{body}}}\nfn short() -> char {{ '{{' }}\ntrait T {{ fn f(&self); }}\n");
    let found = functions(&text);
    assert_eq!(found[0], ("long".to_string(), 2, 132));
    assert_eq!(found[1], ("short".to_string(), 134, 1));
    assert_eq!(found.len(), 2, "{found:?}");
    let block = (1..=6).map(|i| format!("let a{i} = {i};\n")).collect::<String>();
    let twice = BTreeMap::from([
        ("a".to_string(), format!("fn f() {{\n{block}}}\n")),
        ("b".to_string(), format!("fn g() {{\n{block}}}\n#[cfg(test)]\nmod tests {{\n{block}}}\n")),
    ]);
    assert_eq!(copied_blocks(&twice), ["b ~ a (line 2 of its code): let a1 = 1;"]);
    let once =
        BTreeMap::from([("a".to_string(), format!("fn f() {{\n{block}}}\n#[cfg(test)]\nmod tests {{\n{block}}}\n"))]);
    assert!(copied_blocks(&once).is_empty(), "a copy in the tests is not shipped");
}
