//! A traced program's calls under the crash check (docs/trace.md, "Crash check"): made
//! one at a time, in the trace's order, in the crash check's filesystem, printing the
//! program's promises (`plan::replay_promises`) at the same points of the calls, so that
//! `crash --run` stamps each; and the checker that reads the last one back in a crash
//! state. Any way of making the calls is judged by the program's own promises: a way
//! that keeps them loses nothing the program would not.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::Mutex;

use error::CallError;
use measure::source::{PERIOD, Source};
use measure::target::Scratch;
use plan::numbers::thousands;
use plan::replay::Replay;
use plan::replay_promises::{Promised, line, parse};

use crate::replay::{prepare, run_with};

/// Makes `job`'s calls in `dir` and writes each promise to `out` (a line, flushed) once
/// the calls before its point have returned and before the next one starts.
pub fn run_promising(job: &Promised, dir: &Path, out: &mut (dyn Write + Send)) -> Result<(), CallError> {
    let scratch = Scratch::join_dir(dir).map_err(|e| CallError::new(format!("open {}", dir.display()), e))?;
    let calls = &job.calls;
    let serial = Replay {
        threads: vec![calls.in_order().into_iter().map(|(t, i)| calls.threads[t][i].clone()).collect()],
        ..calls.clone()
    };
    prepare(&serial, &scratch, job.seed)?;
    let said = Mutex::new((0usize, out));
    let say = |order: u64| {
        let mut said = said.lock().unwrap();
        while let Some(point) = job.points.get(said.0).filter(|p| p.after < order) {
            said.0 += 1;
            let text = line(said.0, &point.held);
            // A promise not written is one not made: nothing to stop for.
            let _ = writeln!(said.1, "{text}").and_then(|()| said.1.flush());
        }
    };
    run_with(&serial, &scratch, job.seed, false, Some(&say))?;
    say(u64::MAX);
    Ok(())
}

/// Whether the files in `dir` hold what `promise` (the last line said, empty if none)
/// promised: Err in words ("/var/log/app.log holds 1,200 of the 1,500 bytes promised").
pub fn check(job: &Promised, dir: &Path, promise: &str) -> Result<(), String> {
    if promise.trim().is_empty() {
        return Ok(());
    }
    let source = Source::new(job.seed);
    let pattern = source.pattern(PERIOD);
    for held in parse(promise.trim())? {
        let found = held.names.iter().map(|n| matching(&dir.join(format!("f{n}")), pattern, held.bytes)).max();
        let found = found.unwrap_or(0);
        if found < held.bytes {
            let names: Vec<&str> = held
                .names
                .iter()
                .map(|n| job.calls.files.get(*n as usize).map_or("a file", |f| f.name.as_str()))
                .collect();
            return Err(format!(
                "{} holds {} of the {} bytes promised",
                names.join(" or "),
                thousands(found),
                thousands(held.bytes)
            ));
        }
    }
    Ok(())
}

/// How many of the first `bytes` bytes of `path` are the replay's data (0 if absent).
fn matching(path: &Path, pattern: &[u8], bytes: u64) -> u64 {
    let Ok(mut file) = std::fs::File::open(path) else { return 0 };
    let mut buffer = vec![0u8; 1 << 20];
    let mut at = 0u64;
    while at < bytes {
        let want = ((bytes - at) as usize).min(buffer.len());
        let got = match file.read(&mut buffer[..want]) {
            Ok(0) | Err(_) => return at,
            Ok(got) => got,
        };
        for (i, byte) in buffer[..got].iter().enumerate() {
            if *byte != pattern[((at + i as u64) % PERIOD as u64) as usize] {
                return at + i as u64;
            }
        }
        at += got as u64;
    }
    at
}

#[cfg(test)]
mod tests {
    use plan::replay::{Call, Op, ReplayFile, SyncKind, WriteKind};
    use plan::replay_changes::{Change, apply};
    use plan::replay_promises::promises;

    use super::*;

    fn logger(records: u64) -> Replay {
        let mut ops = vec![Op::Open { file: 0, slot: 0, flags: libc::O_CREAT | libc::O_APPEND }];
        for _ in 0..records {
            ops.push(Op::Write { slot: 0, kind: WriteKind::Write, bytes: 300, offset: None, buffers: 1, rwf: 0 });
            ops.push(Op::Sync { slot: 0, kind: SyncKind::Fsync });
        }
        Replay {
            files: vec![ReplayFile { name: "/var/log/app.log".into(), before: 1000 }],
            threads: vec![ops.into_iter().enumerate().map(|(i, op)| Call { order: i as u64, at: 0.0, op }).collect()],
            bytes: 300 * records,
            syncs: records,
            cut: false,
            pages: plan::Pages::Ordinary,
        }
    }

    fn said(job: &Promised, dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        run_promising(job, dir, &mut out).unwrap();
        String::from_utf8(out).unwrap().lines().map(str::to_string).collect()
    }

    #[test]
    fn every_way_says_the_programs_promises_and_the_files_hold_them() {
        let dir = tempfile::tempdir().unwrap();
        let program = logger(3);
        let points = promises(&program);
        for calls in [Some(program.clone()), apply(&program, Change::SyncAtEnd), apply(&program, Change::Odsync)] {
            let job = Promised { seed: 5, calls: calls.unwrap(), points: points.clone() };
            let lines = said(&job, dir.path());
            assert_eq!(lines, ["promise 1: f0=1300", "promise 2: f0=1600", "promise 3: f0=1900"]);
            assert_eq!(check(&job, dir.path(), &lines[2]), Ok(()));
            assert_eq!(check(&job, dir.path(), ""), Ok(()), "nothing promised");
        }
    }

    #[test]
    fn a_short_or_wrong_file_breaks_the_promise_in_words() {
        let dir = tempfile::tempdir().unwrap();
        let program = logger(2);
        let job = Promised { seed: 5, points: promises(&program), calls: program };
        let last = said(&job, dir.path()).pop().unwrap();
        let file = dir.path().join("f0");
        let data = std::fs::read(&file).unwrap();
        std::fs::write(&file, &data[..1400]).unwrap();
        assert_eq!(
            check(&job, dir.path(), &last),
            Err("/var/log/app.log holds 1,400 of the 1,600 bytes promised".into())
        );
        let mut zeros = data.clone();
        zeros[1000..].fill(0);
        std::fs::write(&file, &zeros).unwrap();
        assert_eq!(
            check(&job, dir.path(), &last).unwrap_err(),
            "/var/log/app.log holds 1,000 of the 1,600 bytes promised"
        );
        std::fs::remove_file(&file).unwrap();
        assert!(check(&job, dir.path(), &last).unwrap_err().contains("holds 0 of"));
        assert!(check(&job, dir.path(), "row 17").is_err());
    }
}
