//! What `scripts/package` puts in dist/ for machines without Rust (docs/code.md,
//! "Installing without Rust"): a static binary that needs nothing but the kernel, and the
//! Debian and RPM packages around it. `.ci/run` runs the script before the tests; where
//! it did not run, these tests fail and say so.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{read_json, stderr_of, writebench};

/// dist/ as `scripts/package` left it.
fn dist() -> PathBuf {
    let dist = Path::new(env!("CARGO_MANIFEST_DIR")).join("dist");
    assert!(
        dist.join("SHA256SUMS").exists(),
        "{} holds no packages: run scripts/package first (.ci/run does)",
        dist.display()
    );
    dist
}

/// The one file of dist/ whose name ends with `suffix`.
fn artefact(suffix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dist())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.file_name().unwrap().to_string_lossy().ends_with(suffix))
        .collect();
    assert_eq!(found.len(), 1, "one file ending with {suffix} in dist/: {found:?}");
    found.into_iter().next().unwrap()
}

fn static_binary() -> PathBuf {
    artefact(&format!("-{}-linux", std::env::consts::ARCH))
}

fn ran(program: &str, args: &[&str]) -> Output {
    let output = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} is needed for this test (.ci/run installs it): {e}"));
    assert!(output.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    output
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// No program interpreter and no shared library named: a static-pie keeps a dynamic
/// section (its own relocations), which is fine. Built from this very checkout: its
/// version line is the test build's.
#[test]
fn the_static_binary_needs_no_interpreter_and_no_library() {
    let binary = static_binary();
    let binary = binary.to_str().unwrap();
    let headers = stdout(&ran("readelf", &["-lW", binary]));
    assert!(headers.contains("LOAD"), "readelf read no program headers: {headers}");
    assert!(!headers.contains("INTERP"), "a program interpreter is named: {headers}");
    let dynamic = stdout(&ran("readelf", &["-dW", binary]));
    assert!(!dynamic.contains("(NEEDED)"), "shared libraries are needed: {dynamic}");
    // The commit, not whether the tree had changes then: a build script's view of that
    // is only as fresh as its last run.
    let commit =
        |output: &Output| stdout(output).split(", with").next().unwrap().trim_end_matches(['\n', ')']).to_string();
    let (packaged, tested) = (commit(&ran(binary, &["--version"])), commit(&writebench(&["--version"])));
    assert_eq!(packaged, tested, "dist/ is from another checkout: run scripts/package");
}

/// The same short run, of the static binary in a mount namespace whose root holds only
/// it, /dev (with /dev/shm) and /proc (no /usr, no libc), and of the test build as usual:
/// both end with exit 0 and an Answer, over the same cases and for the same goals.
#[test]
fn the_static_binary_answers_in_a_root_that_holds_nothing_else() {
    let binary = static_binary();
    let name = |build: &str| format!("writebench-bare-{}-{build}.json", std::process::id());
    let run = ["run", "/dev/shm", "--size", "4MiB", "--repeat", "2", "--warmup", "0", "--no-calibrate"];
    // A new mount and pid namespace: the root is a fresh tmpfs with the binary, the
    // host's /dev bound in (its /dev/shm is where the run writes) and a new /proc.
    let script = r#"set -e
root=$(mktemp -d)
mount -t tmpfs -o size=64m bare "$root"
mkdir "$root/dev" "$root/proc"
cp "$1" "$root/writebench"
mount --rbind /dev "$root/dev"
mount -t proc proc "$root/proc"
test "$(ls "$root")" = "$(printf 'dev\nproc\nwritebench')"
shift
exec chroot "$root" /writebench "$@""#;
    let json = format!("/dev/shm/{}", name("static"));
    let mut args = vec!["--mount", "--pid", "--fork", "--propagation", "private", "sh", "-c", script, "sh"];
    args.push(binary.to_str().unwrap());
    args.extend(run);
    args.extend(["--export-json", &json]);
    let bare = Command::new("unshare").args(&args).output().expect("unshare (util-linux) is needed");
    let answered = stdout(&bare);
    assert!(bare.status.success(), "{}\n{answered}", stderr_of(&bare));
    assert!(answered.contains("## Answer") && answered.contains("One big file, fastest:"), "{answered}");

    let usual_json = format!("/dev/shm/{}", name("usual"));
    let mut usual_args = run.to_vec();
    usual_args.extend(["--export-json", &usual_json]);
    let usual = writebench(&usual_args);
    assert!(usual.status.success(), "{}", stderr_of(&usual));
    let (bare, usual) = (read_json(Path::new(&json)), read_json(Path::new(&usual_json)));
    for file in [&json, &usual_json] {
        std::fs::remove_file(file).unwrap();
    }
    let cases = |r: &serde_json::Value| -> Vec<String> {
        r["cases"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_string()).collect()
    };
    let goals = |r: &serde_json::Value| -> Vec<String> {
        r["answer"].as_array().unwrap().iter().map(|a| a["goal"].as_str().unwrap().to_string()).collect()
    };
    assert!(cases(&usual).len() > 100, "{:?}", cases(&usual));
    assert_eq!(cases(&bare), cases(&usual), "the same cases");
    assert_eq!(goals(&bare), goals(&usual), "the same goals");
    let measured =
        |r: &serde_json::Value| r["cases"].as_array().unwrap().iter().filter(|c| c["status"] == "ok").count();
    assert_eq!(measured(&bare), measured(&usual), "every case measured in both");
}

/// What each package installs: the binary, the manual page (which `man -l` reads) and the
/// completions for bash, zsh and fish, and nothing it must depend on; the checksums hold.
#[test]
fn the_packages_hold_the_binary_the_manual_and_the_completions() {
    let wanted = [
        "/usr/bin/writebench",
        "/usr/share/man/man1/writebench.1.gz",
        "/usr/share/bash-completion/completions/writebench",
        "/usr/share/zsh/vendor-completions/_writebench",
        "/usr/share/fish/vendor_completions.d/writebench.fish",
    ];
    let version = env!("CARGO_PKG_VERSION");
    let deb = artefact(&format!("_{version}-1_{}.deb", deb_arch()));
    let deb = deb.to_str().unwrap();
    let listed = stdout(&ran("dpkg-deb", &["-c", deb]));
    let rpm = artefact(&format!("-{version}-1.{}.rpm", std::env::consts::ARCH));
    let rpm = rpm.to_str().unwrap();
    let rpm_listed = stdout(&ran("rpm", &["-qlp", rpm]));
    for path in wanted {
        assert!(listed.contains(&format!(".{path}\n")), "{path} not in the .deb: {listed}");
        assert!(rpm_listed.lines().any(|line| line == path), "{path} not in the RPM: {rpm_listed}");
    }
    let control = stdout(&ran("dpkg-deb", &["-f", deb, "Depends", "Recommends", "Suggests"]));
    assert!(!control.contains("Depends"), "no Depends: {control}");
    assert!(control.contains("strace") && control.contains("xfsprogs"), "{control}");
    let rpm_requires = stdout(&ran("rpm", &["-qp", "--requires", rpm]));
    assert!(rpm_requires.lines().all(|line| line.starts_with("rpmlib(")), "requires only rpm itself: {rpm_requires}");

    let unpacked = tempfile::tempdir().unwrap();
    ran("dpkg-deb", &["-x", deb, unpacked.path().to_str().unwrap()]);
    let page = unpacked.path().join("usr/share/man/man1/writebench.1.gz");
    let read = Command::new("man")
        .args(["-l", "-P", "cat", page.to_str().unwrap()])
        .env("MANWIDTH", "100")
        .output()
        .expect("man (man-db) is needed for this test (.ci/run installs it)");
    let text = stdout(&read);
    assert!(read.status.success() && text.contains("writebench") && text.contains("--durability"), "{text}");
    let installed = unpacked.path().join("usr/bin/writebench");
    assert_eq!(std::fs::read(installed).unwrap(), std::fs::read(static_binary()).unwrap(), "the static binary");

    let checked = Command::new("sha256sum").args(["-c", "SHA256SUMS"]).current_dir(dist()).output().unwrap();
    assert!(checked.status.success(), "{}", stdout(&checked));
    assert_eq!(stdout(&checked).lines().count(), 3, "{}", stdout(&checked));
}

fn deb_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}
