//! The runners of the other runtimes (C, Python, Go, Zig): one small program per
//! language, embedded in the binary, built on demand into the user's cache, started
//! once per case, and driven over the protocol of docs/runtimes.md. Which methods each
//! runtime has is the catalogue's (`plan::catalog`); this module makes and drives the
//! processes. A new runtime is one file here (its toolchain) and one line in
//! [`TOOLCHAINS`], plus its line in the method registry.

mod c;
mod child;
mod external;
mod go;
pub mod latency;
mod python;
mod toolchain;
mod zig;

pub use child::Child;
pub use external::External;
pub use toolchain::{Launch, Toolchain, toolchains};

/// Every runtime with a runner.
static TOOLCHAINS: &[&Toolchain] = &[&c::TOOLCHAIN, &python::TOOLCHAIN, &go::TOOLCHAIN, &zig::TOOLCHAIN];

/// How to start `runtime`'s runner, building it first if needed (once per process),
/// or why it cannot be: the toolchain is missing, or the runner did not build.
pub fn launch(runtime: &str) -> Result<Launch, String> {
    let toolchain = TOOLCHAINS
        .iter()
        .find(|toolchain| toolchain.runtime == runtime)
        .ok_or_else(|| format!("the {runtime} runtime has no runner"))?;
    toolchain::ready(toolchain)
}
