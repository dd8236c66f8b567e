//! `probe-invalid`'s findings of one probe: the probe's name before each
//! text. A module of its own so that the `pgrep` check and the rule's other
//! checks share it without importing each other.

use crate::finding::{Finding, Fix, Severity};
use crate::model::{ContainerView, ProbeKind};
use crate::rules::{Rule, with_fix};

/// Where a check of one probe puts its findings: the probe's name before
/// each text, the rule's finding built once here.
pub(super) struct Out<'a, 'b> {
    pub(super) rule: &'static Rule,
    pub(super) out: &'a mut Vec<Finding>,
    pub(super) c: ContainerView<'b>,
    pub(super) kind: ProbeKind,
}

impl Out<'_, '_> {
    /// `problem` and `short` (the problem in at most 55 characters) follow
    /// the probe's name.
    pub(super) fn push(&mut self, severity: Severity, at: &[&str], problem: String, short: String, help: &str) {
        self.push_with(severity, at, problem, short, help, None);
    }

    pub(super) fn push_with(
        &mut self,
        severity: Severity,
        at: &[&str],
        problem: String,
        short: String,
        help: &str,
        fix: Option<Fix>,
    ) {
        let pointer = self.c.at(&[&[self.kind.field()], at].concat());
        let message = format!("{} probe {problem}", self.kind.word());
        let short = format!("{} probe {short}", self.kind.word());
        self.out.push(with_fix(self.rule.finding(severity, pointer, Some(self.c.name()), message, short, help), fix));
    }

    pub(super) fn error(&mut self, at: &[&str], problem: String, short: String, help: &str) {
        self.push(Severity::Error, at, problem, short, help);
    }
}
