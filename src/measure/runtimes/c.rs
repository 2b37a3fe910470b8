//! The C runner: `cc -O2`, pthreads, raw POSIX calls (runners/runner.c).

use super::toolchain::{Build, Toolchain};

pub static TOOLCHAIN: Toolchain = Toolchain {
    runtime: "c",
    sources: &[("runner.c", include_str!("../../../runners/runner.c"))],
    version: &[&["cc", "--version"]],
    build: Build::Compile(&["{tool}", "-O2", "-pthread", "-o", "runner", "runner.c"]),
    env: &[],
};
