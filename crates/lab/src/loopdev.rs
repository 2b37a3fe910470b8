//! Loop devices, recognised by their backing file. Other programs (other tests in CI, for
//! one) attach loop devices at the same time; the lab never goes by a device's number
//! alone: before it detaches `/dev/loopN` it reads back that the device still rests on
//! the lab's own image.

use std::path::Path;

use super::shell::{Log, Step};

/// Every attached loop device and its backing file, from sysfs
/// (`/sys/block/loopN/loop/backing_file`, which only attached devices have).
pub fn attached() -> Vec<(String, String)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/sys/block") else { return found };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with("loop") {
            continue;
        }
        if let Ok(backing) = std::fs::read_to_string(entry.path().join("loop/backing_file")) {
            found.push((format!("/dev/{name}"), backing.trim_end_matches('\n').to_string()));
        }
    }
    found.sort();
    found
}

/// The backing file of `device` (`/dev/loopN`), if it is attached.
pub fn backing_file(device: &str) -> Option<String> {
    let name = device.strip_prefix("/dev/")?;
    let text = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).ok()?;
    Some(text.trim_end_matches('\n').to_string())
}

/// True when `device` rests on `image` (the kernel adds " (deleted)" once it is removed).
pub fn rests_on(device: &str, image: &Path) -> bool {
    let image = image.to_string_lossy();
    backing_file(device).is_some_and(|b| b == image || b.strip_suffix(" (deleted)") == Some(&*image))
}

/// Attaches `image` to a free loop device and returns the device, checked to rest on it.
pub fn attach(image: &Path, log: &mut Log) -> Result<String, String> {
    let device = log.run(Step::new("losetup").arg("--find").arg("--show").arg(image))?.trim().to_string();
    if !device.starts_with("/dev/loop") || !rests_on(&device, image) {
        return Err(format!(
            "losetup said {device} for {}, but sysfs does not show that device on it: refusing to go on",
            image.display()
        ));
    }
    Ok(device)
}

/// Sets the requests `device`'s queue holds at once (its `nr_requests`: this device's
/// own setting, nothing machine-wide), read back: the kernel raises what is below its
/// least. The setting outlives a detach (the next user of the device would find it), so
/// [`detach`] puts the loop driver's own back.
pub fn set_queue_depth(device: &str, depth: u32) -> Result<(), String> {
    let setting = nr_requests(device);
    std::fs::write(&setting, depth.to_string()).map_err(|e| format!("cannot set {setting} to {depth}: {e}"))?;
    let now = std::fs::read_to_string(&setting).map_err(|e| format!("cannot read {setting}: {e}"))?;
    if now.trim() != depth.to_string() {
        return Err(format!("{setting} is {} after setting it to {depth}", now.trim()));
    }
    Ok(())
}

/// Detaches `device` if (and only if) it still rests on `image`, and waits (up to 5 s)
/// until it is gone: `losetup -d` of a device still open (udev probing it after an
/// unmount) only marks it to be cleared at the last close, and until then it holds its
/// file, keeps the mount under that file busy and is left for whoever looks next.
pub fn detach(device: &str, image: &Path) -> Result<(), String> {
    if !rests_on(device, image) {
        // Already detached (or, after a reuse, someone else's): nothing of ours there.
        return Ok(());
    }
    // Put back before the detach (after it the device is anyone's), but a failure to
    // does not keep the device attached: it is said after the detach.
    let restored = restore_queue_depth(device);
    Step::new("losetup").arg("-d").arg(device).run()?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while rests_on(device, image) {
        if std::time::Instant::now() >= deadline {
            return Err(format!("{device} was detached from {} but is still open", image.display()));
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    restored
}

/// The requests a loop device's queue holds when the driver makes it (its
/// `hw_queue_depth`), put back on `device` if [`set_queue_depth`] changed them.
fn restore_queue_depth(device: &str) -> Result<(), String> {
    let own = std::fs::read_to_string("/sys/module/loop/parameters/hw_queue_depth");
    let now = std::fs::read_to_string(nr_requests(device));
    match (own, now) {
        (Ok(own), Ok(now)) if own.trim() != now.trim() => {
            let depth = own.trim().parse().map_err(|_| format!("the loop driver's queue depth is {own:?}"))?;
            set_queue_depth(device, depth)
        }
        _ => Ok(()),
    }
}

/// The sysfs file of the requests `device` (`/dev/loopN`) takes at once.
fn nr_requests(device: &str) -> String {
    format!("/sys/block/{}/queue/nr_requests", device.strip_prefix("/dev/").unwrap_or(device))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_that_is_not_attached_rests_on_nothing() {
        assert_eq!(backing_file("/dev/loop-writebench-none"), None);
        assert!(!rests_on("/dev/loop-writebench-none", Path::new("/dev/shm/x.img")));
        assert_eq!(backing_file("sda"), None);
        // Whatever is attached on this machine is listed with a backing file.
        assert!(attached().iter().all(|(device, backing)| device.starts_with("/dev/loop") && !backing.is_empty()));
    }
}
