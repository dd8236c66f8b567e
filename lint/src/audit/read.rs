//! Reading a cluster for the audit: the namespaces and kinds to read, and
//! each namespace read and judged page by page, with what could not be
//! read noted (a refused list is a warning, anything else stops the audit).

use std::collections::BTreeMap;

use policies::Policy;
use policies::model::DeclaredPodKind;
use serde_json::Value;

use super::fetch::{FetchError, Fetcher};
use super::judge::{Judge, Judged};
use super::resources::{self, Resource};
use super::verdicts::Simulation;
use crate::report::stream::Render;

/// What the audit read and could not read.
#[derive(Default)]
pub(crate) struct Reading {
    /// Lists that succeeded.
    pub(crate) lists: usize,
    /// Lists that did not.
    pub(crate) failed: usize,
    /// Per resource (`jobs.batch`), the namespaces where it could not be listed, and why.
    pub(crate) denied: BTreeMap<String, (Vec<String>, String)>,
    /// Other warnings, in order.
    pub(crate) warnings: Vec<String>,
    /// The error that stopped the audit.
    pub(crate) fatal: Option<String>,
}

/// The namespaces to audit: those named (`--namespace`), else every namespace.
pub(crate) async fn namespaces(named: &[String], fetcher: &Fetcher) -> Result<Vec<String>, String> {
    if !named.is_empty() {
        let mut named = named.to_vec();
        named.dedup();
        return Ok(named);
    }
    let resource = Resource::new("", "v1", "namespaces", "Namespace");
    let mut names = Vec::new();
    fetcher
        .list_all(&resource, |page| {
            names.extend(
                page.iter().filter_map(|n| n.pointer("/metadata/name").and_then(Value::as_str)).map(str::to_owned),
            );
        })
        .await
        .map_err(|e| match e {
            FetchError::Denied { .. } => {
                format!("{e}; name the namespaces to audit with --namespace (-n), or grant `list` on namespaces")
            }
            e => e.to_string(),
        })?;
    names.sort();
    Ok(names)
}

/// The kinds to read: the built-in pod-bearing kinds and the custom
/// resources with a pod template (or declared by the policy's
/// `podTemplates`), narrowed by `--kinds`.
pub(crate) async fn kinds(
    named: &[String],
    declared: &[DeclaredPodKind],
    fetcher: &Fetcher,
    reading: &mut Reading,
) -> Result<Vec<Resource>, String> {
    let mut all = Resource::built_in();
    let wanted = |r: &Resource| named.is_empty() || named.iter().any(|k| r.named_by(k));
    let custom_wanted = named.is_empty() || named.iter().any(|k| !all.iter().any(|r| r.named_by(k)));
    if custom_wanted {
        match discover_custom(fetcher, named, declared).await {
            Ok(custom) => all.extend(custom),
            // Every later request would be refused the same way.
            Err(e @ FetchError::Refused { .. }) => return Err(e.to_string()),
            Err(e) => reading.warnings.push(format!("custom resources were not discovered: {e}")),
        }
    }
    let unknown: Vec<&String> = named.iter().filter(|k| !all.iter().any(|r| r.named_by(k))).collect();
    if let Some(k) = unknown.first() {
        let known: Vec<String> = all.iter().map(Resource::name).collect();
        return Err(format!("--kinds {k:?}: no pod-bearing kind of that name is served (known: {})", known.join(", ")));
    }
    Ok(all.into_iter().filter(wanted).collect())
}

/// The custom resources whose schema has a pod template, those whose pod
/// templates the engine knows (a LeaderWorkerSet's, a RayCluster's) or the
/// policy declares, and any that `--kinds` names outright (a schema may
/// leave the template open).
async fn discover_custom(
    fetcher: &Fetcher,
    named: &[String],
    declared: &[DeclaredPodKind],
) -> Result<Vec<Resource>, FetchError> {
    let discovery = fetcher.get_as("/apis", resources::AGGREGATED_DISCOVERY, "discover the API groups", "get").await?;
    let candidates = resources::candidates(&discovery);
    let mut by_version: BTreeMap<String, Vec<Resource>> = BTreeMap::new();
    for c in candidates {
        by_version.entry(c.api_version()).or_default().push(c);
    }
    let mut out = Vec::new();
    for (api_version, resources) in by_version {
        let (outright, rest): (Vec<Resource>, Vec<Resource>) = resources
            .into_iter()
            .partition(|r| r.known_pod_bearing() || r.declared_in(declared) || named.iter().any(|k| r.named_by(k)));
        out.extend(outright);
        if rest.is_empty() {
            continue;
        }
        let path = format!("/openapi/v3/apis/{api_version}");
        let schema =
            fetcher.get_as(&path, "application/json", &format!("read the schema of {api_version}"), "get").await?;
        let kinds = resources::kinds_with_pod_template(&schema);
        out.extend(rest.into_iter().filter(|r| kinds.contains(&r.kind)));
    }
    Ok(out)
}

/// What reading a namespace takes.
pub(crate) struct Read<'a> {
    pub(crate) fetcher: &'a Fetcher,
    pub(crate) kinds: &'a [Resource],
    pub(crate) selector: Option<&'a str>,
    pub(crate) policy: &'a Policy,
}

impl Read<'_> {
    /// Reads and judges one namespace: its Services, PodDisruptionBudgets
    /// and HorizontalPodAutoscalers, then every kind, each
    /// page judged as it is listed. Returns what was judged and how many
    /// objects were read.
    pub(crate) async fn namespace(
        &self,
        name: &str,
        reading: &mut Reading,
        mut simulation: Option<&mut Simulation>,
        mut render: Option<&mut Render>,
    ) -> (Judged, usize) {
        let mut services = Vec::new();
        let services = match self.fetcher.list(&resources::services(), name, None, |page| services.extend(page)).await {
            Ok(_) => {
                reading.lists += 1;
                Some(services)
            }
            Err(e) => {
                note(reading, &resources::services(), name, e);
                None
            }
        };
        let mut judge = Judge::new(name, services.as_deref(), self.policy);
        drop(services);
        // Budgets and autoscalers are context as the Services are; where
        // they cannot be listed, pdb-blocks-eviction judges without them
        // (and the audit says so).
        for resource in resources::disruption_context() {
            match self.fetcher.list(&resource, name, None, |page| judge.add_context(&page)).await {
                Ok(_) => reading.lists += 1,
                Err(e) => note(reading, &resource, name, e),
            }
        }
        let mut objects = 0;
        for kind in self.kinds {
            if reading.fatal.is_some() {
                break;
            }
            let each = |page: Vec<Value>| {
                judge.objects(&page, simulation.as_deref_mut());
                if let Some(render) = render.as_deref_mut() {
                    judge.render(render);
                }
            };
            match self.fetcher.list(kind, name, self.selector, each).await {
                Ok(n) => {
                    reading.lists += 1;
                    objects += n;
                }
                Err(e) => note(reading, kind, name, e),
            }
        }
        (judge.finish(), objects)
    }
}

/// Notes a list that failed: refused lists are warnings (the rest is
/// audited), anything else stops the audit.
fn note(reading: &mut Reading, resource: &Resource, namespace: &str, e: FetchError) {
    reading.failed += 1;
    match e {
        FetchError::Denied { verb, .. } => {
            let entry = reading.denied.entry(resource.name()).or_insert_with(|| (Vec::new(), verb.to_owned()));
            entry.0.push(namespace.to_owned());
        }
        // A custom resource removed while the audit ran.
        FetchError::NotFound { .. } => reading.warnings.push(e.to_string()),
        e => reading.fatal = Some(e.to_string()),
    }
}

/// What the audit tells as warnings of what it read: each refused
/// resource once, with the namespaces where it was refused.
pub(crate) fn warnings(reading: &Reading) -> Vec<String> {
    let mut out = reading.warnings.clone();
    for (resource, (namespaces, verb)) in &reading.denied {
        let shown: Vec<&str> = namespaces.iter().take(5).map(String::as_str).collect();
        let more = if namespaces.len() > 5 { format!(" and {} more", namespaces.len() - 5) } else { String::new() };
        let what = if resource == "services" {
            "readiness-probe-missing and prestop-bridge-missing judged their pods as lint does without Services"
        } else if resource == "poddisruptionbudgets.policy" || resource == "horizontalpodautoscalers.autoscaling" {
            "pdb-blocks-eviction judged their pods without them"
        } else {
            "its objects there were not audited"
        };
        out.push(format!(
            "cannot list {resource} in namespace{} {}{more}: the credentials lack `{verb}` on {resource}; {what}",
            if namespaces.len() == 1 { "" } else { "s" },
            shown.join(", "),
        ));
    }
    out
}
