//! The Answer at a glance (docs/answer.md): the default run's output fits a screen or
//! two, each goal in at most three lines, one statistic for a case everywhere, no
//! figure that cannot be true, and no durable recommendation where nothing is durable.

use crate::common;

use common::{LoopFs, Tmpfs, read_json, stderr_of, writebench};

/// The quick suite, as the default run makes it, on `dir`: smaller files and a shorter
/// race than the default, so that the test takes seconds; the output's shape is the
/// default's. Its stdout and its JSON result.
fn default_run(dir: &std::path::Path, extra: &[&str]) -> (String, serde_json::Value) {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let mut args = vec!["run", dir.to_str().unwrap(), "--size", "8MiB", "--budget", "15s"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--export-json", json.to_str().unwrap()]);
    let output = writebench(&args);
    assert!(output.status.success(), "{}", stderr_of(&output));
    (String::from_utf8(output.stdout).unwrap(), read_json(&json))
}

/// The Answer's lines, from its heading to the observations.
fn answer_lines(stdout: &str) -> Vec<&str> {
    stdout.lines().skip_while(|l| *l != "## Answer").skip(1).take_while(|l| !l.starts_with("Observations")).collect()
}

/// Each goal's lines under its title (titles are the lines that do not start with a
/// space; a line the width wrapped goes on indented by four).
fn goals(stdout: &str) -> Vec<(String, Vec<String>)> {
    let mut goals: Vec<(String, Vec<String>)> = Vec::new();
    for line in answer_lines(stdout).into_iter().filter(|l| !l.is_empty()) {
        match line.strip_prefix("  ") {
            Some(more) if more.starts_with("  ") => {
                let body = &mut goals.last_mut().expect("a goal's title first").1;
                *body.last_mut().expect("a goal's line first") += &format!(" {}", more.trim_start());
            }
            Some(body) => goals.last_mut().expect("a goal's title first").1.push(body.to_string()),
            None => goals.push((line.to_string(), Vec::new())),
        }
    }
    goals
}

/// `stdout` without the Answer's "noisy" warnings (and the lines they wrap onto).
fn without_noise_warnings(stdout: &str) -> String {
    let mut kept = Vec::new();
    let mut in_warning = false;
    for line in stdout.lines() {
        if line.starts_with("  warning: noisy") {
            in_warning = true;
        } else if !(in_warning && line.starts_with("    ")) {
            in_warning = false;
            kept.push(line);
        }
    }
    kept.join("\n")
}

#[test]
fn the_noise_warnings_and_only_they_are_left_out_of_the_screen_s_count() {
    let out = "Goal:\n  pick: 1 GB/s\n  warning: noisy: its 3 runs vary by 24 % (one standard deviation): trust\n    \
               the range\n  warning: above this disk's direct write rate\n    of 1 GB/s\nNext goal:";
    assert_eq!(
        without_noise_warnings(out),
        "Goal:\n  pick: 1 GB/s\n  warning: above this disk's direct write rate\n    of 1 GB/s\nNext goal:"
    );
}

/// What every default output must be: short, each goal three lines at most (and a
/// warning or two under them where something undoes the figure), within
/// 100 columns, no ± beyond 100 % and no range whose ends are 100x apart.
fn assert_at_a_glance(stdout: &str) {
    let lines: Vec<&str> = stdout.lines().collect();
    // The screen's bounds hold for what writebench chooses to say; a goal's "noisy"
    // warning is the machine's noise (on a busy one, most goals' few runs vary by 20 %
    // or more), so it is left out of the count, and bounded by the goal's own two
    // warnings below. Counted with them, the bounds would fail whenever another program
    // keeps the machine busy.
    let steady = without_noise_warnings(stdout);
    assert!(steady.lines().count() <= 80, "{} lines:\n{stdout}", steady.lines().count());
    assert!(lines.iter().all(|l| l.chars().count() <= 100), "{stdout}");
    // Ten goals (small durable commits in place and appended, each at 8 B, 512 B and
    // 4 KiB) of three lines at most, a few of them with a warning that wraps once.
    assert!(answer_lines(&steady).len() <= 56, "{stdout}");
    for (title, body) in goals(stdout) {
        // Three lines, and under them a warning where something undoes the figure.
        let said = body.iter().filter(|line| !line.starts_with("warning: ")).count();
        assert!((1..=3).contains(&said), "{title} has {said} lines:\n{stdout}");
        assert!(body.len() - said <= 2, "{title} has {} warnings:\n{stdout}", body.len() - said);
    }
    for (at, _) in stdout.match_indices('±') {
        let number: String =
            stdout[at + '±'.len_utf8()..].chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
        if stdout[at..].trim_start_matches(|c: char| c == '±' || c.is_ascii_digit() || c == '.').starts_with(" %") {
            assert!(number.parse::<f64>().unwrap() <= 100.0, "±{number} %:\n{stdout}");
        }
    }
    // "(2.90–3.45)", "(0.85–1.19x)": ranges whose ends are at most 100x apart.
    for (at, _) in stdout.match_indices('–') {
        let before: String = stdout[..at]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        let after: String =
            stdout[at + '–'.len_utf8()..].chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
        if let (Ok(low), Ok(high)) = (before.parse::<f64>(), after.parse::<f64>()) {
            assert!(low > 0.0 && high / low <= 100.0, "{before}–{after}:\n{stdout}");
        }
    }
    assert!(stdout.contains("--table") && stdout.contains("--explain"), "where the rest is: {stdout}");
}

#[test]
fn the_default_run_on_tmpfs_is_read_at_a_glance_and_recommends_nothing_durable() {
    let fs = Tmpfs::mount("256M");
    let (stdout, result) = default_run(&fs.path(), &[]);
    assert_at_a_glance(&stdout);
    assert!(stdout.contains("note: tmpfs keeps files in memory"), "said once, in the header: {stdout}");
    assert!(!stdout.contains("## Write into"), "the table waits for --table: {stdout}");
    for (title, body) in goals(&stdout) {
        let durable = title.contains("durable") || title.contains("saves");
        if durable {
            assert_eq!(body.len(), 1, "{title}: {body:?}");
            assert!(body[0].starts_with("not applicable here: nothing on tmpfs survives a power loss"), "{body:?}");
        } else {
            assert!(body[0].contains(" GB/s ("), "{title}: {body:?}");
        }
    }
    // The JSON keeps what was measured, marked as not durable.
    for recommendation in result["answer"].as_array().unwrap() {
        let goal = recommendation["goal"].as_str().unwrap();
        let marked = recommendation["glance"]["not_applicable"].is_string();
        assert_eq!(
            marked,
            ["durable-at-end", "small-durable-commits", "small-durable-appends", "crash-safe-saves"].contains(&goal),
            "{goal}"
        );
    }
    // Every observation carries its numbers in fields.
    for observation in result["observations"].as_array().unwrap() {
        let fields = ["figures", "numbers"].iter().any(|f| observation[f].as_array().is_some_and(|a| !a.is_empty()))
            || observation["numbers"].as_object().is_some_and(|n| !n.is_empty())
            || !observation["comparison"].is_null();
        assert!(fields, "{observation}");
        if let Some(p) = observation["comparison"]["p_value"].as_f64() {
            let c = &observation["comparison"];
            let within = c["low"].as_f64().unwrap() >= 1.0 / 1.05 && c["high"].as_f64().unwrap() <= 1.05;
            assert!(p < 0.05 || within, "no effect with p ≥ 0.05 is listed: {observation}");
        }
    }
}

/// The figure the Answer gives for its pick is the figure that ranked it (a new file's
/// bytes over the mean time of its one span, preparation included: within a percent
/// of the table's writes alone for an empty file), with the range of the goal's pooled
/// noise, as the header's legend says; the table lists the case.
#[test]
fn the_answer_and_the_table_give_a_case_the_same_figure() {
    let fs = Tmpfs::mount("256M");
    let (stdout, result) = default_run(&fs.path(), &["--table"]);
    let fastest = result["answer"].as_array().unwrap().iter().find(|r| r["goal"] == "fastest").expect("fastest");
    let case = fastest["best"]["case"].as_str().unwrap();
    let shown = &fastest["glance"]["figure"];
    let value = shown["value"].as_f64().unwrap();
    let ranked = fastest["best"]["mean"].as_f64().unwrap();
    assert!((ranked - value).abs() <= 1e-6 * value, "{} against {shown}", fastest["best"]);
    let stats = &result["cases"].as_array().unwrap().iter().find(|c| c["id"] == case).unwrap()["stats"];
    if case.contains(" empty ") {
        let writes = stats["mean"].as_f64().unwrap();
        assert!((writes / value - 1.0).abs() < 0.05, "{stats} against {shown}");
    }
    // The table's line: the case without its state, then the same figure.
    let state = case.split(' ').nth(1).unwrap();
    let label = case.replacen(&format!(" {state}"), "", 1);
    let section = match state {
        "empty" => "## Write into an emptied file",
        "sparse" => "## Write into a sparsely allocated file",
        "prealloc" => "## Write into a preallocated file",
        _ => "## Write into a fully written file",
    };
    let lines: Vec<&str> = stdout.lines().skip_while(|l| *l != section).collect();
    let at = lines
        .iter()
        .position(|l| l.trim_start().starts_with(&format!("{label} ")))
        .unwrap_or_else(|| panic!("{label} in {section}:\n{stdout}"));
    // The row and its notes below it (indented further).
    let indent = |l: &str| l.len() - l.trim_start().len();
    let row: Vec<&str> = std::iter::once(lines[at])
        .chain(lines[at + 1..].iter().copied().take_while(|l| indent(l) > indent(lines[at])))
        .collect();
    // The goal's first line, with what a long action wrapped onto the next ones.
    let answer_line = goals(&stdout)
        .into_iter()
        .find(|(title, _)| title == "One big file, fastest:")
        .and_then(|(_, body)| body.into_iter().next())
        .unwrap_or_else(|| panic!("the fastest goal in {stdout}"));
    let figure = answer_line.rsplit(": ").next().unwrap().trim_end_matches(')').to_string();
    let (number, _range) = figure.split_once(" GB/s (").unwrap_or_else(|| panic!("{answer_line}"));
    let printed: f64 = number.parse().unwrap();
    assert!((printed / (value / 1e9) - 1.0).abs() < 0.01, "the Answer's {figure:?} against {value}");
    // The same number in the pick's row: its figure, or, where the writes alone read
    // otherwise, its figure as a new file in the notes.
    let row = row.join("\n");
    let as_figure = row.split_whitespace().nth(label.split(' ').count()) == Some(number);
    assert!(as_figure || row.contains(&format!("counted: {number} GB/s")), "{number} GB/s in\n{row}");
}

/// On a filesystem on a device, the durable goals are answered, with figures.
#[test]
fn on_ext4_the_durable_goals_are_answered() {
    let fs = LoopFs::make("ext4", 512);
    let (stdout, result) = default_run(&fs.path(), &[]);
    assert_at_a_glance(&stdout);
    let durable = result["answer"].as_array().unwrap().iter().find(|r| r["goal"] == "durable-at-end").expect("durable");
    assert!(durable["glance"]["not_applicable"].is_null(), "{durable}");
    let body = goals(&stdout).into_iter().find(|(t, _)| t.contains("durable at the end")).unwrap().1;
    assert!(body[0].contains(" GB/s"), "{body:?}");
}
