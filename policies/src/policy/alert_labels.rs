//! The policy's alert parameters (`alertSeverity`, `alertLabels`), checked
//! when it is compiled: `lifeguard export alerts` writes them into
//! Prometheus rules, and Prometheus refuses a rule file whose label names
//! are not its own (`model.LabelName.IsValid`: `[a-zA-Z_][a-zA-Z0-9_]*`,
//! the `__` prefix reserved for its internal labels).

use std::collections::BTreeMap;

use super::error::Invalid;

/// The labels the export sets itself: a policy's label of that name would
/// be overwritten, or would overwrite what routes and explains the alert.
pub const EXPORT_SET_LABELS: [&str; 3] = ["severity", "lifeguard_workload", "lifeguard_objective"];

/// Checks `alertSeverity` and `alertLabels`.
pub(crate) fn check(severity: &str, labels: &BTreeMap<String, String>) -> Result<(), Invalid> {
    if severity.trim().is_empty() {
        return Err(Invalid::at("/parameters/alertSeverity", "must not be empty".to_owned()));
    }
    for (name, value) in labels {
        let at = format!("/parameters/alertLabels/{}", name.replace('~', "~0").replace('/', "~1"));
        if !is_label_name(name) {
            return Err(Invalid::at(
                at,
                format!("{name:?} is not a Prometheus label name (letters, digits and _, not starting with a digit)"),
            ));
        }
        if name.starts_with("__") {
            return Err(Invalid::at(at, format!("{name:?}: names starting with __ are Prometheus's own")));
        }
        if EXPORT_SET_LABELS.contains(&name.as_str()) {
            let why = if name == "severity" { "set it with alertSeverity" } else { "the export sets it" };
            return Err(Invalid::at(at, format!("{name:?} cannot be set here: {why}")));
        }
        if value.is_empty() {
            // An empty value is no label at all to Prometheus: the routing it
            // was written for would silently not match.
            return Err(Invalid::at(at, "must not be empty (Prometheus drops a label with no value)".to_owned()));
        }
    }
    Ok(())
}

fn is_label_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::check;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn routing_labels_pass() {
        assert!(check("warning", &labels(&[("team", "ml-serving"), ("_page", "yes"), ("tier2", "x")])).is_ok());
    }

    #[test]
    fn what_prometheus_or_the_export_refuses_is_named() {
        let refused = |l: &[(&str, &str)]| check("warning", &labels(l)).expect_err("refused").message;
        assert!(refused(&[("team-name", "x")]).contains("not a Prometheus label name"));
        assert!(refused(&[("1team", "x")]).contains("not a Prometheus label name"));
        assert!(refused(&[("__name__", "x")]).contains("Prometheus's own"));
        assert!(refused(&[("severity", "page")]).contains("alertSeverity"));
        assert!(refused(&[("lifeguard_workload", "x")]).contains("the export sets it"));
        assert!(refused(&[("team", "")]).contains("must not be empty"));
        assert_eq!(check(" ", &BTreeMap::new()).expect_err("empty severity").pointer, "/parameters/alertSeverity");
    }
}
