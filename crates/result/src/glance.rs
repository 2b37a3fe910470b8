//! The Answer's goal at a glance, as data (docs/answer.md, "At a glance"): what to do,
//! its figure, how sure, and what it gains over the naive way. Analysis fills it in;
//! the terminal, Markdown, HTML and JSON only render these fields, each in three lines
//! at most, so that every output says the same thing in the same words.

use serde::{Deserialize, Serialize};

/// One goal's recommendation in the fields its three lines are made of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Glance {
    /// What to call, with what chunk, into what kind of file, in plain words:
    /// "pwrite in 1 MiB calls into an empty file, then one fsync".
    pub action: String,
    /// The pick's figure: the one statistic every output shows for the case.
    pub figure: Shown,
    /// How sure the pick is.
    pub certainty: Certainty,
    /// Against the naive way, where the run measured it and it is not the pick itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gain: Option<Alternative>,
    /// The pick is the naive way itself.
    #[serde(default)]
    pub naive_itself: bool,
    /// Where the goal cannot be answered on this filesystem (durable goals on a
    /// filesystem that keeps its files in memory): the sentence that says why, said
    /// instead of the three lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_applicable: Option<String>,
    /// What a reader should know beside the three lines (said under them in the
    /// Markdown and HTML, and by `--explain` on the terminal).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caveats: Vec<String>,
    /// What undoes the figure, said on the goal's own lines in every output, not only
    /// among the observations: a durable figure above the device's own write rate.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A figure as every output prints it: `value` (bytes/s, or operations, commits or
/// saves per second) over the mean time, and the 95 % range of that figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shown {
    pub value: f64,
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// `bytes/s`, `ops/s`, `commits/s` or `saves/s`.
    pub unit: String,
    /// The runs (or loops) behind it.
    pub runs: usize,
    /// False where the range is too wide to mean anything (its ends more than
    /// [`WIDE_RANGE`] apart, or no upper end): printed as "not measured well enough".
    pub well_measured: bool,
}

impl Shown {
    /// A case's figure from its summary (`unit` as [`Shown::unit`]): its own range, and
    /// whether that range is narrow enough to mean anything.
    pub fn of(summary: &crate::Summary, unit: &str) -> Shown {
        let well_measured = match (summary.ci95_low, summary.ci95_high) {
            (Some(low), Some(high)) => low > 0.0 && high / low <= WIDE_RANGE,
            // One run: no range, but nothing to call badly measured either.
            (None, None) => true,
            _ => false,
        };
        Shown {
            value: summary.mean,
            low: summary.ci95_low,
            high: summary.ci95_high,
            unit: unit.to_string(),
            runs: summary.n,
            well_measured,
        }
    }
}

/// Ranges whose ends are further apart than this are not printed as figures.
pub const WIDE_RANGE: f64 = 10.0;

/// Another strategy set beside the pick: the next one, the fastest measured, or the
/// naive way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Alternative {
    pub case: String,
    /// In the same plain words as [`Glance::action`].
    pub action: String,
    /// Its figure, as [`Shown`] (the value).
    pub value: f64,
    /// Its mean time over the pick's: above 1 where the pick is faster; the 95 %
    /// interval of that factor and the p-value of the same test.
    pub factor: f64,
    pub low: f64,
    pub high: f64,
    pub p_value: f64,
    /// The lower end of the same factor's 99 % interval, which a "not settled" line's
    /// "up to" is said from: the race stops looking where the 95 % one just reaches past
    /// the margin, and there it covered the true gap too seldom (docs/racing.md). Absent
    /// in results saved before it, and where nothing was tested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low99: Option<f64>,
    /// The runs (or loops) of the other side, 0 where not known.
    #[serde(default)]
    pub runs: usize,
}

/// How sure the pick is, by the Answer's one rule against every other candidate of the
/// goal (docs/answer.md, "How sure"): each variant names the comparison the line says,
/// and `against` holds every candidate's comparison with the pick (its time over the
/// pick's, on its final runs, with the goal's pooled noise where the goal raced).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Certainty {
    /// Shown faster than every other candidate, each by more than the margin at its
    /// point estimate: `next` is the closest of them.
    Clear {
        next: Alternative,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        against: Vec<Alternative>,
    },
    /// Shown faster than every other candidate, but the closest, `next`, by less than
    /// `margin`: the pick leads, and either will do.
    Leads {
        next: Alternative,
        margin: f64,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        against: Vec<Alternative>,
    },
    /// No candidate can be more than `margin` faster than the pick (every lower end of
    /// their time over the pick's at least 1/(1 + margin)), though not every one is
    /// shown slower: `other` is the fastest measured where the pick is a simpler
    /// strategy, else the closest candidate. Either will do.
    AsFast {
        other: Alternative,
        margin: f64,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        against: Vec<Alternative>,
    },
    /// Not settled: `other`, the candidate that may gain the most, may be faster by up
    /// to `up_to` (a fraction, None where its interval is too wide to say); `settle`
    /// says what would tell.
    NotSettled {
        other: Alternative,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        up_to: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        settle: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        against: Vec<Alternative>,
    },
    /// No other candidate was measured for the goal.
    Alone,
}

impl Certainty {
    /// The verdict's name, as the JSON's `verdict` tag and `Recommendation.verdict`
    /// say it: `clear`, `leads`, `as-fast`, `not-settled`, `alone`.
    pub fn name(&self) -> &'static str {
        match self {
            Certainty::Clear { .. } => "clear",
            Certainty::Leads { .. } => "leads",
            Certainty::AsFast { .. } => "as-fast",
            Certainty::NotSettled { .. } => "not-settled",
            Certainty::Alone => "alone",
        }
    }

    /// Whether either of two strategies will do (`Recommendation.tied`): the pick leads
    /// by less than the margin, or the candidate named is shown within it both ways (a
    /// simpler pick against the fastest, or the closest whose interval stays inside
    /// 1 + margin). A candidate that may be much slower is not "either will do", though
    /// it cannot be much faster.
    pub fn either_will_do(&self) -> bool {
        match self {
            Certainty::Leads { .. } => true,
            Certainty::AsFast { other, margin, .. } => other.factor < 1.0 || other.high <= 1.0 + margin,
            _ => false,
        }
    }

    /// Every candidate's comparison with the pick.
    pub fn against(&self) -> &[Alternative] {
        match self {
            Certainty::Clear { against, .. }
            | Certainty::Leads { against, .. }
            | Certainty::AsFast { against, .. }
            | Certainty::NotSettled { against, .. } => against,
            Certainty::Alone => &[],
        }
    }
}
