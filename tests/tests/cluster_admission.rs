//! lifeguard as the real kube-apiserver meets it: the chart's webhook
//! configurations registered with the API server, the real webhook binary
//! behind them (run as the chart's Deployment runs it), and `kubectl` as a
//! user runs it, its exit code, stdout and stderr asserted.
//!
//! Every test has namespaces of its own, so they run side by side on the
//! binary's one control plane and one webhook.
//!
//! Over 400 lines: fourteen tests against the one control plane and webhook a
//! test binary starts, each a `kubectl` session with its objects written out;
//! another file would start both again.

mod chart_checks;

use std::sync::OnceLock;
use std::time::Duration;

use chart_checks::create;
use lifeguard_e2e::cluster::injector::{Injector, SIDECAR};
use lifeguard_e2e::cluster::{ControlPlane, Installation, reapply, webhook};
use lifeguard_e2e::support::deployment;
use serde_json::{Value, json};

static LIFEGUARD: OnceLock<Option<Installation>> = OnceLock::new();

/// The control plane with lifeguard installed from the chart's defaults
/// (without cert-manager, whose CRDs are absent), or `None` (after saying
/// why) when the control plane is not built.
fn cluster() -> Option<(&'static ControlPlane, &'static Installation)> {
    let plane = ControlPlane::shared()?;
    let installation =
        LIFEGUARD.get_or_init(|| Installation::install(plane, &["certManager.enabled=false"])).as_ref()?;
    Some((plane, installation))
}

/// The spec of the stored object's first container named `name`.
fn container<'a>(object: &'a Value, name: &str) -> &'a Value {
    object["spec"]["template"]["spec"]["containers"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no container {name} in {object:#}"))
}

#[test]
fn the_registered_configurations_are_the_charts_own_but_for_the_url() {
    let Some((plane, lifeguard)) = cluster() else { return };
    assert_eq!(lifeguard.stored_changes(plane), Vec::<String>::new());
    let names: Vec<&str> = lifeguard.registered.iter().filter_map(|c| c["kind"].as_str()).collect();
    assert_eq!(names, ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]);
    for rendered in lifeguard.rendered.webhook_configurations() {
        let kind = rendered["kind"].as_str().unwrap_or_default();
        let name = rendered["metadata"]["name"].as_str().unwrap_or_default();
        let stored = plane.kubectl.run(&["get", kind, name, "-o", "json"]).json();
        let webhooks = stored["webhooks"].as_array().cloned().unwrap_or_default();
        let rendered = rendered["webhooks"].as_array().cloned().unwrap_or_default();
        assert_eq!(webhooks.len(), rendered.len());
        for (stored, rendered) in webhooks.iter().zip(&rendered) {
            let path = rendered["clientConfig"]["service"]["path"].as_str().expect("the chart names a path");
            let url = lifeguard.webhook.url(path);
            assert_eq!(stored["clientConfig"]["url"], url.as_str());
            assert!(stored["clientConfig"].get("service").is_none());
        }
    }
}

#[test]
fn enforce_refuses_the_naive_gpu_server_naming_its_rules_and_stores_nothing() {
    let Some((plane, _)) = cluster() else { return };
    chart_checks::enforce_refuses_the_naive_gpu_server(plane, "enforce-gpu");
}

#[test]
fn warn_admits_with_one_kubectl_warning_per_finding_within_120_characters() {
    let Some((plane, _)) = cluster() else { return };
    chart_checks::warn_admits_with_one_warning_per_finding(plane, "warn-gpu");
}

#[test]
fn audit_admits_silently_and_the_api_servers_audit_log_holds_the_findings() {
    let Some((plane, _)) = cluster() else { return };
    plane.kubectl.namespace("audit-gpu", &["lifeguard.dev/mode=audit"]);
    let run = create(plane, "audit-gpu", &deployment::naive_gpu("llm"), &[]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(run.stderr, "", "audit prints nothing");
    let event = lifeguard_e2e::cluster::process::wait_for("the create's audit event", Duration::from_secs(10), || {
        plane
            .audit_events()
            .into_iter()
            .find(|e| {
                e["verb"] == "create"
                    && e["stage"] == "ResponseComplete"
                    && e["objectRef"]["resource"] == "deployments"
                    && e["objectRef"]["namespace"] == "audit-gpu"
                    && e["objectRef"]["name"] == "llm"
            })
            .ok_or_else(|| "not logged yet".to_owned())
    });
    let annotations = &event["annotations"];
    let key = |k: &str| annotations[format!("audit.validate.lifeguard.dev/{k}")].as_str().map(str::to_owned);
    assert_eq!(key("mode").as_deref(), Some("audit"), "{annotations:#}");
    assert_eq!(key("would-deny").as_deref(), Some("true"));
    assert_eq!(key("finding-count").as_deref(), Some("2"));
    let findings: Value = serde_json::from_str(&key("findings").expect("findings")).expect("findings are JSON");
    let rules: Vec<&str> = findings.as_array().into_iter().flatten().filter_map(|f| f["rule"].as_str()).collect();
    assert_eq!(rules, ["probe-endpoint-reused", "startup-probe-missing"]);
    assert_eq!(event["responseStatus"]["code"], 201);
}

/// The stored object's fields a server-side dry run also gives.
fn comparable(object: &Value) -> Value {
    let mut object = object.clone();
    if let Some(metadata) = object["metadata"].as_object_mut() {
        for owned in ["uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"] {
            metadata.remove(owned);
        }
    }
    // The deployment controller's, when another test has started it, and
    // what `kubectl apply` records (the stored object was created).
    if let Some(annotations) = object["metadata"]["annotations"].as_object_mut() {
        annotations.remove("deployment.kubernetes.io/revision");
        annotations.remove("kubectl.kubernetes.io/last-applied-configuration");
    }
    object.as_object_mut().map(|o| o.remove("status"));
    object
}

#[test]
fn mutate_stores_the_fixes_and_apply_dry_run_server_gives_the_same_object_storing_nothing() {
    let Some((plane, _)) = cluster() else { return };
    plane.kubectl.namespace("mutate-gpu", &["lifeguard.dev/mutate=true"]);
    let object = deployment::naive_gpu("llm").to_string();
    let dry = plane
        .kubectl
        .run_with_input(&["apply", "--dry-run=server", "-n", "mutate-gpu", "-o", "json", "-f", "-"], Some(&object));
    let dry = dry.json();
    assert!(plane.kubectl.get("mutate-gpu", "deployment", "llm").is_none(), "a dry run stores nothing");

    let run = create(plane, "mutate-gpu", &deployment::naive_gpu("llm"), &[]);
    assert_eq!(run.code, 0, "{run:#?}");
    let stored = plane.kubectl.get("mutate-gpu", "deployment", "llm").expect("stored");
    let startup = &container(&stored, "vllm")["startupProbe"];
    assert_eq!(startup["httpGet"], json!({ "path": "/health", "port": "http", "scheme": "HTTP" }));
    assert_eq!(startup["periodSeconds"], 10);
    assert_eq!(startup["failureThreshold"], 49, "430 s declared, x 1.1, / 10 s, rounded up, and a period to spare");
    assert_eq!(stored["metadata"]["annotations"]["lifeguard.dev/mutated"], "startup-probe-missing");
    assert_eq!(comparable(&dry), comparable(&stored));
}

/// The naive GPU server ([`deployment::naive_gpu`]'s template) as a
/// LeaderWorkerSet's leader and workers: how GPU serving often runs.
fn naive_gpu_lws(name: &str) -> Value {
    let template = deployment::naive_gpu(name)["spec"]["template"].clone();
    json!({"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "metadata": {"name": name},
        "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 2, "leaderTemplate": template, "workerTemplate": template}}})
}

/// The chart registers both webhooks for the custom kinds of the engine's
/// table: with LeaderWorkerSet's own CRD installed, its leader and worker
/// templates are refused under enforce and fixed under mutate, each as
/// the Deployment of the same pod would be.
#[test]
fn a_leaderworkerset_is_refused_under_enforce_and_fixed_under_mutate_like_its_deployment() {
    let Some((plane, _)) = cluster() else { return };
    let Some(corpus) = lifeguard_e2e::corpus_dir() else { return };
    let (file, crd) = lifeguard_e2e::LWS_CRD;
    plane.kubectl.install_crds(&corpus.join(file), &[crd]);
    let templates = ["leaderTemplate", "workerTemplate"];

    plane.kubectl.namespace("enforce-lws", &["lifeguard.dev/mode=enforce"]);
    let run = create(plane, "enforce-lws", &naive_gpu_lws("llm"), &[]);
    assert_eq!(run.code, 1, "{run:#?}");
    assert!(
        run.stderr.contains("denied the request: lifeguard denied LeaderWorkerSet/enforce-lws/llm: "),
        "{}",
        run.stderr
    );
    for template in templates {
        let at = format!("- startup-probe-missing container \"vllm\" at /spec/leaderWorkerTemplate/{template}/spec/");
        assert!(run.stderr.contains(&at), "{at}: {}", run.stderr);
    }
    assert!(plane.kubectl.get("enforce-lws", "leaderworkerset", "llm").is_none(), "nothing is stored");

    plane.kubectl.namespace("mutate-lws", &["lifeguard.dev/mutate=true"]);
    let run = create(plane, "mutate-lws", &naive_gpu_lws("llm"), &[]);
    assert_eq!(run.code, 0, "{run:#?}");
    let stored = plane.kubectl.get("mutate-lws", "leaderworkerset", "llm").expect("stored");
    let deployment = {
        plane.kubectl.namespace("mutate-lws-deployment", &["lifeguard.dev/mutate=true"]);
        let run = create(plane, "mutate-lws-deployment", &deployment::naive_gpu("llm"), &[]);
        assert_eq!(run.code, 0, "{run:#?}");
        plane.kubectl.get("mutate-lws-deployment", "deployment", "llm").expect("stored")
    };
    let fixed = &container(&deployment, "vllm")["startupProbe"];
    assert!(fixed.is_object(), "{deployment:#}");
    for template in templates {
        let startup = &stored["spec"]["leaderWorkerTemplate"][template]["spec"]["containers"][0]["startupProbe"];
        // The same probe; the API server defaults a Deployment's
        // (`scheme`, `timeoutSeconds`, ...), a custom resource's not.
        let set = startup.as_object().map(|p| p.len()).unwrap_or_default();
        assert_eq!(set, 3, "{template}: {stored:#}");
        for field in ["periodSeconds", "failureThreshold"] {
            assert_eq!(startup[field], fixed[field], "{template}: {stored:#}");
        }
        for field in ["path", "port"] {
            assert_eq!(startup["httpGet"][field], fixed["httpGet"][field], "{template}: {stored:#}");
        }
    }
    assert_eq!(stored["metadata"]["annotations"]["lifeguard.dev/mutated"], "startup-probe-missing");
}

#[test]
fn a_sidecar_injected_after_lifeguard_is_fixed_on_reinvocation() {
    let Some((plane, _)) = cluster() else { return };
    let namespace = "mutate-reinvoke";
    plane.kubectl.namespace(namespace, &["lifeguard.dev/mutate=true"]);
    let injector = Injector::start(&webhook::serving_pair(&plane.pki.ca));
    plane.kubectl.apply(&injector.configuration(namespace, &plane.pki.ca.pem));
    // The configuration informer lags the write: wait for the first injection.
    let probe = deployment::typical("probe");
    lifeguard_e2e::cluster::process::wait_for("the injector to be called", Duration::from_secs(30), || {
        let run = create(plane, namespace, &probe, &["--dry-run=server", "-o", "json"]);
        let object: Value = serde_json::from_str(&run.stdout).map_err(|e| format!("{e}: {run:?}"))?;
        let containers = object["spec"]["template"]["spec"]["containers"].as_array().map_or(0, Vec::len);
        if containers == 2 { Ok(()) } else { Err(run.stdout) }
    });

    let run = create(plane, namespace, &deployment::typical("web"), &[]);
    assert_eq!(run.code, 0, "{run:#?}");
    let stored = plane.kubectl.get(namespace, "deployment", "web").expect("stored");
    assert_eq!(container(&stored, SIDECAR)["lifecycle"]["preStop"]["sleep"]["seconds"], 40);
    // The typical Deployment's 40 s were enough for its own container; the
    // sidecar's 40 s sleep plus 5 s to shut down needs 45.
    assert_eq!(stored["spec"]["template"]["spec"]["terminationGracePeriodSeconds"], 45, "{stored:#}");
    let mutated = stored["metadata"]["annotations"]["lifeguard.dev/mutated"].as_str().unwrap_or_default();
    assert!(mutated.contains("prestop-sleep-only"), "{mutated}");
    plane.kubectl.run(&["delete", "mutatingwebhookconfiguration", "zz-sidecar-injector"]).ok();
}

#[test]
fn a_workload_admitted_in_audit_can_be_scaled_relabelled_and_rolled_under_enforce_but_not_made_worse() {
    let Some((plane, _)) = cluster() else { return };
    let kubectl = &plane.kubectl;
    let ns = "ratchet";
    kubectl.namespace(ns, &["lifeguard.dev/mode=audit"]);
    assert_eq!(create(plane, ns, &deployment::naive_gpu("llm"), &[]).code, 0);
    kubectl.run(&["label", "namespace", ns, "lifeguard.dev/mode=enforce", "--overwrite"]).ok();

    let scale = kubectl.run(&["scale", "deployment/llm", "-n", ns, "--replicas=3"]);
    assert_eq!((scale.code, scale.stdout.as_str()), (0, "deployment.apps/llm scaled\n"), "{scale:#?}");
    let label = kubectl.run(&["label", "deployment/llm", "-n", ns, "team=inference"]);
    assert_eq!(label.code, 0, "{label:#?}");
    let restart = kubectl.run(&["rollout", "restart", "deployment/llm", "-n", ns]);
    assert_eq!((restart.code, restart.stdout.as_str()), (0, "deployment.apps/llm restarted\n"), "{restart:#?}");
    // What would deny is ratcheted; the info finding (vLLM's shared
    // /health, its own engine's) never denies and is not.
    for warning in restart.warnings() {
        assert!(
            warning.contains("already there") || warning.starts_with("probe-endpoint-reused: container \"vllm\""),
            "{warning}"
        );
    }

    // A second container reusing one endpoint that aggregates its
    // dependencies is a finding the old object did not have.
    let worse = json!([{ "op": "add", "path": "/spec/template/spec/containers/-", "value": {
        "name": "metrics", "image": "registry.example/exporter:2",
        "livenessProbe": { "httpGet": { "path": "/actuator/health", "port": 9100 } },
        "readinessProbe": { "httpGet": { "path": "/actuator/health", "port": 9100 } },
    }}]);
    let patch = kubectl.run(&["patch", "deployment/llm", "-n", ns, "--type=json", "-p", &worse.to_string()]);
    assert_eq!(patch.code, 1, "{patch:#?}");
    let (warnings, denial) = patch.stderr.split_once("Error from server (Forbidden): ").expect("a denial");
    // Both about the new container: its shared endpoint, and the pod's
    // declared 430 s cold start its liveness would restart.
    assert!(denial.contains("denied the request: lifeguard denied Deployment/ratchet/llm: 2 findings"), "{denial}");
    assert!(denial.contains("\n- probe-endpoint-reused container \"metrics\" at "), "{denial}");
    assert!(denial.contains("\n- startup-probe-missing container \"metrics\" at "), "{denial}");
    assert!(!denial.contains("container \"vllm\""), "old findings are not what denies: {denial}");
    assert!(
        warnings.contains("startup-probe-missing (already there before this update): container \"vllm\""),
        "{warnings}"
    );
    let stored = kubectl.get(ns, "deployment", "llm").expect("stored");
    assert_eq!(stored["spec"]["replicas"], 3);
    assert_eq!(stored["metadata"]["labels"]["team"], "inference");
    assert_eq!(stored["spec"]["template"]["spec"]["containers"].as_array().map(Vec::len), Some(1));
}

#[test]
fn controllers_make_the_replicaset_and_pods_which_lifeguard_skips() {
    let Some((plane, lifeguard)) = cluster() else { return };
    plane.start_controllers();
    let kubectl = &plane.kubectl;
    let ns = "controllers";
    kubectl.namespace(ns, &["lifeguard.dev/mode=warn", "lifeguard.dev/mutate=true"]);
    let skipped_before = lifeguard.webhook.metric("lifeguard_webhook_requests_total", &["verdict=\"skipped\""]);
    let mut deployment = deployment::naive_gpu("llm");
    deployment["spec"]["replicas"] = json!(2);
    let run = create(plane, ns, &deployment, &[]);
    assert_eq!(run.code, 0, "{run:#?}");
    // The validating webhooks see the mutated object: one finding fixed,
    // one left for a person.
    let warnings = run.warnings();
    assert_eq!(warnings.len(), 2, "{}", run.stderr);
    assert!(warnings[0].starts_with("startup-probe-missing (fixed by lifeguard): "), "{warnings:?}");
    assert!(warnings[1].starts_with("probe-endpoint-reused: "), "{warnings:?}");

    let pods = kubectl.wait_until(
        "two Pending pods",
        Duration::from_secs(60),
        &["get", "pods", "-n", ns, "-o", "json"],
        |l| l["items"].as_array().is_some_and(|p| p.len() == 2),
    );
    for pod in pods["items"].as_array().into_iter().flatten() {
        assert_eq!(pod["status"]["phase"], "Pending", "no node runs them");
        // The pod spec is the mutated template's, copied by the controller:
        // lifeguard did not patch the Pod itself.
        assert_eq!(container(&json!({"spec": {"template": pod}}), "vllm")["startupProbe"]["failureThreshold"], 49);
        assert!(pod["metadata"]["annotations"].get("lifeguard.dev/mutated").is_none(), "{pod:#}");
    }
    let replicasets = kubectl.run(&["get", "replicasets", "-n", ns, "-o", "json"]).json();
    assert_eq!(replicasets["items"].as_array().map(Vec::len), Some(1));

    let reviews = lifeguard.webhook.reviews();
    let controlled: Vec<&Value> = reviews
        .iter()
        .filter(|r| {
            r["object"]
                .as_str()
                .is_some_and(|o| (o.starts_with("Pod/") || o.starts_with("ReplicaSet/")) && o.contains("/controllers/"))
        })
        .collect();
    assert!(controlled.len() >= 6, "the ReplicaSet and two Pods, each validated and mutated: {controlled:#?}");
    assert!(controlled.iter().all(|r| r["verdict"] == "skipped"), "{controlled:#?}");
    let skipped_after = lifeguard.webhook.metric("lifeguard_webhook_requests_total", &["verdict=\"skipped\""]);
    assert!(skipped_after >= skipped_before + 6.0, "{skipped_before} -> {skipped_after}");
}

#[test]
fn kube_system_and_lifeguards_namespace_are_never_sent_to_the_webhook() {
    let Some((plane, lifeguard)) = cluster() else { return };
    let kubectl = &plane.kubectl;
    kubectl
        .run(&[
            "label",
            "namespace",
            "kube-system",
            "lifeguard.dev/mode=enforce",
            "lifeguard.dev/mutate=true",
            "--overwrite",
        ])
        .ok();
    kubectl.namespace("lifeguard", &["lifeguard.dev/mode=enforce", "lifeguard.dev/mutate=true"]);
    for ns in ["kube-system", "lifeguard"] {
        let run = create(plane, ns, &deployment::naive_gpu("unjudged"), &[]);
        assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:#?}");
        let stored = kubectl.get(ns, "deployment", "unjudged").expect("stored");
        assert!(container(&stored, "vllm").get("startupProbe").is_none(), "not mutated in {ns}");
    }
    // Lines are written in batches: give the last ones time to arrive.
    std::thread::sleep(Duration::from_millis(500));
    let sent: Vec<Value> = lifeguard
        .webhook
        .reviews()
        .into_iter()
        .filter(|r| r["object"].as_str().is_some_and(|o| o.contains("/kube-system/") || o.contains("/lifeguard/")))
        .collect();
    assert_eq!(sent, Vec::<Value>::new());
}

/// The naive GPU server's pod template (a fixable `startup-probe-missing`)
/// as a bare Pod and as a Job.
fn naive_gpu_pod_and_job(name: &str) -> (Value, Value) {
    let deployment = deployment::naive_gpu(name);
    let mut template = deployment["spec"]["template"].clone();
    template["spec"]["restartPolicy"] = json!("Never");
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "annotations": template["metadata"]["annotations"]}, "spec": template["spec"]});
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
        "spec": {"backoffLimit": 0, "template": template}});
    (pod, job)
}

#[test]
fn updates_in_a_mutate_namespace_change_nothing_the_user_did_not_change() {
    let Some((plane, _)) = cluster() else { return };
    // Admitted before the namespace opted into mutation, so each object
    // still has a fixable finding when it is updated.
    let (ns, control) = ("updates", "updates-control");
    plane.kubectl.namespace(ns, &[]);
    plane.kubectl.namespace(control, &[]);
    plane.kubectl.default_service_account(ns);
    let (pod, job) = naive_gpu_pod_and_job("llm");
    for object in [&pod, &job, &deployment::naive_gpu("llm")] {
        create(plane, ns, object, &[]).ok();
    }
    create(plane, control, &deployment::naive_gpu("llm"), &[]).ok();
    plane.kubectl.run(&["label", "namespace", ns, "lifeguard.dev/mutate=true"]).ok();

    // The pod spec of a Pod and the template of a Job are immutable: a
    // patch there would make the API server refuse the relabel with 422.
    for (kind, what) in [("pod", "pod/llm labeled\n"), ("job", "job.batch/llm labeled\n")] {
        let run = plane.kubectl.run(&["label", kind, "llm", "-n", ns, "team=ml"]);
        assert_eq!((run.code, run.stdout.as_str(), run.stderr.as_str()), (0, what, ""), "{run:#?}");
        let stored = plane.kubectl.get(ns, kind, "llm").expect("stored");
        assert!(stored["metadata"]["annotations"].get("lifeguard.dev/mutated").is_none(), "{stored:#}");
    }

    // A relabel and a scale of a Deployment do to it exactly what they do
    // without lifeguard: no template change, so no rollout.
    let deployment = |namespace: &str| plane.kubectl.get(namespace, "deployment", "llm").expect("the deployment");
    let generation = |d: &Value| d["metadata"]["generation"].as_i64().unwrap_or_default();
    let before = deployment(ns);
    let changes: [&[&str]; 3] = [
        &["label", "deployment", "llm", "team=ml"],
        &["patch", "deployment", "llm", "--type=merge", "-p", r#"{"spec":{"replicas":3}}"#],
        &["scale", "deployment", "llm", "--replicas=2"],
    ];
    for change in changes {
        for namespace in [ns, control] {
            let mut args = change.to_vec();
            args.extend(["-n", namespace]);
            let run = plane.kubectl.run(&args);
            assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:#?}");
        }
        let (judged, unjudged) = (deployment(ns), deployment(control));
        assert_eq!(generation(&judged), generation(&unjudged), "{change:?}: the same generation as without lifeguard");
        assert_eq!(judged["spec"]["template"], before["spec"]["template"], "{change:?}: the template is untouched");
    }
    // Two spec changes (replicas 1 -> 3 -> 2), none from the relabel.
    assert_eq!(generation(&deployment(ns)), generation(&before) + 2);

    // An update that rolls the pods anyway carries the fixes.
    let run = plane.kubectl.run(&["set", "image", "deployment/llm", "vllm=vllm/vllm-openai:v0.6.4", "-n", ns]);
    assert_eq!(run.code, 0, "{run:#?}");
    let rolled = deployment(ns);
    assert_eq!(rolled["metadata"]["annotations"]["lifeguard.dev/mutated"], "startup-probe-missing", "{rolled:#}");
    assert!(container(&rolled, "vllm")["startupProbe"].is_object(), "{rolled:#}");
}

/// GitOps in a mutate namespace: every object of the shared corpus that
/// `/mutate` fixes under the chart's policy (the default pack), and an
/// exec sleep it rewrites, applied twice, unchanged, with `kubectl apply`
/// and with server-side apply under Argo CD's field manager: the second
/// apply is accepted and stores nothing new; a bare Pod and a Job whose fix
/// changed a value their file sets among them (then the Pod is relabelled,
/// and a probe change the fix had no part in is refused as ever).
#[test]
// A test's edge: it tells on the terminal what it measured.
#[allow(clippy::print_stderr)]
fn a_second_apply_of_the_corpus_in_a_mutate_namespace_is_accepted_and_stores_nothing_new() {
    let Some((plane, _)) = cluster() else { return };
    let Some(corpus) = lifeguard_e2e::corpus_dir() else { return };
    // Another test starts kube-controller-manager, whose writes to a new
    // Deployment (its revision, its status) are not the second apply's:
    // started first, they are done before it (`reapply::apply_twice` waits).
    plane.start_controllers();
    let ns = "mutate-reapply";
    plane.kubectl.namespace(ns, &["lifeguard.dev/mutate=true"]);
    plane.kubectl.default_service_account(ns);
    let mut objects = reapply::fixed_workloads_under(&corpus, &policies::Policy::default());
    objects.push(reapply::short_exec_sleep());
    let immutable = objects.len();
    objects.extend(reapply::immutable_with_a_fixed_value());
    let mut failures = Vec::new();
    for mode in reapply::ApplyMode::ALL {
        let started = std::time::Instant::now();
        let done = reapply::apply_twice(&plane.kubectl, ns, &objects, mode);
        failures.extend(done.failures(&format!("{mode:?}"), objects.len(), started.elapsed()));
        assert!(done.stored >= 15, "{mode:?}: {} objects stored", done.stored);
        let started = std::time::Instant::now();
        let name = mode.name(immutable);
        failures.extend(
            reapply::updates_of_a_fixed_pod(&plane.kubectl, ns, &name, &mode.name(immutable + 1))
                .into_iter()
                .map(|f| format!("{mode:?}: {f}")),
        );
        eprintln!("{mode:?}: the fixed Pod's updates, {:.0?}", started.elapsed());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A Deployment of `n` containers, each with liveness and readiness on one
/// endpoint (two findings without a fix) and a liveness that restarts on
/// the first failure (`liveness-too-aggressive`, fixed by `/mutate`).
fn many_findings(name: &str, n: usize) -> Value {
    let containers: Vec<Value> = (0..n)
        .map(|i| {
            json!({"name": format!("app-{i:02}"), "image": "registry.example/app:1.0",
                "ports": [{"name": format!("http-{i:02}"), "containerPort": 8080 + i}],
                "livenessProbe": {"httpGet": {"path": "/health", "port": 8080 + i}, "periodSeconds": 10, "failureThreshold": 1},
                "readinessProbe": {"httpGet": {"path": "/health", "port": 8080 + i}, "periodSeconds": 5}})
        })
        .collect();
    let mut deployment = deployment::typical(name);
    deployment["spec"]["template"]["spec"]["containers"] = json!(containers);
    deployment
}

#[test]
fn both_endpoints_answering_many_findings_each_keep_their_summary_line_in_kubectls_output() {
    let Some((plane, _)) = cluster() else { return };
    let ns = "warn-mutate-many";
    plane.kubectl.namespace(ns, &["lifeguard.dev/mode=warn", "lifeguard.dev/mutate=true"]);
    let run = create(plane, ns, &many_findings("crowded", 25), &["--dry-run=server"]);
    assert_eq!(run.code, 0, "{run:#?}");
    let warnings = run.warnings();
    let fixes = warnings.iter().filter(|w| w.contains("(fixed by lifeguard)")).count();
    let findings = warnings.iter().filter(|w| w.starts_with("probe-endpoint-reused: ")).count();
    assert!(fixes > 0 && findings > 0, "{}", run.stderr);
    let fixes_more = format!("... and {} more fixes (`lifeguard lint` lists them all)", 25 - fixes);
    assert!(warnings.contains(&fixes_more.as_str()), "mutate's summary: {}", run.stderr);
    // Validation judges the fixed object; its count of the rest comes last.
    let findings_more = warnings
        .iter()
        .filter_map(|w| w.strip_prefix("... and ")?.strip_suffix(" more findings (`lifeguard lint` lists them all)"))
        .filter_map(|n| n.parse::<usize>().ok())
        .collect::<Vec<_>>();
    assert_eq!(findings_more.len(), 1, "validate's summary: {}", run.stderr);
    assert!(findings_more[0] >= 25 - findings, "{}", run.stderr);
    let total: usize = warnings.iter().map(|w| w.chars().count()).sum();
    assert!(total <= 2 * webhook_budget(), "{total} characters of warnings");
}

fn webhook_budget() -> usize {
    ::webhook::review::WARNING_BUDGET_CHARS
}

/// What `kubectl create -n NAMESPACE -f FILE` prints on a terminal for the
/// naive GPU server (its warnings and errors, then what it created), as
/// the docs write it: the file named `file` rather than `STDIN`, and the
/// policy at the chart's mount rather than the test's directory.
fn as_documented(plane: &ControlPlane, namespace: &str, file: &str, flags_first: bool) -> String {
    let run = create(plane, namespace, &deployment::naive_gpu("llm"), &[]);
    let command = if flags_first {
        format!("$ kubectl create -n {namespace} -f {file}\n")
    } else {
        format!("$ kubectl -n {namespace} create -f {file}\n")
    };
    let printed = format!("{}{}", run.stderr, run.stdout).replace("\"STDIN\"", &format!("\"{file}\""));
    // The policy's path ends the deny's first line.
    let printed = printed
        .lines()
        .map(|line| match line.split_once("at or above the deny severity of ") {
            Some((head, _)) => format!("{head}at or above the deny severity of /etc/lifeguard/policy/policy.yaml\n"),
            None => format!("{line}\n"),
        })
        .collect::<String>();
    format!("{command}{printed}")
}

#[test]
fn the_documented_kubectl_sessions_are_what_kubectl_prints() {
    let Some((plane, _)) = cluster() else { return };
    plane.kubectl.namespace("docs-enforce-gpu", &["lifeguard.dev/mode=enforce"]);
    let deny = as_documented(plane, "docs-enforce-gpu", "llm.yaml", true).replace("docs-enforce-gpu", "enforce-gpu");
    lifeguard_e2e::docs::assert_marked_block("docs/webhook.md", "enforce-deny-output", &deny);
    let mut session = String::new();
    for (namespace, label) in [
        ("demo-enforce", "lifeguard.dev/mode=enforce"),
        ("demo-warn", "lifeguard.dev/mode=warn"),
        ("demo-mutate", "lifeguard.dev/mutate=true"),
    ] {
        plane.kubectl.namespace(namespace, &[label]);
        session.push_str(&as_documented(plane, namespace, "naive-gpu-server.json", false));
    }
    lifeguard_e2e::docs::assert_marked_block("docs/cluster.md", "demo-output", &session);
}
