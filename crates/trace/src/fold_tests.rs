//! The fold on logs as strace 6.1 wrote them (`-f -yy -ttt -T -v -s 0`), cut to the
//! lines that matter.

use result::trace::{Made, SyncCall, WriteCall};

use crate::fold::{Fold, Folded};
use crate::strace::Reader;

fn fold(log: &str) -> Folded {
    let mut reader = Reader::default();
    let mut fold = Fold::new(Some("/w"));
    for line in log.lines() {
        if let Some(event) = reader.line(line.trim_start()) {
            fold.event(event);
        }
    }
    fold.finish()
}

#[test]
fn an_appending_logger_with_an_fsync_after_each_record() {
    let folded = fold(
        r#"8435 10.000000 openat(AT_FDCWD</w>, "/w/t.py", O_RDONLY) = 3</w/t.py> <0.000010>
        8435 10.000100 close(3</w/t.py>) = 0 <0.000008>
        8435 10.001000 openat(AT_FDCWD</w>, "log.txt", O_WRONLY|O_CREAT|O_APPEND|O_CLOEXEC, 0666) = 3</w/log.txt> <0.000075>
        8435 10.001100 newfstatat(3</w/log.txt>, "", {st_mode=S_IFREG|0644, st_size=0, st_blocks=0}, AT_EMPTY_PATH) = 0 <0.000007>
        8435 10.001200 lseek(3</w/log.txt>, 0, SEEK_END) = 0 <0.000007>
        8435 10.002000 write(3</w/log.txt>, ""..., 301) = 301 <0.000017>
        8435 10.003000 fsync(3</w/log.txt>) = 0 <0.002934>
        8435 10.004000 write(3</w/log.txt>, ""..., 301) = 301 <0.000033>
        8435 10.005000 fsync(3</w/log.txt>) = 0 <0.000143>
        8435 10.006000 write(3</w/log.txt>, ""..., 301) = 301 <0.003355>
        8435 10.007000 fsync(3</w/log.txt>) = 0 <0.000152>
        8435 10.008000 close(3</w/log.txt>) = 0 <0.000078>
        8435 10.008100 write(1<pipe:[1234]>, ""..., 12) = 12 <0.000010>
        8435 10.009000 +++ exited with 0 +++"#,
    );
    assert_eq!(folded.files.len(), 1, "{:?}", folded.files);
    let log = &folded.files[0];
    assert_eq!(log.path, "/w/log.txt");
    assert_eq!(log.made, Made::New, "O_CREAT and then seen empty");
    assert_eq!(log.open_flags, ["O_APPEND", "O_CREAT"]);
    assert_eq!((log.bytes, log.sizes.median, log.offsets.append), (903, 301, 3));
    assert_eq!(log.calls[0].call, WriteCall::Write);
    assert_eq!(log.syncs[0].call, SyncCall::Fsync);
    let cadence = log.cadence.as_ref().unwrap();
    assert_eq!((cadence.writes.max, cadence.bytes.median, cadence.unsynced_bytes), (1, 301, 0));
    assert_eq!((log.threads, log.processes), (1, 1));
    assert!((log.first_write - 0.002).abs() < 1e-9 && (log.last_write - 0.006).abs() < 1e-9);
    assert_eq!(
        (folded.left_out.unwritten_files, folded.left_out.pseudo_files, folded.left_out.pseudo_bytes),
        (1, 1, 12)
    );
    assert_eq!(folded.exit.as_deref(), Some("exited with 0"));
    assert_eq!(folded.calls, 13);
}

#[test]
fn two_threads_writing_halves_with_pwrite() {
    let mut log = String::from(
        "100 1.0 openat(AT_FDCWD</w>, \"out\", O_RDWR|O_CREAT|O_TRUNC|O_CLOEXEC, 0666) = 3</w/out> <0.00001>\n\
         100 1.1 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD, exit_signal=0} => {parent_tid=[101]}, 88) = 101 <0.0001>\n\
         100 1.2 clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD, exit_signal=0} => {parent_tid=[102]}, 88) = 102 <0.0001>\n",
    );
    for i in 0..4u64 {
        log += &format!("101 2.{i} pwrite64(3</w/out>, \"\"..., 4096, {}) = 4096 <0.00001>\n", i * 4096);
        log += &format!("102 2.{i}5 pwrite64(3</w/out>, \"\"..., 4096, {}) = 4096 <0.00001>\n", 16384 + i * 4096);
    }
    log += "100 3.0 fsync(3</w/out>) = 0 <0.001>\n100 3.1 close(3</w/out>) = 0 <0.00001>\n";
    let folded = fold(&log);
    let out = &folded.files[0];
    assert_eq!((out.made, out.bytes, out.final_size), (Made::Truncated, 32768, Some(32768)));
    assert_eq!((out.threads, out.processes), (2, 1), "two threads of one process");
    let o = &out.offsets;
    // Thread 102's first write leaves a hole (random); then each continues its own
    // stream: 101 inside the file (sequential), 102 at its end (append).
    assert_eq!((o.append, o.sequential, o.random, o.same_place), (4, 3, 1, 0), "{o:?}");
    assert_eq!(out.cadence.as_ref().unwrap().writes.max, 8);
}

#[test]
fn a_save_by_rename_and_the_directory_fsync() {
    let folded = fold(
        r#"7 1.0 openat(AT_FDCWD</w>, "cfg.tmp", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3</w/cfg.tmp> <0.00001>
        7 1.1 write(3</w/cfg.tmp>, ""..., 100) = 100 <0.00001>
        7 1.2 fdatasync(3</w/cfg.tmp>) = 0 <0.001>
        7 1.3 close(3</w/cfg.tmp>) = 0 <0.00001>
        7 1.4 rename("cfg.tmp", "cfg") = 0 <0.00001>
        7 1.5 openat(AT_FDCWD</w>, ".", O_RDONLY|O_CLOEXEC) = 3</w> <0.00001>
        7 1.6 fsync(3</w>) = 0 <0.001>
        7 1.7 close(3</w>) = 0 <0.00001>
        7 2.0 openat(AT_FDCWD</w>, "cfg.tmp", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3</w/cfg.tmp> <0.00001>
        7 2.1 write(3</w/cfg.tmp>, ""..., 120) = 120 <0.00001>
        7 2.3 close(3</w/cfg.tmp>) = 0 <0.00001>
        7 2.4 renameat2(AT_FDCWD</w>, "cfg.tmp", AT_FDCWD</w>, "cfg", 0) = 0 <0.00001>"#,
    );
    assert_eq!(folded.files.len(), 1, "{:?}", folded.files);
    let cfg = &folded.files[0];
    assert_eq!(cfg.path, "/w/cfg");
    assert_eq!((cfg.bytes, cfg.opens), (220, 2));
    let rename = cfg.rename.as_ref().unwrap();
    assert_eq!((rename.from.as_str(), rename.times), ("/w/cfg.tmp", 2));
    assert!(!rename.synced_before, "the second save was not synced before its rename");
    assert!(!rename.directory_synced_after, "nor its directory after");
    assert_eq!(cfg.directory_syncs, 1, "the first save's directory sync");
}

#[test]
fn preallocation_unnamed_files_mappings_and_io_uring() {
    let folded = fold(
        r#"9 1.0 openat(AT_FDCWD</w>, "/w", O_RDWR|O_TMPFILE, 0600) = 3</w/#1234 (deleted)> <0.00001>
        9 1.1 fallocate(3</w/#1234 (deleted)>, 0, 0, 1048576) = 0 <0.0001>
        9 1.2 pwritev2(3</w/#1234 (deleted)>, [{iov_base=""..., iov_len=4096}, {iov_base=""..., iov_len=4096}], 2, 0, RWF_DSYNC) = 8192 <0.0001>
        9 1.3 linkat(3</w/#1234 (deleted)>, "", AT_FDCWD</w>, "data", AT_EMPTY_PATH) = 0 <0.0001>
        9 1.4 openat(AT_FDCWD</w>, "map", O_RDWR|O_CREAT, 0644) = 4</w/map> <0.00001>
        9 1.5 ftruncate(4</w/map>, 65536) = 0 <0.00001>
        9 1.6 mmap(NULL, 65536, PROT_READ|PROT_WRITE, MAP_SHARED, 4</w/map>, 0) = 0x7f0000000000 <0.00001>
        9 1.7 msync(0x7f0000000000, 65536, MS_SYNC) = 0 <0.001>
        9 1.8 io_uring_setup(8, {flags=0}) = 5<anon_inode:[io_uring]> <0.00001>
        9 1.9 io_uring_enter(5<anon_inode:[io_uring]>, 1, 1, IORING_ENTER_GETEVENTS, NULL, 8) = 1 <0.0001>"#,
    );
    let data = folded
        .files
        .iter()
        .find(|f| f.path == "/w/data")
        .unwrap_or_else(|| panic!("the unnamed file under its link: {:?}", folded.files));
    assert_eq!(data.made, Made::Unnamed);
    assert_eq!((data.preallocation.fallocate, data.preallocation.largest), (1, 1048576));
    assert_eq!(data.calls[0].buffers.as_ref().unwrap().median, 2);
    assert_eq!(data.calls[0].flags, [("RWF_DSYNC".to_string(), 1)]);
    assert_eq!(data.syncs[0].call, SyncCall::ODsync);
    assert_eq!(data.rename.as_ref().unwrap().from, "/w/#1234");
    assert_eq!(folded.mapped.len(), 1);
    assert_eq!((folded.mapped[0].path.as_str(), folded.mapped[0].msyncs), ("/w/map", 1));
    let uring = folded.io_uring.as_ref().unwrap();
    assert_eq!((uring.rings, uring.enters), (1, 1));
    assert_eq!(folded.left_out.unwritten_files, 1, "the mapped file has no write call: {:?}", folded.files);
}

#[test]
fn a_replay_keeps_a_prefix_of_the_calls() {
    let mut log =
        String::from("1 1.0 openat(AT_FDCWD</w>, \"f\", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3</w/f> <0.00001>\n");
    for i in 0..10 {
        log += &format!("1 1.{i} write(3</w/f>, \"\"..., 100) = 100 <0.00001>\n1 1.{i}5 fsync(3</w/f>) = 0 <0.001>\n");
    }
    let mut reader = Reader::default();
    let mut fold = Fold::new(Some("/w")).recording(Some(450));
    for line in log.lines() {
        if let Some(event) = reader.line(line) {
            fold.event(event);
        }
    }
    let folded = fold.finish();
    let replay = folded.replay.unwrap();
    assert!(replay.cut);
    assert_eq!((replay.bytes, replay.syncs), (500, 5), "the write that reached --size is the last");
    assert_eq!(folded.files[0].bytes, 1000, "the pattern has them all");
}

#[test]
fn processes_offsets_after_seeks_and_a_stdout_redirected_to_a_file() {
    let folded = fold(
        r#"1 1.0 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f) = 2 <0.0001>
        2 1.1 write(1</w/out.txt>, ""..., 10) = 10 <0.00001>
        1 1.2 openat(AT_FDCWD</w>, "f", O_WRONLY) = 3</w/f> <0.00001>
        1 1.3 lseek(3</w/f>, 0, SEEK_END) = 100 <0.00001>
        1 1.4 write(3</w/f>, ""..., 10) = 10 <0.00001>
        1 1.5 lseek(3</w/f>, 0, SEEK_SET) = 0 <0.00001>
        1 1.6 write(3</w/f>, ""..., 10) = 10 <0.00001>
        1 1.7 write(3</w/f>, ""..., 10) = 10 <0.00001>
        1 1.8 lseek(3</w/f>, 50, SEEK_SET) = 50 <0.00001>
        1 1.9 write(3</w/f>, ""..., 10) = 10 <0.00001>
        1 2.0 unlink("/w/f") = 0 <0.00001>"#,
    );
    let f = folded.files.iter().find(|f| f.path == "/w/f").unwrap();
    assert_eq!((f.made, f.size_at_open), (Made::Existing, Some(100)));
    let o = &f.offsets;
    assert_eq!((o.append, o.sequential, o.random, o.unknown), (1, 1, 2, 0), "{o:?}");
    assert!(f.removed);
    let out = folded.files.iter().find(|f| f.path == "/w/out.txt").expect("a descriptor from before the trace");
    assert_eq!((out.offsets.unknown, out.made), (1, Made::Existing));
}
