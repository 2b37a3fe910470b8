//! How a file's name changes under the fold: a rename (a save over an earlier file
//! takes its place), a link that names an O_TMPFILE file, an unlink.

use result::trace::Made;

use super::Fold;
use crate::paths::parent;
use crate::strace::{Call, string};

impl Fold {
    pub(super) fn rename(&mut self, call: &Call) {
        if call.outcome.ok() != Some(0) {
            return;
        }
        let (from, to) = if call.name == "rename" {
            (self.resolve(call, None, 0), self.resolve(call, None, 1))
        } else {
            (self.resolve(call, Some(0), 1), self.resolve(call, Some(2), 3))
        };
        if let (Some(from), Some(to)) = (from, to) {
            self.moved(call.tid, &from, &to);
        }
    }

    /// `linkat` gives an O_TMPFILE file its name (by its descriptor with AT_EMPTY_PATH,
    /// or through /proc/self/fd/N); another link is a second name, not followed.
    pub(super) fn link(&mut self, call: &Call) {
        if call.outcome.ok() != Some(0) || call.name != "linkat" {
            return;
        }
        let from = match call.args.get(1).and_then(|a| string(a)) {
            Some(empty) if empty.is_empty() => self.path_of(call, 0),
            Some(proc) if proc.starts_with("/proc/self/fd/") => {
                let fd: i64 = proc["/proc/self/fd/".len()..].parse().unwrap_or(-1);
                self.fds.get(&(self.process_of(call.tid), fd)).map(|fd| fd.path.clone())
            }
            _ => None,
        };
        let to = self.resolve(call, Some(2), 3);
        if let (Some(from), Some(to)) = (from, to) {
            if self.files.get(&from).is_some_and(|f| f.made == Made::Unnamed) {
                self.moved(call.tid, &from, &to);
            }
        }
    }

    /// The file `from` is now `to` (renamed, or linked from no name).
    fn moved(&mut self, tid: u32, from: &str, to: &str) {
        if let Some(sequence) = &mut self.sequence {
            sequence.rename(tid, from, to);
        }
        self.directories.insert(parent(to).to_string());
        for fd in self.fds.values_mut().filter(|fd| fd.path == from) {
            fd.path = to.to_string();
        }
        let Some(mut moved) = self.files.remove(from) else { return };
        moved.renamed(from);
        match self.files.remove(to) {
            Some(mut earlier) if earlier.written() => {
                earlier.absorb(moved);
                self.files.insert(to.to_string(), earlier);
            }
            _ => {
                self.files.insert(to.to_string(), moved);
            }
        }
    }

    pub(super) fn unlink(&mut self, call: &Call) {
        if call.outcome.ok() != Some(0) {
            return;
        }
        let path = if call.name == "unlink" { self.resolve(call, None, 0) } else { self.resolve(call, Some(0), 1) };
        if let (Some(sequence), Some(path)) = (&mut self.sequence, &path) {
            sequence.unlink(call.tid, path);
        }
        if let Some(file) = path.and_then(|path| self.files.get_mut(&path)) {
            file.removed = true;
        }
    }
}
