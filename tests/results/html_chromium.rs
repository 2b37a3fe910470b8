//! The HTML report in a real browser: Debian's headless Chromium loads a report of a
//! real quick run and must log no console error, make no request but the page itself,
//! and show charts whose axes, legends and error bars are in its DOM.
//!
//! Chromium is driven over the DevTools protocol on `--remote-debugging-pipe` (file
//! descriptors 3 and 4, NUL-separated JSON): no port, no extra crate, and the
//! protocol reports every request the page makes (Network.requestWillBeSent) and every
//! console message and exception, which scraping `--enable-logging` output would only
//! approximate. The checker is itself checked on a page that does fetch and does log
//! an error, so that it cannot pass by seeing nothing.

use crate::common;

use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use common::{Tmpfs, read_json, stderr_of, writebench};

const WAIT: Duration = Duration::from_secs(60);

/// A headless Chromium and the pipe to its DevTools endpoint.
struct Browser {
    child: Child,
    commands: std::fs::File,
    replies: Receiver<Value>,
    /// Events seen while waiting for replies, in order.
    events: Vec<Value>,
    next_id: u64,
    _profile: tempfile::TempDir,
}

fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors this process then owns.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0, "pipe2");
    // SAFETY: both were just created and are owned by nothing else.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

impl Browser {
    fn launch() -> Browser {
        use std::os::fd::AsRawFd;
        let profile = tempfile::tempdir().unwrap();
        let (to_browser_read, to_browser_write) = pipe();
        let (from_browser_read, from_browser_write) = pipe();
        let (read_end, write_end) = (to_browser_read.as_raw_fd(), from_browser_write.as_raw_fd());
        let mut command = Command::new("chromium");
        command
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--remote-debugging-pipe",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: only async-signal-safe calls between fork and exec. The pipe ends are
        // first copied above 10, so that moving them to 3 and 4 cannot clobber one
        // with the other; dup2's copies do not close on exec.
        unsafe {
            command.pre_exec(move || {
                let (read, write) =
                    (libc::fcntl(read_end, libc::F_DUPFD, 10), libc::fcntl(write_end, libc::F_DUPFD, 10));
                if read < 0 || write < 0 || libc::dup2(read, 3) < 0 || libc::dup2(write, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().unwrap_or_else(|error| {
            panic!("chromium is needed for this test (Debian: apt-get install chromium; .ci/run installs it): {error}")
        });
        drop((to_browser_read, from_browser_write));
        let (sender, replies) = channel();
        let mut reader = std::fs::File::from(from_browser_read);
        std::thread::spawn(move || {
            let mut pending = Vec::new();
            let mut buffer = [0u8; 65536];
            while let Ok(read) = reader.read(&mut buffer) {
                if read == 0 {
                    break;
                }
                pending.extend_from_slice(&buffer[..read]);
                while let Some(end) = pending.iter().position(|&b| b == 0) {
                    let message: Vec<u8> = pending.drain(..=end).collect();
                    let value = serde_json::from_slice(&message[..end]).expect("DevTools sends JSON");
                    if sender.send(value).is_err() {
                        return;
                    }
                }
            }
        });
        let commands = std::fs::File::from(to_browser_write);
        Browser { child, commands, replies, events: Vec::new(), next_id: 1, _profile: profile }
    }

    /// Sends a command (to a page's session if given) and returns its result.
    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = session.into();
        }
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        self.commands.write_all(&bytes).expect("chromium reads its pipe");
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let value = self.replies.recv_timeout(left).unwrap_or_else(|_| panic!("no reply to {method}"));
            if value["id"] == id {
                assert!(value.get("error").is_none(), "{method}: {value}");
                return value["result"].clone();
            }
            self.events.push(value);
        }
    }

    /// Waits until an event named `method` has arrived.
    fn wait_for(&mut self, method: &str) {
        let deadline = Instant::now() + WAIT;
        while !self.events.iter().any(|event| event["method"] == method) {
            let left = deadline.saturating_duration_since(Instant::now());
            let value = self.replies.recv_timeout(left).unwrap_or_else(|_| panic!("no {method}"));
            self.events.push(value);
        }
    }

    /// Collects events for `time` (late console messages, late requests).
    fn settle(&mut self, time: Duration) {
        let deadline = Instant::now() + time;
        while let Ok(value) = self.replies.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            self.events.push(value);
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a page did while it loaded, and facts read from its DOM.
struct Visit {
    requests: Vec<String>,
    errors: Vec<String>,
    dom: Value,
}

const DOM_FACTS: &str = r#"JSON.stringify({
  sections: [...document.querySelectorAll('main > section')].map(s => s.id),
  headings: [...document.querySelectorAll('h2')].map(h => h.textContent.trim()),
  cells: document.querySelectorAll('td').length,
  answerText: document.getElementById('answer')?.innerText ?? '',
  tableText: document.getElementById('table')?.innerText ?? '',
  charts: [...document.querySelectorAll('svg.wb-chart')].map(svg => ({
    id: svg.id,
    width: svg.getBoundingClientRect().width,
    height: svg.getBoundingClientRect().height,
    axisTitles: [...svg.querySelectorAll('.wb-axis-title text')].map(t => t.textContent.trim()),
    legend: [...svg.querySelectorAll('.wb-legend text')].map(t => t.textContent.trim()),
    errorBars: svg.querySelectorAll('.wb-error-bars line, .wb-error-bars polyline').length,
    marks: svg.querySelectorAll('.wb-series *').length,
  })),
})"#;

fn visit(page: &Path) -> Visit {
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let mut browser = Browser::launch();
    let target = browser.call(None, "Target.createTarget", json!({"url": "about:blank"}));
    let attached =
        browser.call(None, "Target.attachToTarget", json!({"targetId": target["targetId"], "flatten": true}));
    let session = attached["sessionId"].as_str().expect("a session").to_string();
    for domain in ["Page", "Runtime", "Log", "Network"] {
        browser.call(Some(&session), &format!("{domain}.enable"), json!({}));
    }
    browser.call(Some(&session), "Page.navigate", json!({"url": url}));
    browser.wait_for("Page.loadEventFired");
    browser.settle(Duration::from_millis(1500));
    let facts =
        browser.call(Some(&session), "Runtime.evaluate", json!({"expression": DOM_FACTS, "returnByValue": true}));
    let dom: Value = serde_json::from_str(facts["result"]["value"].as_str().expect("the DOM facts")).unwrap();
    let mut requests = Vec::new();
    let mut errors = Vec::new();
    for event in &browser.events {
        let params = &event["params"];
        match event["method"].as_str().unwrap_or("") {
            "Network.requestWillBeSent" => requests.push(params["request"]["url"].as_str().unwrap_or("").to_string()),
            "Runtime.consoleAPICalled" if matches!(params["type"].as_str(), Some("error" | "assert")) => {
                errors.push(format!("console: {}", params["args"]))
            }
            "Runtime.exceptionThrown" => errors.push(format!("exception: {}", params["exceptionDetails"])),
            "Log.entryAdded" if params["entry"]["level"] == "error" => {
                errors.push(format!("log: {}", params["entry"]["text"]))
            }
            _ => {}
        }
    }
    requests.retain(|request| *request != url);
    Visit { requests, errors, dom }
}

#[test]
fn the_report_loads_cleanly_and_its_charts_have_axes_legends_and_error_bars() {
    let tmpfs = Tmpfs::mount("256M");
    let out = tempfile::tempdir().unwrap();
    let html = out.path().join("q.html");
    let path = tmpfs.path();
    let output = writebench(&[
        "run",
        path.to_str().unwrap(),
        "--size",
        "4MiB",
        "--repeat",
        "2",
        "--export-html",
        html.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let visit = visit(&html);
    assert_eq!(visit.errors, Vec::<String>::new(), "console errors");
    assert_eq!(visit.requests, Vec::<String>::new(), "requests besides the page itself");
    let sections: Vec<&str> = visit.dom["sections"].as_array().unwrap().iter().filter_map(|s| s.as_str()).collect();
    assert_eq!(sections, vec!["answer", "charts", "observations", "table", "context"]);
    let charts = visit.dom["charts"].as_array().unwrap();
    let ids: Vec<&str> = charts.iter().filter_map(|chart| chart["id"].as_str()).collect();
    for id in ["chart-chunks-empty", "chart-threads-prealloc", "chart-states", "chart-durability", "chart-latency"] {
        assert!(ids.contains(&id), "{id} in {ids:?}");
    }
    for chart in charts {
        let id = chart["id"].as_str().unwrap();
        assert!(chart["width"].as_f64().unwrap() > 100.0 && chart["height"].as_f64().unwrap() > 100.0, "{chart}");
        let titles: Vec<&str> = chart["axisTitles"].as_array().unwrap().iter().filter_map(|t| t.as_str()).collect();
        assert_eq!(titles.len(), 2, "{id}: {titles:?}");
        assert!(titles.iter().any(|t| t.contains("(GB/s)") || t.contains("(µs")), "{id}: a unit in {titles:?}");
        if id.starts_with("chart-chunks") {
            assert!(titles.iter().any(|t| t.starts_with("chunk size (bytes per call")), "{id}: {titles:?}");
        }
        assert!(!chart["legend"].as_array().unwrap().is_empty(), "{id}: a legend");
        assert!(chart["marks"].as_u64().unwrap() > 0, "{id}: something drawn");
        // Percentiles of one run have no interval; every throughput chart has bars.
        if id != "chart-latency" {
            assert!(chart["errorBars"].as_u64().unwrap() > 0, "{id}: error bars");
        }
    }
}

#[test]
fn the_checker_sees_requests_and_console_errors() {
    let out = tempfile::tempdir().unwrap();
    let page = out.path().join("bad.html");
    // Port 9 (discard) on the loopback: the request is made and refused at once.
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><head><link rel=\"icon\" href=\"data:,\"></head><body>\
         <img src=\"http://127.0.0.1:9/chart.png\"><script>console.error('broken')</script></body></html>",
    )
    .unwrap();
    let careless = visit(&page);
    assert!(careless.requests.iter().any(|r| r == "http://127.0.0.1:9/chart.png"), "{:?}", careless.requests);
    assert!(careless.errors.iter().any(|e| e.contains("broken")), "{:?}", careless.errors);

    // Under the report's policy the same slip is refused and said as a console error
    // (DevTools still lists the attempt, blocked, so the main test would see it twice).
    let policy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";
    std::fs::write(
        &page,
        format!(
            "<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" content=\"{policy}\">\
             <link rel=\"icon\" href=\"data:,\"></head><body><img src=\"http://127.0.0.1:9/chart.png\"></body></html>"
        ),
    )
    .unwrap();
    let guarded = visit(&page);
    assert!(guarded.errors.iter().any(|e| e.contains("Content Security Policy")), "{:?}", guarded.errors);
}

/// `trace --export-html`: a page of its own, every file a section, nothing fetched.
#[test]
fn the_trace_page_loads_cleanly_with_a_table_for_each_file() {
    let out = tempfile::tempdir().unwrap();
    let html = out.path().join("trace.html");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_writebench"))
        .current_dir(out.path())
        .args(["trace", "--export-html", "trace.html", "--", "sh", "-c", "echo a > one; echo bb > 'two <&>'"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr_of(&output));
    let visit = visit(&html);
    assert_eq!(visit.errors, Vec::<String>::new(), "console errors");
    assert_eq!(visit.requests, Vec::<String>::new(), "requests besides the page itself");
    let headings: Vec<&str> = visit.dom["headings"].as_array().unwrap().iter().filter_map(|h| h.as_str()).collect();
    assert_eq!(headings.len(), 3, "{headings:?}");
    assert_eq!(headings[0], "Answer", "the Answer first");
    assert!(headings.iter().any(|h| h.ends_with("/two <&>: 3 B in 1 write call")), "{headings:?}");
    assert!(visit.dom["cells"].as_u64().unwrap() >= 12, "{}", visit.dom);
}

#[test]
fn the_compare_page_loads_cleanly_and_its_ratio_chart_has_axes_a_legend_and_error_bars() {
    let tmpfs = Tmpfs::mount("128M");
    let out = tempfile::tempdir().unwrap();
    let path = tmpfs.path().to_str().unwrap().to_string();
    let mut results = Vec::new();
    for name in ["a.json", "b.json"] {
        let json = out.path().join(name);
        let output = writebench(&[
            "run",
            &path,
            "--methods",
            "write,pwrite",
            "--chunks",
            "64KiB",
            "--size",
            "4MiB",
            "--durability",
            "none,end",
            "--repeat",
            "3",
            "--export-json",
            json.to_str().unwrap(),
        ]);
        assert!(output.status.success(), "{}", stderr_of(&output));
        results.push(json);
    }
    let html = out.path().join("ab.html");
    let output = writebench(&[
        "compare",
        results[0].to_str().unwrap(),
        results[1].to_str().unwrap(),
        "--export-html",
        html.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let visit = visit(&html);
    assert_eq!(visit.errors, Vec::<String>::new(), "console errors");
    assert_eq!(visit.requests, Vec::<String>::new(), "requests besides the page itself");
    let charts = visit.dom["charts"].as_array().unwrap();
    assert_eq!(charts.len(), 1, "{charts:?}");
    let chart = &charts[0];
    assert_eq!(chart["id"], "chart-ratio");
    let titles: Vec<&str> = chart["axisTitles"].as_array().unwrap().iter().filter_map(|t| t.as_str()).collect();
    assert!(titles.iter().any(|t| t.contains("ratio to A (×")), "{titles:?}");
    assert!(!chart["legend"].as_array().unwrap().is_empty(), "a legend");
    assert!(chart["errorBars"].as_u64().unwrap() > 0, "error bars");
}

#[test]
fn a_raced_report_shows_each_dropped_case_and_each_undecided_goal_as_the_result_records_them() {
    let tmpfs = Tmpfs::mount("256M");
    let out = tempfile::tempdir().unwrap();
    let (html, json) = (out.path().join("raced.html"), out.path().join("raced.json"));
    let path = tmpfs.path();
    // The quick suite raced within 15 s: small files, so that several rounds fit.
    let output = writebench(&[
        "run",
        path.to_str().unwrap(),
        "--size",
        "4MiB",
        "--budget",
        "15s",
        "--export-html",
        html.to_str().unwrap(),
        "--export-json",
        json.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let result = read_json(&json);
    let dropped = result["cases"].as_array().unwrap().iter().filter(|case| case["race"]["exit"] == "slower").count();
    let goals = result["race"]["goals"].as_array().expect("a raced result has its race");
    let undecided = goals.iter().filter(|goal| goal["decision"] == "undecided").count();
    assert!(dropped > 0, "a race of the quick suite drops some case (4 KiB calls are far slower here)");
    let visit = visit(&html);
    assert_eq!(visit.errors, Vec::<String>::new(), "console errors");
    let (answer, table) = (visit.dom["answerText"].as_str().unwrap(), visit.dom["tableText"].as_str().unwrap());
    // Every case the race dropped says so in the table, once; every goal it left open
    // says so in the Answer.
    assert_eq!(table.matches("dropped after ").count(), dropped, "{table}");
    // Under each goal's three lines, folded ("Why"): in the page, not in its visible text.
    assert!(answer.contains("Why"), "{answer}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert_eq!(page.matches("race undecided ").count(), undecided, "{answer}");
}
