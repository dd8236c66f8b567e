//! Real charts rendered by a real `helm` (installed into target/tools/ by
//! `.ci/install-helm.sh`, which `.ci/run` calls), then linted: with the
//! chart's directory as root, each finding is at its template's own line,
//! found by aligning the template with what it rendered, and that line
//! holds the key the rendered line holds; where a line came from an
//! `include`, the finding stays at the rendered line; a packaged subchart
//! maps to its archive.

use std::path::{Path, PathBuf};
use std::process::Command;

use lifeguard::input::{Limits, TemplateFinder, discover};
use lifeguard::lint::{lint_found_with, lint_paths};
use lifeguard::pipeline::Keep;
use lifeguard::report;
use lifeguard_e2e::{installed_tool, repo_root};
use policies::Policy;

const CHART: &str = "tests/fixtures/charts/demo";

/// The helm `.ci/install-helm.sh` installs (from PyPI, into target/tools/).
fn helm() -> Option<PathBuf> {
    installed_tool("target/tools/helm", ".ci/install-helm.sh")
}

/// `helm ARGS` in `dir`, with Helm's cache and config kept out of $HOME.
fn helm_in(helm: &Path, home: &Path, dir: &Path, args: &[&str]) -> String {
    let out = Command::new(helm)
        .args(args)
        .current_dir(dir)
        .env("HELM_CACHE_HOME", home.join("cache"))
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_DATA_HOME", home.join("data"))
        .output()
        .expect("run helm");
    assert!(out.status.success(), "helm {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("helm output is UTF-8")
}

/// `helm template rel CHART` from the repository root.
fn render(helm: &Path, home: &Path) -> String {
    helm_in(helm, home, &repo_root(), &["template", "rel", CHART])
}

#[test]
fn a_chart_rendered_by_helm_is_linted_with_findings_at_its_templates() {
    let Some(helm) = helm() else { return };
    let home = tempfile::tempdir().expect("temp dir");
    let rendered = render(&helm, home.path());
    assert!(rendered.contains("# Source: demo/templates/deployment.yaml"), "{rendered}");
    let file = home.path().join("rendered.yaml");
    std::fs::write(&file, &rendered).expect("write the rendered stream");

    let out = lint_paths(&[file.display().to_string()], &Policy::default(), &Limits::default());
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    // The Deployment is linted; the Service only informs the rules.
    assert_eq!(out.objects, 1);
    assert_eq!(out.findings.len(), 1, "{:#?}", out.findings);
    let finding = &out.findings[0];
    assert_eq!(finding.finding.rule, "probe-endpoint-reused");
    assert_eq!(finding.object(), "Deployment/rel-api");
    assert_eq!(finding.template.as_ref().map(|t| t.path.as_str()), Some("demo/templates/deployment.yaml"));
    assert_eq!(rendered.lines().nth(finding.line as usize - 1).map(str::trim), Some("livenessProbe:"));

    let finder = &mut Keep {
        templates: TemplateFinder::on_disk(Some(CHART)).from(&repo_root()),
        render: None,
        ..Keep::default()
    };
    let out = lint_found_with(discover(&[file.display().to_string()]), &Policy::default(), &Limits::default(), finder);
    let (path, line) = out.findings[0].shown_at();
    assert_eq!(path, "tests/fixtures/charts/demo/templates/deployment.yaml");
    // The rendered position differs: the Service comes first.
    assert!(out.findings[0].line > line, "rendered line {} vs template line {line}", out.findings[0].line);
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

const SHOP: &str = "tests/fixtures/charts/shop";

/// The key a YAML line holds (`livenessProbe` of `  livenessProbe:`).
fn key(line: &str) -> Option<String> {
    let line = line.trim().trim_start_matches("- ");
    line.split_once(':').map(|(k, _)| k.to_owned())
}

/// Renders `chart` (in `dir`) and lints it with `chart_root` as
/// `--helm-chart-root` would, templates looked for from `dir`.
fn lint_chart(helm: &Path, home: &Path, dir: &Path, chart: &str) -> (String, lifeguard::outcome::Outcome) {
    let rendered = helm_in(helm, home, dir, &["template", "rel", chart]);
    let file = home.join("rendered.yaml");
    std::fs::write(&file, &rendered).expect("write the rendered stream");
    let finder =
        &mut Keep { templates: TemplateFinder::on_disk(Some(chart)).from(dir), render: None, ..Keep::default() };
    let out = lint_found_with(discover(&[file.display().to_string()]), &Policy::default(), &Limits::default(), finder);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    (rendered, out)
}

#[test]
fn every_finding_at_a_template_line_is_at_the_key_its_rendered_line_holds() {
    let Some(helm) = helm() else { return };
    let home = tempfile::tempdir().expect("temp dir");
    let (rendered, out) = lint_chart(&helm, home.path(), &repo_root(), SHOP);
    let mut at_template = Vec::new();
    for f in &out.findings {
        let shown = rendered.lines().nth(f.line as usize - 1).and_then(key);
        match f.template_line() {
            Some((path, line)) => {
                let source = std::fs::read_to_string(repo_root().join(path)).expect("the template is on disk");
                let held = source.lines().nth(line as usize - 1).and_then(key);
                assert_eq!(held, shown, "{}: {path}:{line}", f.finding.rule);
                at_template.push((f.finding.rule.as_str(), path.to_owned()));
            }
            // The worker's probe comes from an `include`: no line of its template holds it.
            None => {
                assert_eq!(f.object(), "Deployment/rel-worker", "{f:#?}");
                assert!(f.finding.pointer.contains("livenessProbe"), "{f:#?}");
                let (file, at) = f.primary();
                assert_eq!((file, at), (&*f.file, Some((f.line, f.column))), "the rendered position");
            }
        }
    }
    // `if` on line 1, a multi-document template Helm reorders, `include`/`nindent`, a subchart.
    let expected = [
        ("probe-endpoint-reused", format!("{SHOP}/templates/api.yaml")),
        ("prestop-sleep-only", format!("{SHOP}/templates/worker.yaml")),
        ("readiness-port-only", format!("{SHOP}/charts/cache/templates/statefulset.yaml")),
    ];
    for (rule, path) in &expected {
        assert!(at_template.iter().any(|(r, p)| r == rule && p == path), "{rule} at {path}: {at_template:?}");
    }
    assert!(out.findings.iter().any(|f| f.template_line().is_none()), "the include'd probe stays rendered");
}

#[test]
fn a_packaged_subchart_maps_to_its_archive() {
    let Some(helm) = helm() else { return };
    let home = tempfile::tempdir().expect("temp dir");
    let work = tempfile::tempdir().expect("temp dir");
    copy_tree(&repo_root().join(SHOP), &work.path().join("shop"));
    helm_in(&helm, home.path(), work.path(), &["package", "shop/charts/cache", "--destination", "shop/charts"]);
    std::fs::remove_dir_all(work.path().join("shop/charts/cache")).expect("remove the unpacked subchart");
    let (_, out) = lint_chart(&helm, home.path(), work.path(), "shop");
    let cache = out.findings.iter().find(|f| f.object() == "StatefulSet/rel-cache").expect("the subchart's finding");
    let t = cache.template.as_ref().expect("a template");
    assert_eq!(t.path, "shop/charts/cache-0.1.0.tgz");
    assert!(t.exists());
    assert_eq!(cache.template_line(), None, "no line inside an archive");
    assert_eq!(cache.primary(), (&*cache.file, Some((cache.line, cache.column))));
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}
