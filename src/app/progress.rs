//! What stderr shows while the work goes on: a progress bar over the rounds' runs (with
//! the case being run), a spinner naming the calibration's step; nothing without a
//! terminal.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::rounds::scheduler::Tick;

pub(super) fn progress_bar(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{wide_bar}] {pos}/{len} runs, eta {eta}  {msg}")
            .expect("the template is valid")
            .progress_chars("=> "),
    );
    bar
}

/// Where the rounds stand, on the progress bar.
pub(super) fn show_tick(progress: &ProgressBar, tick: &Tick) {
    progress.set_length(tick.planned);
    progress.set_position(tick.done);
    let goals = tick.goals.map(|(decided, of)| format!("{decided} of {of} goals decided · ")).unwrap_or_default();
    // The goals let this case go: its run settles an observation, not a goal.
    let purpose = if tick.observing { "for the observations: " } else { "" };
    progress.set_message(format!("{goals}{purpose}{}", tick.case.id));
}

/// A spinner on a terminal (a hidden bar otherwise).
pub(super) fn spinner() -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let spinner = ProgressBar::new_spinner();
    spinner.enable_steady_tick(std::time::Duration::from_millis(120));
    spinner
}
