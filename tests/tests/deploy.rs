//! `deploy/`: the Helm chart rendered by the real `helm` with its default
//! values and every non-default value set, validated against the Kubernetes
//! JSON schemas in strict mode for the oldest and newest versions the chart
//! claims (`kubernetes-validate`, installed by `.ci/install-deploy-tools.sh`);
//! `deploy/manifests/` equal to the default render; lifeguard's strictest
//! rules finding nothing in its own deployment; the shutdown numbers agreeing;
//! and the webhook configurations calling what `lifeguard-webhook` serves.
//!
//! Over 400 lines: eleven tests, each one promise of the chart (schemas,
//! committed manifests, lifeguard's own rules, RBAC, the webhook contract),
//! sharing the render and validate helpers above them; together they are the
//! chart's checklist.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use lifeguard::audit::resources;
use lifeguard::input::Limits;
use lifeguard::lint::lint_paths;
use lifeguard_e2e::support::review::review;
use lifeguard_e2e::{installed_tool, repo_root};
use policies::Policy;
use policies::model::{CUSTOM_POD_KINDS, POD_KINDS};
use policies::yaml::parse_stream;
use serde_json::{Value, json};

const CHART: &str = "deploy/helm/lifeguard";
const MANIFESTS: &str = "deploy/manifests/lifeguard.yaml";
/// The oldest Kubernetes the chart claims (`kubeVersion: >=1.30.0-0`) and
/// the newest the schemas know.
const KUBE_VERSIONS: [&str; 2] = ["1.30.0", "1.37.0"];

fn tool(relative: &str, installer: &str) -> PathBuf {
    installed_tool(relative, installer).unwrap_or_else(|| panic!("{relative} is missing: run {installer}"))
}

/// Whether the tools these tests run are installed; prints why not.
fn tools() -> bool {
    installed_tool(HELM, ".ci/install-helm.sh").is_some()
        && installed_tool(KUBERNETES_VALIDATE, ".ci/install-deploy-tools.sh").is_some()
}

const HELM: &str = "target/tools/helm";
const KUBERNETES_VALIDATE: &str = "target/tools/py/bin/kubernetes-validate";

/// `helm template lifeguard CHART -n lifeguard ARGS`.
fn render(args: &[&str]) -> String {
    let out = helm_template(args);
    assert!(out.status.success(), "helm template {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("helm output is UTF-8")
}

/// Runs `helm template` with a throwaway helm home, success or not.
fn helm_template(args: &[&str]) -> std::process::Output {
    let home = tempfile::tempdir().expect("temp dir");
    Command::new(tool(HELM, ".ci/install-helm.sh"))
        .args(["template", "lifeguard", CHART, "--namespace", "lifeguard"])
        .args(args)
        .current_dir(repo_root())
        .env("HELM_CACHE_HOME", home.path().join("cache"))
        .env("HELM_CONFIG_HOME", home.path().join("config"))
        .env("HELM_DATA_HOME", home.path().join("data"))
        .output()
        .expect("run helm")
}

/// The value sets CI renders: the defaults and each non-default choice.
fn value_sets() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        ("defaults", vec![]),
        ("no cert-manager", vec!["--set", "certManager.enabled=false"]),
        ("fail closed", vec!["--set", "webhook.failurePolicy=Fail"]),
        ("ServiceMonitor", vec!["--set", "metrics.serviceMonitor.enabled=true"]),
        (
            "audit CronJob writing reports",
            vec![
                "--set",
                "audit.enabled=true,audit.reports=policyreport",
                "--set-json",
                r#"audit.extraResources=[{"apiGroups":["argoproj.io"],"resources":["rollouts"]}]"#,
            ],
        ),
        (
            "extra CRD kinds",
            vec![
                "--set-json",
                r#"webhook.extraRules=[{"apiGroups":["argoproj.io"],"apiVersions":["*"],"resources":["rollouts"]}]"#,
            ],
        ),
        (
            "NetworkPolicy, a default mode, no mutation",
            vec![
                "--set",
                "networkPolicy.enabled=true,networkPolicy.apiServerCIDRs={10.0.0.1/32},webhook.defaultMode=audit,webhook.mutate.enabled=false",
            ],
        ),
    ]
}

fn objects(text: &str) -> Vec<Value> {
    let (docs, err) = parse_stream(text, &Default::default());
    assert!(err.is_none(), "rendered chart is YAML: {err:?}");
    docs.into_iter().map(|d| d.value).filter(|v| v.is_object()).collect()
}

fn one<'a>(objects: &'a [Value], kind: &str) -> &'a Value {
    let found: Vec<&Value> = objects.iter().filter(|o| o["kind"] == kind).collect();
    assert_eq!(found.len(), 1, "one {kind}");
    found[0]
}

/// Runs kubernetes-validate --strict on a file: (passed, output).
fn validate(file: &Path, version: &str) -> (bool, String) {
    let py = repo_root().join("target/tools/py");
    let out = Command::new(tool(KUBERNETES_VALIDATE, ".ci/install-deploy-tools.sh"))
        .args(["--strict", "--kubernetes-version", version])
        .arg(file)
        .env("PYTHONPATH", &py)
        .output()
        .expect("run kubernetes-validate");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

/// Kinds the Kubernetes schemas do not hold: custom resources of the
/// operators the chart integrates with.
const CUSTOM_KINDS: [&str; 3] = ["Issuer", "Certificate", "ServiceMonitor"];

#[test]
fn every_rendering_validates_strictly_on_the_oldest_and_newest_kubernetes() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let mut sets = value_sets();
    sets.push(("committed manifests", vec![]));
    for (name, args) in sets {
        let text = if name == "committed manifests" {
            std::fs::read_to_string(repo_root().join(MANIFESTS)).expect("manifests")
        } else {
            render(&args)
        };
        let file = dir.path().join("rendered.yaml");
        std::fs::write(&file, &text).expect("write");
        for version in KUBE_VERSIONS {
            let (ok, out) = validate(&file, version);
            assert!(ok, "{name} on Kubernetes {version}:\n{out}");
            for line in out.lines().filter(|l| l.starts_with("WARN")) {
                assert!(
                    CUSTOM_KINDS.iter().any(|k| line.contains(&format!("kind {k} "))),
                    "{name}: only custom resources may lack a schema: {line}"
                );
            }
            let passed = out.lines().filter(|l| l.contains(" passed for resource ")).count();
            let standard = objects(&text).iter().filter(|o| !CUSTOM_KINDS.iter().any(|k| o["kind"] == *k)).count();
            assert_eq!(passed, standard, "{name}: every standard object was validated:\n{out}");
        }
    }
}

#[test]
fn strict_validation_is_not_vacuous() {
    if !tools() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("bad.yaml");
    let bad = render(&[])
        .replace("      enableServiceLinks: false", "      enableServiceLinks: false\n      enableServiceLink: false");
    std::fs::write(&file, bad).expect("write");
    let (ok, out) = validate(&file, KUBE_VERSIONS[0]);
    assert!(!ok, "an unknown field fails strict validation: {out}");
}

#[test]
fn committed_manifests_are_the_chart_rendered_with_defaults() {
    if !tools() {
        return;
    }
    let rendered = render(&[]);
    let path = repo_root().join(MANIFESTS);
    if std::env::var_os("LIFEGUARD_BLESS").is_some() {
        std::fs::write(&path, &rendered).expect("write manifests");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == rendered,
        "{MANIFESTS} is stale: regenerate it with `LIFEGUARD_BLESS=1 cargo test -p lifeguard-e2e --test deploy`"
    );
}

#[test]
fn lifeguards_strictest_rules_find_nothing_in_its_own_deployment() {
    if !tools() {
        return;
    }
    let policy = Policy::pack("strict").expect("strict pack");
    // The committed manifests: the chart rendered with its defaults (above).
    // A walk of `deploy/` would render the chart too, with helm from PATH.
    let out = lint_paths(&[repo_root().join("deploy/manifests").display().to_string()], &policy, &Limits::default());
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let findings: Vec<String> =
        out.findings.iter().map(|f| format!("{}: {}", f.finding.rule, f.finding.message)).collect();
    assert!(findings.is_empty(), "lint --policy strict --fail-on info deploy/: {findings:#?}");
    assert!(out.suppressed.is_empty(), "nothing is silenced to get there");
    // Not vacuous: the Deployment was linted, and the webhook configurations are there.
    let linted: Vec<String> = out.linted.iter().map(|l| l.object()).collect();
    assert_eq!(linted, ["Deployment/lifeguard/lifeguard"], "{linted:?}");
    let manifests = objects(&std::fs::read_to_string(repo_root().join(MANIFESTS)).expect("manifests"));
    one(&manifests, "ValidatingWebhookConfiguration");
    one(&manifests, "MutatingWebhookConfiguration");
    // Every value set holds up too.
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, args) in value_sets() {
        let file = dir.path().join("rendered.yaml");
        std::fs::write(&file, render(&args)).expect("write");
        let out = lint_paths(&[file.display().to_string()], &policy, &Limits::default());
        assert!(out.findings.is_empty() && out.errors.is_empty(), "{name}: {:#?} {:?}", out.findings, out.errors);
    }
}

fn env_of(container: &Value, name: &str) -> i64 {
    let env = container["env"].as_array().expect("env");
    let value = env.iter().find(|e| e["name"] == name).and_then(|e| e["value"].as_str()).expect(name);
    value.parse().expect("a number")
}

#[test]
fn grace_period_covers_bridge_drain_and_budget_for_any_values() {
    if !tools() {
        return;
    }
    for (sleep, drain, budget) in [(2, 5, 10), (5, 30, 60), (1, 0, 1)] {
        let set = format!(
            "shutdown.preStopSleepSeconds={sleep},shutdown.drainSeconds={drain},shutdown.shutdownBudgetSeconds={budget}"
        );
        let objs = objects(&render(&["--set", &set]));
        let spec = &one(&objs, "Deployment")["spec"]["template"]["spec"];
        let c = &spec["containers"][0];
        let grace = spec["terminationGracePeriodSeconds"].as_i64().expect("grace");
        let bridge = c["lifecycle"]["preStop"]["sleep"]["seconds"].as_i64().expect("native sleep");
        let (d, b) = (env_of(c, "LIFEGUARD_DRAIN_SECONDS"), env_of(c, "LIFEGUARD_SHUTDOWN_BUDGET_SECONDS"));
        assert_eq!((bridge, d, b), (sleep, drain, budget), "the binary gets the chart's values");
        assert!(grace > bridge + d + b, "grace {grace} > sleep {bridge} + drain {d} + budget {b}");
    }
}

#[test]
fn the_workload_practises_what_lifeguard_preaches() {
    if !tools() {
        return;
    }
    let objs = objects(&render(&[]));
    let deployment = one(&objs, "Deployment");
    assert!(deployment["spec"]["replicas"].as_i64() >= Some(2));
    assert_eq!(deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"], 0);
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(pod["automountServiceAccountToken"], false);
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(pod["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
    assert_eq!(pod["topologySpreadConstraints"][0]["topologyKey"], "kubernetes.io/hostname");
    let c = &pod["containers"][0];
    assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
    assert_eq!(c["securityContext"]["allowPrivilegeEscalation"], false);
    assert_eq!(c["securityContext"]["capabilities"]["drop"], json!(["ALL"]));
    assert!(c["resources"]["requests"]["memory"].is_string() && c["resources"]["limits"]["memory"].is_string());
    let paths: Vec<&str> = ["startupProbe", "livenessProbe", "readinessProbe"]
        .iter()
        .map(|p| c[*p]["httpGet"]["path"].as_str().expect("httpGet probe"))
        .collect();
    assert_eq!(paths, ["/startupz", "/livez", "/readyz"]);
    assert!(["startupProbe", "livenessProbe", "readinessProbe"].iter().all(|p| c[*p]["httpGet"]["port"] == "health"));
    let pdb = one(&objs, "PodDisruptionBudget");
    assert_eq!(pdb["spec"]["selector"], deployment["spec"]["selector"]);
}

#[test]
fn extra_rules_reach_namespaced_kinds_only() {
    // Only helm is needed here.
    if installed_tool(HELM, ".ci/install-helm.sh").is_none() {
        return;
    }
    let rule = |scope: &str| {
        format!(
            r#"webhook.extraRules=[{{"apiGroups":["argoproj.io"],"apiVersions":["*"],"resources":["rollouts"]{scope}}}]"#
        )
    };
    // The engine's custom kinds are registered unless turned off.
    for (_, w) in webhooks(&objects(&render(&["--set", "webhook.customResources=false"]))) {
        assert_eq!(group_resources(&w["rules"]), pod_resources(), "{w}");
    }
    let objs = objects(&render(&["--set-json", &rule("")]));
    for (_, w) in webhooks(&objs) {
        let rules = w["rules"].as_array().cloned().unwrap_or_default();
        assert!(rules.iter().any(|r| r["resources"] == json!(["rollouts"])), "{w}");
        assert!(rules.iter().all(|r| r["scope"] == "Namespaced"), "{w}");
    }
    for scope in ["Cluster", "*"] {
        let out = helm_template(&["--set-json", &rule(&format!(r#","scope":"{scope}""#))]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "scope {scope} must be refused");
        assert!(stderr.contains("/webhook/extraRules/0/scope") && stderr.contains("Namespaced"), "{stderr}");
    }
}

/// Every `(apiGroup, resource)` of a list of RBAC or admission rules.
fn group_resources(rules: &Value) -> BTreeSet<(String, String)> {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array().into_iter().flatten().filter_map(|s| s.as_str().map(str::to_owned)).collect()
    };
    let mut out = BTreeSet::new();
    for rule in rules.as_array().expect("rules") {
        for group in strings(&rule["apiGroups"]) {
            out.extend(strings(&rule["resources"]).into_iter().map(|r| (group.clone(), r)));
        }
    }
    out
}

/// The engine's built-in pod-bearing kinds, as `(apiGroup, resource)`.
fn pod_resources() -> BTreeSet<(String, String)> {
    POD_KINDS.iter().map(|k| (k.group.to_owned(), k.resource.to_owned())).collect()
}

/// The custom resources whose pod templates the engine reads, as `(apiGroup, resource)`.
fn custom_pod_resources() -> BTreeSet<(String, String)> {
    CUSTOM_POD_KINDS.iter().map(|k| (k.group.to_owned(), k.resource.to_owned())).collect()
}

#[test]
fn the_audit_role_reads_the_engine_pod_kinds_its_context_and_namespaces() {
    if !tools() {
        return;
    }
    let objs = objects(&render(&["--set", "audit.enabled=true"]));
    let role = one(&objs, "ClusterRole");
    let reads: Vec<Value> = role["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .filter(|r| r["verbs"] == json!(["get", "list"]))
        .cloned()
        .collect();
    let mut expected = pod_resources();
    // audit reads the custom kinds of the engine's table outright whenever
    // their CRD is installed: a role without them gives a warning per kind.
    expected.extend(custom_pod_resources());
    // The objects of each namespace's context, as the audit lists them.
    let context = std::iter::once(resources::services()).chain(resources::disruption_context());
    expected.extend(context.map(|r| (r.group, r.plural)));
    expected.insert(("".to_owned(), "namespaces".to_owned()));
    assert_eq!(group_resources(&Value::Array(reads)), expected);
}

/// The audit ClusterRole's rules beyond the reads, and the audit Job's
/// arguments, as rendered with `audit.enabled` and `set`.
fn audit_writes(set: &[&str]) -> (Vec<Value>, Vec<String>) {
    let mut args = vec!["--set", "audit.enabled=true"];
    for value in set {
        args.extend(["--set", value]);
    }
    let objs = objects(&render(&args));
    let role = one(&objs, "ClusterRole");
    let rules = role["rules"].as_array().expect("rules");
    let writes = rules
        .iter()
        .filter(|r| r["verbs"] != json!(["get", "list"]) && r["nonResourceURLs"].is_null())
        .cloned()
        .collect();
    let cronjob = one(&objs, "CronJob");
    let container = &cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0];
    let job_args = container["args"].as_array().expect("args").iter().filter_map(|a| a.as_str().map(str::to_owned));
    (writes, job_args.collect())
}

#[test]
fn audit_reports_grant_exactly_the_writes_of_the_chosen_kind() {
    // Only helm is needed here.
    if installed_tool(HELM, ".ci/install-helm.sh").is_none() {
        return;
    }
    // Off by default, and when emptied: a read-only role, no writes.
    for set in [&[][..], &["audit.reports="][..]] {
        let (writes, args) = audit_writes(set);
        assert_eq!(writes, Vec::<Value>::new(), "{set:?}: read-only");
        assert!(!args.iter().any(|a| a.starts_with("--write-reports")), "{set:?}: {args:?}");
    }
    // What lint/src/audit/write.rs sends: a server-side apply (`patch`, and
    // `create` when the report is new) and a `deletecollection`, on the one
    // resource of the kind chosen.
    for (kind, group, resource) in
        [("openreports", "openreports.io", "reports"), ("policyreport", "wgpolicyk8s.io", "policyreports")]
    {
        let (writes, args) = audit_writes(&[&format!("audit.reports={kind}")]);
        assert_eq!(
            writes,
            [json!({"apiGroups": [group], "resources": [resource], "verbs": ["create", "patch", "deletecollection"]})],
            "{kind}"
        );
        assert!(args.contains(&format!("--write-reports={kind}")), "{kind}: {args:?}");
        // The Job's log is still the JSON report alone.
        assert!(args.contains(&"--format=json".to_owned()) && args.contains(&"--quiet".to_owned()), "{args:?}");
    }
    for bad in [r#""Report""#, r#""PolicyReport""#, r#""openreports,policyreport""#, r#"["openreports"]"#, "true"] {
        let out = helm_template(&["--set", "audit.enabled=true", "--set-json", &format!("audit.reports={bad}")]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "audit.reports={bad} must be refused");
        assert!(stderr.contains("/audit/reports") && stderr.contains("'openreports', 'policyreport'"), "{stderr}");
    }
}

fn webhooks(objs: &[Value]) -> Vec<(String, Value)> {
    ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"]
        .iter()
        .filter_map(|k| objs.iter().find(|o| o["kind"] == *k))
        .flat_map(|c| {
            let kind = c["kind"].as_str().unwrap_or_default().to_owned();
            c["webhooks"].as_array().cloned().unwrap_or_default().into_iter().map(move |w| (kind.clone(), w))
        })
        .collect()
}

#[test]
fn webhook_configurations_follow_the_contract() {
    if !tools() {
        return;
    }
    let objs = objects(&render(&[]));
    let hooks = webhooks(&objs);
    let names: Vec<&str> = hooks.iter().map(|(_, w)| w["name"].as_str().unwrap_or_default()).collect();
    assert_eq!(
        names,
        [
            "enforce.validate.lifeguard.dev",
            "warn.validate.lifeguard.dev",
            "audit.validate.lifeguard.dev",
            "mutate.lifeguard.dev"
        ]
    );
    for (kind, w) in &hooks {
        let name = w["name"].as_str().unwrap_or_default();
        assert_eq!(w["admissionReviewVersions"], json!(["v1"]), "{name}");
        assert_eq!(w["sideEffects"], "None");
        assert_eq!(w["failurePolicy"], "Ignore", "fail open by default");
        assert_eq!(w["matchPolicy"], "Equivalent");
        assert!(w["timeoutSeconds"].as_i64().is_some_and(|t| t <= 10), "a short timeout");
        let excluded = w["namespaceSelector"]["matchExpressions"]
            .as_array()
            .and_then(|m| m.iter().find(|e| e["key"] == "kubernetes.io/metadata.name"))
            .expect("a namespace exclusion");
        assert_eq!(excluded["operator"], "NotIn");
        for ns in ["kube-system", "lifeguard"] {
            assert!(excluded["values"].as_array().is_some_and(|v| v.contains(&json!(ns))), "{name} never selects {ns}");
        }
        let mut expected = pod_resources();
        expected.extend(custom_pod_resources());
        assert_eq!(group_resources(&w["rules"]), expected, "{name} registers for the engine's pod kinds");
        if kind == "MutatingWebhookConfiguration" {
            assert_eq!(w["reinvocationPolicy"], "IfNeeded");
        }
    }
    for kind in ["ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"] {
        let c = one(&objs, kind);
        assert_eq!(c["metadata"]["annotations"]["cert-manager.io/inject-ca-from"], "lifeguard/lifeguard-serving");
    }
    // Without cert-manager: one generated CA in the Secret and in every caBundle.
    let objs = objects(&render(&["--set", "certManager.enabled=false"]));
    let secret = one(&objs, "Secret");
    let hooks = webhooks(&objs);
    assert_eq!(hooks.len(), 4);
    assert!(secret["data"]["ca.crt"].is_string());
    for (_, w) in &hooks {
        assert_eq!(w["clientConfig"]["caBundle"], secret["data"]["ca.crt"], "caBundle is the Secret's CA");
    }
    assert!(objs.iter().all(|o| o["apiVersion"] != "cert-manager.io/v1"));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_configurations_call_what_lifeguard_webhook_serves() {
    use tower::ServiceExt;
    if !tools() {
        return;
    }
    let objs = objects(&render(&["--set", "webhook.defaultMode=warn"]));
    let service = one(&objs, "Service");
    let deployment = one(&objs, "Deployment");
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    let listen_port = container["args"]
        .as_array()
        .and_then(|a| a.iter().filter_map(Value::as_str).find_map(|a| a.strip_prefix("--listen=0.0.0.0:")))
        .and_then(|p| p.parse::<i64>().ok())
        .expect("--listen in the args");
    let named = |name: &str| {
        container["ports"]
            .as_array()
            .and_then(|ports| ports.iter().find(|p| p["name"] == name))
            .map(|p| p["containerPort"].clone())
    };
    assert_eq!(named("webhook"), Some(json!(listen_port)));

    // The real server, in process, as its binary builds it.
    let config = webhook::Config {
        tls: None,
        listen: "127.0.0.1:0".parse().expect("addr"),
        health_listen: "127.0.0.1:0".parse().expect("addr"),
        policy: "default".into(),
        drain: std::time::Duration::from_secs(1),
        shutdown_budget: std::time::Duration::from_secs(1),
        on_error: webhook::config::OnError::Allow,
        max_body_bytes: 1 << 20,
        request_timeout: std::time::Duration::from_secs(4),
        connections: webhook::config::Bounds::default(),
        log_format: webhook::config::LogFormat::Text,
        ratchet: true,
        include_controlled: false,
        reload_interval: std::time::Duration::from_secs(2),
        self_test_interval: std::time::Duration::from_secs(5),
    };
    let state = webhook::State::new(config);
    state.set_policy(Policy::default());
    let app = webhook::router(state);
    for (_, w) in webhooks(&objs) {
        let svc = &w["clientConfig"]["service"];
        assert_eq!(svc["name"], service["metadata"]["name"]);
        assert_eq!(svc["namespace"], "lifeguard");
        let port = service["spec"]["ports"]
            .as_array()
            .and_then(|ps| ps.iter().find(|p| p["port"] == svc["port"]))
            .expect("the Service has the port");
        assert_eq!(port["targetPort"], "webhook");
        let path = svc["path"].as_str().expect("path");
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "x"}]}});
        let sent = review("u", "CREATE", Some(&pod), None);
        let request = axum::http::Request::post(path)
            .header("content-type", "application/json")
            .body(axum::body::Body::from(sent.to_string()))
            .expect("request");
        let response = app.clone().oneshot(request).await.expect("answer");
        assert_eq!(response.status().as_u16(), 200, "{path} is served");
        let body = axum::body::to_bytes(response.into_body(), 1 << 20).await.expect("body");
        let out: Value = serde_json::from_slice(&body).expect("a review");
        assert_eq!(out["response"]["uid"], "u", "{path}");
    }
}
