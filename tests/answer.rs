//! `writebench run` ends with the Answer: recommendations that name cases of the result,
//! observations with their figures, both stored in the JSON as printed; `--quiet`
//! prints the Answer alone.

mod common;

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
        fs.path().to_str().unwrap(),
        "--size",
        "4MiB",
        "--repeat",
        "3",
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
    assert_eq!(goals, ["fastest", "durable-at-end", "small-durable-commits", "threads-one-file"], "{answer}");
    for recommendation in recommendations {
        let best = recommendation["best"]["case"].as_str().unwrap();
        assert!(ids.contains(best), "{best} is no case of the result");
        let text = recommendation["text"].as_str().unwrap();
        assert!(text.contains(best), "{text}");
        assert!(words(answer).contains(&words(text)), "{text} not printed in:\n{answer}");
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
    for observation in observations {
        let figures = observation["figures"].as_array().unwrap();
        assert!(!figures.is_empty(), "{observation}");
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
    assert_eq!(printed.len(), observations.len().min(8), "{answer}");
    for (line, observation) in printed.iter().zip(observations) {
        assert_eq!(line, observation["text"].as_str().unwrap(), "in the stored order");
    }
    assert!(answer.lines().all(|line| line.chars().count() <= 100), "{answer}");
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
    assert!(stdout.contains("One big file, fastest:\n    "), "{stdout}");
    for table in ["# writebench on", "## Write into", "    case "] {
        assert!(!stdout.contains(table), "{table} in:\n{stdout}");
    }
    // Progress and notes still go to stderr.
    assert!(stderr_of(&output).contains("writebench: "), "{}", stderr_of(&output));
}
