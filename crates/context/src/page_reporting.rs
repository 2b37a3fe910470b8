//! Whether this machine is a virtual machine that gives freed memory back to its host
//! (virtio-balloon's free page reporting, VIRTIO_BALLOON_F_REPORTING). There, memory
//! that stayed free for a couple of seconds is reported and dropped by the host, and
//! the next write into it (a page cache page, a tmpfs page) first waits for the host to
//! supply it again. Measured on this project's Firecracker VMs with a plain C loop:
//! `write` of 1 GiB in 1 MiB calls into ext4's page cache ran at 5.8 GB/s right after
//! another such write and at 1.2-1.3 GB/s after a 3 s pause or after a 4 KiB-call write
//! (whose small pages could not serve the next file's large folios), the copy into the
//! page cache taking 82-86 % of the time either way (`perf`). See `measure::settle`.

use std::sync::OnceLock;

/// The feature bit of VIRTIO_BALLOON_F_REPORTING in a virtio device's feature string.
const REPORTING_BIT: usize = 5;
/// virtio's device id of a memory balloon.
const BALLOON: &str = "0x0005";

/// Whether a virtio balloon with free page reporting is present (read once).
pub fn free_page_reporting() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    *PRESENT.get_or_init(|| {
        let Ok(devices) = std::fs::read_dir("/sys/bus/virtio/devices") else { return false };
        devices.flatten().any(|device| {
            let read = |name: &str| std::fs::read_to_string(device.path().join(name)).unwrap_or_default();
            reports_free_pages(&read("device"), &read("features"))
        })
    })
}

/// A virtio device of id `device` with `features` (a string of '0' and '1', bit 0
/// first, as sysfs shows it) is a balloon that reports free pages.
fn reports_free_pages(device: &str, features: &str) -> bool {
    device.trim() == BALLOON && features.trim().as_bytes().get(REPORTING_BIT) == Some(&b'1')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_balloon_with_the_reporting_bit_reports_free_pages() {
        // This project's VMs: the balloon's features as sysfs shows them.
        assert!(reports_free_pages("0x0005\n", "0110010100000000000000000000000010000000\n"));
        assert!(!reports_free_pages("0x0005", "0110000100000000000000000000000010000000"), "bit 5 clear");
        assert!(!reports_free_pages("0x0002", "0110010100000000000000000000000010000000"), "a block device");
        assert!(!reports_free_pages("0x0005", "0110"), "too short");
    }
}
