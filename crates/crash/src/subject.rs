//! What a crash check records (docs/crash.md): one of writebench's own workloads, whose
//! promises it states and checks itself, or the user's program (`--run`), whose promises
//! are its lines and whose checker (`--check`) judges each state.

use super::program::Program;
use super::workloads::Workload;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    Workload(Workload),
    Program(Program),
}

impl Subject {
    /// The name in the table's workload column and the JSON: the workload's, or `run`.
    pub fn name(&self) -> &str {
        match self {
            Subject::Workload(workload) => &workload.name,
            Subject::Program(_) => "run",
        }
    }

    /// What the progress lines and errors call it: the workload's name, or the command.
    pub fn shown(&self) -> String {
        match self {
            Subject::Workload(workload) => workload.name.clone(),
            Subject::Program(program) => program.label.clone().unwrap_or_else(|| format!("`{}`", program.run)),
        }
    }
}
