//! The runners of the other runtimes (C, Python, Go, Zig, Java, Node.js): one small program per
//! language, embedded in the binary, built on demand into the user's cache, started
//! once per case, and driven over the protocol of docs/runtimes.md. Which runtimes there
//! are, their methods and their toolchains are the catalogue's (`plan::catalog`); this
//! module makes and drives the processes. A new runtime is its runner under `runners/`
//! and its catalogue entry: nothing here.

mod child;
mod external;
pub mod loops;
mod toolchain;

pub use child::Child;
pub use external::External;
pub use toolchain::{Launch, toolchains};

use plan::catalog;

/// How to start `runtime`'s runner, building it first if needed (once per process),
/// or why it cannot be: the toolchain is missing, or the runner did not build.
pub fn launch(runtime: &str) -> Result<Launch, String> {
    let entry = catalog::runtime(runtime);
    let Some((name, toolchain)) = entry.and_then(|entry| Some((entry.name, entry.toolchain.as_ref()?))) else {
        return Err(format!("the {runtime} runtime has no runner"));
    };
    toolchain::ready(name, toolchain)
}
