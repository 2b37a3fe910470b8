//! `writebench crash` (docs/crash.md): a recorder of every block write and flush a real
//! filesystem sends to its device (`recorder`, over an in-memory `image`); workloads that
//! make durability promises and note when each call returned (`workloads`, on stamped
//! data: `stamp`, `promise`); a recording of one on a filesystem (`filesystems`,
//! `record`); the crash states its log allows (`states`); the replay of each on the real
//! filesystem with its checker (`replay`); and one entry of the table from all of it
//! (`check`); the log in words (`log_text`).

pub mod check;
pub mod filesystems;
pub mod image;
pub mod log_text;
pub mod promise;
pub mod record;
pub mod recorder;
pub mod replay;
pub mod stamp;
pub mod states;
pub mod workloads;
