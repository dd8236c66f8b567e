//! `lifeguard audit --write-reports openreports|policyreport`: each
//! namespace's reports (one, or parts of bounded size) written to the
//! cluster as it is judged, with server-side apply (field manager
//! `lifeguard`), so a rerun replaces them in place; parts a rerun no longer
//! needs, and a namespace's reports once it has no workload left, are
//! removed, and no other source's.

use kube::core::Request;
use kube::core::params::{DeleteParams, ListParams};
use serde_json::Value;

use super::fetch::{FetchError, Fetcher};
use crate::report::policy_report::{MANAGED_BY, PART_LABEL, ReportKind, Reports, SOURCE};

/// Writes the reports of one audit.
pub struct Writer<'a> {
    fetcher: &'a Fetcher,
    /// The reports' kind and stamp.
    pub reports: Reports,
    /// Reports written.
    pub written: usize,
    /// Namespaces whose reports were written.
    pub namespaces: usize,
    /// Reports removed: parts a rerun no longer needs, or a namespace's
    /// once it has no workload left.
    pub removed: usize,
}

impl<'a> Writer<'a> {
    /// A writer of `reports` through `fetcher`.
    pub fn new(fetcher: &'a Fetcher, reports: Reports) -> Writer<'a> {
        Writer { fetcher, reports, written: 0, namespaces: 0, removed: 0 }
    }

    /// Fails unless the API server serves the reports' resource: one error
    /// naming the CRD, before anything is read.
    pub async fn check_served(&self) -> Result<(), String> {
        let version = self.reports.kind().api_version();
        let missing = || {
            format!(
                "--write-reports {}: the API server does not serve {} ({version}); install its CRD ({}) or print the reports with --format instead",
                name(self.reports.kind()),
                self.reports.kind().crd(),
                self.reports.kind().crd_source()
            )
        };
        let what = format!("discover {version}");
        match self.fetcher.get(&format!("/apis/{version}"), &what, "get").await {
            Ok(list) => {
                let resources = list.get("resources").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
                let served = resources
                    .iter()
                    .any(|r| r.get("name").and_then(Value::as_str) == Some(self.reports.kind().plural()));
                if served { Ok(()) } else { Err(missing()) }
            }
            Err(FetchError::NotFound { .. }) => Err(missing()),
            Err(e) => Err(e.to_string()),
        }
    }

    /// Writes `namespace`'s reports (parts numbered from 1, as
    /// [`Reports::objects`] makes them), then removes lifeguard's reports
    /// of the namespace that are not among them: parts of an earlier run
    /// that had more, or all of them when there is none (no workload
    /// judged). Only objects of lifeguard's label go.
    pub async fn write(&mut self, namespace: &str, reports: &[Value]) -> Result<(), FetchError> {
        let crd = self.reports.kind().crd();
        let collection = format!(
            "/apis/{}/namespaces/{namespace}/{}",
            self.reports.kind().api_version(),
            self.reports.kind().plural()
        );
        for report in reports {
            let name = report.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
            let what = format!("apply {crd}/{name} in namespace {namespace}");
            self.fetcher.apply(&format!("{collection}/{name}"), report, SOURCE, &what).await?;
            self.written += 1;
        }
        if !reports.is_empty() {
            self.namespaces += 1;
        }
        let mut selector = format!("{}={}", MANAGED_BY.0, MANAGED_BY.1);
        if !reports.is_empty() {
            let parts: Vec<String> = (1..=reports.len()).map(|n| n.to_string()).collect();
            // `notin` also selects lifeguard's reports without the label:
            // one an earlier version wrote is replaced by part 1's apply,
            // which labels it, before this runs.
            selector.push_str(&format!(",{PART_LABEL} notin ({})", parts.join(",")));
        }
        let what = format!("delete {crd} no longer needed in namespace {namespace}");
        let request = Request::new(&collection)
            .delete_collection(&DeleteParams::default(), &ListParams::default().labels(&selector))
            .map_err(|e| FetchError::Failed { what: what.clone(), message: e.to_string() })?;
        let deleted = self.fetcher.delete(&request.uri().to_string(), &what, "deletecollection").await?;
        self.removed += deleted.get("items").and_then(Value::as_array).map_or(0, Vec::len);
        Ok(())
    }
}

/// The format's name, as `--write-reports` takes it.
fn name(kind: ReportKind) -> String {
    use clap::ValueEnum as _;
    kind.to_possible_value().map(|v| v.get_name().to_owned()).unwrap_or_default()
}
