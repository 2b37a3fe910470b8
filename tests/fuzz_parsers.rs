//! Property tests (bounded fuzzing, run by `cargo test`): the size and list parsers and
//! the option validator take any text without panicking, and what they accept is sane.
//! A fixed number of cases per property keeps CI time bounded (a few seconds).

use proptest::prelude::*;

use clap::Parser;
use writebench::cli::{Cli, Command};
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
        seed_suite in any::<bool>(),
    ) {
        let mut argv = vec!["writebench".to_string(), "run".to_string()];
        if seed_suite {
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
                // What validates must expand into cases without panicking, each with
                // a chunk of at least one byte and at most the limit.
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
