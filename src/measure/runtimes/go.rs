//! The Go runner: the `go` toolchain, a module with golang.org/x/sys (runners/go/).

use super::toolchain::{Build, Toolchain};

pub static TOOLCHAIN: Toolchain = Toolchain {
    runtime: "go",
    sources: &[
        ("runner.go", include_str!("../../../runners/go/runner.go")),
        ("go.mod", include_str!("../../../runners/go/go.mod")),
        ("go.sum", include_str!("../../../runners/go/go.sum")),
    ],
    version: &[&["go", "version"]],
    build: Build::Compile(&["{tool}", "build", "-trimpath", "-o", "runner", "."]),
    // A static binary without cgo; modules fetched as go.sum pins them.
    env: &[("CGO_ENABLED", "0"), ("GOFLAGS", "-mod=mod")],
};
