//! `simulate --fail-on`: which verdicts fail the run. Its own module, as
//! both the flags and the run's exit code read it.

use policies::simulate::Verdict;

/// A `--fail-on` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailOnVerdict {
    /// Fail on this verdict.
    Verdict(Verdict),
    /// Never fail because of verdicts.
    Never,
}

/// Whether a verdict fails the run under `--fail-on`.
pub fn fails(fail_on: &[FailOnVerdict], verdict: Verdict) -> bool {
    if fail_on.is_empty() {
        return verdict.fails_by_default();
    }
    fail_on.contains(&FailOnVerdict::Verdict(verdict))
}
