//! The policy's exemptions of a rule, as a CEL predicate over a container
//! `c`: what `CompiledExemption::covers` decides, for the object in
//! admission (its namespace is the request's, its labels the pod
//! template's, as the webhook sees them).

use super::fragments::quoted;
use crate::policy::Policy;
use crate::policy::file::{LabelOperator, LabelSelector};

/// `Some(predicate)`: true when an exemption covers `rule`'s finding on the
/// container whose name is the CEL expression `container` (`None`: a
/// finding of the object, which no exemption by container covers; `None`
/// of them: `false`). `Err` names the exemption whose globs CEL cannot
/// express exactly.
pub(crate) fn exempt(policy: &Policy, rule: &str, container: Option<&str>) -> Result<String, String> {
    let mut any = Vec::new();
    for (i, e) in policy.exemptions.iter().enumerate() {
        let spec = &e.spec;
        if !(spec.rules.is_empty() || spec.rules.iter().any(|r| r == rule)) {
            continue;
        }
        let globs = |list: &[String], subject: &str| -> Result<Option<String>, String> {
            if list.is_empty() {
                return Ok(None);
            }
            let regexes: Result<Vec<String>, String> =
                list.iter().map(|g| glob_regex(g).ok_or_else(|| format!("exemptions[{i}]: glob {g:?}"))).collect();
            let any: Vec<String> = regexes?.iter().map(|r| format!("{subject}.matches({})", quoted(r))).collect();
            Ok(Some(format!("({})", any.join(" || "))))
        };
        let mut all = Vec::new();
        all.extend(globs(&spec.namespaces, "request.namespace")?);
        all.extend(globs(&spec.names, "object.metadata.name")?);
        match container {
            Some(name) => all.extend(globs(&spec.containers, name)?),
            None if !spec.containers.is_empty() => all.push("false".to_owned()),
            None => {}
        }
        if let Some(selector) = &spec.selector {
            all.push(selects(selector));
        }
        // An exemption always has a condition (the policy loader refuses one without).
        if !all.is_empty() {
            any.push(format!("({})", all.join(" && ")));
        }
    }
    Ok(if any.is_empty() { "false".to_owned() } else { any.join(" || ") })
}

/// A label selector on the pod template's labels (`variables.labels`).
fn selects(selector: &LabelSelector) -> String {
    let has = |k: &str| format!("{} in variables.labels", quoted(k));
    let value = |k: &str| format!("variables.labels[{}]", quoted(k));
    let list = |values: &[String]| format!("[{}]", values.iter().map(|v| quoted(v)).collect::<Vec<_>>().join(", "));
    let mut all: Vec<String> =
        selector.match_labels.iter().map(|(k, v)| format!("({} && {} == {})", has(k), value(k), quoted(v))).collect();
    for req in &selector.match_expressions {
        let k = &req.key;
        all.push(match req.operator {
            LabelOperator::In => format!("({} && {} in {})", has(k), value(k), list(&req.values)),
            LabelOperator::NotIn => format!("(!({}) || !({} in {}))", has(k), value(k), list(&req.values)),
            LabelOperator::Exists => has(k),
            LabelOperator::DoesNotExist => format!("!({})", has(k)),
        });
    }
    if all.is_empty() { "true".to_owned() } else { format!("({})", all.join(" && ")) }
}

/// An anchored RE2 regex for a glob of `*`, `?`, `[...]` and `{a,b}` (as
/// globset reads them); `None` for what it does not translate (escapes,
/// nested braces).
pub(crate) fn glob_regex(glob: &str) -> Option<String> {
    let mut out = String::from("^");
    let mut chars = glob.chars().peekable();
    let mut in_braces = false;
    while let Some(c) = chars.next() {
        match c {
            '*' => {
                while chars.peek() == Some(&'*') {
                    chars.next();
                }
                out.push_str(".*");
            }
            '?' => out.push('.'),
            '[' => {
                out.push('[');
                if matches!(chars.peek(), Some('!' | '^')) {
                    chars.next();
                    out.push('^');
                }
                let mut closed = false;
                for c in chars.by_ref() {
                    if c == ']' {
                        closed = true;
                        break;
                    }
                    if c == '\\' || c == '[' {
                        return None;
                    }
                    out.push(c);
                }
                if !closed {
                    return None;
                }
                out.push(']');
            }
            '{' if !in_braces => {
                in_braces = true;
                out.push_str("(?:");
            }
            ',' if in_braces => out.push('|'),
            '}' if in_braces => {
                in_braces = false;
                out.push(')');
            }
            '\\' | '{' | '}' => return None,
            c if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '/' => out.push(c),
            c => {
                out.push('\\');
                out.push(c);
            }
        }
    }
    if in_braces {
        return None;
    }
    out.push('$');
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_become_anchored_regexes() {
        assert_eq!(glob_regex("batch-*").as_deref(), Some("^batch-.*$"));
        assert_eq!(glob_regex("team-?.prod").as_deref(), Some("^team-.\\.prod$"));
        assert_eq!(glob_regex("{istio,linkerd}-proxy").as_deref(), Some("^(?:istio|linkerd)-proxy$"));
        assert_eq!(glob_regex("[!a]x").as_deref(), Some("^[^a]x$"));
        assert_eq!(glob_regex("a\\*"), None);
    }

    #[test]
    fn an_exemption_by_container_never_covers_a_finding_of_the_object() {
        let text = "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\nexemptions:\n- reason: sidecars\n  \
                    containers: [istio-proxy]\n- reason: legacy\n  names: [legacy-*]\n";
        let policy = Policy::load(text, "test").expect("policy");
        let per_container = exempt(&policy, "grace-period-too-short", Some("c.name")).expect("globs");
        assert!(per_container.contains("c.name.matches('^istio-proxy$')"), "{per_container}");
        let object = exempt(&policy, "grace-period-too-short", None).expect("globs");
        assert_eq!(object, "(false) || ((object.metadata.name.matches('^legacy-.*$')))");
    }

    #[test]
    fn the_regex_matches_what_the_glob_matches() {
        let cases = [("batch-*", "batch-nightly", true), ("batch-*", "xbatch-1", false), ("{a,b}c", "bc", true)];
        for (glob, name, matches) in cases {
            let re = regex::Regex::new(&glob_regex(glob).expect("translates")).expect("regex");
            let set = globset::Glob::new(glob).expect("glob").compile_matcher();
            assert_eq!(re.is_match(name), matches, "{glob} {name}");
            assert_eq!(set.is_match(name), matches, "globset agrees: {glob} {name}");
        }
    }
}
