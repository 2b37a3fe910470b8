//! `writebench completions SHELL` and `writebench man`: the command line, described.

use std::io::Write;
use std::process::ExitCode;

use clap::CommandFactory;

use crate::cli::Cli;

/// A completion script for `shell` on stdout.
pub(super) fn completions(shell: clap_complete::Shell) -> ExitCode {
    let mut command = Cli::command();
    clap_complete::generate(shell, &mut command, "writebench", &mut std::io::stdout());
    ExitCode::SUCCESS
}

/// The manual page on stdout.
pub(super) fn man() -> ExitCode {
    if manual(&mut std::io::stdout()).is_ok() { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

/// The manual page: the command's own page, then each subcommand's synopsis,
/// description and options in sections of their own, so that one page has them all.
fn manual(out: &mut dyn Write) -> std::io::Result<()> {
    let command = Cli::command();
    clap_mangen::Man::new(command.clone()).render(out)?;
    for sub in command.get_subcommands().filter(|sub| sub.get_name() != "help") {
        let name = format!("writebench {}", sub.get_name());
        let sub = sub.clone().bin_name(name.clone());
        writeln!(out, ".SH \"{}\"", name.to_uppercase())?;
        let man = clap_mangen::Man::new(sub);
        man.render_synopsis_section(out)?;
        man.render_description_section(out)?;
        man.render_options_section(out)?;
    }
    Ok(())
}
