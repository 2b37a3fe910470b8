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
            // clap explains at length; the user gets the one line that matters.
            let text = error.render().to_string();
            let first = text.lines().next().unwrap_or("invalid command line").trim_start_matches("error: ");
            eprintln!("writebench: {first}");
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
