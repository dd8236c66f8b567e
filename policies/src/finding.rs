//! What a rule reports: a finding, its severity and its optional fix.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::assumption::Assumption;

/// How serious a finding is. Ordered: `Info < Warning < Error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; not wrong on its own.
    Info,
    /// Likely to hurt under load, on rollout or on a slow dependency.
    Warning,
    /// Breaks pods or drops traffic as written.
    Error,
}

impl Severity {
    /// The lower-case name used in every output format.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    /// Parses `info`, `warning` or `error` (case-insensitive).
    pub fn parse(s: &str) -> Option<Severity> {
        match s.to_ascii_lowercase().as_str() {
            "info" | "note" => Some(Severity::Info),
            "warning" | "warn" => Some(Severity::Warning),
            "error" => Some(Severity::Error),
            _ => None,
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a fix is applied or only shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Applicability {
    /// Applied by `lifeguard fix`, the webhook's `/mutate` and the editor's
    /// quick fix.
    #[default]
    Automatic,
    /// The fix of an info-tier finding that the policy leaves out
    /// (`fixInfoFindings: false`, the default): shown, never applied.
    OptIn,
}

/// A fix: RFC 6902 operations against the object the finding came from,
/// with a short description a person can review.
#[derive(Debug, Clone, PartialEq)]
pub struct Fix {
    /// One line: what the fix changes and to which values.
    pub description: String,
    /// Operations on the object; pointers are relative to the object root.
    pub operations: Vec<json_patch::PatchOperation>,
    /// Whether the policy applies it: every rule writes an automatic fix,
    /// and the engine makes an info finding's opt-in
    /// ([`crate::fix`]), so every front end reads the one answer here.
    pub applicability: Applicability,
}

impl Fix {
    /// An automatic fix.
    pub fn new(description: String, operations: Vec<json_patch::PatchOperation>) -> Fix {
        Fix { description, operations, applicability: Applicability::Automatic }
    }
}

/// An RFC 6902 `add` of `value` at `path` (an `add` also replaces an
/// existing member, so it applies whether or not the field is there).
/// `None` when the path is not a valid JSON pointer.
pub fn add_op(path: &str, value: serde_json::Value) -> Option<json_patch::PatchOperation> {
    let path = json_patch::jsonptr::PointerBuf::parse(path).ok()?;
    Some(json_patch::PatchOperation::Add(json_patch::AddOperation { path, value }))
}

/// The line `rule: short` is written to fit in: the Kubernetes
/// recommendation for one warning.
pub const SHORT_LINE_CHARS: usize = 120;

/// `text` in at most `max` characters: whole, or cut after a whole word
/// with `...` (and without the punctuation before the cut). Only a first
/// word longer than the line itself is cut inside.
pub fn cut_at_word(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    const MORE: &str = "...";
    let room = max.saturating_sub(MORE.len());
    let end = text.char_indices().nth(room).map_or(text.len(), |(i, _)| i);
    // A cut right before a space keeps the word before it whole.
    let whole = text[end..].starts_with(char::is_whitespace);
    let kept = if whole {
        &text[..end]
    } else {
        text[..end].rsplit_once(char::is_whitespace).map_or(&text[..end], |(head, _)| head)
    };
    let kept = kept.trim_end_matches(|c: char| c.is_whitespace() || ",;:(-".contains(c));
    let kept = if kept.is_empty() { &text[..end] } else { kept };
    format!("{kept}{MORE}")
}

/// How front ends name a finding's container before its texts: the one
/// composition is [`Finding::located_message`] and
/// [`Finding::located_short`]; the texts themselves never start with it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Naming {
    /// `container "x": ` before the message and the short form.
    #[default]
    Prefix,
    /// `container "x" (requests nvidia.com/gpu): ` before the message: a
    /// fact about the container the finding rests on (its GPU request makes
    /// it an error), named with it. The short form names the container
    /// alone, for room.
    Noted(String),
    /// `container "x" ` before the message, whose sentence has the
    /// container as its subject (`requests nvidia.com/gpu but has no
    /// startup probe`); `container "x": ` before the short form.
    Subject,
    /// Nothing before either: a custom rule's texts are its author's
    /// template, which names the container where it says `{container}`.
    InText,
}

/// One anti-pattern found in one object.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// Stable rule name (`probe-endpoint-reused`, ...).
    pub rule: String,
    /// Severity after policy overrides.
    pub severity: Severity,
    /// One line: the fact and the values involved, without the container
    /// ([`Finding::located_message`] names it).
    pub message: String,
    /// The message in a few words, for a one-line warning (what `kubectl`
    /// prints of the webhook's answer): the fact and the fix, written so
    /// that `rule: ` and [`Finding::located_short`] fit in
    /// [`SHORT_LINE_CHARS`] with a container name of up to 20 characters and
    /// the values the rule prints. A custom rule's is its message, cut at a
    /// word if need be.
    pub short: String,
    /// A short hint on what to do instead.
    pub help: String,
    /// JSON pointer of the offending field, relative to the object root.
    pub pointer: String,
    /// Container the finding is about, if any.
    pub container: Option<String>,
    /// How the container is named before the texts.
    pub naming: Naming,
    /// The fix, where one is safe; its [`Fix::applicability`] says whether
    /// the policy applies it.
    pub fix: Option<Fix>,
    /// What the finding's rule says of fixes in general (`None` for a
    /// custom rule): what [`Finding::fix_note`] says when there is no fix.
    pub availability: Option<FixAvailability>,
    /// What the finding rests on beyond the manifest (the boot it assumes,
    /// a shared handler's reach), each with where it came from: every
    /// output shows them, so a reader sees what to declare when one is wrong.
    pub assumptions: Vec<Assumption>,
}

/// Whether and how a rule's findings can be fixed automatically.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixAvailability {
    /// The rule attaches a fix to (some of) its findings; the text says what it does.
    Fix(&'static str),
    /// No safe automatic fix; the text says why.
    NoFix(&'static str),
}

impl Finding {
    /// The message as people read it: the container first (`container
    /// "x": ...`), as [`Finding::naming`] says. A report that names the
    /// container in a field of its own may show the bare message.
    pub fn located_message(&self) -> Cow<'_, str> {
        self.located(&self.message, true)
    }

    /// The short form as a warning reads it: `container "x": ` first.
    pub fn located_short(&self) -> Cow<'_, str> {
        self.located(&self.short, false)
    }

    /// `text` after the container's name; `noted` says whether a
    /// [`Naming::Noted`] fact goes with the name (the message) or not (the
    /// short form).
    fn located<'a>(&self, text: &'a str, noted: bool) -> Cow<'a, str> {
        let Some(name) = self.container.as_deref() else { return Cow::Borrowed(text) };
        match &self.naming {
            Naming::InText => Cow::Borrowed(text),
            Naming::Noted(fact) if noted => Cow::Owned(format!("container {name:?} ({fact}): {text}")),
            Naming::Subject if noted => Cow::Owned(format!("container {name:?} {text}")),
            Naming::Prefix | Naming::Noted(_) | Naming::Subject => Cow::Owned(format!("container {name:?}: {text}")),
        }
    }

    /// The finding resting on `assumptions` (builder style).
    pub(crate) fn assuming(mut self, assumptions: impl IntoIterator<Item = Assumption>) -> Finding {
        self.assumptions.extend(assumptions);
        self
    }

    /// The finding with its container named as `naming` says (builder style).
    pub(crate) fn named(mut self, naming: Naming) -> Finding {
        self.naming = naming;
        self
    }

    /// The fix the policy applies: what `lifeguard fix`, `/mutate`, the
    /// editor's quick fix and the reports' fix fields name. An opt-in fix is
    /// only shown ([`Finding::fix_note`]).
    pub fn automatic_fix(&self) -> Option<&Fix> {
        self.fix.as_ref().filter(|f| f.applicability == Applicability::Automatic)
    }

    /// What `lifeguard fix` would do with the finding: `Ok(description)` of
    /// its fix (an opt-in fix saying so), or `Err(reason)` there is none.
    /// The one wording of it: the text and HTML reports, the reports in the
    /// cluster, the editor's hover and the webhook's deny message all say
    /// this, each with its own label.
    pub fn fix_note(&self) -> Result<Cow<'_, str>, Cow<'_, str>> {
        match &self.fix {
            Some(fix) if fix.applicability == Applicability::Automatic => Ok(Cow::Borrowed(&fix.description)),
            Some(fix) => Ok(Cow::Owned(format!(
                "{} (opt-in: info findings are fixed only when the policy sets `fixInfoFindings: true`)",
                fix.description
            ))),
            None => Err(match self.availability {
                Some(FixAvailability::NoFix(why)) => Cow::Borrowed(why),
                Some(FixAvailability::Fix(_)) => {
                    Cow::Owned(format!("not for this case (`lifeguard explain {}` says when there is one)", self.rule))
                }
                None => Cow::Borrowed("a custom rule has none"),
            }),
        }
    }

    /// [`Finding::fix_note`] with the label the text report prints before
    /// it: `("fix:", description)` or `("no automatic fix:", why)`.
    pub fn fix_labelled(&self) -> (&'static str, Cow<'_, str>) {
        match self.fix_note() {
            Ok(description) => ("fix:", description),
            Err(why) => ("no automatic fix:", why),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::cut_at_word;

    #[test]
    fn text_is_cut_after_a_whole_word() {
        assert_eq!(cut_at_word("fits as it is", 13), "fits as it is");
        assert_eq!(cut_at_word("one two three", 12), "one two...");
        // The cut falls right before a space: the word before it is whole.
        assert_eq!(cut_at_word("one two three", 10), "one two...");
        // Punctuation before the cut goes with it.
        assert_eq!(cut_at_word("one, two (three four)", 13), "one, two...");
        assert_eq!(cut_at_word("one, two three", 10), "one...");
        // Only a first word longer than the line is cut inside.
        assert_eq!(cut_at_word(&"x".repeat(20), 10), format!("{}...", "x".repeat(7)));
        let wide = format!("{} {}", "é".repeat(6), "é".repeat(6));
        assert_eq!(cut_at_word(&wide, 10), format!("{}...", "é".repeat(6)));
    }

    #[test]
    fn the_container_is_named_once_before_the_texts() {
        let finding = |container: Option<&str>, naming: super::Naming| super::Finding {
            rule: "r".into(),
            severity: super::Severity::Error,
            message: "liveness fails".into(),
            short: "fails".into(),
            help: String::new(),
            pointer: String::new(),
            container: container.map(str::to_owned),
            naming,
            fix: None,
            availability: None,
            assumptions: Vec::new(),
        };
        let plain = finding(Some("api"), super::Naming::Prefix);
        assert_eq!(plain.located_message(), "container \"api\": liveness fails");
        assert_eq!(plain.located_short(), "container \"api\": fails");
        let noted = finding(Some("api"), super::Naming::Noted("requests nvidia.com/gpu".into()));
        assert_eq!(noted.located_message(), "container \"api\" (requests nvidia.com/gpu): liveness fails");
        assert_eq!(noted.located_short(), "container \"api\": fails");
        let subject = finding(Some("api"), super::Naming::Subject);
        assert_eq!(subject.located_message(), "container \"api\" liveness fails");
        assert_eq!(subject.located_short(), "container \"api\": fails");
        let custom = finding(Some("api"), super::Naming::InText);
        assert_eq!((custom.located_message(), custom.located_short()), ("liveness fails".into(), "fails".into()));
        let pod = finding(None, super::Naming::Prefix);
        assert_eq!((pod.located_message(), pod.located_short()), ("liveness fails".into(), "fails".into()));
    }
}
