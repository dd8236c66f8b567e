//! What planning a Kustomize build's fixes again reads: the run's batch and
//! policy, and each rendered document's origin.

use policies::{Batch, Policy};

use crate::input::Template;

/// How an object's fixes are planned again without some rules: the
/// engine's [`policies::plan_fixes`] with the run's batch and policy.
pub(crate) struct Planner<'a> {
    pub(crate) batch: &'a Batch,
    pub(crate) policy: &'a Policy,
    /// `--rule`, when given.
    pub(crate) only: Option<&'a [String]>,
}

/// Each document of the build's output: its object's origin as `lint`
/// places it, and the lines it rendered.
pub(super) type Origins<'t> = Vec<Option<(Template, &'t str)>>;
