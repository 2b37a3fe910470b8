//! Finding a runtime's toolchain, building its runner into the user's cache, and the
//! command that starts it; the toolchain itself (sources, commands) is the runtime's
//! catalogue entry (`plan::catalog`).
//!
//! Build products live in `$XDG_CACHE_HOME/writebench/runners/<runtime>-<key>/` (else
//! `~/.cache/...`), where the key hashes the runner's sources and the toolchain's
//! version line: a new source or a new toolchain builds again, anything else starts at
//! once. A build happens in a directory of its own and is renamed into place only when
//! it succeeded, so an interrupted or concurrent build never leaves a half-built runner
//! that a later run would trust.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use plan::catalog::{Build, Toolchain};

/// How to start a ready runner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub program: PathBuf,
    pub args: Vec<String>,
    /// The directory the runner was built in (its working directory).
    pub dir: PathBuf,
    /// The toolchain's version line, recorded with the results.
    pub version: String,
}

/// Each runtime's outcome, found once per process.
static READY: Mutex<Option<HashMap<&'static str, Result<Launch, String>>>> = Mutex::new(None);

/// The runner of `runtime`, built with `toolchain` if needed, or why it cannot run.
pub fn ready(runtime: &'static str, toolchain: &Toolchain) -> Result<Launch, String> {
    let mut ready = READY.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let known = ready.get_or_insert_with(HashMap::new);
    known.entry(runtime).or_insert_with(|| prepare(runtime, toolchain, &cache_root()?)).clone()
}

/// Each runtime asked for so far: its toolchain's version line, or why it could not
/// run, for the result's options.
pub fn toolchains() -> serde_json::Value {
    let ready = READY.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut map = serde_json::Map::new();
    for (runtime, outcome) in ready.iter().flatten() {
        let value = match outcome {
            Ok(launch) => serde_json::json!({"version": launch.version, "runner": launch.dir}),
            Err(reason) => serde_json::json!({"unsupported": reason}),
        };
        map.insert(runtime.to_string(), value);
    }
    serde_json::Value::Object(map)
}

/// `$XDG_CACHE_HOME/writebench/runners`, else `$HOME/.cache/writebench/runners`.
fn cache_root() -> Result<PathBuf, String> {
    context::calibration_cache::cache_root().map(|root| root.join("runners"))
}

fn prepare(runtime: &str, toolchain: &Toolchain, root: &Path) -> Result<Launch, String> {
    let (tool, version) = find_tool(runtime, toolchain)?;
    let dir = root.join(format!("{runtime}-{:016x}", key(toolchain, &version)));
    let (command, compiled) = match toolchain.build {
        Build::Compile(_) => (vec!["runner".to_string()], true),
        Build::Interpret(command) | Build::CompileThenRun(_, command) => (expand(command, &tool), false),
    };
    // An interpreter reads its script from the directory, its working directory.
    let launch = |dir: &Path| Launch {
        program: if compiled { dir.join("runner") } else { PathBuf::from(&command[0]) },
        args: command[1..].to_vec(),
        dir: dir.to_path_buf(),
        version: version.clone(),
    };
    if dir.join(".ready").exists() {
        return Ok(launch(&dir));
    }
    std::fs::create_dir_all(root).map_err(|e| format!("{runtime}: cannot create {}: {e}", root.display()))?;
    let building = root.join(format!(".{runtime}-build-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&building);
    std::fs::create_dir_all(&building).map_err(|e| format!("{runtime}: cannot create {}: {e}", building.display()))?;
    let built = build(runtime, toolchain, &tool, &building);
    if let Err(reason) = built {
        let _ = std::fs::remove_dir_all(&building);
        return Err(reason);
    }
    std::fs::write(building.join(".ready"), &version).map_err(|e| format!("{runtime}: {e}"))?;
    if std::fs::rename(&building, &dir).is_err() {
        // Another writebench finished the same build first: use its copy.
        let _ = std::fs::remove_dir_all(&building);
        if !dir.join(".ready").exists() {
            return Err(format!("{runtime}: cannot move the built runner into {}", dir.display()));
        }
    }
    Ok(launch(&dir))
}

/// Writes the sources into `dir` and builds there.
fn build(runtime: &str, toolchain: &Toolchain, tool: &[String], dir: &Path) -> Result<(), String> {
    for (name, text) in toolchain.sources {
        std::fs::write(dir.join(name), text).map_err(|e| format!("{runtime}: cannot write {name}: {e}"))?;
    }
    let (command, makes_runner) = match toolchain.build {
        Build::Compile(command) => (command, true),
        Build::CompileThenRun(command, _) => (command, false),
        Build::Interpret(_) => return Ok(()),
    };
    let words = expand(command, tool);
    let output = Command::new(&words[0])
        .args(&words[1..])
        .current_dir(dir)
        .envs(toolchain.env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{runtime}: cannot run {}: {e}", words[0]))?;
    if output.status.success() && (!makes_runner || dir.join("runner").exists()) {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&output.stderr);
    Err(format!("{runtime}: the runner did not build: {}", first_error(&text)))
}

/// The first line of a compiler's output that says "error", else its first line; a
/// line that ends in a colon announces the next, which is added.
pub fn first_error(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|line| !line.is_empty()).collect();
    let index = lines.iter().position(|line| line.to_lowercase().contains("error")).unwrap_or(0);
    match (lines.get(index), lines.get(index + 1)) {
        (None, _) => "no output".to_string(),
        (Some(line), Some(next)) if line.ends_with(':') => format!("{line} {next}"),
        (Some(line), _) => line.to_string(),
    }
}

/// The toolchain's command and version line, or "go: not found".
fn find_tool(runtime: &str, toolchain: &Toolchain) -> Result<(Vec<String>, String), String> {
    let mut tried = Vec::new();
    for command in toolchain.version {
        let output = Command::new(command[0]).args(&command[1..]).stdin(Stdio::null()).output();
        match output {
            Ok(output) if output.status.success() => {
                let text = String::from_utf8_lossy(&output.stdout) + String::from_utf8_lossy(&output.stderr);
                let version = text.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("").to_string();
                let tool = command[..command.len() - 1].iter().map(|w| w.to_string()).collect();
                return Ok((tool, version));
            }
            _ => tried.push(command.join(" ")),
        }
    }
    let names: Vec<&str> = toolchain.version.iter().map(|command| command[0]).collect();
    let name = names.first().copied().unwrap_or(runtime);
    if toolchain.version.len() == 1 {
        Err(format!("{name}: not found"))
    } else {
        Err(format!("{name}: not found (tried: {})", tried.join("; ")))
    }
}

/// `command` with `{tool}` replaced by the toolchain's words.
fn expand(command: &[&str], tool: &[String]) -> Vec<String> {
    command.iter().flat_map(|word| if *word == "{tool}" { tool.to_vec() } else { vec![word.to_string()] }).collect()
}

/// FNV-1a over the sources and the version line: stable across builds of writebench,
/// which the standard library's hasher is not.
fn key(toolchain: &Toolchain, version: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let pieces = toolchain.sources.iter().flat_map(|(name, text)| [*name, *text]).chain([version]);
    for piece in pieces {
        for byte in piece.bytes().chain([0]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    static BROKEN: Toolchain = Toolchain {
        sources: &[("runner.c", "int main(void) { return missing_function(; }\n")],
        version: &[&["cc", "--version"]],
        build: Build::Compile(&["{tool}", "-O2", "-o", "runner", "runner.c"]),
        env: &[],
    };

    static ABSENT: Toolchain = Toolchain {
        sources: &[],
        version: &[&["writebench-no-such-compiler", "--version"]],
        build: Build::Compile(&["{tool}"]),
        env: &[],
    };

    #[test]
    fn a_missing_toolchain_says_not_found() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(prepare("nothing", &ABSENT, root.path()), Err("writebench-no-such-compiler: not found".to_string()));
    }

    #[test]
    fn a_runner_that_does_not_build_gives_the_compilers_first_error_and_leaves_nothing() {
        let root = tempfile::tempdir().unwrap();
        let reason = prepare("c", &BROKEN, root.path()).unwrap_err();
        assert!(reason.starts_with("c: the runner did not build: ") && reason.contains("error"), "{reason}");
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0, "no half-built runner is kept");
    }

    #[test]
    fn the_key_changes_with_the_source_and_the_toolchain() {
        let other = Toolchain { sources: &[("runner.c", "int main(void) { return 0; }\n")], ..BROKEN };
        assert_ne!(key(&BROKEN, "gcc 12"), key(&other, "gcc 12"));
        assert_ne!(key(&BROKEN, "gcc 12"), key(&BROKEN, "gcc 13"));
        assert_eq!(key(&BROKEN, "gcc 12"), key(&BROKEN, "gcc 12"));
    }

    #[test]
    fn a_built_runner_is_reused_from_the_cache() {
        let good = Toolchain { sources: &[("runner.c", "int main(void) { return 0; }\n")], ..BROKEN };
        let root = tempfile::tempdir().unwrap();
        let first = prepare("c", &good, root.path()).unwrap();
        let runner = first.program.clone();
        let built = std::fs::metadata(&runner).unwrap().modified().unwrap();
        let second = prepare("c", &good, root.path()).unwrap();
        assert_eq!(first, second);
        assert_eq!(std::fs::metadata(&runner).unwrap().modified().unwrap(), built, "not built again");
        assert!(first.version.to_lowercase().contains("cc") || !first.version.is_empty());
    }

    #[test]
    fn a_compiled_then_run_runner_is_built_once_and_started_by_its_run_command() {
        // As Java's: classes compiled into the directory, then a command that runs them.
        static TWO_STEPS: Toolchain = Toolchain {
            sources: &[("r.c", "int main(void) { return 0; }\n")],
            version: &[&["cc", "--version"]],
            build: Build::CompileThenRun(&["{tool}", "-o", "prog", "r.c"], &["sh", "-c", "./prog"]),
            env: &[],
        };
        let root = tempfile::tempdir().unwrap();
        let launch = prepare("two-steps", &TWO_STEPS, root.path()).unwrap();
        assert_eq!(
            (launch.program.as_path(), launch.args.as_slice()),
            (Path::new("sh"), &["-c".to_string(), "./prog".to_string()][..])
        );
        assert!(launch.dir.join("prog").exists(), "compiled into its directory");
        let status = Command::new(&launch.program).args(&launch.args).current_dir(&launch.dir).status().unwrap();
        assert!(status.success());
        let broken = Toolchain { sources: &[("r.c", "int main(void) { return missing(; }\n")], ..TWO_STEPS };
        let reason = prepare("broken", &broken, root.path()).unwrap_err();
        assert!(reason.starts_with("broken: the runner did not build: "), "{reason}");
    }

    #[test]
    fn first_error_prefers_a_line_that_says_error() {
        assert_eq!(
            first_error("x.c: In function main:\nx.c:1:2: error: expected ';'\n"),
            "x.c:1:2: error: expected ';'"
        );
        assert_eq!(first_error("\n  warning only\n"), "warning only");
        assert_eq!(first_error(""), "no output");
        assert_eq!(
            first_error("go: errors parsing go.mod:\n/x/go.mod:1: unknown directive\n"),
            "go: errors parsing go.mod: /x/go.mod:1: unknown directive"
        );
    }
}
