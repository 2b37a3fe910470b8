//! The Zig runner: `zig` on PATH, else the PyPI package `ziglang` (runners/runner.zig).

use super::toolchain::{Build, Toolchain};

pub static TOOLCHAIN: Toolchain = Toolchain {
    runtime: "zig",
    sources: &[("runner.zig", include_str!("../../../runners/runner.zig"))],
    version: &[&["zig", "version"], &["python3", "-m", "ziglang", "version"]],
    build: Build::Compile(&["{tool}", "build-exe", "-O", "ReleaseFast", "-femit-bin=runner", "runner.zig"]),
    env: &[],
};
