//! A real chart rendered by a real `helm` (installed into target/tools/ by
//! `.ci/install-helm.sh`, which `.ci/run` calls), then linted: the finding
//! names the template (`demo/templates/deployment.yaml`), the line within
//! its rendered output is the template file's own line, and
//! `--helm-chart-root` turns the path into a repository-relative one.

use std::path::PathBuf;
use std::process::Command;

use lifeguard::input::Limits;
use lifeguard::lint::lint_paths;
use lifeguard::report;
use lifeguard_e2e::{installed_tool, repo_root};
use policies::Policy;

const CHART: &str = "tests/fixtures/charts/demo";

/// The helm `.ci/install-helm.sh` installs (from PyPI, into target/tools/).
fn helm() -> Option<PathBuf> {
    installed_tool("target/tools/helm", ".ci/install-helm.sh")
}

/// `helm template rel CHART`, with Helm's cache and config kept out of $HOME.
fn render(helm: &std::path::Path, home: &std::path::Path) -> String {
    let out = Command::new(helm)
        .args(["template", "rel", CHART])
        .current_dir(repo_root())
        .env("HELM_CACHE_HOME", home.join("cache"))
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_DATA_HOME", home.join("data"))
        .output()
        .expect("run helm");
    assert!(out.status.success(), "helm template: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("helm output is UTF-8")
}

#[test]
fn a_chart_rendered_by_helm_is_linted_with_findings_at_its_templates() {
    let Some(helm) = helm() else { return };
    let home = tempfile::tempdir().expect("temp dir");
    let rendered = render(&helm, home.path());
    assert!(rendered.contains("# Source: demo/templates/deployment.yaml"), "{rendered}");
    let file = home.path().join("rendered.yaml");
    std::fs::write(&file, &rendered).expect("write the rendered stream");

    let mut out = lint_paths(&[file.display().to_string()], &Policy::default(), &Limits::default());
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    // The Deployment is linted; the Service only informs the rules.
    assert_eq!(out.objects, 1);
    assert_eq!(out.findings.len(), 1, "{:#?}", out.findings);
    let finding = &out.findings[0];
    assert_eq!(finding.finding.rule, "probe-endpoint-reused");
    assert_eq!(finding.object(), "Deployment/rel-api");
    let (template, line) = finding.shown_at();
    assert_eq!(template, "demo/templates/deployment.yaml");
    // The rendered position is kept too, and differs: the Service comes first.
    assert!(finding.line > line, "rendered line {} vs template line {line}", finding.line);
    assert_eq!(rendered.lines().nth(finding.line as usize - 1).map(str::trim), Some("livenessProbe:"));

    out.rebase_templates(CHART);
    let (path, line) = out.findings[0].shown_at();
    assert_eq!(path, "tests/fixtures/charts/demo/templates/deployment.yaml");
    // This template adds no lines above the probe, so the line is the template's own.
    let source = std::fs::read_to_string(repo_root().join(path)).expect("the template exists at that path");
    assert_eq!(source.lines().nth(line as usize - 1).map(str::trim), Some("livenessProbe:"));

    let github = report::github::render(&out);
    assert!(
        github.starts_with(&format!(
            "::error file=tests/fixtures/charts/demo/templates/deployment.yaml,line={line},col=11,"
        )),
        "{github}"
    );
    let sarif: serde_json::Value = serde_json::from_str(&report::sarif::render(&out)).expect("SARIF is JSON");
    let at = &sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
    assert_eq!(at["artifactLocation"]["uri"], path);
    assert_eq!(at["region"]["startLine"], line);
}
