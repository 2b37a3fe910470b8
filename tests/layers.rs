//! The code's layering (DESIGN §5): no module imports another that imports it back,
//! directly or around a longer loop. Read from the sources, so a new `use` that closes a
//! loop fails here with the loop named, not in a review months later.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module path (`measure::runner`) of every source file under `src/` but the crate roots.
fn modules(root: &Path) -> BTreeMap<String, String> {
    let mut found = BTreeMap::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src/ is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(root).unwrap().with_extension("");
                let mut parts: Vec<String> =
                    relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
                if parts.last().is_some_and(|p| p == "mod") {
                    parts.pop();
                }
                let name = parts.join("::");
                if name != "main" && name != "lib" {
                    found.insert(name, std::fs::read_to_string(&path).unwrap());
                }
            }
        }
    }
    found
}

/// The code of a file without its line comments and its unit tests (tests may reach
/// anywhere; the layering is about what ships).
fn shipped_code(text: &str) -> String {
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    code.lines().map(|line| line.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// The paths a file names after `prefix` (`crate::` or `super::`): `a::b` for `a::b::C`,
/// and `a::b::c`, `a::b::d` for `a::b::{c, d::E}`.
fn named_paths(code: &str, prefix: &str) -> Vec<String> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut paths = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        let before_ok = at == 0 || !rest[..at].ends_with(|c: char| ident(c) || c == ':');
        rest = &rest[at + prefix.len()..];
        if !before_ok {
            continue;
        }
        let end = rest.find(|c: char| !(ident(c) || c == ':')).unwrap_or(rest.len());
        let path = rest[..end].trim_end_matches(':').to_string();
        if rest[end..].starts_with('{') && rest[..end].ends_with("::") {
            let close = rest[end..].find('}').map_or(rest.len(), |i| end + i);
            for item in rest[end + 1..close].split([',', '{']) {
                let first = item.trim().split("::").next().unwrap_or("").trim();
                if !first.is_empty() && first.chars().all(ident) {
                    paths.push(format!("{path}::{first}"));
                }
            }
        } else {
            paths.push(path);
        }
    }
    paths
}

/// The longest module that `path` starts with.
fn module_of(path: &str, modules: &BTreeMap<String, String>) -> Option<String> {
    let mut parts: Vec<&str> = path.split("::").collect();
    while !parts.is_empty() {
        let candidate = parts.join("::");
        if modules.contains_key(&candidate) {
            return Some(candidate);
        }
        parts.pop();
    }
    None
}

fn imports(modules: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph = BTreeMap::new();
    for (name, text) in modules {
        let code = shipped_code(text);
        let parent = name.rsplit_once("::").map_or("", |(parent, _)| parent).to_string();
        let mut targets = BTreeSet::new();
        for path in named_paths(&code, "crate::") {
            targets.extend(module_of(&path, modules));
        }
        for path in named_paths(&code, "super::") {
            let full = if parent.is_empty() { path } else { format!("{parent}::{path}") };
            targets.extend(module_of(&full, modules).or_else(|| (!parent.is_empty()).then(|| parent.clone())));
        }
        targets.remove(name);
        graph.insert(name.clone(), targets);
    }
    graph
}

/// A loop through `start`, if there is one: the modules on it, in order.
fn loop_through(start: &str, graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_string(), vec![start.to_string()])];
    let mut seen = BTreeSet::new();
    while let Some((at, path)) = stack.pop() {
        for next in graph.get(&at).into_iter().flatten() {
            if next == start {
                let mut found = path.clone();
                found.push(start.to_string());
                return Some(found);
            }
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push((next.clone(), longer));
            }
        }
    }
    None
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let modules = modules(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(modules.len() > 20, "the sources were found ({} modules)", modules.len());
    let graph = imports(&modules);
    // The reader must see the imports that exist, or the test proves nothing.
    assert!(graph["measure::runner"].contains("plan"), "{:?}", graph["measure::runner"]);
    assert!(graph["measure::methods::write"].contains("measure::methods"), "{:?}", graph["measure::methods::write"]);
    let loops: Vec<String> = modules.keys().filter_map(|m| loop_through(m, &graph)).map(|l| l.join(" → ")).collect();
    assert!(loops.is_empty(), "import loops:\n{}", loops.join("\n"));
}

#[test]
fn the_reader_finds_loops_and_brace_imports() {
    let modules: BTreeMap<String, String> = [
        ("a".to_string(), "use crate::b::{self, x::Y};\n".to_string()),
        ("b".to_string(), "// use crate::a;\nfn f() { crate::c::g() }\n".to_string()),
        ("b::x".to_string(), String::new()),
        ("c".to_string(), "use super::a;\n#[cfg(test)]\nmod tests { use crate::b; }\n".to_string()),
    ]
    .into();
    let graph = imports(&modules);
    assert_eq!(graph["a"], ["b", "b::x"].map(String::from).into());
    assert_eq!(graph["b"], ["c"].map(String::from).into(), "comments do not count");
    assert_eq!(graph["c"], ["a"].map(String::from).into(), "unit tests do not count");
    assert_eq!(loop_through("a", &graph), Some(["a", "b", "c", "a"].map(String::from).to_vec()));
    assert_eq!(loop_through("b::x", &graph), None);
}
