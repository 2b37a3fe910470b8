//! With `io_uring_setup` refused to the writebench process (EPERM), the io_uring cases
//! are `unsupported`, with a reason that says the process was refused and does not
//! blame `kernel.io_uring_disabled` while that is 0, and the other cases still run.
//! The refusal is a seccomp filter that the child installs on itself between fork and
//! exec, so only that process is affected: the machine-wide sysctl is never written,
//! and io_uring keeps working for every other process (tests running meanwhile
//! included). The filter checks the architecture, known here for x86_64 and aarch64;
//! elsewhere the test does not build rather than pass without testing.

use crate::common;

use std::os::unix::process::CommandExt;
use std::process::{Command, Output};

use common::{read_json, stderr_of};

// Linux's <linux/audit.h>: the machine (EM_*) | __AUDIT_ARCH_64BIT | __AUDIT_ARCH_LE.
#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xc000_003e;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xc000_00b7;

/// `writebench ARGS` in a process where `io_uring_setup` fails with EPERM.
fn writebench_without_io_uring(args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_writebench"));
    command.args(args);
    // SAFETY: the closure runs in the forked child before exec and only makes two
    // prctl calls on data it owns, both async-signal-safe.
    unsafe { command.pre_exec(refuse_io_uring_setup) };
    command.output().expect("the writebench binary runs")
}

/// Installs a seccomp filter on the calling process: `io_uring_setup` fails with
/// EPERM, every other system call is allowed, a call of another architecture is killed
/// (its numbers mean other calls).
fn refuse_io_uring_setup() -> std::io::Result<()> {
    // struct seccomp_data: nr at 0, arch at 4.
    const NR: u32 = 0;
    const ARCH: u32 = 4;
    let statement = |code: u32, k: u32| libc::sock_filter { code: code as u16, jt: 0, jf: 0, k };
    let jump = |k: u32, jt: u8, jf: u8| libc::sock_filter {
        code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
        jt,
        jf,
        k,
    };
    let load = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
    let ret = libc::BPF_RET | libc::BPF_K;
    let mut program = [
        statement(load, ARCH),
        jump(AUDIT_ARCH, 1, 0),
        statement(ret, libc::SECCOMP_RET_KILL_PROCESS),
        statement(load, NR),
        jump(libc::SYS_io_uring_setup as u32, 0, 1),
        statement(ret, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
        statement(ret, libc::SECCOMP_RET_ALLOW),
    ];
    let filter = libc::sock_fprog { len: program.len() as u16, filter: program.as_mut_ptr() };
    // SAFETY: plain prctl calls; `filter` points at `program`, alive for both calls, and
    // the kernel copies the program.
    unsafe {
        // Lets a process without CAP_SYS_ADMIN install a filter, and is harmless with it.
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &filter as *const libc::sock_fprog) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[test]
fn refused_io_uring_is_unsupported_with_the_reason_and_pwrite_still_runs() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let sysctl = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled").ok();
    let output = writebench_without_io_uring(&[
        "run",
        dir.path().to_str().unwrap(),
        "--methods",
        "io_uring,pwrite",
        "--states",
        "empty",
        "--chunks",
        "64KiB",
        "--size",
        "1MiB",
        "--repeat",
        "1",
        "--warmup",
        "0",
        "--threads",
        "1",
        "--qd",
        "1",
        // The quick suite's durability part (direct+end, odsync) would add cases.
        "--durability",
        "end",
        "--export-json",
        json.to_str().unwrap(),
    ]);

    assert_eq!(output.status.code(), Some(0), "a case was measured: {}", stderr_of(&output));
    let result = read_json(&json);
    let cases = result["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2, "{cases:?}");
    let case =
        |method: &str| cases.iter().find(|c| c["method"] == method).unwrap_or_else(|| panic!("no {method} case"));

    let uring = case("io_uring");
    assert_eq!(uring["status"], "unsupported", "{uring}");
    let error = uring["error"].as_str().unwrap();
    assert!(error.contains("io_uring is not available"), "{error}");
    assert!(error.contains("io_uring_setup was refused (EPERM)"), "{error}");
    // The sysctl is named as the cause only when it is the cause: at 0 (or absent) the
    // process alone was refused, and its filter is said.
    if sysctl.as_deref().map(str::trim).is_none_or(|value| value == "0") {
        assert!(error.contains("for this process"), "{error}");
        assert!(error.contains("seccomp filter"), "{error}");
        assert!(!error.contains("forbids"), "{error}");
    }
    assert!(uring["stats"].is_null() && uring["durable_stats"].is_null(), "{uring}");
    assert_eq!(uring["runs"].as_array().unwrap().len(), 0);

    let pwrite = case("pwrite");
    assert_eq!(pwrite["status"], "ok", "{pwrite}");
    assert!(pwrite["error"].is_null());
    assert!(pwrite["stats"].is_object(), "{pwrite}");

    // Nothing outside the child was touched.
    let after = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled").ok();
    assert_eq!(after, sysctl, "kernel.io_uring_disabled changed");
}
