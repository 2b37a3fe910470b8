//! The Python runner: `python3`, standard library only (runners/runner.py).

use super::toolchain::{Build, Toolchain};

pub static TOOLCHAIN: Toolchain = Toolchain {
    runtime: "python",
    sources: &[("runner.py", include_str!("../../../runners/runner.py"))],
    version: &[&["python3", "--version"]],
    // -u: stdout unbuffered is not needed (the runner flushes each line); -I: isolated
    // from the user's PYTHONPATH and site-packages, so the standard library is what runs.
    build: Build::Interpret(&["{tool}", "-I", "runner.py"]),
    env: &[],
};
