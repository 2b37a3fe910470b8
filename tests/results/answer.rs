//! `writebench run` ends with the Answer: recommendations that name cases of the result,
//! observations with their figures, both stored in the JSON as printed (the sentences
//! with `--explain`); `--quiet` prints the Answer alone.

use crate::common;

use std::collections::HashSet;

use common::{Tmpfs, read_json, stderr_of, writebench};

/// The words of a text, so that a wrapped paragraph compares with its one-line source.
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn a_quick_run_ends_with_an_answer_whose_cases_exist() {
    let fs = Tmpfs::mount("256M");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("q.json");
    // The quick suite, small: every goal and its latency section, in seconds.
    let output = writebench(&[
        "run",
        "--table",
        "--explain",
        fs.path().to_str().unwrap(),
        "--size",
        "4MiB",
        "--repeat",
        "5",
        "--export-json",
        json.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    let result = read_json(&json);
    let ids: HashSet<&str> = result["cases"].as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();

    // The table first, the Answer last.
    let at = stdout.find("\n## Answer\n").unwrap_or_else(|| panic!("no Answer in:\n{stdout}"));
    let (table, answer) = stdout.split_at(at);
    assert!(table.contains("## Write into an emptied file"), "{table}");
    assert!(!answer.contains("\n## Write into"), "the Answer is the last section:\n{answer}");

    let recommendations = result["answer"].as_array().unwrap();
    let goals: Vec<&str> = recommendations.iter().map(|r| r["goal"].as_str().unwrap()).collect();
    assert_eq!(
        goals,
        [
            "fastest",
            "durable-at-end",
            "small-durable-commits",
            "small-durable-commits",
            "small-durable-commits",
            "small-durable-appends",
            "small-durable-appends",
            "small-durable-appends",
            "threads-one-file",
            "rewrite-in-place"
        ],
        "{answer}"
    );
    for recommendation in recommendations {
        let best = recommendation["best"]["case"].as_str().unwrap();
        assert!(ids.contains(best), "{best} is no case of the result");
        let text = recommendation["text"].as_str().unwrap();
        assert!(text.contains(best), "{text}");
        // A goal not applicable here is said once on the terminal, whatever its record
        // sizes: one of its sizes' sentences is printed.
        let printed = |text: &str| words(answer).contains(&words(text));
        let goal = &recommendation["goal"];
        let not_applicable = |r: &serde_json::Value| !r["glance"]["not_applicable"].is_null();
        if not_applicable(recommendation) {
            let siblings = recommendations.iter().filter(|r| r["goal"] == *goal && not_applicable(r));
            assert!(siblings.clone().any(|r| printed(r["text"].as_str().unwrap())), "{goal} not printed in:\n{answer}");
        } else {
            assert!(printed(text), "{text} not printed in:\n{answer}");
        }
        for against in ["runner_up", "naive"] {
            for side in ["better", "baseline"] {
                if let Some(case) = recommendation[against][side].as_str() {
                    assert!(ids.contains(case), "{against}.{side} {case} is no case of the result");
                }
            }
        }
    }

    let observations = result["observations"].as_array().unwrap();
    assert!(!observations.is_empty(), "{answer}");
    // Each names every dimension its cases differ in (queue depth, layout, …): no two
    // observations read the same.
    let texts: std::collections::HashSet<&str> = observations.iter().map(|o| o["text"].as_str().unwrap()).collect();
    assert_eq!(texts.len(), observations.len(), "{answer}");
    // Corrected over every test behind them, the count said once above them.
    let tests = result["observation_tests"].as_u64().expect("the count of tests");
    let with_comparison = observations.iter().filter(|o| !o["comparison"].is_null()).count() as u64;
    assert!(tests >= with_comparison, "{tests} tests, {with_comparison} comparisons");
    for observation in observations {
        let figures = observation["figures"].as_array().unwrap();
        // Its numbers: the figures of its cases, or (for a line about the run as a whole)
        // the numbers it states, by name.
        let numbers = observation["numbers"].as_object().is_some_and(|n| !n.is_empty());
        assert!(!figures.is_empty() || numbers, "{observation}");
        for figure in figures {
            assert!(ids.contains(figure["case"].as_str().unwrap()), "{figure}");
            assert!(figure["median"].as_f64().unwrap() > 0.0, "{figure}");
        }
    }
    // Each printed observation: its "  - " line and the lines wrapped under it.
    let mut printed: Vec<String> = Vec::new();
    for line in answer.lines().skip_while(|line| !line.starts_with("Observations")).skip(1) {
        match (line.strip_prefix("  - "), line.strip_prefix("    "), printed.last_mut()) {
            (Some(first), _, _) => printed.push(first.to_string()),
            (None, Some(more), Some(last)) => *last += &format!(" {more}"),
            _ => break,
        }
    }
    assert_eq!(printed.len(), observations.len().min(5), "{answer}");
    for (line, observation) in printed.iter().zip(observations) {
        assert_eq!(line, observation["text"].as_str().unwrap(), "in the stored order");
    }
    assert!(answer.lines().all(|line| line.chars().count() <= 100), "{answer}");

    // One estimator per comparison: each stored comparison is significant exactly when
    // its interval excludes 1, and each factor printed beside two figures is their ratio.
    let mut comparisons: Vec<&serde_json::Value> = Vec::new();
    for recommendation in recommendations {
        comparisons.extend(["runner_up", "naive"].iter().map(|key| &recommendation[*key]).filter(|c| !c.is_null()));
    }
    comparisons.extend(observations.iter().map(|o| &o["comparison"]).filter(|c| !c.is_null()));
    assert!(comparisons.len() > 5, "{answer}");
    for comparison in comparisons {
        let (low, high) = (comparison["low"].as_f64().unwrap(), comparison["high"].as_f64().unwrap());
        let excludes = low > 1.0 || high < 1.0;
        assert_eq!(comparison["significant"].as_bool().unwrap(), excludes, "{comparison}");
        assert_eq!(comparison["p_value"].as_f64().unwrap() < 0.05, excludes, "{comparison}");
    }
    let texts = recommendations.iter().chain(observations).map(|r| r["text"].as_str().unwrap());
    let mut checked = 0;
    for text in texts {
        checked += factors_match_their_figures(text);
    }
    assert!(checked >= 3, "few factors beside figures were checked: {checked}\n{answer}");
}

/// Every "a → b GB/s" (or "a M → b M commits/s") of `text` against the factor its sentence gives (the first factor
/// of its clause, or of the clause before; the larger end of a range "1.10–1.60x"):
/// equal within the rounding of the three numbers. Returns how many were checked.
fn factors_match_their_figures(text: &str) -> usize {
    // "2,004" is two thousand and four: figures of a thousand and more are grouped.
    let number = |token: &str| {
        token.trim_matches(|c: char| !c.is_ascii_digit() && c != '.').replace(',', "").parse::<f64>().ok()
    };
    let factor_of = |clause: &str| {
        clause.split_whitespace().find_map(|token| {
            let token = token.trim_start_matches('(').trim_end_matches(',');
            let value = token.strip_suffix('x')?;
            value.split('–').filter_map(number).reduce(f64::max)
        })
    };
    let clauses: Vec<&str> = text.split("; ").collect();
    let mut checked = 0;
    for (index, clause) in clauses.iter().enumerate() {
        let Some(at) = clause.find(" → ") else { continue };
        // Rates of a thousand and more may be scaled: "1.14 M → 1.29 M commits/s".
        let scaled = |value: Option<f64>, unit: Option<&str>| match unit {
            Some("k") => value.map(|v| v * 1e3),
            Some("M") => value.map(|v| v * 1e6),
            _ => value,
        };
        let mut left = clause[..at].split_whitespace().rev();
        let before = match left.next() {
            Some(unit @ ("k" | "M")) => scaled(left.next().and_then(number), Some(unit)),
            token => token.and_then(number),
        };
        let mut right = clause[at + " → ".len()..].split_whitespace();
        let after = right.next().and_then(number);
        let after = scaled(after, right.next());
        let (Some(before), Some(after)) = (before, after) else { panic!("no figures around the arrow of: {clause}") };
        let printed = factor_of(clause)
            .or_else(|| index.checked_sub(1).and_then(|previous| factor_of(clauses[previous])))
            .unwrap_or_else(|| panic!("no factor beside the figures of: {text}"));
        let ratio = (after / before).max(before / after);
        // Figures have three significant digits (±0.5 % each); the factor two decimals
        // under 2, one under 10.
        let rounding = if printed < 2.0 {
            0.005
        } else if printed < 10.0 {
            0.05
        } else {
            0.5
        };
        assert!((printed - ratio).abs() <= rounding + 0.011 * ratio, "{printed}x beside {before} → {after}: {text}");
        checked += 1;
    }
    checked
}

#[test]
fn quiet_prints_the_answer_and_not_the_table() {
    let fs = Tmpfs::mount("64M");
    let output = writebench(&[
        "run",
        fs.path().to_str().unwrap(),
        "--size",
        "1MiB",
        "--methods",
        "write,pwrite",
        "--states",
        "empty",
        "--chunks",
        "4KiB,64KiB",
        "--repeat",
        "3",
        "--quiet",
    ]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    assert!(stdout.starts_with("\n## Answer\n"), "{stdout}");
    assert!(stdout.contains("One big file, fastest:\n  "), "{stdout}");
    for table in ["# writebench on", "## Write into", "    case "] {
        assert!(!stdout.contains(table), "{table} in:\n{stdout}");
    }
    // Progress and notes still go to stderr.
    assert!(stderr_of(&output).contains("writebench: "), "{}", stderr_of(&output));
}

/// The figures beside a factor may be scaled rates ("1.14 M commits/s", "990 k"): read
/// with their scale, or a fast commit case in the quick run stops the check above.
#[test]
fn scaled_rates_beside_a_factor_are_read_with_their_scale() {
    let text = "overwrite0 8B odsync: 1.29 M commits/s; 1.13x (1.01–1.28x, p = 0.04) faster than the runner-up, \
                latency overwrite0 8B every-fdatasync:1 (1.14 M → 1.29 M commits/s)";
    assert_eq!(factors_match_their_figures(text), 1);
    assert_eq!(factors_match_their_figures("1.13x faster (990 k → 1.12 M commits/s)"), 1);
}
