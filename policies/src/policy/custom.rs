//! Custom rules: a JSONPath (RFC 9535, via `jsonpath-rust`) evaluated on
//! each container, the pod spec or the whole object, and a predicate on the
//! values it selects. Their findings are ordinary [`Finding`]s.

use jsonpath_rust::parser::model::{JpQuery, Segment, Selector};
use jsonpath_rust::parser::parse_json_path;
use jsonpath_rust::query::js_path_process;
use regex::Regex;
use serde_json::Value;

use super::error::Invalid;
use super::file::{CustomRule, Predicate, Scope};
use super::validate::BuiltInRules;
use super::validate::regex_reason;
use crate::finding::{Finding, Naming, SHORT_LINE_CHARS, cut_at_word};
use crate::model::{Workload, escape_token};

/// A custom rule with its path and regex compiled.
#[derive(Debug, Clone)]
pub(crate) struct CompiledCustom {
    pub spec: CustomRule,
    query: JpQuery,
    regex: Option<Regex>,
}

impl CompiledCustom {
    /// Validates one custom rule at `pointer`, whose name must not be a built-in one.
    pub fn new(spec: CustomRule, pointer: &str, built_in: BuiltInRules<'_>) -> Result<Self, Invalid> {
        let name_ok = !spec.name.is_empty()
            && spec
                .name
                .split('-')
                .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()))
            && spec.name.bytes().any(|b| b.is_ascii_lowercase());
        if !name_ok {
            return Err(Invalid::at(
                format!("{pointer}/name"),
                format!("{:?} is not a rule name: use lower-case words and digits joined by `-`", spec.name),
            ));
        }
        if built_in.knows(&spec.name) {
            return Err(Invalid::at(
                format!("{pointer}/name"),
                format!("{:?} is a built-in rule; give the custom rule its own name", spec.name),
            ));
        }
        if spec.message.trim().is_empty() {
            return Err(Invalid::at(format!("{pointer}/message"), "a custom rule needs a message"));
        }
        let query = parse_json_path(&spec.path).map_err(|e| {
            Invalid::at(
                format!("{pointer}/path"),
                format!("invalid JSONPath {:?}: {}", spec.path, jsonpath_reason(&e.to_string())),
            )
        })?;
        let regex = match &spec.when {
            Predicate::Matches(p) => Some(Regex::new(p).map_err(|e| {
                Invalid::at(format!("{pointer}/when/matches"), format!("invalid regex {p:?}: {}", regex_reason(&e)))
            })?),
            _ => None,
        };
        let bound = match &spec.when {
            Predicate::Lt(n) => Some(("lt", *n)),
            Predicate::Le(n) => Some(("le", *n)),
            Predicate::Gt(n) => Some(("gt", *n)),
            Predicate::Ge(n) => Some(("ge", *n)),
            _ => None,
        };
        if let Some((key, n)) = bound.filter(|(_, n)| !n.is_finite()) {
            return Err(Invalid::at(format!("{pointer}/when/{key}"), format!("must be a finite number, got {n}")));
        }
        Ok(CompiledCustom { spec, query, regex })
    }

    /// Runs the rule on one object; findings get the rule's own severity.
    pub fn check(&self, object: &Value, w: &Workload, out: &mut Vec<Finding>) {
        match self.spec.scope {
            Scope::Container => w.for_each_container(|c| {
                if let Some(value) = object.pointer(c.pointer) {
                    self.check_scope(value, c.pointer, Some(c.name()), out);
                }
            }),
            Scope::Pod => {
                if let Some(value) = object.pointer(&w.spec_pointer) {
                    self.check_scope(value, &w.spec_pointer, None, out);
                }
            }
            Scope::Object => self.check_scope(object, "", None, out),
        }
    }

    fn check_scope(&self, scope: &Value, base: &str, container: Option<&str>, out: &mut Vec<Finding>) {
        // A query that fails at run time (a function on the wrong type)
        // selects nothing: the data, not the policy, is odd.
        let selected: Vec<(&Value, String)> = js_path_process(&self.query, scope)
            .map(|refs| refs.into_iter().map(|r| (r.val, pointer_of(&r.path).unwrap_or_default())).collect())
            .unwrap_or_default();
        let present: Vec<&(&Value, String)> = selected.iter().filter(|(v, _)| !v.is_null()).collect();
        let mut report = |value: Option<&Value>, at: &str| {
            out.push(self.finding(value, &format!("{base}{at}"), container));
        };
        match &self.spec.when {
            Predicate::Exists => {
                if let Some((v, at)) = present.first() {
                    report(Some(v), at);
                }
            }
            Predicate::Absent => {
                if present.is_empty() {
                    report(None, "");
                }
            }
            when => {
                for (v, at) in &present {
                    if self.holds(when, v) {
                        report(Some(v), at);
                    }
                }
            }
        }
    }

    fn holds(&self, when: &Predicate, v: &Value) -> bool {
        let num = v.as_f64();
        match when {
            Predicate::Exists | Predicate::Absent => false,
            Predicate::Equals(want) => same(v, want),
            Predicate::OneOf(wants) => wants.iter().any(|w| same(v, w)),
            Predicate::Matches(_) => v.as_str().is_some_and(|s| self.regex.as_ref().is_some_and(|r| r.is_match(s))),
            Predicate::Lt(n) => num.is_some_and(|x| x < *n),
            Predicate::Le(n) => num.is_some_and(|x| x <= *n),
            Predicate::Gt(n) => num.is_some_and(|x| x > *n),
            Predicate::Ge(n) => num.is_some_and(|x| x >= *n),
        }
    }

    fn finding(&self, value: Option<&Value>, pointer: &str, container: Option<&str>) -> Finding {
        let shown = match value {
            Some(Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => "<absent>".to_owned(),
        };
        let message = self.spec.message.replace("{container}", container.unwrap_or("<pod>")).replace("{value}", &shown);
        // The template is the author's one line; cut it only where the
        // warning `rule: short` would not fit.
        let room = SHORT_LINE_CHARS.saturating_sub(self.spec.name.chars().count() + 2);
        Finding {
            rule: self.spec.name.clone(),
            severity: self.spec.severity,
            short: cut_at_word(&message, room),
            message,
            help: self.spec.help.clone(),
            pointer: pointer.to_owned(),
            container: container.map(str::to_owned),
            // The author's template names the container where it says so.
            naming: Naming::InText,
            fix: None,
            availability: None,
            assumptions: Vec::new(),
        }
    }
}

/// The parser's multi-line report (position, caret, expectation) in one line.
fn jsonpath_reason(text: &str) -> String {
    let column =
        text.lines().find_map(|l| l.split_once("--> ").map(|(_, at)| at.trim())).and_then(|at| at.split(':').nth(1));
    let expected = text.lines().find_map(|l| l.trim().strip_prefix("= "));
    match (expected, column) {
        (Some(what), Some(col)) => format!("{what} at character {col}"),
        _ => text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" "),
    }
}

/// Whether two JSON values are equal, numbers by value (`5` equals `5.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) if a.is_number() && b.is_number() => x == y,
        _ => a == b,
    }
}

/// Turns a normalized path (`$['spec'][0]`) into a JSON pointer (`/spec/0`).
fn pointer_of(path: &str) -> Option<String> {
    let query = parse_json_path(path).ok()?;
    let mut out = String::new();
    for segment in query.segments {
        match segment {
            Segment::Selector(Selector::Name(name)) => {
                out.push('/');
                out.push_str(&escape_token(&name));
            }
            Segment::Selector(Selector::Index(i)) => out.push_str(&format!("/{i}")),
            _ => return None,
        }
    }
    Some(out)
}

/// Custom rule names must be unique within a policy.
pub(crate) fn check_names(rules: &[CompiledCustom]) -> Result<(), Invalid> {
    for (i, r) in rules.iter().enumerate() {
        if rules[..i].iter().any(|o| o.spec.name == r.spec.name) {
            return Err(Invalid::at(
                format!("/customRules/{i}/name"),
                format!("custom rule {:?} is defined twice", r.spec.name),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::pointer_of;

    #[test]
    fn normalized_paths_become_pointers() {
        assert_eq!(pointer_of("$['a']['b/c'][2]").as_deref(), Some("/a/b~1c/2"));
        assert_eq!(pointer_of("$").as_deref(), Some(""));
    }
}
