//! Property tests (bounded fuzzing, run by `cargo test`): the size and list parsers and
//! the option validator take any text without panicking, and what they accept is sane.
//! A fixed number of cases per property keeps CI time bounded (a few seconds).

use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use clap::Parser;
use writebench::cli::{Cli, Command};
use writebench::plan::catalog;
use writebench::plan::units::{format_size, parse_size, split_list};

const CASES: u32 = 2000;

/// Text shaped like what people type for sizes and lists, plus arbitrary text.
fn size_like() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9_.]{0,25}[ ]?(B|b|K|k|KiB|kiB|Ki|M|m|MiB|Mi|G|g|GiB|Gi|T|t|TiB|Ti|KB|kB|kb|MB|mb|GB|gb|TB|tb|PiB|x)?",
        "[ -~]{0,30}",
        any::<String>(),
    ]
}

fn list_like() -> impl Strategy<Value = String> {
    prop::collection::vec(prop_oneof![size_like(), "[a-z_-]{0,12}".prop_map(String::from)], 0..5)
        .prop_map(|items| items.join(","))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn parse_size_never_panics_and_round_trips(text in size_like()) {
        if let Ok(bytes) = parse_size(&text) {
            prop_assert_eq!(parse_size(&bytes.to_string()), Ok(bytes));
            prop_assert!(!format_size(bytes).is_empty());
        } else {
            let error = parse_size(&text).unwrap_err();
            prop_assert!(!error.contains('\n'));
        }
    }

    #[test]
    fn every_u64_prints_and_parses_back(bytes in any::<u64>()) {
        prop_assert_eq!(parse_size(&bytes.to_string()), Ok(bytes));
        prop_assert_eq!(parse_size(&format!("{bytes}B")), Ok(bytes));
    }

    #[test]
    fn split_list_never_yields_an_empty_item(text in list_like()) {
        match split_list(&text) {
            Ok(items) => prop_assert!(items.iter().all(|item| !item.is_empty() && !item.contains(','))),
            Err(error) => prop_assert!(!error.contains('\n')),
        }
    }

    #[test]
    fn the_option_validator_never_panics(
        size in prop::option::of(size_like()),
        methods in prop::option::of(list_like()),
        states in prop::option::of(list_like()),
        chunks in prop::option::of(list_like()),
        iov in prop::option::of(list_like()),
        threads in prop::option::of(list_like()),
        layout in prop::option::of(list_like()),
        qd in prop::option::of(list_like()),
        durability in prop::option::of(list_like()),
        repeat in prop::option::of(any::<u32>()),
        warmup in prop::option::of(any::<u32>()),
        full_suite in any::<bool>(),
    ) {
        let mut argv = vec!["writebench".to_string(), "run".to_string()];
        if full_suite {
            argv.extend(["--suite".to_string(), "seed".to_string()]);
        }
        for (option, value) in [
            ("--size", size), ("--methods", methods), ("--states", states), ("--chunks", chunks),
            ("--iov", iov), ("--threads", threads), ("--layout", layout), ("--qd", qd),
            ("--durability", durability), ("--repeat", repeat.map(|n| n.to_string())),
            ("--warmup", warmup.map(|n| n.to_string())),
        ] {
            if let Some(value) = value {
                argv.push(format!("{option}={value}"));
            }
        }
        if let Ok(Cli { command: Command::Run(args) }) = Cli::try_parse_from(&argv) {
            match args.suite() {
                // What validates must expand without panicking (arbitrary text seldom
                // validates: valid_command_lines_... below checks the cases themselves).
                Ok(suite) => {
                    if suite.parts.iter().map(|p| p.size).max().unwrap_or(0) <= 64 << 20 {
                        for case in suite.cases() {
                            prop_assert!(case.chunk_bytes >= 1 && case.bytes >= 1);
                        }
                    }
                }
                Err(error) => prop_assert!(!error.0.contains('\n') && !error.0.is_empty()),
            }
        }
    }
}

/// A comma-separated list of one to three of `items`, in their order.
fn some_of(items: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop::sample::subsequence(items, 1..=items.len().min(3)).prop_map(|picked| picked.join(","))
}

/// A command line of valid values, each option present or not: sizes of 1 MiB and more,
/// chunks of 1 MiB and less, except a chunk of 2 MiB now and then, which is refused with
/// a size below it (a few percent of the lines).
fn valid_command_line() -> impl Strategy<Value = Vec<(&'static str, String)>> {
    let sizes = prop::sample::select(&["1MiB", "1M", "3000000", "1500KB", "2MiB", "8MiB", "64MiB"][..]);
    let methods = prop::sample::select(catalog::names()).prop_flat_map(|first| {
        some_of(&["write", "pwrite", "writev", "pwritev", "fwrite", "mmap", "mmap-fds", "io_uring", "ftruncate"])
            .prop_map(move |more| format!("{first},{more}"))
    });
    let options = (
        prop::option::of(sizes.prop_map(String::from)),
        prop::option::of(methods),
        prop::option::of(some_of(&["empty", "sparse", "prealloc", "overwrite"])),
        prop::option::of(some_of(&["1B", "512B", "4KiB", "10000B", "64KiB", "1MiB", "2MiB"])),
        prop::option::of(some_of(&["1", "3", "128", "1024"])),
        prop::option::of(some_of(&["1", "2", "3", "16"])),
        prop::option::of(some_of(&["one-file", "file-per-thread"])),
        prop::option::of(some_of(&["1", "2", "32", "4096"])),
        prop::option::of(some_of(&[
            "none",
            "end",
            "end-fdatasync",
            "every:3",
            "every-fdatasync:2",
            "osync",
            "odsync",
            "direct",
            "direct+end",
            "direct+odsync",
        ])),
        prop::option::of((1u32..=10).prop_map(|n| n.to_string())),
        prop::option::of((0u32..=3).prop_map(|n| n.to_string())),
    );
    options.prop_map(|(size, methods, states, chunks, iov, threads, layout, qd, durability, repeat, warmup)| {
        [
            ("--size", size),
            ("--methods", methods),
            ("--states", states),
            ("--chunks", chunks),
            ("--iov", iov),
            ("--threads", threads),
            ("--layout", layout),
            ("--qd", qd),
            ("--durability", durability),
            ("--repeat", repeat),
            ("--warmup", warmup),
        ]
        .into_iter()
        .filter_map(|(option, value)| value.map(|value| (option, value)))
        .collect()
    })
}

#[test]
fn valid_command_lines_validate_and_expand_into_the_cases_they_name() {
    let generated = AtomicUsize::new(0);
    let validated = AtomicUsize::new(0);
    let mut runner = TestRunner::new(Config { cases: 500, failure_persistence: None, ..Config::default() });
    let outcome = runner.run(&valid_command_line(), |options| {
        generated.fetch_add(1, Ordering::Relaxed);
        let mut argv = vec!["writebench".to_string(), "run".to_string()];
        argv.extend(options.iter().map(|(option, value)| format!("{option}={value}")));
        let Ok(Cli { command: Command::Run(args) }) = Cli::try_parse_from(&argv) else {
            return Err(TestCaseError::fail(format!("clap refused {argv:?}")));
        };
        let suite = match args.suite() {
            Ok(suite) => suite,
            Err(error) => {
                prop_assert!(error.0.contains("larger than --size"), "{argv:?}: {}", error.0);
                return Ok(());
            }
        };
        validated.fetch_add(1, Ordering::Relaxed);
        // Every case is one the options asked for.
        let given = |option: &str| -> Option<Vec<String>> {
            options.iter().find(|(name, _)| *name == option).map(|(_, list)| split_list(list).unwrap())
        };
        let allows = |option: &str, value: String| given(option).is_none_or(|list| list.contains(&value));
        let size = given("--size").map(|sizes| parse_size(&sizes[0]).unwrap());
        let chunks: Option<Vec<u64>> =
            given("--chunks").map(|list| list.iter().map(|c| parse_size(c).unwrap()).collect());
        let cases = suite.cases();
        let mut ids = std::collections::HashSet::new();
        for case in &cases {
            let method = catalog::by_name(&case.method).unwrap();
            prop_assert!(ids.insert(case.id.clone()), "{argv:?}: {} twice", case.id);
            prop_assert!(case.chunk_bytes >= 1 && case.bytes >= 1, "{argv:?}: {}", case.id);
            prop_assert!(allows("--methods", case.method.clone()), "{argv:?}: {}", case.id);
            prop_assert!(allows("--states", case.state.name().to_string()), "{argv:?}: {}", case.id);
            prop_assert!(allows("--durability", case.durability.name()), "{argv:?}: {}", case.id);
            prop_assert!(allows("--threads", case.threads.to_string()), "{argv:?}: {}", case.id);
            prop_assert!(case.files == 1 || case.files == case.threads, "{argv:?}: {}", case.id);
            if case.threads > 1 {
                let layout = if case.files == 1 { "one-file" } else { "file-per-thread" };
                prop_assert!(allows("--layout", layout.to_string()), "{argv:?}: {}", case.id);
            }
            prop_assert!(u64::from(case.threads) <= case.bytes.div_ceil(case.chunk_bytes), "{argv:?}: {}", case.id);
            if method.creation.is_some() {
                prop_assert_eq!(case.chunk_bytes, case.bytes, "{:?}: {}", argv, case.id);
                continue;
            }
            if let Some(chunks) = &chunks {
                prop_assert!(chunks.contains(&case.chunk_bytes), "{argv:?}: {}", case.id);
            }
            if let Some(size) = size {
                // The quick suite's parts all have its size: --size replaces it.
                prop_assert_eq!(case.bytes, size, "{:?}: {}", argv, case.id);
                prop_assert!(case.chunk_bytes <= size, "{argv:?}: {}", case.id);
            }
            if method.vectored {
                prop_assert!(allows("--iov", case.iov.to_string()), "{argv:?}: {}", case.id);
            } else {
                prop_assert_eq!(case.iov, 1, "{:?}: {}", argv, case.id);
            }
            match case.queue_depth {
                Some(depth) => {
                    prop_assert!(method.queued && allows("--qd", depth.to_string()), "{argv:?}: {}", case.id)
                }
                None => prop_assert!(!method.queued, "{argv:?}: {}", case.id),
            }
        }
        Ok(())
    });
    if let Err(error) = outcome {
        panic!("{error}");
    }
    let (generated, validated) = (generated.into_inner(), validated.into_inner());
    // The property means something only if most command lines get that far.
    assert!(validated * 10 >= generated * 9, "{validated} of {generated} command lines validated");
}
