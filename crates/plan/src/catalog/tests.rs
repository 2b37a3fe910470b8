use super::*;

#[test]
fn names_are_unique_and_found() {
    let names = names();
    for name in &names {
        assert_eq!(by_name(name).unwrap().name, *name);
        assert_eq!(names.iter().filter(|other| *other == name).count(), 1);
    }
    assert!(by_name("mmap-private").is_none());
    assert_eq!(find(NATIVE, "pwritev").unwrap().name, "pwritev");
    assert!(find("cobol", "pwritev").is_none(), "keyed by runtime too");
    assert_eq!(
        own().iter().map(|m| m.name).collect::<Vec<_>>(),
        [
            "fileio",
            "buffered",
            "bufio",
            "stream",
            "channel",
            "channel-direct",
            "async",
            "writeSync",
            "promises",
            "write-callback"
        ]
    );
    assert_eq!(runtime_names(), [NATIVE, "c", "python", "go", "zig", "java", "node"]);
}

#[test]
fn every_runtime_lists_each_method_once_and_twins_keep_their_natives_shape() {
    for runtime in RUNTIMES {
        let names = runtime.method_names();
        for name in &names {
            assert_eq!(names.iter().filter(|other| *other == name).count(), 1, "{} {name}", runtime.name);
        }
        for method in runtime.methods {
            // The plan asks by name (`by_name`): a method of the same name in another
            // runtime (native's twin, or Java's and Node's `stream`) must not answer otherwise.
            let twin = by_name(method.name).unwrap();
            let shape = |m: &Method| (m.family, m.vectored, m.queued, m.shares_file, m.file_per_thread, m.needs_size);
            assert_eq!(shape(method), shape(twin), "{} {}", runtime.name, method.name);
        }
    }
}

#[test]
fn creation_methods_are_the_creation_family() {
    for method in RUNTIMES.iter().flat_map(|runtime| runtime.methods) {
        assert_eq!(method.creation.is_some(), method.family == Family::Creation, "{}", method.name);
    }
    assert!(by_name("posix_fallocate").unwrap().creation.unwrap().allocates());
    assert!(!by_name("ftruncate").unwrap().creation.unwrap().allocates());
}

#[test]
fn refusals_come_from_the_data() {
    let mode = |text: &str| text.parse::<Durability>().unwrap();
    let mmap = by_name("mmap").unwrap();
    assert_eq!(
        mmap.empty_file_refusal().unwrap(),
        "mmap: mmap cannot extend a file: the file must be sized first, which is the sparse state"
    );
    assert_eq!(find("python", "mmap").unwrap().empty_file_refusal(), mmap.empty_file_refusal());
    assert_eq!(
        by_name("pwritev2-append").unwrap().sized_file_refusal().unwrap(),
        "pwritev2-append writes at the end of the file: only into an empty file (state empty)"
    );
    assert_eq!(by_name("pwritev2").unwrap().sized_file_refusal(), None);
    assert!(!by_name("pwritev2-append").unwrap().shares_file && by_name("pwritev2-atomic").unwrap().shares_file);
    assert_eq!(
        by_name("fwrite").unwrap().durability_refusal(mode("direct")).unwrap(),
        "fwrite: stdio's buffer is not aligned for O_DIRECT"
    );
    assert_eq!(
        find("c", "fwrite").unwrap().durability_refusal(mode("direct+end")).unwrap(),
        "fwrite: the language's own buffer is not aligned for O_DIRECT"
    );
    assert!(find("go", "io_uring").unwrap().durability_refusal(mode("every:4")).unwrap().contains("every:N"));
    assert_eq!(
        find("java", "async").unwrap().durability_refusal(mode("every:4")).unwrap(),
        "async: every:N is not implemented in this runtime's runner; use end, osync or odsync"
    );
    // Where a language's API has no O_DIRECT, its methods say so; its others take it.
    assert!(find("java", "stream").unwrap().durability_refusal(mode("direct")).unwrap().contains("java.io"));
    assert_eq!(find("java", "channel").unwrap().durability_refusal(mode("direct+end")), None);
    assert!(find("node", "writeSync").unwrap().durability_refusal(mode("direct")).unwrap().contains("align a Buffer"));
    assert_eq!(find("node", "writeSync").unwrap().durability_refusal(mode("odsync")), None);
    assert_eq!(by_name("io_uring").unwrap().durability_refusal(mode("every:4")), None);
    assert!(mmap.durability_refusal(mode("osync")).unwrap().contains("bypass write(2)"));
    assert!(by_name("ftruncate").unwrap().durability_refusal(mode("osync")).unwrap().contains("only none and end"));
    assert_eq!(by_name("ftruncate").unwrap().durability_refusal(mode("end-fdatasync")), None);
    assert_eq!(by_name("pwritev2").unwrap().mode_refusal(mode("rwf-dsync")), None);
    assert!(by_name("pwrite").unwrap().mode_refusal(mode("rwf-dsync")).unwrap().contains("only the pwritev2"));
    assert_eq!(by_name("write").unwrap().mode_refusal(mode("writebehind:1MiB")), None);
    assert!(find("go", "write").unwrap().mode_refusal(mode("writebehind:1MiB")).unwrap().contains("known offsets"));
}

#[test]
fn every_runtime_but_native_has_a_runner_to_build() {
    for runtime in RUNTIMES {
        let toolchain = runtime.toolchain.as_ref();
        assert_eq!(toolchain.is_none(), runtime.name == NATIVE, "{}", runtime.name);
        if let Some(toolchain) = toolchain {
            assert!(!toolchain.sources.is_empty() && toolchain.sources.iter().all(|(_, text)| !text.is_empty()));
            assert!(toolchain.version.iter().all(|command| command.len() >= 2), "{}", runtime.name);
        }
    }
}

#[test]
fn a_runner_must_offer_what_the_catalogue_lists_in_any_order() {
    let go = runtime("go").unwrap();
    let words = |list: &[&str]| list.iter().map(|word| word.to_string()).collect::<Vec<_>>();
    assert_eq!(go.check_offer(&words(&["io_uring", "pwrite", "bufio", "write"])), Ok(()));
    assert_eq!(
        go.check_offer(&words(&["write", "pwrite"])),
        Err("the go runner offers write, pwrite but the catalogue lists write, bufio, pwrite, io_uring".to_string())
    );
    assert_eq!(
        go.check_offer(&words(&["write", "bufio", "pwrite", "io_uring", "writev"])),
        Err("the go runner offers write, bufio, pwrite, io_uring, writev but the catalogue lists write, bufio, pwrite, io_uring"
            .to_string())
    );
    assert_eq!(
        go.check_offer(&[]),
        Err("the go runner offers nothing but the catalogue lists write, bufio, pwrite, io_uring".to_string())
    );
}

/// A runtime's small-write loops and saves call its own methods: a runner is asked only
/// for what its hello line offers, and every runtime has a loop of each kind it can run.
#[test]
fn every_runtimes_loop_calls_are_its_own_methods() {
    for runtime in RUNTIMES {
        let names = runtime.method_names();
        for call in runtime.overwrite0.iter().chain(runtime.append).chain(runtime.saves) {
            assert!(names.contains(call), "{}: {call} is not one of its methods", runtime.name);
        }
        assert!(!runtime.overwrite0.is_empty() && !runtime.append.is_empty(), "{}", runtime.name);
    }
    assert_eq!(runtime(NATIVE).unwrap().saves, ["write"]);
    assert!(RUNTIMES.iter().filter(|r| r.name != NATIVE).all(|r| r.saves.is_empty()), "the runners make no saves");
}
