//! `lifeguard audit --write-reports openreports|policyreport`: each
//! namespace's report written to the cluster as it is judged, with
//! server-side apply (field manager `lifeguard`), so a rerun replaces it in
//! place; a namespace with no workload left loses lifeguard's report, and
//! no other.

use serde_json::Value;

use super::fetch::{FetchError, Fetcher};
use crate::report::policy_report::{MANAGED_BY, REPORT_NAME, ReportKind, Reports, SOURCE};

/// Writes the reports of one audit.
pub struct Writer<'a> {
    fetcher: &'a Fetcher,
    /// The reports' kind and stamp.
    pub reports: Reports,
    /// Reports written.
    pub written: usize,
    /// Reports removed: their namespace has no workload left.
    pub removed: usize,
}

impl<'a> Writer<'a> {
    /// A writer of `reports` through `fetcher`.
    pub fn new(fetcher: &'a Fetcher, reports: Reports) -> Writer<'a> {
        Writer { fetcher, reports, written: 0, removed: 0 }
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

    /// Writes `namespace`'s report, or removes lifeguard's when it has none
    /// (no workload judged): only the object of lifeguard's name and label.
    pub async fn write(&mut self, namespace: &str, report: Option<Value>) -> Result<(), FetchError> {
        let collection = format!(
            "/apis/{}/namespaces/{namespace}/{}",
            self.reports.kind().api_version(),
            self.reports.kind().plural()
        );
        match report {
            Some(report) => {
                let what = format!("apply {}/{REPORT_NAME} in namespace {namespace}", self.reports.kind().crd());
                self.fetcher.apply(&format!("{collection}/{REPORT_NAME}"), &report, SOURCE, &what).await?;
                self.written += 1;
            }
            None => {
                let what = format!("delete {}/{REPORT_NAME} in namespace {namespace}", self.reports.kind().crd());
                let path = format!(
                    "{collection}?labelSelector={}%3D{}&fieldSelector=metadata.name%3D{REPORT_NAME}",
                    MANAGED_BY.0, MANAGED_BY.1
                );
                let deleted = self.fetcher.delete(&path, &what, "deletecollection").await?;
                self.removed += deleted.get("items").and_then(Value::as_array).map_or(0, Vec::len);
            }
        }
        Ok(())
    }
}

/// The format's name, as `--write-reports` takes it.
fn name(kind: ReportKind) -> String {
    use clap::ValueEnum as _;
    kind.to_possible_value().map(|v| v.get_name().to_owned()).unwrap_or_default()
}
