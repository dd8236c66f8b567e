//! Each tool's report read into one shape: which object it reports, under
//! which of its checks. An object is named by its file (where the report
//! says it), kind, namespace and name, so the tools' findings can be set
//! side by side object by object.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use super::tools::Tool;

/// An object as the reports name it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Object {
    /// Its file's name (no directory), or `None` where the report does not say (kyverno).
    pub file: Option<String>,
    /// Its kind.
    pub kind: String,
    /// Its namespace; empty for none, and for `default`, which some tools
    /// write for an object that names none.
    pub namespace: String,
    /// Its name.
    pub name: String,
}

impl Object {
    fn new(file: Option<&str>, kind: &str, namespace: &str, name: &str) -> Object {
        let file = file.map(|f| Path::new(f).file_name().map_or(f.to_owned(), |n| n.to_string_lossy().into_owned()));
        let namespace = if namespace == "default" { "" } else { namespace };
        Object { file, kind: kind.to_owned(), namespace: namespace.to_owned(), name: name.to_owned() }
    }

    /// Whether `other` is this object, where one of them has no file.
    pub fn same(&self, other: &Object) -> bool {
        self.kind == other.kind
            && self.namespace == other.namespace
            && self.name == other.name
            && (self.file.is_none() || other.file.is_none() || self.file == other.file)
    }
}

/// One object a tool reports something for, under one of its checks.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Flag {
    /// The object.
    pub object: Object,
    /// The check: lifeguard's rule, kube-score's check id (with the
    /// comment's summary for `pod-probes`, whose one id covers a missing
    /// readiness and a missing liveness probe), kyverno's policy, Checkov's
    /// check id.
    pub check: String,
}

/// Why a report could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Not JSON where JSON was expected.
    #[error("{tool}: the report is not JSON ({source}); it begins {start:?}")]
    NotJson {
        /// The tool.
        tool: &'static str,
        /// The parser's error.
        source: serde_json::Error,
        /// Its first characters.
        start: String,
    },
    /// JSON without the field every report of the tool has.
    #[error("{tool}: the report has no {field}")]
    Missing {
        /// The tool.
        tool: &'static str,
        /// What is missing (a JSON pointer, or a description).
        field: &'static str,
    },
}

/// What `tool` reports in `stdout`, the output of one of
/// [`super::Tools::commands`]: every (object, check) once.
pub fn read(tool: Tool, stdout: &str) -> Result<BTreeSet<Flag>, ReportError> {
    let name = tool.name();
    let json = |text: &str| {
        serde_json::from_str::<Value>(text).map_err(|source| ReportError::NotJson {
            tool: name,
            source,
            start: text.chars().take(200).collect(),
        })
    };
    let str_at = |v: &Value, pointer: &str| v.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_owned();
    let mut out = BTreeSet::new();
    match tool {
        Tool::Lifeguard | Tool::LifeguardOneThread | Tool::LifeguardBefore => {
            let report = json(stdout)?;
            let findings = report.as_array().ok_or(ReportError::Missing { tool: name, field: "array of findings" })?;
            for f in findings {
                let object = Object::new(
                    Some(&str_at(f, "/file")),
                    &str_at(f, "/kind"),
                    &str_at(f, "/namespace"),
                    &str_at(f, "/name"),
                );
                out.insert(Flag { object, check: str_at(f, "/rule") });
            }
        }
        Tool::KubeScore => {
            let report = json(stdout)?;
            let objects = report.as_array().ok_or(ReportError::Missing { tool: name, field: "array of objects" })?;
            for o in objects {
                let object = Object::new(
                    Some(&str_at(o, "/file_name")),
                    &str_at(o, "/type_meta/kind"),
                    &str_at(o, "/object_meta/namespace"),
                    &str_at(o, "/object_meta/name"),
                );
                for check in o["checks"].as_array().into_iter().flatten() {
                    // Grade 10 is "all OK"; a skipped check found nothing.
                    let grade = check["grade"].as_i64().unwrap_or(10);
                    if grade >= 10 || check["skipped"].as_bool() == Some(true) {
                        continue;
                    }
                    let id = str_at(check, "/check/id");
                    let comments: Vec<String> =
                        check["comments"].as_array().into_iter().flatten().map(|c| str_at(c, "/summary")).collect();
                    if id == "pod-probes" && !comments.is_empty() {
                        for summary in comments {
                            out.insert(Flag { object: object.clone(), check: format!("{id}: {summary}") });
                        }
                    } else {
                        out.insert(Flag { object: object.clone(), check: id });
                    }
                }
            }
        }
        Tool::Kyverno => {
            // The report may follow the CLI's warnings, a line each.
            let start = stdout.find("{\"").ok_or(ReportError::Missing { tool: name, field: "policy report" })?;
            let report = json(&stdout[start..])?;
            let results = report["results"].as_array().ok_or(ReportError::Missing { tool: name, field: "/results" })?;
            for r in results {
                if !matches!(r["result"].as_str(), Some("fail" | "warn" | "error")) {
                    continue;
                }
                // A ValidatingPolicy's result names the policy, a rule of a
                // ClusterPolicy the rule.
                let rule = match str_at(r, "/rule") {
                    rule if rule.is_empty() => str_at(r, "/policy"),
                    rule => rule,
                };
                for resource in r["resources"].as_array().into_iter().flatten() {
                    let object = Object::new(
                        None,
                        &str_at(resource, "/kind"),
                        &str_at(resource, "/namespace"),
                        &str_at(resource, "/name"),
                    );
                    out.insert(Flag { object, check: rule.clone() });
                }
            }
        }
        Tool::Checkov => {
            // One report for one framework; a list of them for several.
            let report = json(stdout)?;
            let reports = match report {
                Value::Array(reports) => reports,
                // No file of the framework: `{"passed": 0, ...}` alone.
                other => vec![other],
            };
            for report in &reports {
                let Some(failed) = report.pointer("/results/failed_checks").and_then(Value::as_array) else {
                    if report.get("summary").is_some() || report.get("passed").is_some() {
                        continue;
                    }
                    return Err(ReportError::Missing { tool: name, field: "/results/failed_checks" });
                };
                for f in failed {
                    // `Kind.namespace.name`: neither a kind nor a namespace holds a dot.
                    let resource = str_at(f, "/resource");
                    let mut parts = resource.splitn(3, '.');
                    let (kind, namespace, object_name) = (
                        parts.next().unwrap_or_default(),
                        parts.next().unwrap_or_default(),
                        parts.next().unwrap_or_default(),
                    );
                    let object = Object::new(Some(&str_at(f, "/file_path")), kind, namespace, object_name);
                    out.insert(Flag { object, check: str_at(f, "/check_id") });
                }
            }
        }
    }
    Ok(out)
}
