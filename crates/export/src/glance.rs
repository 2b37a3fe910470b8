//! A goal at a glance in words (docs/answer.md, "At a glance"): the three lines every
//! output heads a goal with — what to do and its figure, how sure, the gain over the
//! naive way — formatted from the typed fields analysis drew. Nothing is decided here.

use plan::numbers::{per_second, three_digits};
use result::Recommendation;
use result::glance::{Alternative, Certainty, Glance, Shown};

/// A figure with its range: "3.16 GB/s (2.90–3.45)", "1.49 M commits/s (1.40–1.60 M)";
/// a range too wide to mean anything is said as such, with the runs it had.
pub fn figure(shown: &Shown) -> String {
    let value = value(shown.value, &shown.unit);
    match (shown.low, shown.high) {
        _ if !shown.well_measured => format!("{value} (not measured well enough: {})", runs(shown.runs)),
        (Some(low), Some(high)) => format!("{value} ({}–{})", bare(low, &shown.unit), bare(high, &shown.unit)),
        _ => format!("{value} ({})", runs(shown.runs)),
    }
}

fn runs(count: usize) -> String {
    if count == 1 { "1 run".to_string() } else { format!("{count} runs") }
}

/// "3.16 GB/s", "1.49 M commits/s".
pub fn value(value: f64, unit: &str) -> String {
    match unit {
        "bytes/s" => format!("{} GB/s", three_digits(value / 1e9)),
        other => format!("{} {other}", per_second(value)),
    }
}

/// A range's end without its unit: "2.90", "1.40 M".
fn bare(value: f64, unit: &str) -> String {
    match unit {
        "bytes/s" => three_digits(value / 1e9),
        _ => per_second(value),
    }
}

/// The lines of a recommendation at a glance: one where the goal does not apply here,
/// else two or three. None for a recommendation saved before glances were drawn.
pub fn lines(recommendation: &Recommendation) -> Option<Vec<String>> {
    let glance = recommendation.glance.as_ref()?;
    if let Some(words) = &glance.not_applicable {
        return Some(vec![words.clone()]);
    }
    let mut lines = vec![format!("{}: {}", glance.action, figure(&glance.figure))];
    lines.push(certainty(&glance.certainty, &glance.figure.unit));
    // The crash check of its promise, where the result has one, ends the last line.
    let checked = recommendation.crash_checked.as_ref().map(|c| match c.broken {
        0 => format!("crash-checked: {} simulated power losses, no broken promise", c.states),
        n => format!("warning: the crash check broke its promise in {n} of {} power losses", c.states),
    });
    match (gain(glance), checked) {
        (Some(gain), Some(checked)) => lines.push(format!("{gain}; {checked}")),
        (gain, checked) => lines.extend(gain.or(checked)),
    }
    // What undoes the figure is said with it, whatever else is cut.
    lines.extend(glance.warnings.iter().map(|w| format!("warning: {w}")));
    Some(lines)
}

fn certainty(certainty: &Certainty, unit: &str) -> String {
    let other_value = |other: &Alternative| value(other.value, unit);
    match certainty {
        Certainty::Clear { next, .. } => {
            format!("clearly the fastest: {:.2}x the next, {} ({})", next.factor, next.action, other_value(next))
        }
        Certainty::Leads { next, margin, .. } => format!(
            "the fastest; {} is within {:.0} % ({:.2}x, {}): either will do",
            next.action,
            margin * 100.0,
            next.factor,
            other_value(next)
        ),
        Certainty::AsFast { other, margin, .. } if other.factor < 1.0 => format!(
            "fastest measured: {}, {}; this one is within {:.0} % and simpler",
            other.action,
            other_value(other),
            margin * 100.0
        ),
        Certainty::AsFast { other, margin, .. } if other.high <= 1.0 + margin => format!(
            "as fast as {} ({}), within {:.0} %: either will do",
            other.action,
            other_value(other),
            margin * 100.0
        ),
        Certainty::AsFast { other, margin, .. } => format!(
            "none may be more than {:.0} % faster; the closest, {} ({}), is not shown slower",
            margin * 100.0,
            other.action,
            other_value(other)
        ),
        Certainty::NotSettled { other, up_to, settle, .. } => {
            let how = match up_to {
                Some(up_to) => format!("may be up to {:.0} % faster", 100.0 * up_to),
                // Why there is no "up to" is the settle's first words.
                None => "may be faster".to_string(),
            };
            let settle = settle.as_ref().map(|s| format!(" ({s})")).unwrap_or_default();
            format!("not settled: {} {how}{settle}", other.action)
        }
        Certainty::Alone => "the only strategy measured for this goal".to_string(),
    }
}

fn gain(glance: &Glance) -> Option<String> {
    if glance.naive_itself {
        return Some("this is the naive way: nothing faster was shown".to_string());
    }
    let naive = glance.gain.as_ref()?;
    let of = format!("{}: {}", naive.action, value(naive.value, &glance.figure.unit));
    // The factor with its interval: a bare "3.73x" reads as exact where it may be 2.2.
    Some(if naive.low > 1.0 {
        format!("{:.2}x ({:.2}–{:.2}x) faster than the naive way ({of})", naive.factor, naive.low, naive.high)
    } else if naive.high < 1.0 {
        let (factor, low, high) = (1.0 / naive.factor, 1.0 / naive.high, 1.0 / naive.low);
        format!("{factor:.2}x ({low:.2}–{high:.2}x) slower than the naive way ({of})")
    } else {
        format!("not shown faster than the naive way ({of})")
    })
}
