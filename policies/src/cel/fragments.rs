//! CEL fragments every exported validation shares: where the pod spec and
//! the pod template's metadata are whatever the kind, the containers the
//! kubelet probes, and the rules the object's `lifeguard.dev/ignore`
//! annotation turns off. The expressions are built as text here and
//! compiled by the API server.

use super::templates::{Reached, Slot, SpecAt};
use crate::model::ANNOTATION_COLD_START;

/// `has(a) && has(a.b) && has(a.b.c)` for `object.a.b.c`: `has` needs
/// every step before the last to exist.
pub(crate) fn present(path: &str) -> String {
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

/// The slot's kinds' arms, each `(condition, value)`, the last one's value
/// standing alone: in slot 0 `object.kind == 'Pod' ? pod : ...` for the
/// built-in kinds (`templated` given a template's CEL path), then the
/// custom kinds' (`custom`), then `templated(default)`; in another slot the
/// custom kinds' alone, the last without its condition (the slot's
/// resource rules send it no other kind).
fn by_kind(slot: &Slot, pod: &str, templated: impl Fn(&str) -> String, custom: impl Fn(&Reached) -> String) -> String {
    let mut arms: Vec<(String, String)> = Vec::new();
    if slot.builtins {
        arms.push(("object.kind == 'Pod'".to_owned(), pod.to_owned()));
        for (kind, template) in other_templates() {
            arms.push((format!("object.kind == '{kind}'"), templated(&template)));
        }
    }
    arms.extend(slot.customs.iter().map(|r| (r.is_kind(), custom(r))));
    let last = if slot.builtins { templated(TEMPLATE) } else { arms.pop().map(|(_, value)| value).unwrap_or_default() };
    let mut out = String::new();
    for (condition, value) in arms {
        out.push_str(&format!("{condition} ? {value} : "));
    }
    out.push_str(&last);
    out
}

/// `object.kind == 'Pod' ? at(["spec"]) : ...`: `at` given the fields
/// from the object down to its pod spec (`["spec", "template", "spec"]`),
/// for the slot's kinds (`export map`, which reads no template whose pod
/// spec's place depends on the object: [`SpecAt::Either`]).
pub(crate) fn by_pod_spec_path(slot: &Slot, at: impl Fn(&[&str]) -> String) -> String {
    let steps = |template: &str, spec: bool| -> Vec<String> {
        let fields = template.split('.').skip(1).map(str::to_owned);
        fields.chain(spec.then(|| "spec".to_owned())).collect()
    };
    let at_steps = |steps: Vec<String>| at(&steps.iter().map(String::as_str).collect::<Vec<_>>());
    by_kind(slot, &at(&["spec"]), |t| at_steps(steps(t, true)), |r| at_steps(steps(&r.path, r.spec != SpecAt::Inline)))
}

/// The match condition: the object has a pod spec with containers where
/// the slot reads it (the linter judges nothing else).
pub(crate) fn has_pod_spec(slot: &Slot) -> String {
    by_kind(
        slot,
        &present("object.spec.containers"),
        |t| format!("({})", present(&format!("{t}.spec.containers"))),
        Reached::has_containers,
    )
}

/// The match condition for UPDATE: only an update that changes the pod
/// spec (a Pod) or the pod template the slot reads is judged, as the
/// webhook's ratchet lets a relabel or a scale of an object with old
/// findings through.
pub(crate) fn changes_the_template(slot: &Slot) -> String {
    let old = |path: &str| path.replacen("object", "oldObject", 1);
    let changed_at = |t: &str| format!("(!({}) || {t} != {})", present(&old(t)), old(t));
    let pod = format!("!({}) || object.spec != oldObject.spec", present("oldObject.spec"));
    let changed = by_kind(slot, &format!("({pod})"), changed_at, |r| changed_at(&r.path));
    format!("request.operation != 'UPDATE' || ({changed})")
}

/// Whether the pod runs until deleted (`Workload::long_running`): not a
/// Job's or a CronJob's, nor a custom template's whose pods run to
/// completion, and its restart policy `Always`.
fn long_running(slot: &Slot) -> String {
    let mut all: Vec<String> = Vec::new();
    if slot.builtins {
        all.extend(["object.kind != 'Job'".to_owned(), "object.kind != 'CronJob'".to_owned()]);
    }
    // Not a kind whose template in this slot runs to completion.
    all.extend(slot.customs.iter().filter(|r| !r.long_running).map(|r| format!("!{}", r.is_kind())));
    all.push("(!has(variables.podSpec.restartPolicy) || variables.podSpec.restartPolicy == 'Always')".to_owned());
    all.join(" && ")
}

/// Annotation `key` of the pod template, else of the object (as the
/// linter merges them, the template's winning), or `''`.
pub(crate) fn annotation(key: &str) -> String {
    format!(
        "({} ? variables.templateMeta.annotations['{key}'] : {} ? object.metadata.annotations['{key}'] : '')",
        annotated("variables.templateMeta", key),
        annotated("object.metadata", key)
    )
}

/// Whether the pod template or the object has annotation `key`.
pub(crate) fn has_annotation(key: &str) -> String {
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
pub(crate) fn seconds(raw: &str) -> String {
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

/// The variables of the slot's objects, in order: `podSpec`,
/// `templateMeta`, `labels` (the pod template's, for exemptions'
/// selectors), `containers`, `longRunning`, `ignored`,
/// `coldStart` (the cold-start annotation's [`seconds`], `-3` without it),
/// then the containers' facts of [`super::containers::variables`] and
/// the shutdown's of [`super::shutdown::variables`]. The rules' own
/// variables follow them (`crate::vap::variables`).
pub(crate) fn pod_variables(policy: &crate::policy::Policy, slot: &Slot) -> Vec<(&'static str, String)> {
    let pod_spec = by_kind(slot, "object.spec", |t| format!("{t}.spec"), Reached::spec);
    let meta = |t: &str| format!("({} ? {t}.metadata : {{}})", present(&format!("{t}.metadata")));
    let template_meta = by_kind(slot, "object.metadata", meta, |r| meta(&r.path));
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
        ("longRunning", long_running(slot)),
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
    .chain(super::containers::variables(policy))
    .chain(super::shutdown::variables(policy))
    .collect()
}

/// A CEL string literal (single-quoted).
pub(crate) fn quoted(text: &str) -> String {
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
        let spec = &pod_variables(&crate::policy::Policy::default(), &Slot::builtins_only())[0].1;
        assert_eq!(
            spec,
            "object.kind == 'Pod' ? object.spec : object.kind == 'CronJob' ? object.spec.jobTemplate.spec.template.spec : \
             object.kind == 'PodTemplate' ? object.template.spec : object.spec.template.spec"
        );
    }

    fn slots() -> Vec<Slot> {
        super::super::templates::templates(&crate::policy::Policy::default()).slots
    }

    #[test]
    fn slot_0_reads_each_custom_kind_s_first_template_before_the_built_in_default() {
        let policy = crate::policy::Policy::default();
        let slot = &slots()[0];
        let spec = &pod_variables(&policy, slot)[0].1;
        assert!(
            spec.starts_with(
                "object.kind == 'Pod' ? object.spec : object.kind == 'CronJob' ? object.spec.jobTemplate.spec.template.spec : \
                 object.kind == 'PodTemplate' ? object.template.spec : \
                 (object.kind == 'LeaderWorkerSet' && object.apiVersion.startsWith('leaderworkerset.x-k8s.io/')) ? \
                 object.spec.leaderWorkerTemplate.leaderTemplate.spec : "
            ),
            "{spec}"
        );
        // KServe's predictor holds the pod spec's fields itself.
        assert!(spec.contains("startsWith('serving.kserve.io/')) ? object.spec.predictor : "), "{spec}");
        assert!(spec.ends_with(" : object.spec.template.spec"), "{spec}");
        let has = has_pod_spec(slot);
        assert!(
            has.contains("(has(object.spec) && has(object.spec.predictor) && has(object.spec.predictor.containers))")
        );
    }

    #[test]
    fn another_slot_reads_only_its_kinds_the_last_without_a_condition() {
        let policy = crate::policy::Policy::default();
        let slot = &slots()[1];
        let spec = &pod_variables(&policy, slot)[0].1;
        assert_eq!(
            spec,
            "(object.kind == 'LeaderWorkerSet' && object.apiVersion.startsWith('leaderworkerset.x-k8s.io/')) ? \
             object.spec.leaderWorkerTemplate.workerTemplate.spec : \
             (object.kind == 'RayJob' && object.apiVersion.startsWith('ray.io/')) ? object.spec.submitterPodTemplate.spec : \
             object.spec.predictor.workerSpec"
        );
        let meta = &pod_variables(&policy, slot)[1].1;
        assert!(
            meta.contains(
                "? (has(object.spec) && has(object.spec.submitterPodTemplate) && \
             has(object.spec.submitterPodTemplate.metadata) ? object.spec.submitterPodTemplate.metadata : {}) : "
            ),
            "{meta}"
        );
        let changed = changes_the_template(slot);
        assert!(
            changed.contains("object.spec.submitterPodTemplate != oldObject.spec.submitterPodTemplate"),
            "{changed}"
        );
    }

    #[test]
    fn a_template_s_pods_run_until_deleted_as_the_linter_decides() {
        let [first, second, ..] = &slots()[..] else { panic!("two slots at least") };
        let restart = "(!has(variables.podSpec.restartPolicy) || variables.podSpec.restartPolicy == 'Always')";
        assert_eq!(
            long_running(&Slot::builtins_only()),
            format!("object.kind != 'Job' && object.kind != 'CronJob' && {restart}")
        );
        // Every first template of a known kind is a server's or a Ray node's.
        assert_eq!(long_running(first), format!("object.kind != 'Job' && object.kind != 'CronJob' && {restart}"));
        // A RayJob's submitter runs to completion.
        assert_eq!(
            long_running(second),
            format!("!(object.kind == 'RayJob' && object.apiVersion.startsWith('ray.io/')) && {restart}")
        );
    }

    #[test]
    fn every_kind_has_a_path_to_its_pod_spec() {
        assert_eq!(
            by_pod_spec_path(&Slot::builtins_only(), |steps| steps.join("/")),
            "object.kind == 'Pod' ? spec : object.kind == 'CronJob' ? spec/jobTemplate/spec/template/spec : \
             object.kind == 'PodTemplate' ? template/spec : spec/template/spec"
        );
    }

    #[test]
    fn only_an_update_is_asked_whether_the_template_changed() {
        // `||` binds tighter than `?:`: the kinds' conditional is one operand.
        let condition = changes_the_template(&Slot::builtins_only());
        assert!(condition.starts_with("request.operation != 'UPDATE' || (object.kind == 'Pod' ? "), "{condition}");
        assert!(condition.ends_with(')'), "{condition}");
    }

    #[test]
    fn quoting_escapes_quotes_and_backslashes() {
        assert_eq!(quoted("it's a\\b"), "'it\\'s a\\\\b'");
    }
}
