//! One line of strace's log read into a call (docs/trace.md): its thread, time, name,
//! arguments split at their top-level commas, result and duration. strace writes a call
//! another thread interrupted as `NAME(args <unfinished ...>` and its end later as
//! `<... NAME resumed>rest`: the first part is held per thread and read whole with the
//! second. Logs of `-f -yy -ttt -T` (what `trace` runs) are read, and also those without
//! the thread (`-p` of one thread), with `[pid N]` (strace writing to its stderr), with
//! `-tt` times or none.

use std::collections::HashMap;

/// A system call as strace wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The thread that made it (0 when the log does not say).
    pub tid: u32,
    /// Seconds since the epoch (-ttt) or since midnight (-tt).
    pub time: Option<f64>,
    pub name: String,
    /// The arguments as strace printed them, split at top-level commas and trimmed.
    pub args: Vec<String>,
    pub outcome: Outcome,
    /// Time inside the call (-T).
    pub seconds: Option<f64>,
}

/// What a call returned.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Its value, with the path strace's -yy gave a returned descriptor.
    Value(i64, Option<String>),
    /// -1 and the error's name (ENOENT).
    Failed(String),
    /// `= ?`: the call did not return (exit, execve of another thread).
    Unknown,
}

impl Outcome {
    /// The value of a call that succeeded.
    pub fn ok(&self) -> Option<i64> {
        match self {
            Outcome::Value(value, _) => Some(*value),
            _ => None,
        }
    }
}

/// A line of the log that matters.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Call(Call),
    /// `+++ exited with N +++` or `+++ killed by SIG +++` of a thread group's leader.
    Exit {
        tid: u32,
        status: String,
    },
}

/// Reads a log line by line, joining interrupted calls.
#[derive(Debug, Default)]
pub struct Reader {
    held: HashMap<u32, (Option<f64>, String)>,
}

impl Reader {
    /// The event of one line; None for a line that is no call (a signal, an interrupted
    /// call's first part, a line strace itself wrote).
    pub fn line(&mut self, line: &str) -> Option<Event> {
        let (tid, rest) = thread(line.trim_end());
        let (time, rest) = timestamp(rest);
        if let Some(status) = rest.strip_prefix("+++ ").and_then(|s| s.strip_suffix(" +++")) {
            return Some(Event::Exit { tid, status: status.to_string() });
        }
        if rest.starts_with("---") {
            return None;
        }
        if let Some(first) = rest.strip_suffix("<unfinished ...>") {
            self.held.insert(tid, (time, first.trim_end().to_string()));
            return None;
        }
        let whole;
        let mut time = time;
        let text = match rest.strip_prefix("<... ") {
            Some(resumed) => {
                let (_, after) = resumed.split_once(" resumed>")?;
                let (started, first) = self.held.remove(&tid)?;
                time = started.or(time);
                // The first part ends after an argument's comma ("read(3, ") or at the
                // open parenthesis; the rest starts with the next argument or ')'.
                whole = if first.ends_with(',') {
                    format!("{first} {}", after.trim_start())
                } else {
                    format!("{first}{after}")
                };
                whole.as_str()
            }
            None => rest,
        };
        call(tid, time, text).map(Event::Call)
    }
}

/// The thread at the start of a line: `8435  …` (-f -o), `[pid  8435] …` (-f to stderr).
fn thread(line: &str) -> (u32, &str) {
    if let Some(rest) = line.strip_prefix("[pid") {
        if let Some((pid, rest)) = rest.trim_start().split_once(']') {
            return (pid.trim().parse().unwrap_or(0), rest.trim_start());
        }
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && line[digits..].starts_with([' ', '\t']) && !line[digits..].trim_start().starts_with('.') {
        // A leading number followed by a time or a call name is the thread; a time
        // alone (-ttt without -f) has a '.' right after its digits, not a space.
        return (line[..digits].parse().unwrap_or(0), line[digits..].trim_start());
    }
    (0, line)
}

/// The time at the start of what is left: `1796513495.238748` or `23:31:35.238748`.
fn timestamp(rest: &str) -> (Option<f64>, &str) {
    let end = rest.find(' ').unwrap_or(0);
    let word = &rest[..end];
    if word.is_empty() || !word.bytes().all(|b| b.is_ascii_digit() || b == b'.' || b == b':') {
        return (None, rest);
    }
    let seconds = if word.contains(':') {
        let mut total = 0.0;
        for part in word.split(':') {
            total = total * 60.0 + part.parse::<f64>().unwrap_or(0.0);
        }
        Some(total)
    } else {
        word.parse().ok()
    };
    (seconds, rest[end..].trim_start())
}

/// `NAME(ARGS) = RESULT <SECONDS>`.
fn call(tid: u32, time: Option<f64>, text: &str) -> Option<Call> {
    let open = text.find('(')?;
    let name = &text[..open];
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    let close = matching(text, open)?;
    let args = split(&text[open + 1..close]);
    let after = text[close + 1..].trim_start();
    let after = after.strip_prefix('=')?.trim_start();
    let (after, seconds) = match after.rfind(" <") {
        Some(at) if after.ends_with('>') => {
            let inside = &after[at + 2..after.len() - 1];
            match inside.parse::<f64>() {
                Ok(seconds) => (after[..at].trim_end(), Some(seconds)),
                Err(_) => (after, None),
            }
        }
        _ => (after, None),
    };
    Some(Call { tid, time, name: name.to_string(), args, outcome: outcome(after), seconds })
}

/// `3</tmp/x>`, `-1 ENOENT (No such file or directory)`, `0x7f…`, `?`, `0 (Timeout)`.
fn outcome(text: &str) -> Outcome {
    if text.starts_with('?') {
        return Outcome::Unknown;
    }
    if let Some(rest) = text.strip_prefix("-1 ") {
        if let Some(name) = rest.split_whitespace().next().filter(|n| n.starts_with('E')) {
            return Outcome::Failed(name.to_string());
        }
    }
    // The value, with its -yy note whole: a path may hold spaces ("/a/b (deleted)").
    let token_end = match text.find(['<', ' ']) {
        Some(at) if text[at..].starts_with('<') => {
            let mut depth = 0;
            let close = text[at..].char_indices().find(|&(_, c)| {
                match c {
                    '<' => depth += 1,
                    '>' => depth -= 1,
                    _ => {}
                }
                depth == 0
            });
            close.map_or(text.len(), |(i, _)| at + i + 1)
        }
        Some(at) => at,
        None => text.len(),
    };
    let (value, annotation) = descriptor(&text[..token_end]);
    match number(value) {
        Some(value) => Outcome::Value(value, annotation),
        None => Outcome::Unknown,
    }
}

/// An integer as strace prints it: decimal, or hexadecimal with 0x.
pub fn number(text: &str) -> Option<i64> {
    let text = text.trim();
    match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok().map(|v| v as i64),
        None => text.parse().ok(),
    }
}

/// A descriptor argument and the path -yy gave it: `3</tmp/x>` is ("3", "/tmp/x"),
/// `AT_FDCWD</tmp>` ("AT_FDCWD", "/tmp"); a device's own note (`</dev/null<char 1:3>>`)
/// is dropped, and the path's escapes read.
pub fn descriptor(text: &str) -> (&str, Option<String>) {
    let Some(open) = text.find('<') else { return (text, None) };
    if !text.ends_with('>') {
        return (text, None);
    }
    let inside = &text[open + 1..text.len() - 1];
    let path = match inside.find('<') {
        Some(inner) => &inside[..inner],
        None => inside,
    };
    (&text[..open], Some(unescape(path)))
}

/// A quoted string argument (`"data.bin"`) read; None for one that is not a string.
pub fn string(text: &str) -> Option<String> {
    let inner = text.strip_prefix('"')?;
    let inner = inner.strip_suffix("\"...").or_else(|| inner.strip_suffix('"'))?;
    Some(unescape(inner))
}

/// C escapes as strace writes them: \n, \t, \\, \", \xHH, octal.
fn unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' || i + 1 == bytes.len() {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        let next = bytes[i + 1];
        i += 2;
        match next {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'v' => out.push(0x0b),
            b'f' => out.push(0x0c),
            b'x' => {
                let hex: String =
                    bytes[i..].iter().take(2).take_while(|b| b.is_ascii_hexdigit()).map(|&b| b as char).collect();
                out.push(u8::from_str_radix(&hex, 16).unwrap_or(b'?'));
                i += hex.len();
            }
            b'0'..=b'7' => {
                let mut value = u32::from(next - b'0');
                let mut taken = 0;
                while taken < 2 && i < bytes.len() && (b'0'..=b'7').contains(&bytes[i]) {
                    value = value * 8 + u32::from(bytes[i] - b'0');
                    i += 1;
                    taken += 1;
                }
                out.push(value as u8);
            }
            other => out.push(other),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Where the bracket opened at `open` closes, past strings, -yy notes and nested
/// brackets.
fn matching(text: &str, open: usize) -> Option<usize> {
    let mut scan = Scan::default();
    for (i, c) in text.char_indices().skip_while(|(i, _)| *i < open) {
        if scan.step(c) && scan.depth == 0 && i > open {
            return Some(i);
        }
    }
    None
}

/// The top-level comma-separated parts of an argument list.
pub fn split(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut scan = Scan::default();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        scan.step(c);
        if c == ',' && scan.depth == 0 && scan.plain() {
            parts.push(text[start..i].trim().to_string());
            start = i + 1;
        }
    }
    let last = text[start..].trim();
    if !last.is_empty() || !parts.is_empty() {
        parts.push(last.to_string());
    }
    parts
}

/// Where a scan of strace's text is: inside a string, a -yy note, brackets.
#[derive(Default)]
struct Scan {
    depth: usize,
    quoted: bool,
    escaped: bool,
    note: usize,
    previous: char,
}

impl Scan {
    fn plain(&self) -> bool {
        !self.quoted && self.note == 0
    }

    /// Moves over `c`; true when it closed a bracket.
    fn step(&mut self, c: char) -> bool {
        let previous = std::mem::replace(&mut self.previous, c);
        if self.quoted {
            match (self.escaped, c) {
                (true, _) => self.escaped = false,
                (false, '\\') => self.escaped = true,
                (false, '"') => self.quoted = false,
                _ => {}
            }
            return false;
        }
        if self.note > 0 {
            // A path's own '<' and '>' are escaped by strace; a device's note nests.
            match c {
                '<' => self.note += 1,
                '>' => self.note -= 1,
                _ => {}
            }
            return false;
        }
        match c {
            '"' => self.quoted = true,
            '<' if previous.is_ascii_alphanumeric() => self.note = 1,
            '(' | '[' | '{' => self.depth += 1,
            ')' | ']' | '}' => {
                self.depth = self.depth.saturating_sub(1);
                return true;
            }
            _ => {}
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn only_call(line: &str) -> Call {
        match Reader::default().line(line) {
            Some(Event::Call(call)) => call,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn a_call_is_read_with_its_thread_time_arguments_result_and_duration() {
        let call = only_call(
            "8435  1796513495.239434 openat(AT_FDCWD</tmp/st>, \"log.txt\", O_WRONLY|O_CREAT|O_APPEND|O_CLOEXEC, 0666) = \
             3</tmp/st/log.txt> <0.000075>",
        );
        assert_eq!(call.tid, 8435);
        assert_eq!(call.time, Some(1796513495.239434));
        assert_eq!(call.name, "openat");
        assert_eq!(call.args, ["AT_FDCWD</tmp/st>", "\"log.txt\"", "O_WRONLY|O_CREAT|O_APPEND|O_CLOEXEC", "0666"]);
        assert_eq!(call.outcome, Outcome::Value(3, Some("/tmp/st/log.txt".into())));
        assert_eq!(call.seconds, Some(0.000075));
        assert_eq!(descriptor(&call.args[0]), ("AT_FDCWD", Some("/tmp/st".into())));
        assert_eq!(string(&call.args[1]).as_deref(), Some("log.txt"));
    }

    #[test]
    fn failures_vectors_and_nested_braces_are_read() {
        let failed =
            only_call("1 1.5 openat(AT_FDCWD</>, \"/x\", O_RDONLY) = -1 ENOENT (No such file or directory) <0.000010>");
        assert_eq!(failed.outcome, Outcome::Failed("ENOENT".into()));
        let writev = only_call(
            "7 2.0 writev(3</tmp/a,b (x)>, [{iov_base=\"\"..., iov_len=10}, {iov_base=\"\"..., iov_len=20}], 2) = 30 <0.000036>",
        );
        assert_eq!(writev.args.len(), 3, "{:?}", writev.args);
        assert_eq!(
            descriptor(&writev.args[0]).1.as_deref(),
            Some("/tmp/a,b (x)"),
            "a comma inside a path is no argument's end"
        );
        assert_eq!(writev.outcome.ok(), Some(30));
        let clone3 = only_call(
            "11059 1.0 clone3({flags=CLONE_VM|CLONE_THREAD, child_tid=0x7f, exit_signal=0} => {parent_tid=[11172]}, 88) = 11172 <0.000133>",
        );
        assert_eq!(clone3.args.len(), 2);
        assert_eq!(clone3.outcome.ok(), Some(11172));
        let deleted =
            only_call("5 1.0 openat(AT_FDCWD</w>, \"/w\", O_RDWR|O_TMPFILE, 0600) = 3</w/#12 (deleted)> <0.00001>");
        assert_eq!(deleted.outcome, Outcome::Value(3, Some("/w/#12 (deleted)".into())));
        let null = only_call("5 1.0 write(1</dev/null<char 1:3>>, \"\"..., 12) = 12 <0.000001>");
        assert_eq!(descriptor(&null.args[0]).1.as_deref(), Some("/dev/null"));
        let escaped = only_call("5 1.0 write(4</tmp/a\\x3eb\\x3cc>, \"\"..., 1) = 1 <0.000001>");
        assert_eq!(descriptor(&escaped.args[0]).1.as_deref(), Some("/tmp/a>b<c"));
    }

    #[test]
    fn an_interrupted_call_is_read_whole_at_its_end() {
        let mut reader = Reader::default();
        assert_eq!(reader.line("11065 1.0 close(255</x> <unfinished ...>"), None);
        assert_eq!(reader.line("11059 1.1 read(4</y>,  <unfinished ...>"), None);
        let Some(Event::Call(close)) = reader.line("11065 1.2 <... close resumed>) = 0 <0.000037>") else { panic!() };
        assert_eq!(
            (close.name.as_str(), close.args.as_slice(), close.outcome.ok()),
            ("close", &["255</x>".to_string()][..], Some(0))
        );
        let Some(Event::Call(read)) = reader.line("11059 1.3 <... read resumed>\"\"..., 4096) = 382 <0.1>") else {
            panic!()
        };
        assert_eq!(read.args, ["4</y>", "\"\"...", "4096"]);
        assert_eq!(read.time, Some(1.1), "the call's time is when it started");
        assert_eq!(reader.line("11060 1.4 <... write resumed>) = 1"), None, "an end without its start is no call");
    }

    #[test]
    fn exits_signals_and_other_log_forms() {
        let mut reader = Reader::default();
        assert_eq!(
            reader.line("8435  1.0 +++ exited with 0 +++"),
            Some(Event::Exit { tid: 8435, status: "exited with 0".into() })
        );
        assert_eq!(reader.line("8435  1.0 --- SIGCHLD {si_signo=SIGCHLD} ---"), None);
        let Some(Event::Call(plain)) = reader.line("fsync(3) = 0") else { panic!() };
        assert_eq!((plain.tid, plain.time, plain.seconds), (0, None, None));
        let Some(Event::Call(bracketed)) = reader.line("[pid  4242] 12:00:01.500000 fsync(3</f>) = 0 <0.001>") else {
            panic!()
        };
        assert_eq!((bracketed.tid, bracketed.time), (4242, Some(43201.5)));
        let Some(Event::Call(timed)) = reader.line("1796513495.5 exit_group(0) = ?") else { panic!() };
        assert_eq!((timed.tid, timed.outcome), (0, Outcome::Unknown));
    }

    #[test]
    fn strings_are_unescaped() {
        assert_eq!(string("\"a\\nb\\\"c\\\\d\\x41\\101\"").as_deref(), Some("a\nb\"c\\dAA"));
        assert_eq!(string("\"abc\"...").as_deref(), Some("abc"));
        assert_eq!(string("NULL"), None);
        assert_eq!(number("0x10"), Some(16));
        assert_eq!(split(""), Vec::<String>::new());
    }
}
