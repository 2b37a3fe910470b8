//! How a distributed filesystem lays a file out, read once per command: on a cluster
//! filesystem the layout decides the answer (a shared file or a file per rank; what a
//! replica or a parity fragment costs a write), so the result says which it was
//! (docs/scale.md, "A distributed filesystem"). GlusterFS says it through its own
//! command, asked of the server the mount names (`gluster --remote-host`), so a
//! client-only machine needs only the `gluster` command; without it, or if the server
//! does not answer within a few seconds, the result says so.

use error::wait::{Waited, wait_within};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long the server may take: a volume's info is one round trip.
const TIMEOUT: Duration = Duration::from_secs(5);

/// The layout of the volume under a mount of `fs_type` from `device` ("host:/volume"):
/// "GlusterFS disperse volume disperse, 1 x (2 + 1) = 3 bricks". None for filesystems
/// that are not distributed ones writebench knows.
pub fn layout(fs_type: &str, device: &str) -> Option<String> {
    if fs_type != "fuse.glusterfs" {
        return None;
    }
    let (server, volume) = device.split_once(":/").unwrap_or(("", device));
    let server = if server.is_empty() { "localhost" } else { server };
    let args = ["--mode=script", &format!("--remote-host={server}"), "volume", "info", volume];
    Some(match run("gluster", &args) {
        Ok(text) => {
            describe(&text, volume).unwrap_or_else(|| format!("GlusterFS volume {volume} (no layout in its info)"))
        }
        Err(why) => format!("GlusterFS volume {volume} on {server} (layout not read: {why})"),
    })
}

/// `gluster volume info`'s text in a few words: its type and its bricks' arrangement.
fn describe(info: &str, volume: &str) -> Option<String> {
    let field = |name: &str| info.lines().find_map(|line| line.trim().strip_prefix(name).map(str::trim));
    let kind = field("Type:")?.to_lowercase();
    let bricks = field("Number of Bricks:").map(|b| format!(", {b} bricks")).unwrap_or_default();
    Some(format!("GlusterFS {kind} volume {volume}{bricks}"))
}

/// `program args` to its end within [`TIMEOUT`]: its standard output, or why not.
fn run(program: &str, args: &[&str]) -> Result<String, String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{program}: {}", error::plain(&e)))?;
    match wait_within(&mut child, TIMEOUT, || false) {
        Waited::Exited(status) if status.success() => {}
        Waited::Exited(status) => return Err(format!("{program} ended with {status}")),
        Waited::Failed(e) => return Err(error::plain(&e)),
        Waited::TimedOut | Waited::GaveUp => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{program} did not answer within {} s", TIMEOUT.as_secs()));
        }
    }
    let mut text = String::new();
    child.stdout.take().map(|mut out| out.read_to_string(&mut text)).transpose().map_err(|e| error::plain(&e))?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const INFO: &str = "
Volume Name: disperse
Type: Disperse
Volume ID: 54299f50-5b25-461f-bb16-e6f05ec34022
Status: Started
Snapshot Count: 0
Number of Bricks: 1 x (2 + 1) = 3
Transport-type: tcp
";

    #[test]
    fn a_volumes_info_is_its_type_and_bricks() {
        assert_eq!(describe(INFO, "disperse").unwrap(), "GlusterFS disperse volume disperse, 1 x (2 + 1) = 3 bricks");
        assert_eq!(describe("Volume Name: v\n", "v"), None);
    }

    #[test]
    fn only_a_distributed_filesystem_has_a_layout_and_a_missing_command_is_said() {
        assert_eq!(layout("ext4", "/dev/sda1"), None);
        assert_eq!(layout("fuse.sshfs", "root@h:/x"), None);
        // No server answers at this name: the command fails or is missing, and it is said.
        let said = layout("fuse.glusterfs", "no-such-host.invalid:/vol").unwrap();
        assert!(said.starts_with("GlusterFS volume vol on no-such-host.invalid (layout not read: "), "{said}");
    }
}
