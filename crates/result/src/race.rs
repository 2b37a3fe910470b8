//! How the rounds raced the cases (docs/racing.md), as plain data: why each case stopped
//! getting runs, and where each goal of the Answer stood when the rounds ended.

use serde::{Deserialize, Serialize};

/// Why a raced case got no more runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Exit {
    /// Shown slower than the leader of every goal it competed for.
    Slower,
    /// Every goal it competed for was decided (won, or tied among the rest).
    Decided,
    /// It competes for no goal of the Answer: it got the runs every case gets.
    NoGoal,
    /// The time budget ran out while a goal it competed for was still open.
    Budget,
    /// It reached the most runs a case gets (`--max-runs`) while a goal was still open.
    MaxRuns,
}

impl Exit {
    pub fn name(self) -> &'static str {
        match self {
            Exit::Slower => "slower",
            Exit::Decided => "decided",
            Exit::NoGoal => "no-goal",
            Exit::Budget => "budget",
            Exit::MaxRuns => "max-runs",
        }
    }
}

/// How many times slower a case was than a goal's leader when it left that goal's race:
/// the ratio of mean times, its 95 % interval and p, corrected (Holm) over the goal's
/// candidates in that round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Behind {
    pub goal: String,
    pub leader: String,
    pub factor: f64,
    pub low: f64,
    pub high: f64,
    pub p_value: f64,
}

/// One case's part in the race.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseRace {
    /// Its measured runs when the Answer's goals let it go: all of them, but for the
    /// runs it got after that for the observations (`observed`).
    pub runs: u32,
    /// The round after which the Answer's goals needed no more runs of it (rounds count
    /// warm-ups, as `Run::round`).
    pub round: u32,
    pub exit: Exit,
    /// For `slower`: the goal it was furthest behind in, and by how much.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behind: Option<Behind>,
    /// Runs it got after that, for observations not yet settled, once no goal needed
    /// the rounds (docs/racing.md, "The observations").
    #[serde(default, skip_serializing_if = "is_zero")]
    pub observed: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Where one goal stood when the rounds ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Decision {
    /// One candidate was left.
    Won,
    /// The candidates left were equivalent to the leader within the margin.
    Tied,
    /// The Answer's pick is settled: every candidate of the goal, left or dropped, is
    /// shown slower than it or cannot be more than the margin faster, by the Answer's
    /// own test (docs/racing.md, "A race that can end").
    Settled,
    /// Neither, when the budget or the most runs a case gets ran out.
    Undecided,
}

/// A candidate still in a goal's race at the end, against the leader: mean time over the
/// leader's, with its corrected interval (absent for the leader, and for a case with
/// one run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Left {
    pub case: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factor: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GoalRace {
    /// The goal's key, as its recommendation carries it.
    pub goal: String,
    /// The write size of a latency goal (small commits, saves), which has one race per size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    pub decision: Decision,
    /// The round after which it was decided; absent when undecided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// Seconds from the start of the command (its budget's start) to that round's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
    pub candidates: u32,
    /// The candidates still in its race, the leader first.
    pub left: Vec<Left>,
}

/// The race as a whole (`options` holds the budget and the runs asked for).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RaceReport {
    /// The time budget (`--budget`), counted from the start of the command; absent
    /// without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_seconds: Option<f64>,
    /// Seconds from the start of the command to the end of the last round.
    pub seconds: f64,
    /// Rounds made, warm-ups included.
    pub rounds: u32,
    /// Whether the budget stopped the rounds while a goal was still open.
    pub out_of_budget: bool,
    pub goals: Vec<GoalRace>,
}
