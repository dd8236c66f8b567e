//! A [`Mutation`] as CEL: the variable that lists what it changes (computed on
//! the object as the mutations before it left it), and its mutation, a
//! JSON Patch whose paths start at the pod spec the slot reads and find
//! each container by its index.

use serde_json::{Value, json};

use crate::cel::fragments::{by_pod_spec_path, quoted};
use crate::cel::mutation::{Change, ContainerOp, Mutation, Write};
use crate::cel::templates::Slot;
use crate::model::ANNOTATION_MUTATED;

/// The fix with the rule's exemptions added where they apply by container.
pub(super) fn with_exemptions(mut fix: Mutation, exempt: &str) -> Mutation {
    match &mut fix.change {
        Change::ContainerPatch { which, .. } => {
            *which = format!("({which}) && !({exempt})");
        }
        // The rule's `when` names the container whose finding it fixes.
        Change::PodSpec { .. } => {}
    }
    fix
}

/// The kinds whose pod template the API server's update validation
/// freezes for every field a fix writes (a Pod's `ValidatePodUpdate`, a
/// Job's `validatePodTemplateUpdate`): on an UPDATE of one that lifeguard
/// fixed, a fix is made only where it puts back the old object's value.
pub(super) const IMMUTABLE_TEMPLATE_KINDS: [&str; 2] = ["Pod", "Job"];

/// The condition under which the fixes only restore: an UPDATE of a kind
/// of [`IMMUTABLE_TEMPLATE_KINDS`] (the match conditions let through only
/// those whose old object lifeguard fixed). Why that is the only change
/// worth making: a probe, a hook or the grace period of such an object is
/// accepted only when it equals the old object's, so writing that value
/// back turns the re-apply of a fixed file (its value sent back over the
/// fixed one) into what is stored, and any other value would only make
/// the API server refuse the update.
pub(super) const RESTORING: &str = "variables.restoring";

/// The variables of the restoring mode: `restoring` ([`RESTORING`]), the
/// old object's pod spec and its containers, init containers included
/// (names are unique across both, as a fix's container is found by name).
pub(super) fn restoring_variables(slot: &Slot) -> Vec<Value> {
    let kinds: Vec<String> = IMMUTABLE_TEMPLATE_KINDS.iter().map(|k| format!("object.kind == '{k}'")).collect();
    let (restoring, old_spec) = if slot.builtins {
        (
            format!("request.operation == 'UPDATE' && ({})", kinds.join(" || ")),
            "!variables.restoring ? variables.podSpec : object.kind == 'Pod' ? oldObject.spec : oldObject.spec.template.spec"
                .to_owned(),
        )
    } else {
        // No custom kind's template is immutable to lifeguard's knowledge.
        ("false".to_owned(), "variables.podSpec".to_owned())
    };
    let old_containers = "variables.oldPodSpec.containers + \
         (has(variables.oldPodSpec.initContainers) ? variables.oldPodSpec.initContainers : [])";
    vec![
        json!({ "name": "restoring", "expression": restoring }),
        json!({ "name": "oldPodSpec", "expression": old_spec }),
        json!({ "name": "oldContainers", "expression": old_containers }),
    ]
}

/// `!restoring || o holds it`, for the container `c`: `stored` over `c`
/// and `o`, its namesake in the old object.
fn restores(stored: &str) -> String {
    format!("(!{RESTORING} || variables.oldContainers.exists(o, o.name == c.name && ({stored})))")
}

/// The variable of `fix`: the names of the containers it changes (none
/// when the rule is ignored; when restoring, only those whose old
/// container holds everything it writes: a fix is made whole or not at
/// all on a container), or the pod spec field's new value, `-1` for none
/// (and when restoring, for a value the old pod spec does not hold).
pub(super) fn variable(fix: &Mutation) -> Value {
    let ignored = format!("{} in variables.ignored", quoted(fix.rule));
    let expression = match &fix.change {
        Change::ContainerPatch { which, restored: Some(stored), .. } => {
            format!("{ignored} ? [] : variables.containers.filter(c, {which} && {}).map(c, c.name)", restores(stored))
        }
        Change::ContainerPatch { which, restored: None, .. } => {
            format!("{ignored} || {RESTORING} ? [] : variables.containers.filter(c, {which}).map(c, c.name)")
        }
        Change::PodSpec { when, value, field } => {
            let old = format!("variables.oldPodSpec.{field}");
            format!(
                "{ignored} || !({when}) ? -1 : [{value}].map(v, !{RESTORING} || (has({old}) && {old} == v) ? v : -1)[0]"
            )
        }
    };
    json!({ "name": fix.variable, "expression": expression })
}

/// The mutation of `fix`, on the pod spec the slot reads: a JSON Patch
/// whose paths start at `variables.podSpecPath`, so one expression serves
/// every kind. (An ApplyConfiguration must nest its `Object` down to the
/// pod spec of each kind, which repeats the containers' CEL once per kind
/// and list: the export then outgrew what `kubectl apply` can store.)
pub(super) fn mutation(fix: &Mutation) -> Value {
    let listed = format!("variables.{}", fix.variable);
    let annotation = format!("[{}]", annotation_operation(fix.rule));
    let expression = match &fix.change {
        Change::ContainerPatch { ops, .. } => {
            format!("size({listed}) == 0 ? [] : {annotation} + {}", container_operations(&listed, ops))
        }
        Change::PodSpec { field, .. } => format!(
            "{listed} < 0 ? [] : {annotation} + [JSONPatch{{op: 'add', path: variables.podSpecPath + '/{field}', value: {listed}}}]"
        ),
    };
    json!({ "patchType": "JSONPatch", "jsonPatch": { "expression": expression } })
}

/// Every operation of `ops`, on the containers and on the init containers.
fn container_operations(listed: &str, ops: &[ContainerOp]) -> String {
    let mut lists = Vec::new();
    for op in ops {
        for (field, list) in [("containers", CONTAINERS), ("initContainers", INIT_CONTAINERS)] {
            lists.push(operation(listed, field, list, op));
        }
    }
    lists.join(" + ")
}

/// The pod spec's containers, and its sidecar-bearing init containers.
const CONTAINERS: &str = "variables.podSpec.containers";
const INIT_CONTAINERS: &str = "(has(variables.podSpec.initContainers) ? variables.podSpec.initContainers : [])";

/// The operations of `op` on the listed containers of one of the pod
/// spec's lists, each at the container's index in it.
fn operation(listed: &str, field: &str, list: &str, op: &ContainerOp) -> String {
    let container = format!("variables.podSpecPath + '/{field}/' + string({list}.map(x, x.name).indexOf(c.name))");
    let write = match &op.write {
        Write::Add(value) => format!("op: 'add', path: {container} + {}, value: {value}", op.path),
        Write::Copy(from) => format!("op: 'copy', from: {container} + {from}, path: {container} + {}", op.path),
    };
    let when = if op.when == "true" { String::new() } else { format!(" && ({})", op.when) };
    format!("{list}.filter(c, c.name in {listed}{when}).map(c, JSONPatch{{{write}}})")
}

/// `lifeguard.dev/mutated` with `rule` added, as `/mutate` writes it: the
/// rules listed before, trimmed, then the new one.
fn annotation_value(rule: &str) -> String {
    let key = quoted(ANNOTATION_MUTATED);
    let rule = quoted(rule);
    format!(
        "[has(object.metadata.annotations) && {key} in object.metadata.annotations ? \
         object.metadata.annotations[{key}].split(',').map(r, r.trim()).filter(r, r != '') : []]\
         .map(l, ({rule} in l ? l : l + [{rule}]).join(','))[0]"
    )
}

/// The JSON Patch operation that writes the annotation.
fn annotation_operation(rule: &str) -> String {
    let escaped = ANNOTATION_MUTATED.replace('~', "~0").replace('/', "~1");
    format!(
        "has(object.metadata.annotations) ? JSONPatch{{op: 'add', path: {}, value: {value}}} : \
         JSONPatch{{op: 'add', path: '/metadata/annotations', value: {{{}: {value}}}}}",
        quoted(&format!("/metadata/annotations/{escaped}")),
        quoted(ANNOTATION_MUTATED),
        value = annotation_value(rule),
    )
}

/// The variable `podSpecPath`: the JSON pointer of the pod spec the slot reads.
pub(super) fn pod_spec_path(slot: &Slot) -> Value {
    let path = by_pod_spec_path(slot, |steps| quoted(&format!("/{}", steps.join("/"))));
    json!({ "name": "podSpecPath", "expression": path })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::mutation::Set;

    fn liveness(when: Option<&str>) -> Mutation {
        Mutation {
            rule: "r",
            variable: "fixR",
            as_submitted: false,
            change: Change::fields(
                "true".to_owned(),
                &[
                    Set { part: "livenessProbe", field: "failureThreshold", value: "3".to_owned(), when: None },
                    Set {
                        part: "livenessProbe",
                        field: "timeoutSeconds",
                        value: "5".to_owned(),
                        when: when.map(str::to_owned),
                    },
                ],
            ),
        }
    }

    #[test]
    fn a_containers_fix_is_one_add_per_field_and_list_below_the_pod_spec_path() {
        let mutation = mutation(&liveness(Some("slow")));
        assert_eq!(mutation["patchType"], "JSONPatch");
        let expression = mutation["jsonPatch"]["expression"].as_str().unwrap_or_default();
        assert!(expression.starts_with("size(variables.fixR) == 0 ? [] : [has(object.metadata.annotations) ? "));
        for (list, at) in [("variables.podSpec.containers", "containers"), (INIT_CONTAINERS, "initContainers")] {
            let container = format!("variables.podSpecPath + '/{at}/' + string({list}.map(x, x.name).indexOf(c.name))");
            // Always written: no condition of its own.
            assert!(
                expression.contains(&format!(
                    "{list}.filter(c, c.name in variables.fixR).map(c, JSONPatch{{op: 'add', path: {container} + \
                     '/livenessProbe/failureThreshold', value: 3}})"
                )),
                "{expression}"
            );
            // Written only where its condition holds.
            assert!(
                expression.contains(&format!(
                    "{list}.filter(c, c.name in variables.fixR && (slow)).map(c, JSONPatch{{op: 'add', path: \
                     {container} + '/livenessProbe/timeoutSeconds', value: 5}})"
                )),
                "{expression}"
            );
        }
        assert!(!expression.contains("object.kind"), "{expression}");
    }

    #[test]
    fn a_pod_spec_fix_adds_its_field_below_the_pod_spec_path_when_it_has_a_value() {
        let fix = Mutation {
            rule: "r",
            variable: "fixGrace",
            as_submitted: false,
            change: Change::PodSpec {
                when: "true".to_owned(),
                field: "terminationGracePeriodSeconds",
                value: "40".to_owned(),
            },
        };
        let expression = mutation(&fix)["jsonPatch"]["expression"].as_str().unwrap_or_default().to_owned();
        assert!(expression.starts_with("variables.fixGrace < 0 ? [] : [has(object.metadata.annotations)"));
        assert!(expression.ends_with(
            "[JSONPatch{op: 'add', path: variables.podSpecPath + '/terminationGracePeriodSeconds', value: variables.fixGrace}]"
        ));
    }

    #[test]
    fn on_a_restoring_update_a_containers_fix_is_made_only_where_the_old_container_holds_what_it_writes() {
        let expression = variable(&liveness(Some("slow")))["expression"].as_str().unwrap_or_default().to_owned();
        assert!(
            expression.contains(
                "(!variables.restoring || variables.oldContainers.exists(o, o.name == c.name && \
                 ((has(o.livenessProbe) && has(o.livenessProbe.failureThreshold) && o.livenessProbe.failureThreshold == 3) && \
                 (!(slow) || (has(o.livenessProbe) && has(o.livenessProbe.timeoutSeconds) && o.livenessProbe.timeoutSeconds == 5)))))"
            ),
            "{expression}"
        );
    }
}
