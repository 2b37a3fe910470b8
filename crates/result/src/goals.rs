//! The Answer's goals, one row each (docs/answer.md): the question a goal asks, the
//! figure it ranks by, whether it asks for durability, and which cases answer it. The
//! rows are in the order the Answer shows them. Analysis answers every row, the race
//! races it, and every renderer titles it from here: a new goal is one row.

use crate::metric::Metric;
use plan::durability::Commit;
use plan::{Case, Durability, FileState};

/// One goal of the Answer.
#[derive(Debug, Clone, Copy)]
pub struct Goal {
    /// What its recommendation carries (`fastest`, `small-durable-commits`).
    pub key: &'static str,
    /// The question it answers, as every report titles it.
    pub title: &'static str,
    /// The figure its candidates are ranked by.
    pub metric: Metric,
    /// Whether it asks that the data survive a power loss: a filesystem that keeps its
    /// files in memory cannot answer it.
    pub durable: bool,
    /// Who writes: one writer, threads of one process, or MPI ranks.
    pub writers: Writers,
    /// Which cases answer it.
    pub answered_by: AnsweredBy,
}

/// Who writes a goal's file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writers {
    One,
    Threads,
    Ranks,
}

/// The cases that answer a goal.
#[derive(Debug, Clone, Copy)]
pub enum AnsweredBy {
    /// Throughput cases for which this holds.
    Throughput(fn(&Case) -> bool),
    /// Latency loops of small durable commits, per record size: rewriting a record in
    /// place, or appending (a log).
    Commits { appends: bool },
    /// Latency loops of crash-safe saves of a whole file, per file size.
    Saves,
}

/// Every thread of every MPI rank: one rank's single thread into a shared file is one
/// writer of many, not a program writing its file alone.
pub fn writers(case: &Case) -> u32 {
    case.threads * case.ranks.unwrap_or(1)
}

/// MPI ranks writing the case together (1 without `--mpi`).
fn ranks(case: &Case) -> u32 {
    case.ranks.unwrap_or(1)
}

/// Modes whose buffered figure is the write alone: the page cache, or one sync after.
pub fn buffered_alone(durability: Durability) -> bool {
    matches!(durability.commit, Commit::None | Commit::End(_))
}

/// A file that was fully written before: no strategy for a new file.
fn rewrite(case: &Case) -> bool {
    case.state == FileState::Overwrite
}

/// The goals, in the Answer's order.
pub const GOALS: [Goal; 8] = [
    Goal {
        key: "fastest",
        title: "One big file, fastest",
        metric: Metric::NewFile,
        durable: false,
        writers: Writers::One,
        answered_by: AnsweredBy::Throughput(|c| {
            writers(c) == 1 && c.files == 1 && buffered_alone(c.durability) && !rewrite(c)
        }),
    },
    Goal {
        key: "durable-at-end",
        title: "One big file, durable at the end",
        metric: Metric::NewFileDurable,
        durable: true,
        writers: Writers::One,
        answered_by: AnsweredBy::Throughput(|c| writers(c) == 1 && c.files == 1 && !rewrite(c)),
    },
    Goal {
        key: "small-durable-commits",
        title: "Small durable commits, rewriting in place",
        metric: Metric::Commits,
        durable: true,
        writers: Writers::One,
        answered_by: AnsweredBy::Commits { appends: false },
    },
    Goal {
        key: "small-durable-appends",
        title: "Small durable commits, appending (a log)",
        metric: Metric::Commits,
        durable: true,
        writers: Writers::One,
        answered_by: AnsweredBy::Commits { appends: true },
    },
    Goal {
        key: "crash-safe-saves",
        title: "Crash-safe saves of a whole file",
        metric: Metric::Saves,
        durable: true,
        writers: Writers::One,
        answered_by: AnsweredBy::Saves,
    },
    Goal {
        key: "threads-one-file",
        title: "Many threads producing one file",
        metric: Metric::NewFile,
        durable: false,
        writers: Writers::Threads,
        answered_by: AnsweredBy::Throughput(|c| {
            ranks(c) == 1 && writers(c) > 1 && c.files == 1 && buffered_alone(c.durability) && !rewrite(c)
        }),
    },
    // A job's ranks produce one dataset: one shared file (N-1), or a file each (N-N),
    // set side by side by the job's own figure, the ranks' bytes over the earliest
    // rank's start to the last rank's end (docs/scale.md). Fewer files is simpler.
    Goal {
        key: "ranks-one-file",
        title: "Many ranks producing one file",
        metric: Metric::NewFile,
        durable: false,
        writers: Writers::Ranks,
        answered_by: AnsweredBy::Throughput(|c| ranks(c) > 1 && buffered_alone(c.durability) && !rewrite(c)),
    },
    Goal {
        key: "rewrite-in-place",
        title: "Rewriting a file in place",
        metric: Metric::Buffered,
        durable: false,
        writers: Writers::One,
        answered_by: AnsweredBy::Throughput(|c| {
            writers(c) == 1 && c.files == 1 && buffered_alone(c.durability) && rewrite(c)
        }),
    },
];

/// The goal whose key is `key`.
pub fn by_key(key: &str) -> Option<&'static Goal> {
    GOALS.iter().find(|goal| goal.key == key)
}

/// The goal of small durable commits: appending (a log), or rewriting in place.
pub fn of_commits(appends: bool) -> &'static Goal {
    let commits = |goal: &&Goal| matches!(goal.answered_by, AnsweredBy::Commits { appends: a } if a == appends);
    GOALS.iter().find(commits).expect("both commit goals are rows")
}

/// The goal of crash-safe saves.
pub fn of_saves() -> &'static Goal {
    GOALS.iter().find(|goal| matches!(goal.answered_by, AnsweredBy::Saves)).expect("the saves goal is a row")
}

impl Goal {
    /// Whether a throughput case answers it (never a latency goal's loop).
    pub fn answers(&self, case: &Case) -> bool {
        matches!(self.answered_by, AnsweredBy::Throughput(answers) if answers(case))
    }

    /// A goal for a new file of one process, whose figure counts the file's
    /// preparation: its pick may have a twin in the other file state, and a big file
    /// of it goes through the page cache's dirty limit.
    pub fn new_file(&self) -> bool {
        matches!(self.metric, Metric::NewFile | Metric::NewFileDurable) && self.writers != Writers::Ranks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_one_goal_and_latency_goals_answer_no_throughput_case() {
        for goal in &GOALS {
            assert_eq!(GOALS.iter().filter(|other| other.key == goal.key).count(), 1, "{}", goal.key);
        }
        let pwrite = plan::catalog::by_name("pwrite").unwrap();
        let case = Case::new(pwrite, FileState::Empty, 1 << 20, 1, Durability::None, 1 << 30);
        let answering: Vec<&str> = GOALS.iter().filter(|g| g.answers(&case)).map(|g| g.key).collect();
        assert_eq!(answering, ["fastest", "durable-at-end"]);
        let new_file: Vec<&str> = GOALS.iter().filter(|g| g.new_file()).map(|g| g.key).collect();
        assert_eq!(new_file, ["fastest", "durable-at-end", "threads-one-file"]);
    }
}
