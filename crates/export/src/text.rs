//! Text for a terminal: the width the table and the Answer keep to, word wrapping, and
//! colour, which only a terminal gets and `NO_COLOR` (no-color.org) turns off.

use std::io::IsTerminal;

/// Columns the terminal output keeps to: an ordinary terminal, and a Markdown code
/// block on GitHub, show 100 without wrapping.
pub const WIDTH: usize = 100;

/// Greedy word wrap; a word longer than `width` gets a line of its own.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// Whether and how to colour: decided once, for stdout, and passed to every renderer,
/// so that a pipe, a file and `NO_COLOR` all get plain text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Paint {
    on: bool,
}

impl Paint {
    pub const PLAIN: Paint = Paint { on: false };

    /// Colour when stdout is a terminal and `NO_COLOR` is unset or empty (no-color.org:
    /// "when present and not an empty string").
    pub fn for_stdout() -> Paint {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Paint { on: std::io::stdout().is_terminal() && !no_color }
    }

    /// Section headings and goal names: bold.
    pub fn heading(self, text: &str) -> String {
        self.sgr("1", text)
    }

    /// A warning beside a figure (noisy, a failed case): yellow.
    pub fn warn(self, text: &str) -> String {
        self.sgr("33", text)
    }

    /// The recommended strategy: green.
    pub fn good(self, text: &str) -> String {
        self.sgr("32", text)
    }

    fn sgr(self, code: &str, text: &str) -> String {
        if self.on && !text.is_empty() { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_string() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_keeps_words_whole_and_lines_within_the_width() {
        let text = "one two three four five six seven eight nine ten";
        let lines = wrap(text, 14);
        assert_eq!(lines, ["one two three", "four five six", "seven eight", "nine ten"]);
        assert_eq!(wrap("a-very-long-word b", 5), ["a-very-long-word", "b"]);
        assert!(wrap("", 10).is_empty());
    }

    #[test]
    fn plain_paint_leaves_text_alone_and_colour_wraps_it() {
        assert_eq!(Paint::PLAIN.heading("Answer"), "Answer");
        let on = Paint { on: true };
        assert_eq!(on.heading("Answer"), "\x1b[1mAnswer\x1b[0m");
        assert_eq!(on.warn("noisy"), "\x1b[33mnoisy\x1b[0m");
        assert_eq!(on.good(""), "", "nothing to colour, no escape codes");
    }
}
