//! `--format sarif`: SARIF 2.1.0 for GitHub code scanning and other SARIF
//! viewers. Every registered rule is listed (with its documentation and
//! default level) so rule indexes are stable; each finding is a result at its
//! file, line and column (the Helm template for `helm template` output).

use std::collections::BTreeMap;

use policies::Severity;
use policies::rules::{FixAvailability, RULES, Rule};
use serde_json::{Value, json};
use serde_sarif::sarif::{
    ArtifactLocation, Invocation, Location, LogicalLocation, Message, MultiformatMessageString, Notification,
    PhysicalLocation, PropertyBag, Region, ReportingConfiguration, ReportingDescriptor, Result as SarifResult,
    ResultLevel, Run, Sarif, Tool, ToolComponent,
};

use crate::outcome::{InputError, InputLevel, Located, Origin, Outcome};
use crate::report::rules::explain;
use policies::rules::docs_url;

/// The schema URI GitHub's documentation uses for SARIF 2.1.0.
const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// Renders the outcome as one SARIF log with one run, pretty-printed, with a trailing newline.
pub fn render(out: &Outcome) -> String {
    let mut rules = RulesSeen::default();
    let results: Vec<SarifResult> = out.findings.iter().map(|l| rules.result(l)).collect();
    let mut s = serde_json::to_string_pretty(&sarif(out, rules, results)).unwrap_or_else(|_| "{}".to_owned());
    s.push('\n');
    s
}

fn sarif(out: &Outcome, rules: RulesSeen, results: Vec<SarifResult>) -> Sarif {
    Sarif::builder().schema(SCHEMA_URI).version(json!("2.1.0")).runs(vec![run(out, rules, results)]).build()
}

/// The rules results refer to by index: every registered rule, then the
/// custom rules of the policy in the order their first finding came,
/// each described from that finding.
#[derive(Debug)]
pub(crate) struct RulesSeen {
    ids: Vec<String>,
    custom: Vec<ReportingDescriptor>,
}

impl Default for RulesSeen {
    fn default() -> Self {
        RulesSeen { ids: RULES.iter().map(|r| r.name.to_owned()).collect(), custom: Vec::new() }
    }
}

impl RulesSeen {
    /// The SARIF result of a finding, its rule (if custom and new) noted.
    fn result(&mut self, l: &Located) -> SarifResult {
        if !self.ids.contains(&l.finding.rule) {
            self.ids.push(l.finding.rule.clone());
            self.custom.push(custom_descriptor(l));
        }
        result(l, &self.ids)
    }

    /// A finding's result as `to_string_pretty` prints it in the `results`
    /// array of the report (indented four levels), after its separator;
    /// with its `baselineState` when a baseline is in use.
    pub(crate) fn result_entry(&mut self, l: &Located, state: Option<BaselineState>) -> String {
        let result = self.result(l);
        let pretty = match state {
            None => serde_json::to_string_pretty(&result),
            Some(state) => serde_json::to_value(result).and_then(|mut value| {
                if let Some(fields) = value.as_object_mut() {
                    fields.insert("baselineState".to_owned(), json!(state.as_str()));
                }
                serde_json::to_string_pretty(&value)
            }),
        };
        let pretty = pretty.unwrap_or_else(|_| "null".to_owned());
        super::entries::indented(&pretty, "        ")
    }
}

/// A result's `baselineState` (SARIF 2.1.0, 3.27.24) against `--baseline`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaselineState {
    /// Not in the baseline: it fails the run.
    New,
    /// Accepted by the baseline.
    Unchanged,
}

impl BaselineState {
    fn as_str(self) -> &'static str {
        match self {
            BaselineState::New => "new",
            BaselineState::Unchanged => "unchanged",
        }
    }
}

/// The report of `out` whose results were rendered one by one
/// ([`RulesSeen::result_entry`], in order): `render`'s output for them.
pub(crate) fn write_streamed<'a>(
    out: &Outcome,
    rules: RulesSeen,
    entries: impl Iterator<Item = &'a str>,
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let empty = serde_json::to_string_pretty(&sarif(out, rules, Vec::new())).unwrap_or_else(|_| "{}".to_owned());
    // No string holds a raw newline, so this line is the run's own key.
    const EMPTY: &str = "\n      \"results\": [],\n";
    let mut entries = entries.peekable();
    let Some(at) = empty.find(EMPTY).filter(|_| entries.peek().is_some()) else {
        w.write_all(empty.as_bytes())?;
        return w.write_all(b"\n");
    };
    w.write_all(&empty.as_bytes()[..at])?;
    w.write_all(b"\n      \"results\": [")?;
    super::entries::write_entries(entries, w)?;
    w.write_all(b"\n      ],\n")?;
    w.write_all(&empty.as_bytes()[at + EMPTY.len()..])?;
    w.write_all(b"\n")
}

fn run(out: &Outcome, seen: RulesSeen, results: Vec<SarifResult>) -> Run {
    let mut rules: Vec<ReportingDescriptor> = RULES.iter().copied().map(descriptor).collect();
    rules.extend(seen.custom);
    let driver = ToolComponent::builder()
        .name("lifeguard")
        .version(env!("CARGO_PKG_VERSION"))
        .semantic_version(env!("CARGO_PKG_VERSION"))
        .information_uri(env!("CARGO_PKG_REPOSITORY"))
        .rules(rules)
        .build();
    let notifications: Vec<Notification> = out.input_messages().map(|(level, e)| notification(level, e)).collect();
    let invocation = if notifications.is_empty() {
        Invocation::builder().execution_successful(true).build()
    } else {
        Invocation::builder()
            .execution_successful(out.errors.is_empty())
            .tool_execution_notifications(notifications)
            .build()
    };
    Run::builder()
        .tool(Tool::builder().driver(driver).build())
        // Columns count characters, not UTF-16 code units.
        .column_kind(json!("unicodeCodePoints"))
        .invocations(vec![invocation])
        .results(results)
        .build()
}

fn level_of(severity: Severity) -> ResultLevel {
    match severity {
        Severity::Error => ResultLevel::Error,
        Severity::Warning => ResultLevel::Warning,
        Severity::Info => ResultLevel::Note,
    }
}

fn descriptor(rule: &Rule) -> ReportingDescriptor {
    let doc = explain(rule);
    let fixable = matches!(rule.fix, FixAvailability::Fix(_));
    ReportingDescriptor::builder()
        .id(rule.name)
        .name(rule.name)
        .short_description(text(rule.summary))
        .full_description(text(rule.summary))
        .help(MultiformatMessageString::builder().text(doc.clone()).markdown(doc).build())
        // The page the reports' `docs` property and the HTML report link to.
        .help_uri(docs_url(rule.name))
        .default_configuration(ReportingConfiguration::builder().level(json!(level_of(rule.severity))).build())
        .properties(properties(
            Some(vec!["kubernetes".to_owned(), "reliability".to_owned()]),
            [("fixable", json!(fixable))],
        ))
        .build()
}

fn custom_descriptor(l: &Located) -> ReportingDescriptor {
    let f = &l.finding;
    let summary = format!("custom rule `{}` of the policy", f.rule);
    let help = if f.help.is_empty() { summary.clone() } else { f.help.clone() };
    ReportingDescriptor::builder()
        .id(f.rule.clone())
        .name(f.rule.clone())
        .short_description(text(&summary))
        .help(MultiformatMessageString::builder().text(help).build())
        .default_configuration(ReportingConfiguration::builder().level(json!(level_of(f.severity))).build())
        .properties(properties(
            Some(vec!["kubernetes".to_owned(), "custom".to_owned()]),
            [("fixable", json!(f.automatic_fix().is_some()))],
        ))
        .build()
}

fn result(l: &Located, rule_ids: &[String]) -> SarifResult {
    let f = &l.finding;
    let (file, at) = l.primary();
    let object = l.object();
    let mut message = format!("{object}: {}", f.located_message());
    if !f.help.is_empty() {
        message.push_str(&format!("\nhelp: {}", f.help));
    }
    if let Some(fix) = f.automatic_fix() {
        message.push_str(&format!("\nfix (`lifeguard fix`): {}", fix.description));
    }
    let mut extra: Vec<(&str, Value)> =
        vec![("object", json!(object)), ("container", json!(f.container)), ("jsonPointer", json!(l.pointer))];
    if let Some(fix) = f.automatic_fix() {
        extra.push(("fix", json!(fix.description)));
    }
    if !f.assumptions.is_empty() {
        extra.push(("assumptions", json!(f.assumptions)));
    }
    if l.template.is_some() {
        extra.push(("rendered", json!(format!("{}:{}:{}", l.file, l.line, l.column))));
    }
    let location = if l.origin == Origin::Cluster {
        // No file: the object, and the field within it, as logical locations.
        let object_location = LogicalLocation::builder().fully_qualified_name(object.clone()).kind("object").build();
        let field = LogicalLocation::builder()
            .fully_qualified_name(format!("{object}#{}", l.pointer))
            .name(l.pointer.clone())
            .kind("member")
            .parent_index(0)
            .build();
        Location::builder().logical_locations(vec![object_location, field]).build()
    } else {
        let logical = LogicalLocation::builder().fully_qualified_name(object.clone()).kind("object").build();
        Location::builder()
            .physical_location(physical(file, at.map(|(line, col)| (line, Some(col)))))
            .logical_locations(vec![logical])
            .build()
    };
    // A cluster's finding is the same finding wherever the audit runs: its object and field.
    let fingerprint_base = if l.origin == Origin::Cluster { "cluster".to_owned() } else { uri(file) };
    let index = rule_ids.iter().position(|r| *r == f.rule).and_then(|i| i64::try_from(i).ok());
    let result = SarifResult::builder()
        .rule_id(f.rule.clone())
        .level(level_of(f.severity))
        .message(Message::builder().text(message).build())
        .locations(vec![location])
        // Stable across line moves: the object and field, not the line.
        .partial_fingerprints(BTreeMap::from([(
            "lifeguardFinding/v1".to_owned(),
            format!("{fingerprint_base}|{object}|{}", l.pointer),
        )]))
        .properties(properties(None, extra));
    let mut result = match index {
        Some(i) => result.rule_index(i).build(),
        None => result.build(),
    };
    let related = related(l, file);
    result.related_locations = (!related.is_empty()).then_some(related);
    result
}

/// For `helm template` output, the location the primary one is not: the
/// rendered position, and the template (with its line when matched).
fn related(l: &Located, primary: &str) -> Vec<Location> {
    let Some(t) = &l.template else { return Vec::new() };
    let mut out = Vec::new();
    let (source, rendered_by) = if t.is_kustomize() {
        ("Kustomize source", "built by kustomize")
    } else {
        ("Helm template", "rendered by Helm")
    };
    let (path, at) = t.file_at(l.line);
    let line = at.map(|(line, column)| (line, Some(column.unwrap_or(l.column))));
    if primary != path {
        let why = t.why_rendered_line().map_or(String::new(), |why| format!(" ({why})"));
        out.push((physical(path, line), format!("{source}{why}")));
    }
    if primary != &*l.file || l.template_line().is_some() {
        out.push((physical(&l.file, Some((l.line, Some(l.column)))), rendered_by.to_owned()));
    }
    (0_i64..)
        .zip(out)
        .map(|(id, (physical, text))| {
            Location::builder()
                .id(id)
                .physical_location(physical)
                .message(Message::builder().text(text).build())
                .build()
        })
        .collect()
}

fn notification(level: InputLevel, e: &InputError) -> Notification {
    let at = e.line.map(|line| (line, e.column));
    Notification::builder()
        .level(json!(level_of(level.severity())))
        .message(Message::builder().text(format!("{}: {}", level.label(), e.message)).build())
        .locations(vec![Location::builder().physical_location(physical(&e.file, at)).build()])
        .build()
}

/// A file and, when known, a line and column.
fn physical(file: &str, at: Option<(u32, Option<u32>)>) -> PhysicalLocation {
    let artifact = ArtifactLocation::builder().uri(uri(file)).build();
    let Some((line, column)) = at else {
        return PhysicalLocation::builder().artifact_location(artifact).build();
    };
    let region = match column {
        Some(c) => Region::builder().start_line(i64::from(line.max(1))).start_column(i64::from(c.max(1))).build(),
        None => Region::builder().start_line(i64::from(line.max(1))).build(),
    };
    PhysicalLocation::builder().artifact_location(artifact).region(region).build()
}

fn text(s: &str) -> MultiformatMessageString {
    MultiformatMessageString::builder().text(s).build()
}

fn properties<'a>(tags: Option<Vec<String>>, extra: impl IntoIterator<Item = (&'a str, Value)>) -> PropertyBag {
    let additional_properties: BTreeMap<String, Value> = extra.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    match tags {
        Some(tags) => PropertyBag::builder().tags(tags).additional_properties(additional_properties).build(),
        None => PropertyBag::builder().additional_properties(additional_properties).build(),
    }
}

/// A file name as a URI reference: relative paths stay relative (GitHub
/// resolves them against the repository root), absolute ones become
/// `file://` URIs, and characters a URI may not hold are percent-encoded.
pub fn uri(file: &str) -> String {
    let path = file.replace('\\', "/");
    let path = path.strip_prefix("./").unwrap_or(&path);
    let encoded: String = path
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=@".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    if path.starts_with('/') { format!("file://{encoded}") } else { encoded }
}

#[cfg(test)]
mod tests {
    use super::uri;

    #[test]
    fn file_names_become_uri_references() {
        assert_eq!(uri("k8s/app.yaml"), "k8s/app.yaml");
        assert_eq!(uri("./k8s/my app.yaml"), "k8s/my%20app.yaml");
        assert_eq!(uri("<stdin>"), "%3Cstdin%3E");
        assert_eq!(uri("/abs/x.yaml"), "file:///abs/x.yaml");
        assert_eq!(uri("C:\\x\\y.yaml"), "C%3A/x/y.yaml");
        assert_eq!(uri("dir/é.yaml"), "dir/%C3%A9.yaml");
    }
}
