//! CEL fragments every exported validation shares: where the pod spec and
//! the pod template's metadata are whatever the kind, the containers the
//! kubelet probes, and the rules the object's `lifeguard.dev/ignore`
//! annotation turns off. The expressions are built as text here and
//! compiled by the API server.

use crate::model::ANNOTATION_COLD_START;

/// `has(a) && has(a.b) && has(a.b.c)` for `object.a.b.c`: `has` needs
/// every step before the last to exist.
pub(super) fn present(path: &str) -> String {
    let mut steps = path.split('.');
    let mut at = steps.next().unwrap_or_default().to_owned();
    let mut out = Vec::new();
    for step in steps {
        at = format!("{at}.{step}");
        out.push(format!("has({at})"));
    }
    out.join(" && ")
}

/// Where every other object keeps its pod template.
const TEMPLATE: &str = "object.spec.template";

/// The built-in kinds that keep their pod template elsewhere than
/// [`TEMPLATE`], with its CEL path (a Pod, which is one, aside).
fn other_templates() -> impl Iterator<Item = (&'static str, String)> {
    crate::model::POD_KINDS
        .iter()
        .filter(|k| !k.template.is_empty())
        .map(|k| (k.kind, format!("object{}", k.template.replace('/', "."))))
        .filter(|(_, path)| path != TEMPLATE)
}

/// `object.kind == 'Pod' ? pod(object) : ... : templated(default)`.
fn by_kind(pod: &str, templated: impl Fn(&str) -> String) -> String {
    let mut out = format!("object.kind == 'Pod' ? {pod} : ");
    for (kind, template) in other_templates() {
        out.push_str(&format!("object.kind == '{kind}' ? {} : ", templated(&template)));
    }
    out.push_str(&templated(TEMPLATE));
    out
}

/// `object.kind == 'Pod' ? at(["spec"]) : ...`: `at` given the fields
/// from the object down to its pod spec (`["spec", "template", "spec"]`).
pub(super) fn by_pod_spec_path(at: impl Fn(&[&str]) -> String) -> String {
    let steps = |template: &str| -> Vec<String> {
        template.split('.').skip(1).map(str::to_owned).chain(["spec".to_owned()]).collect()
    };
    by_kind(&at(&["spec"]), |t| at(&steps(t).iter().map(String::as_str).collect::<Vec<_>>()))
}

/// The match condition: the object has a pod spec with containers (the
/// linter judges nothing else).
pub(super) fn has_pod_spec() -> String {
    by_kind(&present("object.spec.containers"), |t| format!("({})", present(&format!("{t}.spec.containers"))))
}

/// The match condition for UPDATE: only an update that changes the pod
/// spec (a Pod) or the pod template is judged, as the webhook's ratchet
/// lets a relabel or a scale of an object with old findings through.
pub(super) fn changes_the_template() -> String {
    let old = |path: &str| path.replacen("object", "oldObject", 1);
    let pod = format!("!({}) || object.spec != oldObject.spec", present("oldObject.spec"));
    let changed = by_kind(&format!("({pod})"), |t| format!("(!({}) || {t} != {})", present(&old(t)), old(t)));
    format!("request.operation != 'UPDATE' || ({changed})")
}

/// Annotation `key` of the pod template, else of the object (as the
/// linter merges them, the template's winning), or `''`.
pub(super) fn annotation(key: &str) -> String {
    format!(
        "({} ? variables.templateMeta.annotations['{key}'] : {} ? object.metadata.annotations['{key}'] : '')",
        annotated("variables.templateMeta", key),
        annotated("object.metadata", key)
    )
}

/// Whether the pod template or the object has annotation `key`.
pub(super) fn has_annotation(key: &str) -> String {
    format!("({} || {})", annotated("variables.templateMeta", key), annotated("object.metadata", key))
}

fn annotated(meta: &str, key: &str) -> String {
    format!("(has({meta}.annotations) && '{key}' in {meta}.annotations)")
}

/// An annotation read as whole seconds the way the linter reads it
/// (`parse_seconds`): `30`, `30s`, `1m30s`, `1.5m` rounded up. The CEL int
/// is the seconds, `-1` for what the linter calls no number of seconds, or
/// `-2` for an integer too long to read exactly here (19 digits or more).
/// A duration is summed in doubles in the linter's order, so it rounds alike.
pub(super) fn seconds(raw: &str) -> String {
    let token = "(?:[0-9]+(?:[.][0-9]*)?|[.][0-9]+)(?:ms|h|m|s)";
    let factor = "(t.endsWith('ms') ? 0.001 : t.endsWith('h') ? 3600.0 : t.endsWith('m') ? 60.0 : 1.0)";
    // `[x].map(v, ...)[0]` binds `v` to `x`.
    format!(
        "[{raw}.trim()].map(s, s.matches('^[+-]?0*[0-9]{{1,18}}$') ? (int(s) >= 0 ? int(s) : -1) : \
         s.matches('^[+-]?[0-9]+$') ? (s.startsWith('-') ? -1 : -2) : !s.matches('^(?:{token})+$') ? -1 : \
         [s.findAll('{token}').map(t, double(t.find('^[0-9.]+')) * {factor}).sum()].map(d, \
         d > 4611686018427387904.0 ? -1 : int(d) + (double(int(d)) < d ? 1 : 0))[0])[0]"
    )
}

/// The variables, in order: `podSpec`, `templateMeta`, `labels` (the pod
/// template's, for exemptions' selectors), `containers`, `ignored`,
/// `coldStart` (the cold-start annotation's [`seconds`], `-3` without it),
/// then the containers' facts of [`super::model::variables`].
pub(super) fn variables(policy: &crate::policy::Policy) -> Vec<(&'static str, String)> {
    let pod_spec = by_kind("object.spec", |t| format!("{t}.spec"));
    let meta = |t: &str| format!("({} ? {t}.metadata : {{}})", present(&format!("{t}.metadata")));
    let template_meta = by_kind("object.metadata", meta);
    let containers = "variables.podSpec.containers + (has(variables.podSpec.initContainers) ? \
         variables.podSpec.initContainers.filter(c, has(c.restartPolicy) && c.restartPolicy == 'Always') : [])"
        .to_owned();
    // The annotation applies only with a reason, as in the linter.
    let ignored = format!(
        "{}.trim() != '' ? {}.split(',').map(r, r.trim()).filter(r, r != '') : []",
        annotation(crate::model::ANNOTATION_IGNORE_REASON),
        annotation(crate::model::ANNOTATION_IGNORE)
    );
    let labels = "has(variables.templateMeta.labels) ? variables.templateMeta.labels : {}".to_owned();
    vec![
        ("podSpec", pod_spec),
        ("templateMeta", template_meta),
        ("labels", labels),
        ("containers", containers),
        ("ignored", ignored),
        (
            "coldStart",
            format!(
                "!{} ? -3 : {}",
                has_annotation(ANNOTATION_COLD_START),
                seconds(&annotation(ANNOTATION_COLD_START))
            ),
        ),
    ]
    .into_iter()
    .chain(super::model::variables(policy))
    .chain(super::shutdown::variables(policy))
    .chain(super::probe_endpoint_reused::variables(policy))
    .collect()
}

/// A CEL string literal (single-quoted).
pub(super) fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presence_checks_every_step() {
        assert_eq!(present("object.spec.template"), "has(object.spec) && has(object.spec.template)");
    }

    #[test]
    fn the_pod_spec_is_found_for_every_kind() {
        let spec = &variables(&crate::policy::Policy::default())[0].1;
        assert_eq!(
            spec,
            "object.kind == 'Pod' ? object.spec : object.kind == 'CronJob' ? object.spec.jobTemplate.spec.template.spec : \
             object.kind == 'PodTemplate' ? object.template.spec : object.spec.template.spec"
        );
    }

    #[test]
    fn every_kind_has_a_path_to_its_pod_spec() {
        assert_eq!(
            by_pod_spec_path(|steps| steps.join("/")),
            "object.kind == 'Pod' ? spec : object.kind == 'CronJob' ? spec/jobTemplate/spec/template/spec : \
             object.kind == 'PodTemplate' ? template/spec : spec/template/spec"
        );
    }

    #[test]
    fn only_an_update_is_asked_whether_the_template_changed() {
        // `||` binds tighter than `?:`: the kinds' conditional is one operand.
        let condition = changes_the_template();
        assert!(condition.starts_with("request.operation != 'UPDATE' || (object.kind == 'Pod' ? "), "{condition}");
        assert!(condition.ends_with(')'), "{condition}");
    }

    #[test]
    fn quoting_escapes_quotes_and_backslashes() {
        assert_eq!(quoted("it's a\\b"), "'it\\'s a\\\\b'");
    }
}
