//! The chain followed on text fixtures: a mount table, sysfs files, directories, links
//! and command lines as this machine's kernel shows them for the lab's builds.

use std::collections::BTreeMap;

use super::*;

/// A machine made of text: what [`System`] reads, given per test.
#[derive(Default)]
struct Fixture {
    mountinfo: String,
    files: BTreeMap<String, String>,
    dirs: BTreeMap<String, Vec<String>>,
    links: BTreeMap<String, String>,
    commands: Vec<Vec<String>>,
}

impl Fixture {
    fn new(mountinfo: &str) -> Fixture {
        Fixture { mountinfo: format!("{ROOT}{mountinfo}"), ..Fixture::default() }
    }

    fn file(mut self, path: &str, text: &str) -> Fixture {
        self.files.insert(path.into(), text.into());
        self
    }

    fn dir(mut self, path: &str, names: &[&str]) -> Fixture {
        self.dirs.insert(path.into(), names.iter().map(|n| n.to_string()).collect());
        self
    }

    fn link(mut self, path: &str, to: &str) -> Fixture {
        self.links.insert(path.into(), to.into());
        self
    }

    /// A loop device `name` (number 7:N) over `file`.
    fn loop_over(self, name: &str, number: &str, file: &str) -> Fixture {
        self.link(&format!("/sys/dev/block/{number}"), &format!("/sys/devices/virtual/block/{name}"))
            .link(&format!("/dev/{name}"), &format!("/dev/{name}"))
            .file(&format!("/sys/block/{name}/loop/backing_file"), file)
    }

    fn find(&self, path: &str) -> Found {
        of_path(self, path)
    }
}

impl System for Fixture {
    fn mountinfo(&self) -> &str {
        &self.mountinfo
    }
    fn read(&self, path: &str) -> Option<String> {
        self.files.get(path).cloned()
    }
    fn list(&self, dir: &str) -> Vec<String> {
        self.dirs.get(dir).cloned().unwrap_or_default()
    }
    fn resolve(&self, path: &str) -> Option<String> {
        self.links.get(path).cloned()
    }
    fn commands_naming(&self, word: &str) -> Vec<Vec<String>> {
        self.commands.iter().filter(|argv| argv[1..].iter().any(|a| a == word)).cloned().collect()
    }
}

/// This machine's root on a virtio disk and /dev/shm on tmpfs, under every fixture.
const ROOT: &str = "\
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684084k
";

/// The root's disk, as sysfs shows a virtio disk.
fn with_disk(fixture: Fixture) -> Fixture {
    fixture.link("/sys/dev/block/254:0", "/sys/devices/pci0000:00/0000:00:05.0/virtio2/block/vda")
}

#[test]
fn ext4_on_a_loop_device_over_a_file_on_tmpfs_is_ram() {
    let lab = with_disk(Fixture::new("50 27 7:3 / /dev/shm/lab-mnt/ext4 rw,relatime - ext4 /dev/loop3 rw\n"))
        .loop_over("loop3", "7:3", "/dev/shm/writebench-lab-9-ext4-0.img");
    let found = lab.find("/dev/shm/lab-mnt/ext4/.writebench-1");
    assert_eq!(found, Found { backing: Backing::Ram, chain: "ext4 on /dev/loop3, a file on tmpfs".into() });
    // The lab removes its image while the device is still attached: the same mount.
    let deleted = lab.file("/sys/block/loop3/loop/backing_file", "/dev/shm/writebench-lab-9-ext4-0.img (deleted)");
    assert_eq!(deleted.find("/dev/shm/lab-mnt/ext4").backing, Backing::Ram);
}

#[test]
fn the_same_filesystem_over_a_file_on_a_disk_is_a_device() {
    let fixture = with_disk(Fixture::new("50 27 7:0 / /mnt/x rw - xfs /dev/loop0 rw\n")).loop_over(
        "loop0",
        "7:0",
        "/tmp/img/fs.img",
    );
    let found = fixture.find("/mnt/x");
    assert_eq!(
        found,
        Found { backing: Backing::Device, chain: "xfs on /dev/loop0, a file on ext4 on /dev/vda, a device".into() }
    );
    assert_eq!(fixture.find("/").backing, Backing::Device);
    assert_eq!(fixture.find("/dev/shm/x"), Found { backing: Backing::Ram, chain: "tmpfs".into() });
}

#[test]
fn md_raid_over_loop_devices_on_tmpfs_is_ram_and_a_mix_with_a_disk_is_unknown() {
    let mut md = with_disk(Fixture::new("60 27 9:127 / /dev/shm/lab-mnt/md rw - ext4 /dev/md127 rw\n"))
        .link("/sys/dev/block/9:127", "/sys/devices/virtual/block/md127")
        .dir("/sys/block/md127/slaves", &["loop0", "loop1", "loop2", "loop3"]);
    for n in 0..4 {
        md = md.file(&format!("/sys/block/loop{n}/loop/backing_file"), &format!("/dev/shm/lab-md-{n}.img"));
    }
    assert_eq!(
        md.find("/dev/shm/lab-mnt/md"),
        Found {
            backing: Backing::Ram,
            chain: "ext4 on /dev/md127, over /dev/loop0, /dev/loop1, /dev/loop2 and /dev/loop3, each a file on tmpfs"
                .into()
        }
    );
    // One member on a disk: part of the data reaches a device, part does not.
    let mixed =
        md.file("/sys/block/loop3/loop/backing_file", "/var/img").dir("/sys/block/md127/slaves", &["loop0", "loop3"]);
    let found = mixed.find("/dev/shm/lab-mnt/md");
    assert_eq!(found.backing, Backing::Unknown);
    assert!(
        found.chain.ends_with("/dev/loop0, a file on tmpfs; /dev/loop3, a file on ext4 on /dev/vda, a device"),
        "{}",
        found.chain
    );
}

#[test]
fn a_btrfs_over_two_loop_devices_is_followed_through_every_device() {
    // btrfs gives its mount an anonymous number: the source names one device, sysfs
    // lists them all under the filesystem's id.
    let btrfs = Fixture::new("70 27 0:45 / /dev/shm/lab-mnt/btrfs rw - btrfs /dev/loop4 rw,space_cache=v2\n")
        .link("/dev/loop4", "/dev/loop4")
        .dir("/sys/fs/btrfs", &["0f3b-uuid", "features"])
        .dir("/sys/fs/btrfs/0f3b-uuid/devices", &["loop4", "loop5"])
        .file("/sys/block/loop4/loop/backing_file", "/dev/shm/b-0.img")
        .file("/sys/block/loop5/loop/backing_file", "/dev/shm/b-1.img");
    assert_eq!(
        btrfs.find("/dev/shm/lab-mnt/btrfs"),
        Found { backing: Backing::Ram, chain: "btrfs on /dev/loop4 and /dev/loop5, each a file on tmpfs".into() }
    );
}

#[test]
fn bindfs_is_followed_to_its_source_and_other_fuse_daemons_are_unknown() {
    // bindfs (here without a subtype) sets the mount's source to its source directory.
    let table = "\
42 25 0:39 / /dev/shm/lab-mnt/fuse-lower rw - tmpfs writebench-lab rw
43 25 0:40 / /dev/shm/lab-mnt/fuse rw,nosuid,nodev - fuse /dev/shm/lab-mnt/fuse-lower rw,user_id=0
44 27 0:41 / /mnt/remote rw - fuse.sshfs me@host:/data rw
45 27 0:42 / /mnt/typed rw - fuse.bindfs /srv/data rw
";
    let mut fuse = with_disk(Fixture::new(table));
    let unknown = fuse.find("/dev/shm/lab-mnt/fuse/x");
    assert_eq!(unknown.backing, Backing::Unknown, "no bindfs process names the mount: {}", unknown.chain);
    assert!(unknown.chain.contains("where its daemon keeps the data is not known"), "{}", unknown.chain);
    // The run on the mount names it too; only a bindfs process counts.
    fuse.commands.push(vec!["writebench".into(), "run".into(), "/dev/shm/lab-mnt/fuse".into()]);
    assert_eq!(fuse.find("/dev/shm/lab-mnt/fuse").backing, Backing::Unknown);
    fuse.commands
        .push(["/usr/bin/bindfs", "/dev/shm/lab-mnt/fuse-lower", "/dev/shm/lab-mnt/fuse"].map(String::from).to_vec());
    assert_eq!(
        fuse.find("/dev/shm/lab-mnt/fuse/x"),
        Found { backing: Backing::Ram, chain: "fuse (bindfs) over /dev/shm/lab-mnt/fuse-lower, on tmpfs".into() }
    );
    assert_eq!(fuse.find("/mnt/typed").chain, "fuse.bindfs over /srv/data, on ext4 on /dev/vda, a device");
    let sshfs = fuse.find("/mnt/remote");
    assert_eq!(sshfs.backing, Backing::Unknown);
    assert!(sshfs.chain.starts_with("fuse.sshfs from me@host:/data"), "{}", sshfs.chain);
}

#[test]
fn ram_disks_partitions_dm_overlay_and_network_filesystems() {
    let table = "\
80 27 252:0 / /mnt/zram rw - ext4 /dev/zram0 rw
81 27 1:0 / /mnt/brd rw - xfs /dev/ram0 rw
82 27 253:1 / /mnt/crypt rw - ext4 /dev/mapper/secret rw
83 27 0:50 / /mnt/nfs rw - nfs4 server:/export rw,vers=4.2
84 27 0:51 / /merged rw - overlay overlay rw,lowerdir=/l,upperdir=/dev/shm/up,workdir=/dev/shm/work
85 27 0:52 / /zpool rw - zfs tank/data rw
";
    let fixture = Fixture::new(table)
        .link("/sys/dev/block/252:0", "/sys/devices/virtual/block/zram0")
        .link("/sys/dev/block/1:0", "/sys/devices/virtual/block/ram0")
        .link("/sys/dev/block/253:1", "/sys/devices/virtual/block/dm-1")
        .dir("/sys/block/dm-1/slaves", &["vdb2"])
        .file("/sys/class/block/vdb2/partition", "2")
        .link("/sys/class/block/vdb2", "/sys/devices/pci0000:00/virtio3/block/vdb/vdb2");
    assert_eq!(fixture.find("/mnt/zram").chain, "ext4 on /dev/zram0, a compressed RAM disk (zram)");
    assert_eq!(fixture.find("/mnt/zram").backing, Backing::Ram);
    assert_eq!(fixture.find("/mnt/brd").backing, Backing::Ram);
    assert_eq!(
        fixture.find("/mnt/crypt"),
        Found {
            backing: Backing::Device,
            chain: "ext4 on /dev/dm-1, over /dev/vdb2, a partition of /dev/vdb, a device".into()
        }
    );
    let nfs = fixture.find("/mnt/nfs");
    assert_eq!(
        (nfs.backing, nfs.chain.as_str()),
        (Backing::Unknown, "nfs4 from server:/export: on another machine's storage, not seen from here")
    );
    assert_eq!(
        fixture.find("/merged/a"),
        Found { backing: Backing::Ram, chain: "overlay, its upper layer on tmpfs".into() }
    );
    assert_eq!(fixture.find("/zpool").backing, Backing::Unknown, "no block device to follow");
    // A container's root: its upper layer is the host's path, under the overlay here.
    let container = Fixture::new("90 1 0:60 / / rw - overlay overlay rw,upperdir=/var/lib/docker/x/diff\n");
    let found = container.find("/work");
    assert_eq!(found.backing, Backing::Unknown);
    assert_eq!(found.chain, "overlay whose upper layer /var/lib/docker/x/diff is not in this mount table");
}

#[test]
fn a_loop_device_on_its_own_filesystem_ends_as_unknown() {
    // Not a real machine: a chain that comes back to itself must still end.
    let fixture =
        Fixture::new("50 27 7:0 / /mnt/self rw - ext4 /dev/loop0 rw\n").loop_over("loop0", "7:0", "/mnt/self/fs.img");
    let found = fixture.find("/mnt/self");
    assert_eq!(found.backing, Backing::Unknown);
    assert!(found.chain.contains("not followed"), "{}", found.chain);
}

#[test]
fn this_machines_shm_and_proc_are_read() {
    let live = Live::new(std::fs::read_to_string("/proc/self/mountinfo").unwrap());
    let shm = of_path(&live, "/dev/shm");
    assert_eq!((shm.backing, shm.chain.as_str()), (Backing::Ram, "tmpfs"), "/dev/shm is tmpfs where the lab runs");
    assert_eq!(of_path(&live, "/proc").backing, Backing::Unknown, "proc has no device to follow");
}
