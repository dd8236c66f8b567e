//! A [`Fix`] as CEL: the variable that lists what it changes (computed on
//! the object as the mutations before it left it), and its mutation, an
//! ApplyConfiguration whose `Object` is nested by kind down to the pod
//! spec, or a JSON Patch whose paths find the container by its index.

use serde_json::{Value, json};

use super::fix::{Change, ContainerOp, Fix, Set, Write};
use crate::model::ANNOTATION_MUTATED;
use crate::vap::cel::{by_pod_spec_path, quoted};
use crate::vap::templates::Slot;

/// The fix with the rule's exemptions added where they apply by container.
pub(super) fn with_exemptions(mut fix: Fix, exempt: &str) -> Fix {
    match &mut fix.change {
        Change::Containers { which, .. } | Change::ContainerPatch { which, .. } => {
            *which = format!("({which}) && !({exempt})");
        }
        // The rule's `when` names the container whose finding it fixes.
        Change::PodSpec { .. } => {}
    }
    fix
}

/// The variable of `fix`: the names of the containers it changes (none
/// when the rule is ignored), or the pod spec field's new value, `-1` for
/// none.
pub(super) fn variable(fix: &Fix) -> Value {
    let ignored = format!("{} in variables.ignored", quoted(fix.rule));
    let expression = match &fix.change {
        Change::Containers { which, .. } | Change::ContainerPatch { which, .. } => {
            format!("{ignored} ? [] : variables.containers.filter(c, {which}).map(c, c.name)")
        }
        Change::PodSpec { when, value, .. } => format!("{ignored} || !({when}) ? -1 : {value}"),
    };
    json!({ "name": fix.variable, "expression": expression })
}

/// The mutation of `fix`, on the pod spec the slot reads.
pub(super) fn mutation(fix: &Fix, slot: &Slot) -> Value {
    let listed = format!("variables.{}", fix.variable);
    match &fix.change {
        Change::Containers { set, .. } => {
            let field = |spec: &str, (field, list): (&str, &str)| {
                let kind = format!("{spec}.{field}");
                format!(
                    "{field}: {list}.filter(c, c.name in {listed}).map(c, {kind}{{name: c.name, {}}})",
                    parts(&kind, set)
                )
            };
            // Parenthesized: CEL takes no conditional as the middle of another unbracketed.
            let of = |lists: &[(&str, &str)]| {
                let fields = |spec: &str| lists.iter().map(|l| field(spec, *l)).collect::<Vec<_>>().join(", ");
                format!("({})", apply(slot, fix.rule, fields))
            };
            // A list is written only when it holds a container to fix: a
            // custom resource's schema stores an empty one as null, which
            // its CRD refuses (the built-in kinds merge it as nothing).
            let (main, init) = (("containers", CONTAINERS), ("initContainers", INIT_CONTAINERS));
            let has = |list: &str| format!("{list}.exists(c, c.name in {listed})");
            let expression = format!(
                "size({listed}) == 0 ? Object{{}} : {c} && {i} ? {both} : {c} ? {main_only} : {init_only}",
                c = has(CONTAINERS),
                i = has(INIT_CONTAINERS),
                both = of(&[main, init]),
                main_only = of(&[main]),
                init_only = of(&[init]),
            );
            json!({ "patchType": "ApplyConfiguration", "applyConfiguration": { "expression": expression } })
        }
        Change::PodSpec { field, .. } => {
            let expression =
                format!("{listed} < 0 ? Object{{}} : {}", apply(slot, fix.rule, |_| format!("{field}: {listed}")));
            json!({ "patchType": "ApplyConfiguration", "applyConfiguration": { "expression": expression } })
        }
        Change::ContainerPatch { ops, .. } => {
            let mut lists = vec![format!("[{}]", annotation_operation(fix.rule))];
            for op in ops {
                for (field, list) in [("containers", CONTAINERS), ("initContainers", INIT_CONTAINERS)] {
                    lists.push(operation(&listed, field, list, op));
                }
            }
            let expression = format!("size({listed}) == 0 ? [] : {}", lists.join(" + "));
            json!({ "patchType": "JSONPatch", "jsonPatch": { "expression": expression } })
        }
    }
}

/// The pod spec's containers, and its sidecar-bearing init containers.
const CONTAINERS: &str = "variables.podSpec.containers";
const INIT_CONTAINERS: &str = "(has(variables.podSpec.initContainers) ? variables.podSpec.initContainers : [])";

/// `part: kind.part{field: value, ...}, ...` of one container entry; a
/// part with fields written only `when` a condition holds is a conditional
/// over the objects with and without each.
fn parts(kind: &str, set: &[Set]) -> String {
    let mut names: Vec<&str> = set.iter().map(|s| s.part).collect();
    names.dedup();
    names
        .iter()
        .map(|part| {
            let fields = set.iter().filter(|s| s.part == *part).map(|s| (s.field, s.value.as_str(), s.when.as_deref()));
            format!("{part}: {}", variants(&format!("{kind}.{part}"), fields.collect()))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The typed object of `fields` (`(field, value, when)`), branching on the
/// first field written only when its condition holds: with it, then without.
fn variants(typed: &str, fields: Vec<(&str, &str, Option<&str>)>) -> String {
    let Some(i) = fields.iter().position(|(_, _, when)| when.is_some()) else {
        let written: Vec<String> = fields.iter().map(|(field, value, _)| format!("{field}: {value}")).collect();
        return format!("{typed}{{{}}}", written.join(", "));
    };
    let when = fields[i].2.unwrap_or("true");
    let mut with = fields.clone();
    with[i].2 = None;
    let mut without = fields;
    without.remove(i);
    format!("({when} ? {} : {})", variants(typed, with), variants(typed, without))
}

/// An ApplyConfiguration `Object` for whatever kind the object is: the
/// annotation of `rule`, and `fields(pod spec's type name)` in its pod spec.
fn apply(slot: &Slot, rule: &str, fields: impl Fn(&str) -> String) -> String {
    by_pod_spec_path(slot, |steps| {
        let types: Vec<String> = (1..=steps.len()).map(|n| format!("Object.{}", steps[..n].join("."))).collect();
        let mut inner = format!("{}{{{}}}", types[types.len() - 1], fields(&types[types.len() - 1]));
        for n in (0..steps.len() - 1).rev() {
            inner = format!("{}{{{}: {inner}}}", types[n], steps[n + 1]);
        }
        format!(
            "Object{{metadata: Object.metadata{{annotations: {{{}: {}}}}}, {}: {inner}}}",
            quoted(ANNOTATION_MUTATED),
            annotation_value(rule),
            steps[0]
        )
    })
}

/// The operations of `op` on the listed containers of one of the pod
/// spec's lists, each at the container's index in it.
fn operation(listed: &str, field: &str, list: &str, op: &ContainerOp) -> String {
    let container = format!("variables.podSpecPath + '/{field}/' + string({list}.map(x, x.name).indexOf(c.name))");
    let write = match &op.write {
        Write::Add(value) => format!("op: 'add', path: {container} + {}, value: {value}", op.path),
        Write::Copy(from) => format!("op: 'copy', from: {container} + {from}, path: {container} + {}", op.path),
    };
    format!("{list}.filter(c, c.name in {listed} && ({when})).map(c, JSONPatch{{{write}}})", when = op.when)
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

    #[test]
    fn an_apply_configuration_nests_the_object_down_to_the_pod_spec_of_each_kind() {
        let expression = apply(&Slot::builtins_only(), "r", |spec| format!("x: '{spec}'"));
        for nested in [
            "Object.spec{x: 'Object.spec'}",
            "spec: Object.spec{jobTemplate: Object.spec.jobTemplate{spec: Object.spec.jobTemplate.spec{template: \
             Object.spec.jobTemplate.spec.template{spec: Object.spec.jobTemplate.spec.template.spec{x: \
             'Object.spec.jobTemplate.spec.template.spec'}}}}}",
            "template: Object.template{spec: Object.template.spec{x: 'Object.template.spec'}}",
            "spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{x: 'Object.spec.template.spec'}}}",
        ] {
            assert!(expression.contains(nested), "{nested}\n{expression}");
        }
        assert!(expression.contains("Object{metadata: Object.metadata{annotations: {'lifeguard.dev/mutated': "));
    }

    #[test]
    fn a_field_written_only_when_a_condition_holds_is_a_conditional_over_the_part() {
        let set = |field, value: &str, when: Option<&str>| Set {
            part: "livenessProbe",
            field,
            value: value.to_owned(),
            when: when.map(str::to_owned),
        };
        let text = parts("T", &[set("failureThreshold", "3", None), set("timeoutSeconds", "5", Some("slow"))]);
        assert_eq!(
            text,
            "livenessProbe: (slow ? T.livenessProbe{failureThreshold: 3, timeoutSeconds: 5} : T.livenessProbe{failureThreshold: 3})"
        );
    }

    #[test]
    fn each_part_of_a_container_is_one_object() {
        let set = |part, field, value: &str| Set { part, field, value: value.to_owned(), when: None };
        let text =
            parts("T", &[set("livenessProbe", "failureThreshold", "3"), set("livenessProbe", "timeoutSeconds", "5")]);
        assert_eq!(text, "livenessProbe: T.livenessProbe{failureThreshold: 3, timeoutSeconds: 5}");
    }
}
