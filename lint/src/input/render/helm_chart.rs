//! A Helm chart directory rendered with `helm template`, as a user renders
//! it before installing: the values files and `--set` values given, a
//! release name and namespace, the Kubernetes version its templates may
//! ask about, its subcharts from its `charts/`. Helm heads each document
//! with `# Source: CHART/templates/x.yaml`; the chart's name is replaced
//! with its directory as given, so findings land on the template files
//! (see [`crate::input::helm`]). The rendered lines are Helm's own.

use std::path::Path;
use std::process::Command;

use super::kustomize::on_path;
use crate::input::helm_path::rebase;

/// How charts are rendered: `helm template`'s flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelmOptions {
    /// `--values` files, in order.
    pub values: Vec<String>,
    /// `--set` values, in order.
    pub set: Vec<String>,
    /// The release name.
    pub release: String,
    /// `--namespace`, when given.
    pub namespace: Option<String>,
    /// `--kube-version`, when given.
    pub kube_version: Option<String>,
}

impl Default for HelmOptions {
    fn default() -> HelmOptions {
        HelmOptions {
            values: Vec::new(),
            set: Vec::new(),
            release: "release".into(),
            namespace: None,
            kube_version: None,
        }
    }
}

/// Renders the chart in `dir`; the error is Helm's own message, or says
/// that `helm` is not on `PATH`.
pub fn render(dir: &Path, options: &HelmOptions) -> Result<String, String> {
    let Some(helm) = on_path("helm") else {
        return Err(format!(
            "a Helm chart needs `helm` on PATH to render it, and it is not: install it, or lint the rendered chart: \
             `helm template RELEASE {} | lifeguard lint --helm-chart-root {0} -`",
            dir.display()
        ));
    };
    let mut command = Command::new(helm);
    command.arg("template").arg(&options.release).arg(dir);
    if let Some(namespace) = &options.namespace {
        command.args(["--namespace", namespace]);
    }
    if let Some(version) = &options.kube_version {
        command.args(["--kube-version", version]);
    }
    for values in &options.values {
        command.args(["--values", values]);
    }
    for set in &options.set {
        command.args(["--set", set]);
    }
    let output = command.output().map_err(|e| format!("running helm: {e}"))?;
    if !output.status.success() {
        return Err(format!("helm template failed: {}", String::from_utf8_lossy(&output.stderr).trim()));
    }
    let text = String::from_utf8(output.stdout).map_err(|_| "helm wrote text that is not UTF-8".to_owned())?;
    Ok(rebased(&text, &dir.display().to_string()))
}

/// Helm's output with each `# Source:` path under `chart_root`.
fn rebased(text: &str, chart_root: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        match line.strip_prefix("# Source: ") {
            Some(path) => {
                out.push_str("# Source: ");
                out.push_str(&rebase(path.trim_end(), chart_root));
                out.push_str(&line[line.trim_end().len()..]);
            }
            None => out.push_str(line),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_comments_name_the_chart_directory_and_nothing_else_changes() {
        let text = "---\n# Source: api/templates/d.yaml\nkind: A\nx:\n  # Source: indented/stays\n";
        assert_eq!(
            rebased(text, "charts/api-chart"),
            "---\n# Source: charts/api-chart/templates/d.yaml\nkind: A\nx:\n  # Source: indented/stays\n"
        );
    }
}
