//! Packaging: shell completions that load, a manual page that renders, and a version
//! that names the commit it was built from.

use crate::common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{stderr_of, writebench};

fn piped_into(program: &str, args: &[&str], input: &[u8]) -> std::process::Output {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program} is needed for this test: {e}"));
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn completions_load_in_their_shells() {
    let output = writebench(&["completions", "bash"]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let script = String::from_utf8(output.stdout.clone()).unwrap();
    assert!(script.contains("calibrate") && script.contains("--durability"), "{script}");
    let checked = piped_into("bash", &["-n"], &output.stdout);
    assert!(checked.status.success(), "bash -n: {}", String::from_utf8_lossy(&checked.stderr));
    // Loaded for real: the completion function exists afterwards.
    let loaded = piped_into("bash", &[], format!("{script}\ndeclare -F _writebench\n").as_bytes());
    assert!(
        String::from_utf8_lossy(&loaded.stdout).contains("_writebench"),
        "{}",
        String::from_utf8_lossy(&loaded.stderr)
    );
    for shell in ["zsh", "fish"] {
        let output = writebench(&["completions", shell]);
        assert!(output.status.success() && !output.stdout.is_empty(), "{shell}");
    }
    let bad = writebench(&["completions", "cmd.exe"]);
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(stderr_of(&bad).lines().count(), 1);
}

#[test]
fn the_manual_page_renders() {
    let output = writebench(&["man"]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let rendered = piped_into("groff", &["-man", "-Tutf8", "-ww", "-P-cbou"], &output.stdout);
    assert!(rendered.status.success());
    let text = String::from_utf8_lossy(&rendered.stdout);
    assert!(text.contains("NAME") && text.contains("writebench"), "{text}");
    assert!(text.contains("calibrate"), "the subcommands are listed: {text}");
    // Each subcommand's options are on the one page.
    for option in ["--durability", "--target-ci", "--patterns", "--export-html"] {
        assert!(text.contains(option), "{option} missing: {text}");
    }
    let warnings = String::from_utf8_lossy(&rendered.stderr);
    assert!(warnings.trim().is_empty(), "groff warned: {warnings}");
}

#[test]
fn the_version_names_the_commit_when_built_from_git() {
    let output = writebench(&["--version"]);
    let version = String::from_utf8(output.stdout).unwrap();
    assert!(version.starts_with(&format!("writebench {}", env!("CARGO_PKG_VERSION"))), "{version}");
    let head = Command::new("git").args(["rev-parse", "--short=12", "HEAD"]).output();
    if let Some(head) = head.ok().filter(|h| h.status.success()) {
        // The build and this test see the same checkout (a later commit without a
        // rebuild would differ, but cargo test rebuilds when HEAD moves).
        let commit = String::from_utf8_lossy(&head.stdout).trim().to_string();
        assert!(version.contains(&format!("commit {commit}")), "{version} vs HEAD {commit}");
    }
}
