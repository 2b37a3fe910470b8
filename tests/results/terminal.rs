//! Colour on a terminal only: `report` of a saved result under a pseudo-terminal
//! (util-linux `script`) is coloured, and plain through a pipe or with NO_COLOR set.

use std::process::Command;

/// `writebench report` of the saved result, run under `script` so that its stdout is a
/// terminal; `no_color` sets NO_COLOR.
fn report_on_a_terminal(no_color: Option<&str>) -> String {
    let binary = env!("CARGO_BIN_EXE_writebench");
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/v1-result.json");
    let mut command = Command::new("script");
    command.args(["--quiet", "--return", "--command", &format!("{binary} report --table {data}"), "/dev/null"]);
    command.env_remove("NO_COLOR");
    if let Some(value) = no_color {
        command.env("NO_COLOR", value);
    }
    let output = command.output().unwrap_or_else(|e| panic!("script (util-linux) is needed for this test: {e}"));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn headings_are_coloured_on_a_terminal_only_and_never_with_no_color() {
    let coloured = report_on_a_terminal(None);
    assert!(coloured.contains("\x1b[1m## Answer\x1b[0m"), "{coloured}");
    assert!(coloured.contains("\x1b[1m## Write into"), "{coloured}");

    let plain = report_on_a_terminal(Some("1"));
    assert!(plain.contains("## Answer") && !plain.contains('\x1b'), "{plain}");
    // no-color.org: an empty NO_COLOR does not count.
    assert!(report_on_a_terminal(Some("")).contains('\x1b'));

    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/v1-result.json");
    let piped = Command::new(env!("CARGO_BIN_EXE_writebench")).args(["report", data]).env_remove("NO_COLOR").output();
    let piped = String::from_utf8(piped.unwrap().stdout).unwrap();
    assert!(piped.contains("## Answer") && !piped.contains('\x1b'), "{piped}");
}
