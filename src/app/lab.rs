//! `writebench lab`: checks everything, then builds, measures and tears down each
//! filesystem in turn, and compares them (`lab::driver`).

use std::process::ExitCode;

use crate::cli::UsageError;
use crate::cli::lab::LabArgs;
use crate::lab::driver::{self, Outcome};

pub(super) fn lab(args: &LabArgs) -> Result<ExitCode, UsageError> {
    // The command line after `lab`, as typed: its run options go to each run.
    let argv: Vec<String> = std::env::args().skip_while(|arg| arg != "lab").skip(1).collect();
    let plan = args.plan(&argv)?;
    match driver::run(&plan) {
        Outcome::Done(code) => Ok(ExitCode::from(code)),
        Outcome::Refused(why) => Err(UsageError(why)),
    }
}
