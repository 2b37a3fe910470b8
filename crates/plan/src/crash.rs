//! Which crash-check workload (docs/crash.md) makes the durability promise of a case:
//! the name `writebench crash --workloads` takes, so that a result's crash checks can be
//! matched to the Answer's durable recommendations.

use super::catalog::{self, Family};
use super::latency::{Pattern, is_latency_case, pattern_of};
use super::{Case, Durability};

/// The workload of `case`: its mode's name (`end`, `odsync`, `every:4`, `direct+end`…);
/// `io_uring+every:N` for io_uring's linked syncs; `PATTERN+MODE` for a small commit of
/// `latency` (`append+odsync`); the pattern for a save (`replace`). None where nothing
/// is promised, and where no workload makes the calls (mmap's msync, a file creation).
pub fn workload_of(case: &Case) -> Option<String> {
    if is_latency_case(case) {
        let pattern = pattern_of(case)?;
        return match pattern {
            Pattern::Replace | Pattern::ReplaceTmpfile | Pattern::ReplaceUnsafe => Some(pattern.name().to_string()),
            Pattern::Append | Pattern::Overwrite0 => {
                durable(case.durability).then(|| format!("{}+{}", pattern.name(), case.durability.name()))
            }
        };
    }
    if !durable(case.durability) {
        return None;
    }
    match catalog::by_name(&case.method)?.family {
        Family::Mapped | Family::Creation => None,
        Family::Asynchronous => case.durability.every().map(|_| format!("io_uring+{}", case.durability.name())),
        Family::Simple | Family::Vectored | Family::Parallel => Some(case.durability.name()),
    }
}

/// Whether `durability` promises anything a power loss could break.
fn durable(durability: Durability) -> bool {
    durability.syncs() && durability.every().is_none_or(|(n, _)| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FileState;

    fn case(method: &str, durability: &str) -> Case {
        let method = catalog::by_name(method).unwrap();
        Case::new(method, FileState::Empty, 1 << 20, 1, durability.parse().unwrap(), 1 << 24)
    }

    #[test]
    fn a_case_names_the_workload_that_makes_its_promise() {
        assert_eq!(workload_of(&case("pwrite", "end")).as_deref(), Some("end"));
        assert_eq!(workload_of(&case("writev", "odsync")).as_deref(), Some("odsync"));
        assert_eq!(workload_of(&case("write", "direct+end")).as_deref(), Some("direct+end"));
        assert_eq!(workload_of(&case("pwrite", "none")), None, "no promise");
        assert_eq!(workload_of(&case("mmap", "end")), None, "msync is not a workload");
        assert_eq!(workload_of(&case("io_uring", "every:4")).as_deref(), Some("io_uring+every:4"));
        let mut commit = case("pwrite", "odsync");
        commit.kind = crate::CaseKind::Latency(crate::pattern::Pattern::Append);
        assert_eq!(workload_of(&commit).as_deref(), Some("append+odsync"));
        let mut save = case("pwrite", "none");
        save.kind = crate::CaseKind::Latency(crate::pattern::Pattern::ReplaceUnsafe);
        assert_eq!(workload_of(&save).as_deref(), Some("replace-unsafe"));
    }
}
