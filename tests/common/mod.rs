//! Helpers shared by the end-to-end tests: run the real binary, read its results,
//! mount small filesystems. Tests that need root or a tool fail loudly without it.

#![allow(dead_code)] // each test binary uses a different subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use writebench::measure::source::{Shape, Source, Stream};

pub fn writebench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_writebench")).args(args).output().expect("the writebench binary runs")
}

pub fn stderr_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `writebench ARGS` must be refused as bad input: exit status 2, one line on stderr
/// naming `expected`, no panic, nothing on stdout.
pub fn assert_usage_error(args: &[&str], expected: &str) {
    let output = writebench(args);
    let stderr = stderr_of(&output);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: one line expected, got:\n{stderr}");
    assert!(stderr.starts_with("writebench: "), "{args:?}: {stderr}");
    assert!(stderr.contains(expected), "{args:?}: expected '{expected}' in: {stderr}");
    assert!(!stderr.contains("panicked") && !stderr.contains("backtrace"), "{stderr}");
    assert!(output.stdout.is_empty(), "{args:?}: nothing on stdout for bad input");
}

/// `writebench run DIR ARGS --table --export-json …`, which must succeed: its result and
/// its standard output, every case's line of the table in it.
pub fn run_result(dir: &Path, args: &[&str]) -> (serde_json::Value, String) {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("result.json");
    let mut all = vec!["run", dir.to_str().unwrap(), "--table"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--export-json", json.to_str().unwrap()]);
    let output = writebench(&all);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{stdout}\n{}", stderr_of(&output));
    (read_json(&json), stdout)
}

/// The table's line of the only throughput case in `stdout`.
/// The first case's line in the default table, with the notes that follow it on
/// lines of their own, joined by spaces.
pub fn case_line(stdout: &str) -> String {
    let mut lines = stdout.lines().skip_while(|l| !l.starts_with("### ")).skip(1);
    let case = lines
        .find(|l| {
            // Not the header, nor a note said once above the table for every case.
            l.starts_with("    ")
                && !l.starts_with("     ")
                && !l.starts_with("    case ")
                && !l.starts_with("    every case ")
        })
        .expect("the case's line in the table");
    let notes = lines.take_while(|l| l.starts_with("        "));
    std::iter::once(case).chain(notes).map(str::trim).collect::<Vec<_>>().join(" ")
}

pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).expect("valid JSON")
}

/// What the file `name` that a run of `case` (a case of a result file) wrote must hold,
/// with the data seed `seed`.
pub fn stream_of(seed: u64, case: &serde_json::Value, name: &str) -> Stream {
    let number = |key: &str| case[key].as_u64().unwrap_or_else(|| panic!("{key} in {case}"));
    let shape = Shape::new(
        number("threads") as u32,
        number("chunk_bytes"),
        number("iov") as u32,
        case["queue_depth"].as_u64().map(|depth| depth as u32),
        number("bytes"),
    );
    Stream::timed(seed, name, shape.stream_period())
}

/// Checks the kept file `name` of `case` against its stream; its length too.
pub fn assert_file_holds_its_stream(source: &Source, dir: &Path, case: &serde_json::Value, name: &str) -> Vec<u8> {
    let data = std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("read {name}: {e}"));
    let stream = stream_of(source.seed(), case, name);
    assert_eq!(stream.first_mismatch(source, 0, &data), None, "{} {name}", case["id"]);
    data
}

/// The status of `job` once it has ended, which must be within `limit` of now; `what`
/// says what the test waited for.
pub fn ended_within(job: &mut std::process::Child, limit: std::time::Duration, what: &str) -> std::process::ExitStatus {
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = job.try_wait().unwrap() {
            return status;
        }
        assert!(started.elapsed() < limit, "the job still runs {limit:?} after {what}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Entries of a directory, by name.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

/// A tmpfs of `size` mounted on a fresh temporary directory, unmounted on drop.
pub struct Tmpfs {
    pub dir: tempfile::TempDir,
}

impl Tmpfs {
    pub fn mount(size: &str) -> Tmpfs {
        let dir = tempfile::tempdir().unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size},mode=0755"), "tmpfs"])
            .arg(dir.path())
            .status()
            .expect("mount(8) is needed for this test");
        assert!(status.success(), "mounting a tmpfs failed: this test needs root (CI runs as root)");
        Tmpfs { dir }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.path().to_path_buf()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// A filesystem of `fs_type` on a loop device over a `mib`-MiB image, unmounted and
/// detached on drop.
pub struct LoopFs {
    _image_dir: tempfile::TempDir,
    mount_point: tempfile::TempDir,
}

impl LoopFs {
    pub fn make(fs_type: &str, mib: u64) -> LoopFs {
        LoopFs::make_in(&std::env::temp_dir(), fs_type, mib, "loop")
    }

    /// As `make`, with the (sparse) image in `dir` and mount options `options`: on a
    /// small tmpfs, the device fails writes once the tmpfs is full, as a real disk fails
    /// with I/O errors (`loop,discard` gives freed blocks back to the tmpfs).
    pub fn make_in(dir: &Path, fs_type: &str, mib: u64, options: &str) -> LoopFs {
        let image_dir = tempfile::tempdir_in(dir).unwrap();
        let image = image_dir.path().join("fs.img");
        std::fs::File::create(&image).unwrap().set_len(mib << 20).unwrap();
        let mkfs = format!("mkfs.{fs_type}");
        let mut command = Command::new(&mkfs);
        if fs_type.starts_with("ext") {
            command.args(["-q", "-F"]);
        } else {
            command.arg("-q");
        }
        let status = command.arg(&image).status().unwrap_or_else(|e| panic!("{mkfs} is needed for this test: {e}"));
        assert!(status.success(), "{mkfs} failed");
        let mount_point = tempfile::tempdir().unwrap();
        let status = Command::new("mount")
            .args(["-o", options])
            .arg(&image)
            .arg(mount_point.path())
            .status()
            .expect("mount(8) is needed for this test");
        assert!(status.success(), "mounting a loop device failed: this test needs root and loop devices");
        LoopFs { _image_dir: image_dir, mount_point }
    }

    pub fn path(&self) -> PathBuf {
        self.mount_point.path().to_path_buf()
    }
}

impl Drop for LoopFs {
    fn drop(&mut self) {
        // -d detaches the loop device that mount -o loop attached.
        let _ = Command::new("umount").arg("-d").arg(self.mount_point.path()).status();
    }
}

/// One call strace saw: the thread that made it and the rest of strace's line.
pub struct Traced {
    pub tid: u32,
    pub line: String,
}

/// Runs `writebench ARGS` under `strace -f -y -e trace=CALLS` (-y: each descriptor
/// with the path it names) and returns the calls in order, a call that another
/// thread's interrupted kept once, at its start.
pub fn strace(calls: &str, args: &[&str]) -> (Vec<Traced>, Output) {
    let out = tempfile::tempdir().unwrap();
    let trace = out.path().join("strace.txt");
    let output = Command::new("strace")
        .args(["-f", "-y", "-qq", "-e", &format!("trace={calls}"), "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_writebench"))
        .args(args)
        .output()
        .expect("strace is needed for this test (CI installs it)");
    let text = std::fs::read_to_string(&trace).unwrap_or_default();
    let calls = text
        .lines()
        .filter(|line| !line.contains("resumed>"))
        .filter_map(|line| {
            let (tid, rest) = line.split_once(' ')?;
            Some(Traced { tid: tid.parse().ok()?, line: rest.trim_start().to_string() })
        })
        .collect();
    (calls, output)
}

/// The seconds of CPU the clock ticks in /proc are counted in.
pub fn tick() -> f64 {
    // SAFETY: sysconf has no preconditions.
    1.0 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

/// CPU seconds every CPU spent busy since boot (/proc/stat's first line, all but idle
/// and iowait).
pub fn machine_busy_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap();
    let fields: Vec<f64> =
        stat.lines().next().unwrap().split_whitespace().skip(1).map(|f| f.parse().unwrap()).collect();
    let busy: f64 = fields.iter().enumerate().filter(|(i, _)| *i != 3 && *i != 4).map(|(_, v)| v).sum();
    busy * tick()
}

/// CPU seconds a process has used (utime + stime of /proc/PID/stat).
pub fn process_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // Fields 14 and 15 of the line, counted from after the name (which is field 2).
    (fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap()) * tick()
}

/// CPU seconds of this test process's waited-for children.
pub fn children_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Runs `work` and returns what it gave and how many CPUs' worth everything but this
/// test process and its children used meanwhile, by /proc/stat: a test's own measure of
/// whether the machine was quiet, never an assumption that it is.
pub fn with_others_cpu<T>(work: impl FnOnce() -> T) -> (T, f64) {
    let (busy, own, start) = (machine_busy_seconds(), children_seconds(), std::time::Instant::now());
    let value = work();
    let wall = start.elapsed().as_secs_f64();
    (value, (machine_busy_seconds() - busy - (children_seconds() - own)).max(0.0) / wall)
}
