//! The y/N question `clean` asks before it removes anything (docs/design.md §6): on the
//! terminal, never on a pipe, and not at all with `--yes`.

use std::io::{BufRead, IsTerminal, Write};

/// The confirmation `clean` hands down to `measure::clean` and `lab::leftovers`, called
/// with the question and what stays listed (for the refusal where there is no terminal
/// to ask on): a yes without asking with `--yes` (`yes`), else the question on the
/// terminal ([`confirmed`]).
pub fn unless_yes(yes: bool) -> impl FnMut(&str, &str) -> Result<bool, String> {
    move |question, listed| if yes { Ok(true) } else { confirmed(question, listed) }
}

/// Asks `question` on the terminal: true for a yes. Without a terminal to ask on (stdin
/// or stderr redirected) nothing is asked, and the error says what `listed` was left.
pub fn confirmed(question: &str, listed: &str) -> Result<bool, String> {
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Err(format!("{listed}: confirm on a terminal or pass --yes"));
    }
    eprint!("{question}");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    Ok(matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes"))
}
