//! `writebench crash` (docs/crash.md): a recorder of every block write and flush a real
//! filesystem sends to its device (`recorder`, over an in-memory `image`); workloads that
//! make durability promises and note when each call returned (`workloads`, on stamped
//! data: `stamp`, `promise`); a recording of one on a filesystem (`filesystems`,
//! `record`); the crash states its log allows (`states`); the replay of each on the real
//! filesystem with its checker (`replay`); and one entry of the table from all of it
//! (`check`); the log in words (`log_text`), each block named by its file
//! (`block_owners`). The user's own program (`--run`, `--check`: `program`, as a
//! `subject` beside the workloads) runs in a `sandbox` that hides the recorder from it
//! and ends whatever it started.

pub mod block_owners;
pub mod check;
pub mod filesystems;
pub mod findings;
pub mod image;
pub mod log_text;
pub mod program;
pub mod promise;
pub mod record;
pub mod recorder;
pub mod replay;
pub mod sandbox;
pub mod stamp;
pub mod states;
pub mod subject;
pub mod workloads;
