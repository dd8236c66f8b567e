//! Exemptions: which findings of which workloads do not count, and why.

use globset::GlobSet;

use super::error::Invalid;
use super::file::{Exemption, LabelOperator, LabelSelector};
use super::validate::{BuiltInRules, glob_set};
use crate::finding::Finding;
use crate::model::Workload;

/// An exemption with its globs compiled.
#[derive(Debug, Clone)]
pub(crate) struct CompiledExemption {
    pub spec: Exemption,
    namespaces: Option<GlobSet>,
    names: Option<GlobSet>,
    containers: Option<GlobSet>,
}

impl CompiledExemption {
    /// Validates one exemption at `pointer`; `known` says whether a rule name
    /// exists, and `built_in` names the built-in ones for a hint.
    pub fn new(
        spec: Exemption,
        pointer: &str,
        known: &dyn Fn(&str) -> bool,
        built_in: BuiltInRules<'_>,
    ) -> Result<Self, Invalid> {
        if spec.reason.trim().is_empty() {
            return Err(Invalid::at(
                format!("{pointer}/reason"),
                "an exemption needs a reason that reviewers can read",
            ));
        }
        for (i, rule) in spec.rules.iter().enumerate() {
            if !known(rule) {
                return Err(Invalid::at(format!("{pointer}/rules/{i}"), built_in.unknown(rule)));
            }
        }
        if spec.namespaces.is_empty() && spec.names.is_empty() && spec.selector.is_none() && spec.containers.is_empty()
        {
            return Err(Invalid::at(
                pointer,
                "an exemption needs namespaces, names, selector or containers; to turn a rule off everywhere, set rules.NAME.enabled: false",
            ));
        }
        if let Some(selector) = &spec.selector {
            check_selector(selector, &format!("{pointer}/selector"))?;
        }
        let globs = |key: &str, list: &[String]| -> Result<Option<GlobSet>, Invalid> {
            if list.is_empty() { Ok(None) } else { glob_set(&format!("{pointer}/{key}"), list).map(Some) }
        };
        Ok(CompiledExemption {
            namespaces: globs("namespaces", &spec.namespaces)?,
            names: globs("names", &spec.names)?,
            containers: globs("containers", &spec.containers)?,
            spec,
        })
    }

    /// Whether this exemption covers a finding of a workload.
    pub fn covers(&self, w: &Workload, f: &Finding) -> bool {
        let spec = &self.spec;
        (spec.rules.is_empty() || spec.rules.contains(&f.rule))
            && self.namespaces.as_ref().is_none_or(|g| w.namespace.as_deref().is_some_and(|ns| g.is_match(ns)))
            && self.names.as_ref().is_none_or(|g| w.name.as_deref().is_some_and(|n| g.is_match(n)))
            && self.containers.as_ref().is_none_or(|g| f.container.as_deref().is_some_and(|c| g.is_match(c)))
            && spec.selector.as_ref().is_none_or(|s| selects(s, w))
    }
}

fn check_selector(selector: &LabelSelector, pointer: &str) -> Result<(), Invalid> {
    for (i, req) in selector.match_expressions.iter().enumerate() {
        let at = format!("{pointer}/matchExpressions/{i}");
        let wants_values = matches!(req.operator, LabelOperator::In | LabelOperator::NotIn);
        if wants_values && req.values.is_empty() {
            return Err(Invalid::at(
                format!("{at}/values"),
                format!("operator {:?} needs at least one value", req.operator),
            ));
        }
        if !wants_values && !req.values.is_empty() {
            return Err(Invalid::at(format!("{at}/values"), format!("operator {:?} takes no values", req.operator)));
        }
    }
    Ok(())
}

/// Label selector semantics as in Kubernetes, on the pod labels.
fn selects(selector: &LabelSelector, w: &Workload) -> bool {
    let labels = &w.labels;
    selector.match_labels.iter().all(|(k, v)| labels.get(k) == Some(v))
        && selector.match_expressions.iter().all(|req| req.operator.holds(labels.get(&req.key), &req.values))
}
