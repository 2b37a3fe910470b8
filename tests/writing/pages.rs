//! `--pages` (docs/measurement.md, "The writers' pages"): a case written from a buffer in
//! huge pages is a case of its own, beside its twin in ordinary pages, with its own id,
//! JSON field and CSV column; the quick suite has them for its own O_DIRECT modes only;
//! another runtime's runner has none.

use crate::common;

use common::{LoopFs, read_json, run_result, stderr_of, writebench};

const ONE_CASE: [&str; 10] =
    ["--methods", "pwrite", "--states", "empty", "--chunks", "1MiB", "--threads", "1", "--size", "8MiB"];

fn ids(result: &serde_json::Value) -> Vec<String> {
    result["cases"].as_array().unwrap().iter().map(|case| case["id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_buffer_in_huge_pages_is_a_case_beside_its_twin_in_json_and_csv() {
    let ext4 = LoopFs::make("ext4", 96);
    let out = tempfile::tempdir().unwrap();
    let csv = out.path().join("r.csv");
    let args = [
        &ONE_CASE[..],
        &["--durability", "direct+end", "--pages", "ordinary,huge", "--repeat", "2", "--verify"],
        &["--export-csv", csv.to_str().unwrap()],
    ]
    .concat();
    let (result, stdout) = run_result(&ext4.path(), &args);
    assert_eq!(ids(&result), ["pwrite empty 1MiB t1 direct+end", "pwrite empty 1MiB t1 direct+end huge-pages"]);
    let cases = result["cases"].as_array().unwrap();
    for case in cases {
        // Read back whole (--verify): the huge buffer holds the file's stream too.
        assert_eq!(case["status"], "ok", "{}: {}", case["id"], case["error"]);
    }
    assert!(cases[0].get("pages").is_none(), "an ordinary buffer says nothing: {}", cases[0]);
    assert_eq!(cases[1]["pages"], "huge");
    assert_eq!(result["options"]["pages"], serde_json::json!(["ordinary", "huge"]));
    assert!(stdout.contains("pwrite 1MiB t1 direct+end huge-pages"), "{stdout}");
    let csv = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let column = header.iter().position(|&name| name == "pages").expect("a pages column");
    let pages: Vec<&str> = csv.lines().skip(1).map(|line| line.split(',').nth(column).unwrap()).collect();
    assert_eq!(pages, ["ordinary", "ordinary", "huge", "huge"], "{csv}");
}

#[test]
fn the_quick_suite_has_huge_pages_for_its_own_o_direct_modes_and_a_runner_has_none() {
    let ext4 = LoopFs::make("ext4", 160);
    let dir = ext4.path();
    let plan = |extra: &[&str]| {
        let out = tempfile::tempdir().unwrap();
        let json = out.path().join("r.json");
        let args = [&["run", dir.to_str().unwrap()][..], &ONE_CASE, extra, &["--repeat", "1", "--warmup", "0"]];
        let output = writebench(&[&args.concat()[..], &["--export-json", json.to_str().unwrap()]].concat());
        assert!(output.status.success(), "{}", stderr_of(&output));
        ids(&read_json(&json))
    };
    let huge = |ids: &[String]| ids.iter().filter(|id| id.ends_with("huge-pages")).cloned().collect::<Vec<_>>();
    // The suite's own modes: its O_DIRECT case, and its twin in huge pages.
    assert_eq!(huge(&plan(&[])), ["pwrite empty 1MiB t1 direct+end huge-pages"]);
    // Modes of one's own replace the suite's, its huge pages with them...
    assert!(huge(&plan(&["--durability", "direct+end,end"])).is_empty());
    // ... unless --pages asks for them, for every mode.
    assert_eq!(
        huge(&plan(&["--durability", "direct+end,end", "--pages", "huge"])),
        ["pwrite empty 1MiB t1 direct+end huge-pages", "pwrite empty 1MiB t1 end huge-pages"]
    );
    // Another runtime's runner allocates its own buffer: no case of it in huge pages.
    let with_c = plan(&["--runtimes", "native,c", "--durability", "end", "--pages", "ordinary,huge"]);
    assert_eq!(
        with_c,
        ["pwrite empty 1MiB t1 end", "c pwrite empty 1MiB t1 end", "pwrite empty 1MiB t1 end huge-pages"]
    );
}

#[test]
fn unknown_pages_are_one_line_and_status_2() {
    let output = writebench(&["run", "/tmp", "--pages", "2MiB"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = stderr_of(&output);
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("unknown pages '2MiB' (known: ordinary, huge)"), "{stderr}");
}
