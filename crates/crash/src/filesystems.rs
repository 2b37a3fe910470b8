//! The filesystems `writebench crash` checks: the crash parts of the lab's rows
//! (`lab::filesystems::ALL`, each with how to make one on the recorder's device, how
//! large its device must be, and its checker in read-only mode; docs/crash.md). A new
//! filesystem is one row there, for the lab and the crash check alike.

pub use lab::filesystems::CrashFs;

pub fn by_name(name: &str) -> Option<&'static CrashFs> {
    lab::filesystems::crash_checked().find(|fs| fs.name == name)
}

pub fn names() -> Vec<&'static str> {
    lab::filesystems::crash_checked().map(|fs| fs.name).collect()
}
