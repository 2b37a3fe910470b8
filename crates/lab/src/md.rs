//! md arrays (Linux software RAID, via mdadm), recognised by their members: an array is
//! the lab's when every member is a loop device resting on one of the lab's images. The
//! array's name (`/dev/md/writebench-lab-<pid>-md`) says so too, but a name needs udev
//! or mdadm to keep its symlink; the members are the kernel's own answer.

use std::path::Path;

use super::loopdev;
use super::names;
use super::shell::{Log, Step};

/// True when the kernel has the md driver (`/proc/mdstat` exists once it is loaded).
pub fn available() -> bool {
    if Path::new("/proc/mdstat").exists() {
        return true;
    }
    // Loading it is what mdadm would do on its own; a kernel without it stays without.
    let _ = Step::new("modprobe").arg("-q").arg("md_mod").run();
    Path::new("/proc/mdstat").exists()
}

/// Every md array (`/dev/mdN`) and its member devices (`/dev/loopN`, …), from sysfs.
pub fn arrays() -> Vec<(String, Vec<String>)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/sys/block") else { return found };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with("md") {
            continue;
        }
        let members = std::fs::read_dir(entry.path().join("slaves"))
            .map(|slaves| slaves.flatten().map(|s| format!("/dev/{}", s.file_name().to_string_lossy())).collect())
            .unwrap_or_default();
        found.push((format!("/dev/{name}"), members));
    }
    found.sort();
    found
}

/// The pid of the lab whose array this is: every member a loop device on the images of
/// one lab. None for anyone else's array (or an array without members).
pub fn owner(members: &[String]) -> Option<u32> {
    let pids: Vec<Option<u32>> = members
        .iter()
        .map(|member| loopdev::backing_file(member).and_then(|backing| names::image_pid(&backing)))
        .collect();
    let first = (*pids.first()?)?;
    pids.iter().all(|pid| *pid == Some(first)).then_some(first)
}

/// Creates a RAID-0 array named `name` over `members`, with chunks of `chunk_kib` KiB,
/// and returns its device (`/dev/mdN`), checked to be made of those members.
pub fn create_raid0(
    name: &str,
    members: &[String],
    chunk_kib: u32,
    extra: &str,
    log: &mut Log,
) -> Result<String, String> {
    let link = format!("/dev/md/{name}");
    let mut step = Step::new("mdadm")
        .arg("--create")
        .arg(&link)
        .arg("--run")
        .arg("--level=0")
        .arg(format!("--chunk={chunk_kib}"))
        .arg(format!("--raid-devices={}", members.len()))
        .words(extra);
    for member in members {
        step = step.arg(member);
    }
    log.run(step)?;
    // The array whose members are exactly ours is the one just made (whatever number
    // the kernel gave it, and whether or not the /dev/md symlink appeared).
    let mut wanted: Vec<String> = members.to_vec();
    wanted.sort();
    let found = arrays().into_iter().find(|(_, got)| {
        let mut got = got.clone();
        got.sort();
        got == wanted
    });
    found
        .map(|(device, _)| device)
        .ok_or_else(|| format!("mdadm made {link}, but no md array in sysfs has its members"))
}

/// Stops `device` if (and only if) it is still made of the lab's loop devices, then
/// wipes the md superblock from its members: where udev runs `mdadm --incremental` on
/// block devices that change, a member with its superblock could be assembled again
/// before its loop device is detached.
pub fn stop(device: &str) -> Result<(), String> {
    let Some((_, members)) = arrays().into_iter().find(|(d, _)| d == device) else { return Ok(()) };
    if owner(&members).is_none() {
        return Ok(());
    }
    Step::new("mdadm").arg("--stop").arg(device).run()?;
    for member in &members {
        let ours = loopdev::backing_file(member).and_then(|backing| names::image_pid(&backing)).is_some();
        if ours {
            let _ = Step::new("mdadm").arg("--zero-superblock").arg(member).run();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_array_of_devices_that_are_not_the_labs_belongs_to_no_lab() {
        assert_eq!(owner(&[]), None);
        assert_eq!(owner(&["/dev/sda1".to_string(), "/dev/sdb1".to_string()]), None);
        assert!(arrays().iter().all(|(device, _)| device.starts_with("/dev/md")));
    }
}
