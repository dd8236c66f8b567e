//! Which fixes the policy applies on its own: the judge [`crate::engine`]
//! runs on every finding before any front end, or the fixer, sees it, so
//! the fixer only plans what the policy allows and never decides it.

use crate::finding::{Applicability, Finding, Severity};

use super::Policy;

impl Policy {
    /// Makes the fix of every info-tier finding (after the policy's severity
    /// overrides) [`Applicability::OptIn`] unless the policy sets
    /// `fixInfoFindings`: an info finding describes a spec that works, and a
    /// fix should not rewrite what works (`sh -c "sleep 10"` into the native
    /// sleep) unless asked to. Run by [`crate::engine::lint_object`], so
    /// `lifeguard lint`, `lifeguard fix` and the webhook's `/mutate` and
    /// deny messages agree on which findings have a fix.
    pub(crate) fn hold_back_info_fixes(&self, findings: &mut [Finding]) {
        if self.settings.fix_info_findings {
            return;
        }
        for fix in findings.iter_mut().filter(|f| f.severity == Severity::Info).filter_map(|f| f.fix.as_mut()) {
            fix.applicability = Applicability::OptIn;
        }
    }
}
