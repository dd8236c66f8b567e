//! What a run found: the findings placed in their files, the inputs that
//! failed, and the counts of what was already rendered. The data the
//! renderers read, below both the run that fills it and the reports that
//! print it.

mod input_error;
mod located;
mod rendered;
pub(crate) mod tally;
pub mod unchecked;

use policies::Severity;

pub use input_error::{InputError, InputLevel};
pub use located::{Linted, Located, Origin, SuppressedAt};
pub use rendered::Rendered;

/// Everything a lint run found.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Findings, in file order, then by position.
    pub findings: Vec<Located>,
    /// Input errors, in file order.
    pub errors: Vec<InputError>,
    /// Input warnings (repeated keys): shown, never failing the run.
    pub warnings: Vec<InputError>,
    /// Inputs that gave no object to check, each with why (only Services,
    /// templated text of another tool, read by a Kustomize build): shown in
    /// every format, never failing the run.
    pub notes: Vec<InputError>,
    /// The kinds of the objects of the input being linted that hold no pod
    /// template lifeguard reads, for its note when it gives no object
    /// (see [`unchecked`]); emptied once that input is done.
    pub other_kinds: Vec<String>,
    /// Files (and stdin) read.
    pub files: usize,
    /// Pod-bearing objects linted.
    pub objects: usize,
    /// The pod-bearing objects linted, in input order.
    pub linted: Vec<Linted>,
    /// Findings the policy suppressed (exemptions, ignore annotations):
    /// counted in the summary, never judged.
    pub suppressed: Vec<SuppressedAt>,
    /// Findings the baseline accepts (`--baseline`), out of `findings`.
    pub baselined: Vec<Located>,
    /// The policy in force, as the summary names it (`policy .lifeguard.yaml`);
    /// `None` for the `default` pack nothing chose.
    pub policy: Option<String>,
    /// Findings already rendered and dropped (see [`crate::pipeline::Keep`]),
    /// which come before those in `findings`.
    pub rendered: Rendered,
    /// Files read, or a cluster (`files` then counts namespaces).
    pub origin: Origin,
}

impl Outcome {
    /// Count of findings at a severity, rendered ones included.
    pub fn count(&self, severity: Severity) -> usize {
        self.findings.iter().filter(|f| f.finding.severity == severity).count() + self.rendered.count(severity)
    }

    /// Count of findings, rendered ones included.
    pub fn finding_count(&self) -> usize {
        self.findings.len() + self.rendered.total()
    }

    /// Count of suppressed findings, rendered ones' included.
    pub fn suppressed_count(&self) -> usize {
        self.suppressed.len() + self.rendered.suppressed
    }

    /// Findings the baseline accepts (`--baseline`): not reported but in
    /// SARIF (as `unchanged`), and never failing the run.
    pub fn baselined_count(&self) -> usize {
        self.baselined.len() + self.rendered.baselined
    }

    /// Whether a finding of a file for which `fails(file, severity)` holds was found.
    pub fn any_fails(&self, fails: impl Fn(&str, Severity) -> bool) -> bool {
        self.findings.iter().any(|f| fails(&f.file, f.finding.severity)) || self.rendered.any_fails(fails)
    }

    /// Process exit code: 2 on input errors, 1 on findings at or above `fail_on`, else 0.
    pub fn exit_code(&self, fail_on: Option<Severity>) -> u8 {
        if !self.errors.is_empty() {
            2
        } else if fail_on.is_some_and(|min| self.any_fails(|_, severity| severity >= min)) {
            1
        } else {
            0
        }
    }

    /// Every message about an input, with its level: the errors, then the
    /// warnings, then the notes, as every format lists them.
    pub fn input_messages(&self) -> impl Iterator<Item = (InputLevel, &InputError)> {
        let errors = self.errors.iter().map(|e| (InputLevel::Error, e));
        let warnings = self.warnings.iter().map(|e| (InputLevel::Warning, e));
        errors.chain(warnings).chain(self.notes.iter().map(|e| (InputLevel::Note, e)))
    }

    /// Appends what a part of the input (a document, a chunk) found; `files`
    /// stays the caller's count.
    pub fn absorb(&mut self, mut part: Outcome) {
        self.findings.append(&mut part.findings);
        self.errors.append(&mut part.errors);
        self.warnings.append(&mut part.warnings);
        self.notes.append(&mut part.notes);
        for kind in part.other_kinds {
            if !self.other_kinds.contains(&kind) {
                self.other_kinds.push(kind);
            }
        }
        self.objects += part.objects;
        self.linted.append(&mut part.linted);
        self.suppressed.append(&mut part.suppressed);
        self.baselined.append(&mut part.baselined);
        self.rendered.absorb(part.rendered);
    }
}
