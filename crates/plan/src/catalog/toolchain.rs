//! How a runtime's runner is built and started, as data: its sources, the commands that
//! find its toolchain and build it, the build's environment. The code that runs these
//! commands and caches the result is `executors::runtimes` (docs/runtimes.md).

/// How a runtime's runner becomes runnable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Build {
    /// Compiled into `runner` in the cache directory by this command (run there).
    Compile(&'static [&'static str]),
    /// Run by this interpreter command from the cache directory.
    Interpret(&'static [&'static str]),
    /// Compiled in the cache directory by the first command, then run from there by the
    /// second (Java: `javac`, then `java` with the classes).
    CompileThenRun(&'static [&'static str], &'static [&'static str]),
}

/// A runtime's runner: its sources and how to build and start it. In commands,
/// `{tool}` stands for the toolchain's command as found (`zig`, or `python3 -m ziglang`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Toolchain {
    /// File name in the build directory, and content.
    pub sources: &'static [(&'static str, &'static str)],
    /// Commands that print the toolchain's version, tried in order; the first that
    /// runs names the toolchain: `{tool}` is that command without its last word.
    pub version: &'static [&'static [&'static str]],
    pub build: Build,
    /// Environment for the build.
    pub env: &'static [(&'static str, &'static str)],
}
