//! The README and docs/: every relative link resolves to a file inside the repository
//! (and an anchor to a heading of it), and the README's first screen is enough to use
//! the tool.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).canonicalize().unwrap()
}

/// README.md and every Markdown file under docs/.
fn documents() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The text outside fenced code blocks, where Markdown links are links.
fn prose(text: &str) -> String {
    let mut fenced = false;
    let mut out = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The targets of `[text](target)` and `![alt](target)` links.
fn links(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        match after.find(')') {
            Some(end) => {
                found.push(after[..end].split_whitespace().next().unwrap_or_default().to_string());
                rest = &after[end..];
            }
            None => break,
        }
    }
    found
}

/// GitHub's anchors for a document's headings: lower case, punctuation dropped, spaces
/// to hyphens.
fn anchors(text: &str) -> BTreeSet<String> {
    prose(text)
        .lines()
        .filter(|line| line.starts_with('#'))
        .map(|line| {
            line.trim_start_matches('#')
                .trim()
                .to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
                .map(|c| if c == ' ' { '-' } else { c })
                .collect()
        })
        .collect()
}

#[test]
fn every_relative_link_resolves_inside_the_repository() {
    let mut checked = 0;
    for document in documents() {
        let text = std::fs::read_to_string(&document).unwrap();
        for link in links(&prose(&text)) {
            if link.starts_with("http://") || link.starts_with("https://") || link.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match link.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (link.as_str(), None),
            };
            let target = if path.is_empty() { document.clone() } else { document.parent().unwrap().join(path) };
            let resolved = target
                .canonicalize()
                .unwrap_or_else(|e| panic!("{}: link {link} to {}: {e}", document.display(), target.display()));
            assert!(resolved.starts_with(root()), "{}: {link} leaves the repository", document.display());
            if let Some(anchor) = anchor {
                let headings = anchors(&std::fs::read_to_string(&resolved).unwrap());
                assert!(headings.contains(anchor), "{}: no heading for #{anchor} in {path}", document.display());
            }
            checked += 1;
        }
    }
    assert!(checked >= 12, "the README links to docs/ and docs link to each other: {checked} links");
}

#[test]
fn every_document_in_docs_is_linked_from_the_readme_or_another_document() {
    let mut linked: BTreeSet<PathBuf> = BTreeSet::new();
    for document in documents() {
        let text = std::fs::read_to_string(&document).unwrap();
        for link in links(&prose(&text)) {
            let path = link.split('#').next().unwrap();
            if let Ok(target) = document.parent().unwrap().join(path).canonicalize() {
                linked.insert(target);
            }
        }
    }
    for document in documents().into_iter().skip(1) {
        assert!(linked.contains(&document), "{} is linked from nowhere", document.display());
    }
}

#[test]
fn the_first_screen_of_the_readme_is_enough_to_use_the_tool() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let first: Vec<&str> = readme.lines().take(60).collect();
    let first = first.join("\n");
    for needed in ["cargo install --path .", "cargo run --release -- run", "bash .ci/run", "Answer", "One big file"] {
        assert!(first.contains(needed), "the README's first 60 lines lack {needed:?}");
    }
    // The Answer there is real output: its goals and their figures.
    assert!(first.contains("GB/s") && first.contains("faster than the naive way"), "{first}");
}

#[test]
fn the_anchor_rule_matches_github() {
    let headings =
        anchors("# Is the tool the limit? (`bench/`)\n## Dependencies, and why\n```\n# not a heading\n```\n");
    assert_eq!(headings.into_iter().collect::<Vec<_>>(), ["dependencies-and-why", "is-the-tool-the-limit-bench"]);
    assert_eq!(links("see [a](b.md) and ![c](d.png \"title\")"), ["b.md", "d.png"]);
    assert!(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs").is_dir());
}

#[test]
fn the_results_document_names_the_schema_written_and_those_read() {
    let text = std::fs::read_to_string(root().join("docs/results.md")).unwrap();
    let current = writebench::result::SCHEMA;
    assert!(
        text.contains(&format!("schema `{current}`")),
        "docs/results.md does not name the schema written, {current}"
    );
    for schema in writebench::result::SCHEMAS_READ {
        assert!(text.contains(&format!("`{schema}`")), "docs/results.md does not say {schema} files are read");
    }
}
