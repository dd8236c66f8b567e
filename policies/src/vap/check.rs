//! A rule's CEL check and the validation it becomes: what every covered
//! rule's `export vap` code makes, and the objects are built from.

use super::cel;
use crate::finding::Severity;

/// One rule's CEL check.
#[derive(Debug, Clone)]
pub struct Validation {
    /// The rule.
    pub rule: &'static str,
    /// Its severity under the policy.
    pub severity: Severity,
    /// True when the object passes.
    pub expression: String,
    /// The message when it does not: names the rule, the containers and the values.
    pub message: String,
}

/// A covered rule's check, per container `c` of `variables.containers`,
/// or of the object as a whole. A rule whose findings come at several
/// severities has one check per severity, so each lands with its action.
#[derive(Debug, Clone)]
pub(crate) struct Check {
    pub(crate) rule: &'static str,
    pub(crate) severity: Severity,
    /// Whether the finding is a container's (`bad` over `c`) or the object's.
    pub(crate) per_container: bool,
    /// True when container `c` (or the object) has the finding.
    pub(crate) bad: String,
    /// A CEL string naming `c` and the values.
    pub(crate) describe: String,
    /// What the message ends with (the help, in a few words).
    pub(crate) tail: String,
}

impl Check {
    /// The validation, with the policy's exemptions of the rule (`exempt`,
    /// over `c`; for an object's finding, `exempt_object`).
    pub(super) fn validation(self, exempt: &str, exempt_object: &str) -> Validation {
        let rule = cel::quoted(self.rule);
        if !self.per_container {
            let bad = format!("({}) && !({exempt_object})", self.bad);
            return Validation {
                rule: self.rule,
                severity: self.severity,
                expression: format!("{rule} in variables.ignored || !({bad})"),
                message: format!("{rule} + ': ' + {} + {}", self.describe, cel::quoted(&self.tail)),
            };
        }
        let bad = format!("({}) && !({exempt})", self.bad);
        Validation {
            rule: self.rule,
            severity: self.severity,
            expression: format!("{rule} in variables.ignored || !variables.containers.exists(c, {bad})"),
            message: format!(
                "{rule} + ': ' + variables.containers.filter(c, {bad}).map(c, {}).join('; ') + {}",
                self.describe,
                cel::quoted(&self.tail)
            ),
        }
    }
}
