//! A rule's CEL check and the validation it becomes: what every covered
//! rule's `export vap` code makes, and the objects are built from.
//!
//! Each check's findings are a variable of its policy (evaluated once,
//! when a validation first reads it), named for its rule: on each side of
//! `variables.objects` (the object, and before an UPDATE the ratchet
//! judges, the old object), the names of the containers with the finding,
//! or whether the object has it. The validation fails when the object has
//! one; ratcheted, only when the old object did not have it too (see
//! [`super::ratchet`]).

use super::fragments;
use crate::finding::Severity;

/// One rule's CEL check.
#[derive(Debug, Clone)]
pub struct Validation {
    /// The rule.
    pub rule: &'static str,
    /// Its severity under the policy.
    pub severity: Severity,
    /// The variable holding its findings: its name, and its expression
    /// (a list of container names, or for an object's finding a bool).
    pub found: (String, String),
    /// Whether the finding is a container's or the object's.
    per_container: bool,
    /// A CEL string naming `c` and the values.
    describe: String,
    /// What the message ends with (the help, in a few words).
    tail: String,
}

/// A covered rule's check, per container `c` of `variables.containers`,
/// or of the object as a whole. A rule whose findings come at several
/// severities has one check per severity, so each lands with its action.
#[derive(Debug, Clone)]
pub(crate) struct CelCheck {
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

/// The variable name of a rule's `index`-th check (from 0): the rule in
/// camel case (`probePortUnknown`), then `probePortUnknown2`, ...
pub(crate) fn variable_name(rule: &str, index: usize) -> String {
    let mut out = String::new();
    for (i, word) in rule.split('-').enumerate() {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            out.push(if i == 0 { first } else { first.to_ascii_uppercase() });
            out.push_str(chars.as_str());
        }
    }
    if index > 0 {
        out.push_str(&(index + 1).to_string());
    }
    out
}

impl CelCheck {
    /// The validation of the rule's `index`-th check, with the policy's
    /// exemptions of the rule (`exempt`, over `c`; for an object's finding,
    /// `exempt_object`) and the `lifeguard.dev/ignore` annotation.
    pub(crate) fn validation(self, index: usize, exempt: &str, exempt_object: &str) -> Validation {
        let rule = fragments::quoted(self.rule);
        let found = if self.per_container {
            format!(
                "{rule} in variables.ignored ? [] : variables.containers.filter(c, ({}) && !({exempt})).map(c, c.name)",
                self.bad
            )
        } else {
            format!("!({rule} in variables.ignored) && ({}) && !({exempt_object})", self.bad)
        };
        Validation {
            rule: self.rule,
            severity: self.severity,
            found: (variable_name(self.rule, index), found),
            per_container: self.per_container,
            describe: self.describe,
            tail: self.tail,
        }
    }
}

impl Validation {
    /// The findings' variable, on each side: `variables.sides.map(s, ...)`
    /// over the slot's variables (`variables`, each a list by side).
    pub(crate) fn found_on_sides(&self, variables: &[&str]) -> (String, String) {
        let on = super::text::on_side(&self.found.1, variables, "s", true);
        (self.found.0.clone(), format!("variables.sides.map(s, {on})"))
    }

    /// True when the object passes: it has none of the findings, or with
    /// `old` (the variable of the rule's findings before an UPDATE), none
    /// that is not there.
    pub(crate) fn expression(&self, old: Option<&str>) -> String {
        let found = format!("variables.{}[0]", self.found.0);
        match (self.per_container, old) {
            (true, None) => format!("size({found}) == 0"),
            (true, Some(old)) => format!("{found}.all(n, n in variables.{old})"),
            (false, None) => format!("!{found}"),
            (false, Some(old)) => format!("!{found} || '' in variables.{old}"),
        }
    }

    /// The message: the rule, each container (with `old`, each the update
    /// gives the finding) and its values, the help, the rule's docs; read
    /// on the object (side 0 of each of `variables`).
    pub(crate) fn message(&self, old: Option<&str>, variables: &[&str]) -> String {
        let head = fragments::quoted(&format!("{}: ", self.rule));
        let tail = format!(
            "{} + {}",
            fragments::quoted(&self.tail),
            fragments::quoted(&format!(" ({})", crate::docs_link::docs_url(self.rule)))
        );
        let describe = super::text::on_side(&self.describe, variables, "0", false);
        if !self.per_container {
            return format!("{head} + {describe} + {tail}");
        }
        let new = old.map(|old| format!(" && !(c.name in variables.{old})")).unwrap_or_default();
        format!(
            "{head} + variables.containers[0].filter(c, c.name in variables.{}[0]{new}).map(c, {describe}).join('; ') + {tail}",
            self.found.0
        )
    }

    /// Its findings on the old object (side 1), as a CEL list of container
    /// names (`''` for the object's own).
    pub(crate) fn on_old_object(&self) -> String {
        let found = format!("variables.{}[1]", self.found.0);
        if self.per_container { found } else { format!("({found} ? [''] : [])") }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(per_container: bool) -> Validation {
        CelCheck {
            rule: "probe-port-unknown",
            severity: Severity::Error,
            per_container,
            bad: "c.x == 1".to_owned(),
            describe: "'container \"' + c.name + '\"'".to_owned(),
            tail: ", so it fails".to_owned(),
        }
        .validation(1, "false", "object.metadata.name == 'x'")
    }

    #[test]
    fn a_check_s_findings_are_a_variable_named_for_its_rule_with_a_value_per_side() {
        let v = check(true);
        assert_eq!(v.found.0, "probePortUnknown2");
        assert_eq!(variable_name("probe-port-unknown", 0), "probePortUnknown");
        assert_eq!(
            v.found_on_sides(&["ignored", "containers"]).1,
            "variables.sides.map(s, 'probe-port-unknown' in variables.ignored[s] ? [] : \
             variables.containers[s].filter(c, (c.x == 1) && !(false)).map(c, c.name))"
        );
        assert_eq!(v.expression(None), "size(variables.probePortUnknown2[0]) == 0");
        let message = v.message(None, &["containers"]);
        assert!(message.starts_with(
            "'probe-port-unknown: ' + variables.containers[0].filter(c, c.name in variables.probePortUnknown2[0])"
        ));
        assert!(message.ends_with(
            ".join('; ') + ', so it fails' + ' (https://github.com/lifeguard-dev/lifeguard/blob/main/docs/rules.md#probe-port-unknown)'"
        ));
    }

    #[test]
    fn ratcheted_only_a_container_without_the_finding_before_fails_and_is_named() {
        let v = check(true);
        assert_eq!(
            v.expression(Some("oldProbePortUnknown")),
            "variables.probePortUnknown2[0].all(n, n in variables.oldProbePortUnknown)"
        );
        assert!(v.message(Some("oldProbePortUnknown"), &[]).contains(
            "filter(c, c.name in variables.probePortUnknown2[0] && !(c.name in variables.oldProbePortUnknown))"
        ));
        assert_eq!(v.on_old_object(), "variables.probePortUnknown2[1]");
    }

    #[test]
    fn an_object_s_finding_is_matched_with_the_object_s_before() {
        let v = check(false);
        assert_eq!(v.expression(Some("oldR")), "!variables.probePortUnknown2[0] || '' in variables.oldR");
        assert_eq!(v.on_old_object(), "(variables.probePortUnknown2[1] ? [''] : [])");
        assert_eq!(
            v.found_on_sides(&["ignored"]).1,
            "variables.sides.map(s, !('probe-port-unknown' in variables.ignored[s]) && (c.x == 1) && \
             !(variables.objects[s].metadata.name == 'x'))"
        );
    }
}
