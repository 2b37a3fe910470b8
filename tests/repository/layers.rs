//! The code's floors (docs/design.md §5): each top-level folder of `src/` is a floor, the
//! floors are written once, top to bottom, in `FLOORS`, and a module imports only from its
//! own floor or a lower one. Read from the sources, so a new `use` that points up fails
//! here with both modules and both floors named, and one that closes a loop inside a floor
//! fails with the loop named, not in a review months later.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The floors, top to bottom: `main` is `src/main.rs` (and the files of the binary it
/// declares beside it), every other name a folder of `src/` (with its `NAME.rs`, as
/// `result.rs` beside `result/`) or, for `error`, a single file.
#[rustfmt::skip]
const FLOORS: [&str; 16] = [
    "main", "app", "cli", "crash", "lab", "trace", "rounds", "export", "analysis", "executors", "measure", "stats",
    "result", "context", "plan", "error",
];

/// Floors that must not import a given lower one, though it is below them: `measure`, which
/// runs the cases and touches the files, knows nothing of statistics (an engine times, the
/// rounds and the analysis judge; docs/design.md §5).
const FORBIDDEN: [(&str, &str); 1] = [("measure", "stats")];

/// Module path (`measure::case_runs`) and text of every shipped source file of the
/// floors: under `src/` but the library's root (`lib.rs` only declares the floors), `main`
/// for `main.rs`; and under `crates/FLOOR/src/` for a floor that is a crate of the
/// workspace, its `lib.rs` the module `FLOOR`. Files of modules declared under
/// `#[cfg(test)]` are left out.
pub(crate) fn modules(repo: &Path) -> BTreeMap<String, String> {
    let mut files = read_tree(&repo.join("src"), &[]);
    for floor in crate_floors(repo) {
        files.extend(read_tree(&repo.join("crates").join(&floor).join("src"), &[floor]));
    }
    files
}

/// The floors that are crates of the workspace: the folders of `crates/`.
fn crate_floors(repo: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(repo.join("crates")) else { return Vec::new() };
    let mut floors: Vec<String> =
        entries.map(|e| e.expect("a directory entry").file_name().to_string_lossy().into_owned()).collect();
    floors.sort();
    floors
}

/// The modules of one source tree whose root module is `base` (nothing for `src/`).
fn read_tree(root: &Path, base: &[String]) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    let mut test_only = BTreeSet::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("the sources are readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(root).unwrap().with_extension("");
                let mut parts: Vec<String> = base.to_vec();
                parts.extend(relative.components().map(|c| c.as_os_str().to_string_lossy().into_owned()));
                let crate_root = !base.is_empty() && parts.len() == base.len() + 1 && parts.last().unwrap() == "lib";
                let mod_rs = parts.last().is_some_and(|p| p == "mod") || crate_root;
                if mod_rs {
                    parts.pop();
                }
                let name = parts.join("::");
                if name == "lib" {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                // The module of the file's `mod x;` (under the file's own, or at the root
                // for `main.rs`), and of its `#[path = "x.rs"]` (named after the file
                // beside it: relative to the file's folder, as rustc reads the path).
                let own = if name == "main" { Vec::new() } else { parts.clone() };
                let folder = if mod_rs || name == "main" { own.clone() } else { parts[..parts.len() - 1].to_vec() };
                for declared in split_tests(&text).1 {
                    let mut module = if declared.path.is_some() { folder.clone() } else { own.clone() };
                    module.push(declared.path.unwrap_or(declared.name));
                    test_only.insert(module.join("::"));
                }
                files.insert(name, text);
            }
        }
    }
    // A test module's own modules are tests too.
    files.retain(|name, _| !test_only.iter().any(|t| name == t || name.starts_with(&format!("{t}::"))));
    files
}

/// A module declared under `#[cfg(test)]` in another file: `mod name;`, or with
/// `#[path = "..."]` the file's name without `.rs`.
struct TestModule {
    name: String,
    path: Option<String>,
}

/// A file's code without its `#[cfg(test)]` items (unit tests may reach anywhere; the
/// floors are about what ships), and the modules in other files it declares under
/// `#[cfg(test)]`.
fn split_tests(text: &str) -> (String, Vec<TestModule>) {
    // A test helper a crate offers the tests of the crates above it (analysis's testkit)
    // is built only for them, behind a feature no shipped build turns on.
    const MARKS: [&str; 2] = ["#[cfg(test)]", "#[cfg(any(test, feature = \"testkit\"))]"];
    let find = |rest: &str| {
        MARKS.iter().filter_map(|mark| rest.find(mark).map(|at| (at, mark.len()))).min_by_key(|&(at, _)| at)
    };
    let mut shipped = String::new();
    let mut declared = Vec::new();
    let mut rest = text;
    while let Some((at, mark_len)) = find(rest) {
        let line_start = rest[..at].rfind('\n').map_or(0, |i| i + 1);
        if !rest[line_start..at].trim().is_empty() {
            // Not an attribute of its own (a comment, a string): text like any other.
            shipped.push_str(&rest[..at + mark_len]);
            rest = &rest[at + mark_len..];
            continue;
        }
        shipped.push_str(&rest[..at]);
        let item = &rest[at + mark_len..];
        let end = item_end(item);
        let words: String =
            item[..end].chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { ' ' }).collect();
        let words: Vec<&str> = words.split_whitespace().collect();
        if item[..end].trim_end().ends_with(';') {
            if let Some(at) = words.iter().position(|w| *w == "mod") {
                let path = item[..end].split("#[path").nth(1).and_then(|p| p.split('"').nth(1));
                declared.push(TestModule {
                    name: words[at + 1].to_string(),
                    path: path.map(|p| p.trim_end_matches(".rs").to_string()),
                });
            }
        }
        rest = &item[end..];
    }
    shipped.push_str(rest);
    (shipped, declared)
}

/// Where the item at the start of `code` ends: at its first `;` or `,` outside brackets,
/// at the `}` that closes its first block, or where the block around it closes. Strings,
/// raw strings, characters and line comments are skipped, so a brace in one is not counted.
fn item_end(code: &str) -> usize {
    let bytes = code.as_bytes();
    let ident = |at: usize| at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
    let mut depth = 0usize;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'r' if !ident(at) && matches!(bytes.get(at + 1), Some(b'#' | b'"')) => {
                let hashes = bytes[at + 1..].iter().take_while(|b| **b == b'#').count();
                if bytes.get(at + 1 + hashes) == Some(&b'"') {
                    let close = format!("\"{}", "#".repeat(hashes));
                    let body = at + 2 + hashes;
                    at = code[body..].find(&close).map_or(bytes.len(), |end| body + end + close.len() - 1);
                }
            }
            b'"' => {
                at += 1;
                while at < bytes.len() && bytes[at] != b'"' {
                    at += if bytes[at] == b'\\' { 2 } else { 1 };
                }
            }
            b'\'' if bytes.get(at + 2) == Some(&b'\'') => at += 2,
            b'\'' if bytes.get(at + 1) == Some(&b'\\') => {
                at += 2;
                while at < bytes.len() && bytes[at] != b'\'' {
                    at += 1;
                }
            }
            b'/' if bytes.get(at + 1) == Some(&b'/') => {
                while at < bytes.len() && bytes[at] != b'\n' {
                    at += 1;
                }
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' => depth = depth.saturating_sub(1),
            b'}' if depth == 0 => return at,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return at + 1;
                }
            }
            b';' | b',' if depth == 0 => return at + 1,
            _ => {}
        }
        at += 1;
    }
    bytes.len()
}

/// The code of a file without its line comments and its unit tests.
pub(crate) fn shipped_code(text: &str) -> String {
    let code = split_tests(text).0;
    code.lines().map(|line| line.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// The paths a file names after `prefix` (`crate::`, `super::` or `writebench::`): `a::b`
/// for `a::b::C`, and `a::b::c`, `a::b::d` for `a::b::{c, d::E}`.
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

/// What each module imports. The binary's files name the library `writebench::` and
/// themselves `crate::`; their module names do not clash with the library's, so both
/// read into one map. In a floor that is a crate, `crate::` is that floor, and any file
/// names another crate's floor by its name (`plan::Case`).
fn imports(modules: &BTreeMap<String, String>, crates: &[String]) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph = BTreeMap::new();
    for (name, text) in modules {
        let code = shipped_code(text);
        let parent = name.rsplit_once("::").map_or("", |(parent, _)| parent).to_string();
        let top = name.split("::").next().unwrap_or(name);
        let own = crates.iter().any(|c| c == top).then(|| format!("{top}::"));
        let mut targets = BTreeSet::new();
        let named = named_paths(&code, "crate::").into_iter().map(|path| match &own {
            Some(prefix) => format!("{prefix}{path}"),
            None => path,
        });
        // A bare `crash::` in a module with a child or sibling module of that name (as
        // `result::crash`) is that module, not the floor.
        let local = |floor: &str| {
            modules.contains_key(&format!("{name}::{floor}"))
                || (!parent.is_empty() && modules.contains_key(&format!("{parent}::{floor}")))
        };
        let by_crate = crates.iter().filter(|floor| !local(floor)).flat_map(|floor| {
            named_paths(&code, &format!("{floor}::")).into_iter().map(move |path| format!("{floor}::{path}"))
        });
        for path in named.chain(named_paths(&code, "writebench::")).chain(by_crate) {
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

/// [`imports`] of modules all in `src/` (the synthetic trees of the tests below).
fn imports_of(modules: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    imports(modules, &[])
}

/// The floor a module is on (its index in `FLOORS`, 0 the top): that of its top-level
/// folder or file, or `main`'s for a file of the binary that `main.rs` declares with
/// `mod` (as `mpi_run.rs`).
fn floor_of(module: &str, modules: &BTreeMap<String, String>) -> Option<usize> {
    let top = module.split("::").next().unwrap_or(module);
    FLOORS.iter().position(|floor| *floor == top).or_else(|| {
        let main = modules.get("main").map(|text| shipped_code(text)).unwrap_or_default();
        main.lines().any(|line| line.trim() == format!("mod {top};")).then_some(0)
    })
}

/// Every import between two floors that `says` has words for (given the importing
/// floor's index and the imported one's), by pair: `from (floor) → to (floor)` and them.
fn imports_between(
    graph: &BTreeMap<String, BTreeSet<String>>,
    modules: &BTreeMap<String, String>,
    says: impl Fn(usize, usize) -> Option<&'static str>,
) -> BTreeMap<(String, String), String> {
    let mut found = BTreeMap::new();
    for (from, targets) in graph {
        let Some(low) = floor_of(from, modules) else { continue };
        for to in targets {
            let Some(words) = floor_of(to, modules).and_then(|high| says(low, high).map(|w| (high, w))) else {
                continue;
            };
            let line = format!("{from} ({}) → {to} ({}){}", FLOORS[low], FLOORS[words.0], words.1);
            found.insert((from.clone(), to.clone()), line);
        }
    }
    found
}

/// Every import from a floor to one [`FORBIDDEN`] to it.
fn forbidden(
    graph: &BTreeMap<String, BTreeSet<String>>,
    modules: &BTreeMap<String, String>,
) -> BTreeMap<(String, String), String> {
    imports_between(graph, modules, |low, high| {
        FORBIDDEN.contains(&(FLOORS[low], FLOORS[high])).then_some(", which it must not import")
    })
}

/// Every import that points up the floors.
fn upward(
    graph: &BTreeMap<String, BTreeSet<String>>,
    modules: &BTreeMap<String, String>,
) -> BTreeMap<(String, String), String> {
    imports_between(graph, modules, |low, high| (high < low).then_some(""))
}

/// The imports between modules of one floor. A loop across floors has an import that
/// points up in it, which [`upward`] reports: loops are looked for within floors.
fn within_floors(
    graph: &BTreeMap<String, BTreeSet<String>>,
    modules: &BTreeMap<String, String>,
) -> BTreeMap<String, BTreeSet<String>> {
    graph
        .iter()
        .map(|(from, targets)| {
            let floor = floor_of(from, modules);
            (from.clone(), targets.iter().filter(|to| floor_of(to, modules) == floor).cloned().collect())
        })
        .collect()
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
fn every_import_points_down_the_floors_and_none_closes_a_loop() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let modules = modules(repo);
    assert!(modules.len() > 20, "the sources were found ({} modules)", modules.len());
    let graph = imports(&modules, &crate_floors(repo));
    // The reader must see the imports that exist, or the test proves nothing.
    assert!(graph["executors::case_runs"].contains("plan"), "{:?}", graph["executors::case_runs"]);
    assert!(graph["measure::methods::write"].contains("measure::methods"), "{:?}", graph["measure::methods::write"]);
    assert!(graph["main"].contains("cli"), "the binary's imports of the library: {:?}", graph["main"]);
    // Code after a `#[cfg(test)]` item ships, and is read; files of test modules are not.
    assert!(graph["analysis::advice"].contains("result"), "{:?}", graph["analysis::advice"]);
    for test_file in ["analysis::advice::testkit", "analysis::compare::tests", "export::html_tests"] {
        assert!(!modules.contains_key(test_file), "{test_file} holds unit tests only");
    }

    let nowhere: Vec<&String> = modules.keys().filter(|m| floor_of(m, &modules).is_none()).collect();
    assert!(nowhere.is_empty(), "modules on no floor (add the folder to FLOORS where it belongs): {nowhere:?}");

    let upward: Vec<String> = upward(&graph, &modules).into_values().collect();
    assert!(upward.is_empty(), "imports that point up the floors:\n{}", upward.join("\n"));
    let forbidden: Vec<String> = forbidden(&graph, &modules).into_values().collect();
    assert!(forbidden.is_empty(), "forbidden imports:\n{}", forbidden.join("\n"));

    let floors = within_floors(&graph, &modules);
    let loops: Vec<String> = modules.keys().filter_map(|m| loop_through(m, &floors)).map(|l| l.join(" → ")).collect();
    assert!(loops.is_empty(), "import loops within a floor:\n{}", loops.join("\n"));
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
    let graph = imports_of(&modules);
    assert_eq!(graph["a"], ["b", "b::x"].map(String::from).into());
    assert_eq!(graph["b"], ["c"].map(String::from).into(), "comments do not count");
    assert_eq!(graph["c"], ["a"].map(String::from).into(), "unit tests do not count");
    assert_eq!(loop_through("a", &graph), Some(["a", "b", "c", "a"].map(String::from).to_vec()));
    assert_eq!(loop_through("b::x", &graph), None);
}

/// In a floor that is a crate, `crate::` is that floor; other crates' floors are named
/// bare, from a crate or from `src/`.
#[test]
fn the_reader_knows_the_floors_that_are_crates() {
    let modules: BTreeMap<String, String> = [
        ("measure::runs".to_string(), "use plan::Case;\nfn f() { crate::export::g() }\n".to_string()),
        ("export".to_string(), String::new()),
        ("plan".to_string(), "use crate::units::Size;\nuse stats::Summary;\n".to_string()),
        ("plan::units".to_string(), "fn f(run: measure::runs::Run) {}\n".to_string()),
        ("result".to_string(), "pub mod stats;\nfn f() { stats::g() }\n".to_string()),
        ("result::stats".to_string(), String::new()),
        ("stats".to_string(), String::new()),
    ]
    .into();
    let crates = ["plan".to_string(), "result".to_string(), "stats".to_string()];
    let graph = imports(&modules, &crates);
    assert_eq!(graph["measure::runs"], ["export", "plan"].map(String::from).into());
    assert_eq!(graph["plan"], ["plan::units", "stats"].map(String::from).into());
    assert_eq!(graph["plan::units"], BTreeSet::new(), "a floor in src/ is not named bare from a crate");
    assert_eq!(graph["result"], BTreeSet::new(), "a module of the floor's name is local, not the floor");
}

/// Each crate and the crates it depends on, as the table in docs/design.md §5 gives them.
fn floors_table(repo: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let design = std::fs::read_to_string(repo.join("docs/design.md")).unwrap();
    let names = |cell: &str| -> BTreeSet<String> {
        cell.split(',')
            .map(|name| name.trim().trim_matches('`').to_string())
            .filter(|n| !n.is_empty() && n != "—")
            .collect()
    };
    design
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .map(|row| {
            let cells: Vec<&str> = row.trim_end_matches('|').split('|').collect();
            (cells[0].trim().trim_end_matches('`').to_string(), names(cells[1]))
        })
        .collect()
}

/// The workspace's crates are floors, and each depends on exactly the crates the table
/// of docs/design.md §5 gives it, every one below it (and none [`FORBIDDEN`] to it): so
/// that the compiler, not this test, refuses an import up or across the floors in a
/// crate (export reads no statistics and no analysis; analysis no measurement). The
/// root package holds the floors still in `src/`, which must all be above every crate.
#[test]
fn every_crate_depends_on_what_the_floors_table_says() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(repo)
        .output()
        .expect("cargo metadata runs");
    assert!(output.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&output.stderr));
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let floor = |package: &str| -> usize {
        let name = package
            .strip_prefix("writebench-")
            .unwrap_or_else(|| panic!("{package}: a crate of a floor is writebench-FLOOR"));
        FLOORS.iter().position(|f| *f == name).unwrap_or_else(|| panic!("{package}: {name} is not a floor of FLOORS"))
    };
    let table = floors_table(repo);
    let crates = crate_floors(repo);
    assert_eq!(
        table.keys().cloned().collect::<BTreeSet<_>>(),
        crates.iter().cloned().collect::<BTreeSet<_>>(),
        "docs/design.md's floors table has a row for each crate"
    );
    let lowest_in_src = FLOORS.iter().rposition(|f| !crates.iter().any(|c| c == f) && *f != "error").unwrap();
    let mut wrong = Vec::new();
    for package in metadata["packages"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap();
        let from = if name == "writebench" { lowest_in_src } else { floor(name) };
        let mut depends = BTreeSet::new();
        for dependency in package["dependencies"].as_array().unwrap() {
            let Some(path) = dependency["path"].as_str() else { continue };
            let to = floor(dependency["name"].as_str().unwrap());
            assert!(
                path.ends_with(&format!("crates/{}", FLOORS[to])),
                "{name} → {path}: a floor's crate is in crates/FLOOR"
            );
            if to <= from {
                wrong.push(format!("{name} ({}) → {}: not below it", FLOORS[from], FLOORS[to]));
            } else if name != "writebench" && FORBIDDEN.contains(&(FLOORS[from], FLOORS[to])) {
                // (The root package holds several floors: the import reader above checks
                // its floors one by one.)
                wrong.push(format!("{name} ({}) → {}: which it must not depend on", FLOORS[from], FLOORS[to]));
            }
            // A test may build its results with a crate the shipped code does not use.
            if dependency["kind"].is_null() {
                depends.insert(FLOORS[to].to_string());
            }
        }
        if name != "writebench" {
            let expected = &table[FLOORS[from]];
            if &depends != expected {
                wrong.push(format!(
                    "{name} depends on {:?}; docs/design.md's floors table gives {:?}",
                    depends, expected
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "dependencies that do not follow the floors:\n{}", wrong.join("\n"));
    // What docs/design.md promises of the table, through every crate between too: an
    // exporter reaches no statistics, analysis and no measuring, analysis no measuring,
    // measure no judging.
    let reach = |from: &str| -> BTreeSet<String> {
        let mut reached: BTreeSet<String> = BTreeSet::new();
        let mut next = vec![from.to_string()];
        while let Some(floor) = next.pop() {
            for dependency in &table[&floor] {
                if reached.insert(dependency.clone()) {
                    next.push(dependency.clone());
                }
            }
        }
        reached
    };
    for (from, never) in [
        ("export", &["measure", "executors", "rounds", "analysis", "stats"][..]),
        ("analysis", &["measure", "executors"]),
        ("measure", &["stats", "analysis", "rounds"]),
    ] {
        let reached = reach(from);
        assert!(never.iter().all(|floor| !reached.contains(*floor)), "{from} reaches {reached:?}");
    }
}

/// The compiler, not a test, refuses an import up the floors: in a copy of the three
/// lowest crates (error, plan) built on their own, plan compiles; with a planted
/// `use measure::…` it does not, because no crate below measure depends on it.
#[test]
fn an_import_up_the_floors_does_not_compile() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let copy = tempfile::tempdir().unwrap();
    let root = copy.path();
    std::fs::create_dir_all(root.join("crates")).unwrap();
    for floor in ["error", "plan"] {
        let copied = std::process::Command::new("cp")
            .arg("-r")
            .arg(repo.join("crates").join(floor))
            .arg(root.join("crates"))
            .status()
            .expect("cp runs");
        assert!(copied.success());
    }
    // The runners plan embeds, and the workspace's own settings and lock file.
    assert!(std::process::Command::new("cp").arg("-r").arg(repo.join("runners")).arg(root).status().unwrap().success());
    std::fs::copy(repo.join("Cargo.lock"), root.join("Cargo.lock")).unwrap();
    let manifest = std::fs::read_to_string(repo.join("Cargo.toml")).unwrap();
    let shared = &manifest[manifest.find("[workspace.package]").unwrap()..manifest.find("[package]").unwrap()];
    std::fs::write(root.join("Cargo.toml"), format!("[workspace]\nmembers = [\"crates/*\"]\n\n{shared}")).unwrap();
    let check = || {
        std::process::Command::new(env!("CARGO"))
            .args(["check", "--offline", "--quiet", "-p", "writebench-plan"])
            .current_dir(root)
            .env("CARGO_TARGET_DIR", repo.join("target/floors-compile-check"))
            .output()
            .expect("cargo runs")
    };
    let clean = check();
    assert!(clean.status.success(), "the copy compiles as it is: {}", String::from_utf8_lossy(&clean.stderr));
    let lib = root.join("crates/plan/src/lib.rs");
    let mut text = std::fs::read_to_string(&lib).unwrap();
    text += "\n#[allow(unused_imports)]\nuse measure::source::Source;\n";
    std::fs::write(&lib, text).unwrap();
    let planted = check();
    let stderr = String::from_utf8_lossy(&planted.stderr);
    assert!(!planted.status.success(), "an import of measure from plan compiled");
    assert!(stderr.contains("measure"), "the compiler names the crate it cannot find: {stderr}");
}

#[test]
fn the_reader_skips_only_the_test_items_and_knows_test_files() {
    let text = "struct S {\n    a: u8,\n    #[cfg(test)]\n    b: crate::x::B,\n}\n\
        #[cfg(test)]\nfn helper() { let _ = '{'; let _ = \"}\"; crate::y::f() }\n\
        #[cfg(test)]\n#[path = \"s_tests.rs\"]\nmod tests;\n\
        #[cfg(test)]\nmod kit;\n\
        // #[cfg(test)]\n\
        use crate::z::Z;\n\
        #[cfg(test)]\nmod tests { use crate::w; }\n";
    let (shipped, declared) = split_tests(text);
    assert_eq!(named_paths(&shipped, "crate::"), ["z::Z"], "what ships after a test item is read: {shipped}");
    let declared: Vec<(String, Option<String>)> = declared.into_iter().map(|d| (d.name, d.path)).collect();
    assert_eq!(declared, [("tests".into(), Some("s_tests".into())), ("kit".into(), None)]);
}

#[test]
fn an_import_up_the_floors_is_reported_with_both_modules_and_floors() {
    let with = |plan: &str| -> BTreeMap<String, String> {
        [
            ("main".to_string(), "use writebench::cli::Cli;\nmod mpi_run;\n".to_string()),
            ("mpi_run".to_string(), "use writebench::measure::case_runs;\n".to_string()),
            ("cli".to_string(), "use crate::plan::Case;\n".to_string()),
            ("measure::case_runs".to_string(), "use crate::plan::Case;\nuse super::executor;\n".to_string()),
            ("measure::executor".to_string(), String::new()),
            ("plan".to_string(), plan.to_string()),
            ("stats".to_string(), "use crate::error::CallError;\n".to_string()),
            ("error".to_string(), String::new()),
        ]
        .into()
    };

    let clean = with("use crate::error::plain;\n#[cfg(test)]\nmod tests { use crate::measure::case_runs; }\n");
    assert_eq!(upward(&imports_of(&clean), &clean), BTreeMap::new(), "down, sideways and in tests is fine");
    assert_eq!(floor_of("mpi_run", &clean), Some(0), "the binary's own files are on main's floor");

    let leaky = with("use crate::error::plain;\nfn f() { crate::measure::case_runs::run() }\n");
    let found: Vec<String> = upward(&imports_of(&leaky), &leaky).into_values().collect();
    assert_eq!(found, ["plan (plan) → measure::case_runs (measure)"]);
    // plan → measure::case_runs → plan is a loop across floors: its upward import is what is
    // reported. A loop within a floor is reported as a loop.
    assert_eq!(loop_through("plan", &within_floors(&imports_of(&leaky), &leaky)), None);
    let mut looped = clean.clone();
    looped.insert("measure::executor".to_string(), "use super::case_runs;\n".to_string());
    let floors = within_floors(&imports_of(&looped), &looped);
    let expected = ["measure::case_runs", "measure::executor", "measure::case_runs"].map(String::from).to_vec();
    assert_eq!(loop_through("measure::case_runs", &floors), Some(expected));
}

#[test]
fn an_engine_that_imports_statistics_or_analysis_is_reported() {
    let with = |engine: &str| -> BTreeMap<String, String> {
        [
            (
                "rounds::scheduler".to_string(),
                "use crate::analysis::summarize;\nuse crate::measure::runs;\n".to_string(),
            ),
            ("analysis::summarize".to_string(), "use crate::stats::Summary;\n".to_string()),
            ("measure::runs".to_string(), String::new()),
            ("measure::methods::pwrite".to_string(), engine.to_string()),
            ("stats".to_string(), String::new()),
        ]
        .into()
    };
    let clean = with("use super::runs;\n");
    assert!(upward(&imports_of(&clean), &clean).is_empty(), "the rounds import both floors below them");
    assert!(forbidden(&imports_of(&clean), &clean).is_empty());

    let judging = with("use crate::analysis::summarize;\n");
    let found: Vec<String> = upward(&imports_of(&judging), &judging).into_values().collect();
    assert_eq!(found, ["measure::methods::pwrite (measure) → analysis::summarize (analysis)"]);

    let counting = with("fn f() { crate::stats::median(&[]) }\n");
    let found: Vec<String> = forbidden(&imports_of(&counting), &counting).into_values().collect();
    assert_eq!(found, ["measure::methods::pwrite (measure) → stats (stats), which it must not import"]);
}

/// The floors and the imports between them as an SVG picture (docs/floors.svg): one box
/// per floor, top to bottom, with its number of files, and one arrow per pair of floors
/// that one imports from the other, labelled with how many of its files do. Drawn from
/// the sources alone, so the same code gives the same bytes.
fn floors_svg(modules: &BTreeMap<String, String>, graph: &BTreeMap<String, BTreeSet<String>>) -> String {
    let mut files = [0usize; FLOORS.len()];
    let mut edges: BTreeMap<(usize, usize), BTreeSet<&str>> = BTreeMap::new();
    for (from, targets) in graph {
        let Some(high) = floor_of(from, modules) else { continue };
        files[high] += 1;
        for to in targets {
            if let Some(low) = floor_of(to, modules).filter(|&low| low != high) {
                edges.entry((high, low)).or_default().insert(from);
            }
        }
    }
    let (top, step, box_h, box_x, box_w) = (40, 46, 30, 20, 250);
    let y = |floor: usize| top + floor * step;
    let lane = |index: usize| box_x + box_w + 24 + index * 9;
    let width = lane(edges.len()) + 20;
    let height = y(FLOORS.len()) + 10;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         font-family=\"sans-serif\" font-size=\"13\">\n\
         <defs><marker id=\"a\" viewBox=\"0 0 8 8\" refX=\"8\" refY=\"4\" markerWidth=\"7\" markerHeight=\"7\" \
         orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"#555\"/></marker></defs>\n\
         <text x=\"{box_x}\" y=\"22\" font-weight=\"bold\">The floors, top to bottom (every one below cli/ a crate): imports point down only</text>\n"
    );
    for (floor, name) in FLOORS.iter().enumerate() {
        let label = if *name == "main" { "main.rs".to_string() } else { format!("{name}/") };
        let plural = if files[floor] == 1 { "" } else { "s" };
        svg += &format!(
            "<rect x=\"{box_x}\" y=\"{}\" width=\"{box_w}\" height=\"{box_h}\" rx=\"4\" fill=\"#eef3f8\" stroke=\"#345\"/>\n\
             <text x=\"{}\" y=\"{}\">{label}  ({} file{plural})</text>\n",
            y(floor),
            box_x + 10,
            y(floor) + 20,
            files[floor]
        );
    }
    // Short arrows in the inner lanes, so that few cross; each floor's arrows leave and
    // arrive spread over its box's height.
    let mut ordered: Vec<(&(usize, usize), &BTreeSet<&str>)> = edges.iter().collect();
    ordered.sort_by_key(|((high, low), _)| (low.abs_diff(*high), *low, *high));
    let spread = |floor: usize, nth: usize, of: usize| y(floor) + 3 + (box_h - 6) * (nth + 1) / (of + 1);
    let count = |pick: &dyn Fn(&(usize, usize)) -> usize, floor: usize| {
        ordered.iter().filter(|(e, _)| pick(e) == floor).count()
    };
    let (mut out, mut into) = ([0usize; FLOORS.len()], [0usize; FLOORS.len()]);
    for (index, ((high, low), from)) in ordered.iter().enumerate() {
        let (x0, x1) = (box_x + box_w, lane(index));
        let y0 = spread(*high, out[*high], count(&|e| e.0, *high));
        let y1 = spread(*low, into[*low], count(&|e| e.1, *low));
        (out[*high], into[*low]) = (out[*high] + 1, into[*low] + 1);
        svg += &format!(
            "<path d=\"M{x0},{y0} H{x1} V{y1} H{x0}\" fill=\"none\" stroke=\"#678\" stroke-width=\"1\" \
             marker-end=\"url(#a)\"><title>{} → {}: {} file{}</title></path>\n",
            FLOORS[*high],
            FLOORS[*low],
            from.len(),
            if from.len() == 1 { "" } else { "s" }
        );
    }
    svg + "</svg>\n"
}

#[test]
fn the_picture_of_the_floors_is_current() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let modules = modules(root);
    let drawn = floors_svg(&modules, &imports(&modules, &crate_floors(root)));
    let file = root.join("docs/floors.svg");
    if std::env::var_os("WRITEBENCH_DRAW_FLOORS").is_some() {
        std::fs::write(&file, &drawn).expect("docs/floors.svg is writable");
    }
    let saved = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(
        saved == drawn,
        "docs/floors.svg is not the picture of today's imports: redraw it with \
         WRITEBENCH_DRAW_FLOORS=1 cargo test --test repository layers::the_picture_of_the_floors_is_current"
    );
    // The picture shows something: every floor, and arrows between them.
    for floor in FLOORS {
        assert!(drawn.contains(&format!(">{floor}")), "{floor} is drawn");
    }
    assert!(drawn.matches("<path d=\"M").count() > 10, "the imports between floors are drawn");
}
