//! A result of this writebench, assembled in one place for every subcommand that
//! measures, and the conclusions drawn from it (also for a result read back).

use crate::analysis::advice;
use crate::context::calibration::Calibration;
use crate::context::{Host, TargetInfo};
use crate::result::options::RunOptions;
use crate::result::{CaseResult, ResultFile, SCHEMA, Tool};

/// The result of a command that has just measured, its conclusions not yet drawn.
/// `host` is taken after the work, so that its swap and peak figures cover it.
pub(super) fn assemble(
    host: Host,
    target: TargetInfo,
    options: RunOptions,
    cases: Vec<CaseResult>,
    calibration: Option<Calibration>,
) -> ResultFile {
    ResultFile {
        schema: SCHEMA.to_string(),
        tool: Tool::this(),
        host,
        target,
        options,
        cases,
        observations: Vec::new(),
        observation_tests: None,
        answer: Vec::new(),
        calibration,
        crash: Vec::new(),
        race: None,
        complete: true,
    }
}

/// Fills each case's share of its ceilings, the facts beside its figures, the
/// observations and the answer, from the cases and the calibration alone.
pub(super) fn draw_conclusions(result: &mut ResultFile) {
    crate::analysis::summarize::creations_per_call(result);
    crate::analysis::ceilings::apply(result);
    crate::analysis::case_facts::annotate(result);
    let (observations, tests) = advice::counted_observations(result);
    (result.observations, result.observation_tests) = (observations, Some(tests));
    result.answer = advice::recommendations(result);
}

/// The command line, as every result records it.
pub(super) fn argv() -> Vec<String> {
    std::env::args().collect()
}
