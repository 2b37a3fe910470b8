//! The protocol's transcripts (tests/data/protocol, its README says how they read),
//! replayed by every runner: each line sent, each reply held to the line expected, the
//! files read back, the exit status. One set of conversations for every runner, so that a
//! runner that drifts from docs/runtimes.md fails here, with the line it said.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use writebench::executors::runtimes::{Child, launch};
use writebench::plan::catalog;

/// The bytes of the source: a pattern that differs at every offset a test reads.
fn source_byte(offset: usize) -> u8 {
    (offset.wrapping_mul(7) % 251) as u8 ^ (offset >> 8) as u8
}

/// Whether `got` is what `expected` stands for (the README's placeholders), or why not.
fn matches(expected: &Value, got: &Value, at: &str) -> Result<(), String> {
    let numbers = |got: &Value| got.as_array().is_some_and(|items| items.iter().all(Value::is_number));
    let fits = match expected {
        Value::String(pattern) if pattern == "num" => got.is_number(),
        Value::String(pattern) if pattern == "num?" => got.is_number() || got.is_null(),
        Value::String(pattern) if pattern == "text" => got.is_string(),
        Value::String(pattern) if pattern == "nums" => numbers(got),
        Value::String(pattern) if pattern.starts_with("nums=") => {
            numbers(got) && got.as_array().map(Vec::len) == pattern[5..].parse().ok()
        }
        Value::Object(keys) => {
            let Some(got) = got.as_object() else { return Err(format!("{at}: an object expected, got {got}")) };
            let (want, have): (Vec<&String>, Vec<&String>) = (keys.keys().collect(), got.keys().collect());
            if want.iter().collect::<std::collections::BTreeSet<_>>() != have.iter().collect() {
                return Err(format!("{at}: keys {have:?}, expected {want:?}"));
            }
            return keys.iter().try_for_each(|(key, value)| matches(value, &got[key], &format!("{at}.{key}")));
        }
        Value::Array(items) => {
            let Some(got) = got.as_array().filter(|got| got.len() == items.len()) else {
                return Err(format!("{at}: {} items expected, got {got}", items.len()));
            };
            return items.iter().zip(got).enumerate().try_for_each(|(i, (e, g))| matches(e, g, &format!("{at}[{i}]")));
        }
        other => other == got,
    };
    if fits { Ok(()) } else { Err(format!("{at}: {got}, expected {expected}")) }
}

/// Replays `transcript` with `runtime`'s runner in `dir`; the first thing that differs.
fn replay(runtime: &str, transcript: &str, dir: &Path) -> Result<(), String> {
    let entry = catalog::runtime(runtime).expect("a runtime of the catalogue");
    let file = |index: usize| dir.join(format!("f{index}.dat"));
    let fill = |text: &str| {
        let mut text = text.replace("{write}", entry.append[0]).replace("{missing}", "/nonexistent-writebench/f.dat");
        for index in 0..8 {
            text = text.replace(&format!("{{file{index}}}"), file(index).to_str().unwrap());
        }
        text
    };
    for index in 0..8 {
        std::fs::write(file(index), b"").unwrap();
    }
    let mut lines = transcript.lines().filter(|line| !line.starts_with('#') && !line.trim().is_empty());
    let source: usize = lines.next().and_then(|l| l.strip_prefix("source ")).and_then(|n| n.parse().ok()).unwrap();
    let launched = launch(runtime).map_err(|e| format!("the {runtime} runner: {e}"))?;
    let mut child = Child::start(runtime, &launched, source).map_err(|e| e.to_string())?;
    for (offset, byte) in child.source_mut().iter_mut().enumerate() {
        *byte = source_byte(offset);
    }
    for line in lines {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words[0] {
            ">" => child.send(&format!("{}\n", fill(&line[2..]))).map_err(|e| e.to_string())?,
            "<" => {
                let said = child.reply().map_err(|e| format!("after {line}: {e}"))?;
                let got: Value =
                    serde_json::from_str(&said).map_err(|e| format!("'{}' is no JSON: {e}", said.trim()))?;
                let expected: Value = serde_json::from_str(&line[2..]).expect("the transcript's JSON");
                matches(&expected, &got, "reply").map_err(|why| format!("{why}\n  said: {}", said.trim()))?;
            }
            "file" => {
                let [index, from, len] = [1, 2, 3].map(|i| words[i].parse::<usize>().unwrap());
                let held = std::fs::read(file(index)).unwrap();
                let want: Vec<u8> = (from..from + len).map(source_byte).collect();
                if held.get(..len) != Some(&want[..]) {
                    return Err(format!("file {index} does not hold the source's bytes {from}..{}", from + len));
                }
            }
            "size" => {
                let [index, len] = [1, 2].map(|i| words[i].parse::<u64>().unwrap());
                let size = std::fs::metadata(file(index as usize)).unwrap().len();
                if size != len {
                    return Err(format!("file {index} is {size} bytes, expected {len}"));
                }
            }
            "exit" => {
                let status = child.end(Duration::from_secs(10)).ok_or("still running 10 s after its stdin closed")?;
                if status.code() != words[1].parse().ok() {
                    return Err(format!("ended with {status}, expected exit status {}", words[1]));
                }
            }
            other => panic!("a transcript line starting with '{other}': {line}"),
        }
    }
    Ok(())
}

fn transcripts() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/protocol");
    let mut found: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "txt"))
        .map(|path| (path.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(path).unwrap()))
        .collect();
    found.sort();
    found
}

#[test]
fn every_runner_replays_the_protocols_transcripts() {
    let transcripts = transcripts();
    assert!(transcripts.len() >= 5, "the transcripts are read: {}", transcripts.len());
    let mut failed = Vec::new();
    for runtime in catalog::RUNTIMES.iter().filter(|r| r.toolchain.is_some()) {
        for (name, transcript) in &transcripts {
            let dir = tempfile::tempdir().unwrap();
            if let Err(why) = replay(runtime.name, transcript, dir.path()) {
                failed.push(format!("{} runner, {name}: {why}", runtime.name));
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// The matcher itself: a placeholder takes what it stands for and nothing else.
#[test]
fn a_transcripts_placeholders_take_what_they_stand_for() {
    let expected: Value = serde_json::from_str(r#"{"a":"num","b":"num?","c":"nums=2","d":"text","e":null}"#).unwrap();
    let good: Value = serde_json::from_str(r#"{"a":1.5,"b":null,"c":[1,2],"d":"x","e":null}"#).unwrap();
    assert_eq!(matches(&expected, &good, "r"), Ok(()));
    for bad in [
        r#"{"a":"1","b":null,"c":[1,2],"d":"x","e":null}"#,
        r#"{"a":1,"b":null,"c":[1],"d":"x","e":null}"#,
        r#"{"a":1,"b":null,"c":[1,2],"d":"x","e":0}"#,
        r#"{"a":1,"b":null,"c":[1,2],"d":"x","e":null,"f":1}"#,
    ] {
        assert!(matches(&expected, &serde_json::from_str(bad).unwrap(), "r").is_err(), "{bad}");
    }
}
