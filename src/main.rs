//! `writebench`: parse the command line, run the subcommand's pipeline (`app`), exit
//! with its status (docs/exit-status.md).

use std::process::ExitCode;

use clap::Parser;
use clap::error::ErrorKind;

use writebench::cli::{Cli, UsageError};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            if matches!(
                error.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = error.print();
                return ExitCode::from(if error.use_stderr() { 2 } else { 0 });
            }
            // clap explains at length; the user gets the one line that matters, with the
            // list a line ending in ':' announces ("…were not provided: --check <CMD>").
            let text = error.render().to_string();
            let mut lines = text.lines();
            let mut first = lines.next().unwrap_or("invalid command line").trim_start_matches("error: ").to_string();
            if first.ends_with(':') {
                let listed: Vec<&str> = lines.take_while(|l| l.starts_with("  ")).map(str::trim).collect();
                first = format!("{first} {}", listed.join(", "));
            }
            eprintln!("writebench: {}", first.trim_end());
            return ExitCode::from(2);
        }
    };
    match writebench::app::dispatch(cli.command) {
        Ok(code) => code,
        Err(UsageError(message)) => {
            eprintln!("writebench: {message}");
            ExitCode::from(2)
        }
    }
}
