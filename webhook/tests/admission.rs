//! The admission API as the API server uses it: the real binary over real
//! TLS (HTTP/2 and HTTP/1.1), every pod-bearing kind in every mode, patches
//! that apply and converge, ratcheting, controller-owned objects,
//! subresources, DELETE and CONNECT, exemptions and the policy's own mode.
//!
//! Over 400 lines: fourteen tests of the admission API, each a review or two
//! posted to the real binary and its answer checked, sharing `every_kind` and
//! the answer readers above them; the webhook's other behaviours (bad requests,
//! reload, drain) have files of their own.

mod common;

use common::{
    Clients, Server, Start, apply, clean_container, deployment, patch_of, post, review, shared_endpoint_container,
};
use serde_json::{Value, json};

/// One pod spec placed in every pod-bearing kind the engine knows.
fn every_kind(spec: &Value) -> Vec<Value> {
    let meta = |kind: &str| json!({"name": format!("{}-x", kind.to_lowercase()), "namespace": "shop"});
    let template = json!({"metadata": {"labels": {"app": "x"}}, "spec": spec});
    let with_template = |api: &str, kind: &str| {
        json!({"apiVersion": api, "kind": kind, "metadata": meta(kind),
               "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": template}})
    };
    vec![
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta("Pod"), "spec": spec}),
        with_template("apps/v1", "Deployment"),
        with_template("apps/v1", "StatefulSet"),
        with_template("apps/v1", "DaemonSet"),
        with_template("apps/v1", "ReplicaSet"),
        json!({"apiVersion": "v1", "kind": "ReplicationController", "metadata": meta("ReplicationController"),
               "spec": {"selector": {"app": "x"}, "template": template}}),
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta("Job"), "spec": {"template": template}}),
        json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta("CronJob"),
               "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}}}),
        json!({"apiVersion": "v1", "kind": "PodTemplate", "metadata": meta("PodTemplate"), "template": template}),
        with_template("argoproj.io/v1alpha1", "Rollout"),
    ]
}

/// The response, after checking what the API server checks of it: audit
/// annotation keys that stay valid qualified names once prefixed with the
/// webhook's name (`validate.lifeguard.dev/KEY`).
fn response(review: &Value) -> &Value {
    if let Some(keys) = review["response"]["auditAnnotations"].as_object() {
        for key in keys.keys() {
            let valid = key.len() <= 63
                && key.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
                && key.starts_with(|c: char| c.is_ascii_alphanumeric())
                && key.ends_with(|c: char| c.is_ascii_alphanumeric());
            assert!(valid, "audit annotation key {key:?} is not a valid qualified name part");
        }
    }
    &review["response"]
}

fn warnings(review: &Value) -> Vec<String> {
    response(review)["warnings"]
        .as_array()
        .map(|w| w.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default()
}

fn audit_rules(review: &Value) -> Vec<String> {
    let text = response(review)["auditAnnotations"]["findings"].as_str().unwrap_or("[]");
    let findings: Vec<Value> = serde_json::from_str(text).expect("findings annotation is JSON");
    findings.iter().map(|f| f["rule"].as_str().unwrap_or_default().to_owned()).collect()
}

/// A liveness probe that restarts after one failure: a warning with a fix.
fn aggressive_container() -> Value {
    let mut c = clean_container("app");
    c["livenessProbe"]["failureThreshold"] = json!(1);
    c
}

#[tokio::test(flavor = "multi_thread")]
async fn every_kind_in_every_mode_over_h2_and_http1() {
    let server = Server::start(Start::default());
    let spec = json!({"containers": [shared_endpoint_container("orders")]});
    for (i, object) in every_kind(&spec).iter().enumerate() {
        let client = server.client(i % 2 == 0);
        let kind = object["kind"].as_str().unwrap_or_default();
        let uid = format!("uid-{kind}");
        let body = review(&uid, "CREATE", Some(object), None);

        for path in ["/validate/enforce", "/validate"] {
            let (status, out) = post(&client, &server.url(path), &body).await;
            assert_eq!(status, 200, "{kind} {path}: {out}");
            assert_eq!(out["apiVersion"], "admission.k8s.io/v1");
            assert_eq!(out["kind"], "AdmissionReview");
            let r = response(&out);
            assert_eq!(r["uid"], uid.as_str(), "the uid is echoed");
            assert_eq!(r["allowed"], false, "{kind} {path} is denied: {out}");
            assert_eq!(r["status"]["code"], 403);
            let message = r["status"]["message"].as_str().unwrap_or_default();
            assert!(message.starts_with(&format!("lifeguard denied {kind}/shop/")), "{message}");
            let lines: Vec<&str> = message.lines().skip(1).collect();
            // One finding per mistake: the shared aggregate endpoint is one
            // probe-endpoint-reused finding that names the dependencies.
            assert_eq!(lines.len(), 1, "one line per finding: {message}");
            assert!(lines[0].starts_with("- probe-endpoint-reused container \"orders\" at /"), "{message}");
            assert!(lines[0].contains("aggregates dependencies") && lines[0].contains("help: "), "{message}");
        }

        let (_, out) = post(&client, &server.url("/validate/warn"), &body).await;
        assert_eq!(response(&out)["allowed"], true, "{kind} warn allows");
        let w = warnings(&out);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("probe-endpoint-reused: container \"orders\": "), "{w:?}");
        assert!(w.iter().all(|l| l.chars().count() <= 120 && !l.contains('\n')), "{w:?}");

        let (_, out) = post(&client, &server.url("/validate/audit"), &body).await;
        assert_eq!(response(&out)["allowed"], true);
        assert!(response(&out).get("warnings").is_none(), "audit does not warn: {out}");
        assert_eq!(audit_rules(&out), ["probe-endpoint-reused"]);
        assert_eq!(response(&out)["auditAnnotations"]["would-deny"], "true");

        // Nothing here has a safe fix (a second endpoint must exist in the app).
        let (_, out) = post(&client, &server.url("/mutate"), &body).await;
        assert_eq!(response(&out)["allowed"], true);
        assert!(patch_of(&out).is_none(), "{kind}: no fix, no patch: {out}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn mutate_patches_every_kind_and_converges() {
    let server = Server::start(Start::default());
    let client = server.client(true);
    let spec = json!({"containers": [aggressive_container()]});
    for object in every_kind(&spec) {
        let kind = object["kind"].as_str().unwrap_or_default().to_owned();
        let (_, out) = post(&client, &server.url("/mutate"), &review("m1", "CREATE", Some(&object), None)).await;
        assert_eq!(response(&out)["allowed"], true);
        assert!(patch_of(&out).is_some(), "{kind}: {out}");
        let fixed = apply(&object, &out);
        assert_eq!(
            fixed.pointer("/metadata/annotations/lifeguard.dev~1mutated"),
            Some(&json!("liveness-too-aggressive"))
        );
        assert!(warnings(&out)[0].starts_with("liveness-too-aggressive (fixed by lifeguard): "), "{out}");
        // The fixed object passes enforce and needs no second patch.
        let again = review("m2", "CREATE", Some(&fixed), None);
        let (_, second) = post(&client, &server.url("/mutate"), &again).await;
        assert!(patch_of(&second).is_none(), "{kind}: converges: {second}");
        let (_, judged) = post(&client, &server.url("/validate/warn"), &again).await;
        assert!(warnings(&judged).is_empty(), "{kind}: {judged}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn updates_are_patched_only_where_they_change_a_mutable_template() {
    let server = Server::start(Start::default());
    let client = server.client(false);
    let spec = json!({"containers": [aggressive_container()]});
    for old in every_kind(&spec) {
        let kind = old["kind"].as_str().unwrap_or_default().to_owned();
        // A relabel: the pod template is untouched, so no patch (no rollout).
        let mut relabelled = old.clone();
        relabelled["metadata"]["labels"] = json!({"team": "payments"});
        let (_, out) =
            post(&client, &server.url("/mutate"), &review("u1", "UPDATE", Some(&relabelled), Some(&old))).await;
        assert_eq!(response(&out)["allowed"], true, "{kind}: {out}");
        assert!(patch_of(&out).is_none(), "{kind}: a relabel is not patched: {out}");

        // A new image: the update rolls the pods anyway, so the fixes ride
        // along, except where the kind forbids changing the pod spec.
        let mut reimaged = old.clone();
        let containers = match kind.as_str() {
            "Pod" => "/spec/containers/0/image",
            "CronJob" => "/spec/jobTemplate/spec/template/spec/containers/0/image",
            "PodTemplate" => "/template/spec/containers/0/image",
            _ => "/spec/template/spec/containers/0/image",
        };
        *reimaged.pointer_mut(containers).expect("image") = json!("registry.example/web:2.1");
        let (_, out) =
            post(&client, &server.url("/mutate"), &review("u2", "UPDATE", Some(&reimaged), Some(&old))).await;
        assert_eq!(response(&out)["allowed"], true, "{kind}: {out}");
        let immutable = matches!(kind.as_str(), "Pod" | "Job");
        assert_eq!(patch_of(&out).is_some(), !immutable, "{kind}: {out}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_clean_object_is_allowed_without_warnings_or_patch() {
    let server = Server::start(Start::default());
    let client = server.client(false);
    let object = deployment("web", json!([clean_container("web")]));
    let body = review("clean", "CREATE", Some(&object), None);
    for path in ["/validate/enforce", "/validate/warn", "/validate/audit", "/mutate"] {
        let (status, out) = post(&client, &server.url(path), &body).await;
        assert_eq!(status, 200);
        assert_eq!(response(&out)["allowed"], true, "{path}: {out}");
        assert!(response(&out).get("warnings").is_none(), "{path}: {out}");
        assert!(patch_of(&out).is_none(), "{path}: {out}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_worked_gpu_example_gets_failure_threshold_48() {
    let policy = "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\nparameters:\n  gpuBootSeconds: 300\n";
    let server = Server::start(Start { policy: Some(policy.to_owned()), ..Start::default() });
    let mut object = deployment(
        "vllm",
        json!([{
            "name": "vllm", "image": "vllm/vllm-openai:v0.6.3",
            "ports": [{"name": "http", "containerPort": 8000}],
            "env": [{"name": "VLLM_SHUTDOWN_TIMEOUT_SECONDS", "value": "20"}],
            "resources": {"limits": {"nvidia.com/gpu": "1"}},
            "livenessProbe": {"httpGet": {"path": "/health", "port": "http"}, "initialDelaySeconds": 240, "periodSeconds": 10},
            "readinessProbe": {"tcpSocket": {"port": "http"}},
            "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "sleep 25"]}}}
        }]),
    );
    object["metadata"]["annotations"] = json!({"lifeguard.dev/cold-start-seconds": "430"});
    object["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = json!(30);
    let client = server.client(true);
    let (_, out) = post(&client, &server.url("/mutate"), &review("gpu", "CREATE", Some(&object), None)).await;
    let fixed = apply(&object, &out);
    let spec = &fixed["spec"]["template"]["spec"];
    assert_eq!(spec["containers"][0]["startupProbe"]["failureThreshold"], 49, "{fixed:#}");
    assert_eq!(spec["containers"][0]["startupProbe"]["periodSeconds"], 10);
    assert_eq!(spec["terminationGracePeriodSeconds"], 45);
    let (_, again) = post(&client, &server.url("/mutate"), &review("gpu2", "CREATE", Some(&fixed), None)).await;
    assert!(patch_of(&again).is_none(), "converges: {again}");
}

#[tokio::test(flavor = "multi_thread")]
async fn updates_ratchet_unless_told_not_to() {
    let server = Server::start(Start::default());
    let client = server.client(true);
    let old = deployment("orders", json!([shared_endpoint_container("orders")]));
    let mut same = old.clone();
    same["spec"]["replicas"] = json!(5);
    let (_, out) =
        post(&client, &server.url("/validate/enforce"), &review("r1", "UPDATE", Some(&same), Some(&old))).await;
    assert_eq!(response(&out)["allowed"], true, "findings the old object had do not deny: {out}");
    let w = warnings(&out);
    assert!(w.iter().all(|l| l.contains("(already there before this update)")), "{w:?}");

    // A new container brings a new finding: only that one denies.
    let mut worse = same.clone();
    worse["spec"]["template"]["spec"]["containers"]
        .as_array_mut()
        .expect("containers")
        .push(shared_endpoint_container("payments"));
    let (_, out) =
        post(&client, &server.url("/validate/enforce"), &review("r2", "UPDATE", Some(&worse), Some(&old))).await;
    assert_eq!(response(&out)["allowed"], false);
    let message = response(&out)["status"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("\"payments\"") && !message.contains("\"orders\""), "{message}");
    assert_eq!(warnings(&out).len(), 1, "the old finding is a warning: {out}");

    // A CREATE never ratchets.
    let (_, out) = post(&client, &server.url("/validate/enforce"), &review("r3", "CREATE", Some(&same), None)).await;
    assert_eq!(response(&out)["allowed"], false);

    let strict = Server::start(Start::args(&["--ratchet=false"]));
    let (_, out) =
        post(&strict.client(true), &strict.url("/validate/enforce"), &review("r4", "UPDATE", Some(&same), Some(&old)))
            .await;
    assert_eq!(response(&out)["allowed"], false, "--ratchet=false denies them all: {out}");
}

#[tokio::test(flavor = "multi_thread")]
async fn controller_owned_objects_pass_untouched_unless_included() {
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "orders-5d8f-x", "namespace": "shop", "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "orders-5d8f", "uid": "1", "controller": true}]},
        "spec": {"containers": [shared_endpoint_container("orders")]}});
    let body = review("o1", "CREATE", Some(&pod), None);
    let server = Server::start(Start::default());
    for path in ["/validate/enforce", "/mutate"] {
        let (_, out) = post(&server.client(true), &server.url(path), &body).await;
        assert_eq!(response(&out)["allowed"], true, "{path}: {out}");
        assert!(response(&out).get("warnings").is_none() && patch_of(&out).is_none(), "{path}: {out}");
    }
    let included = Server::start(Start::args(&["--include-controlled"]));
    let (_, out) = post(&included.client(true), &included.url("/validate/enforce"), &body).await;
    assert_eq!(response(&out)["allowed"], false, "{out}");
    // An ownerReference that is not a controller does not exempt.
    pod["metadata"]["ownerReferences"][0]["controller"] = json!(false);
    let (_, out) =
        post(&server.client(true), &server.url("/validate/enforce"), &review("o2", "CREATE", Some(&pod), None)).await;
    assert_eq!(response(&out)["allowed"], false, "{out}");
}

#[tokio::test(flavor = "multi_thread")]
async fn subresources_deletes_connects_and_other_kinds_are_allowed_untouched() {
    let server = Server::start(Start::default());
    let client = server.client(false);
    let bad = deployment("orders", json!([shared_endpoint_container("orders")]));
    let mut scale = review(
        "s1",
        "UPDATE",
        Some(&json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
        "metadata": {"name": "orders", "namespace": "shop"}, "spec": {"replicas": 3}})),
        None,
    );
    scale["request"]["subResource"] = json!("scale");
    let mut status = review("s2", "UPDATE", Some(&bad), Some(&bad));
    status["request"]["subResource"] = json!("status");
    let delete = review("s3", "DELETE", None, Some(&bad));
    let mut connect = review(
        "s4",
        "CONNECT",
        Some(&json!({"kind": "PodExecOptions", "apiVersion": "v1",
        "command": ["sh"], "container": "orders", "stdin": true})),
        None,
    );
    connect["request"]["subResource"] = json!("exec");
    let mut deleting = bad.clone();
    deleting["metadata"]["deletionTimestamp"] = json!("2026-12-01T10:00:00Z");
    deleting["metadata"]["finalizers"] = json!([]);
    let finalizing = review("s5", "UPDATE", Some(&deleting), Some(&bad));
    let service = review(
        "s6",
        "CREATE",
        Some(&json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "orders", "namespace": "shop"}, "spec": {"selector": {"app": "orders"}, "ports": [{"port": 80}]}})),
        None,
    );
    let config_map = review(
        "s7",
        "CREATE",
        Some(&json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "shop"}, "data": {"a": "b"}})),
        None,
    );
    for body in [scale, status, delete, connect, finalizing, service, config_map] {
        let uid = body["request"]["uid"].clone();
        for path in ["/validate/enforce", "/mutate"] {
            let (code, out) = post(&client, &server.url(path), &body).await;
            assert_eq!(code, 200);
            let r = response(&out);
            assert_eq!((&r["uid"], &r["allowed"]), (&uid, &json!(true)), "{path}: {out}");
            assert!(r.get("warnings").is_none() && patch_of(&out).is_none(), "{path}: {out}");
        }
    }
    let skipped = server.metric(
        "lifeguard_webhook_requests_total",
        &[r#"endpoint="validate""#, r#"mode="enforce""#, r#"verdict="skipped""#],
    );
    assert_eq!(skipped, 7.0);
}

const EXEMPTING_POLICY: &str = r#"apiVersion: lifeguard.dev/v1alpha1
kind: Policy
mode: warn
exemptions:
- reason: legacy payments stack, replaced in Q3
  namespaces: [legacy]
"#;

#[tokio::test(flavor = "multi_thread")]
async fn exemptions_ignore_annotations_and_the_policys_mode_apply_as_in_lint() {
    let server = Server::start(Start { policy: Some(EXEMPTING_POLICY.to_owned()), ..Start::default() });
    let client = server.client(true);
    let mut legacy = deployment("orders", json!([shared_endpoint_container("orders")]));
    legacy["metadata"]["namespace"] = json!("legacy");
    let (_, out) = post(&client, &server.url("/validate/enforce"), &review("e1", "CREATE", Some(&legacy), None)).await;
    assert_eq!(response(&out)["allowed"], true, "exempted: {out}");
    assert!(response(&out).get("warnings").is_none(), "{out}");
    assert_eq!(response(&out)["auditAnnotations"]["suppressed"], "1");

    let mut ignored = deployment("orders", json!([shared_endpoint_container("orders")]));
    ignored["metadata"]["annotations"] = json!({"lifeguard.dev/ignore": "probe-endpoint-reused,liveness-checks-dependency",
        "lifeguard.dev/ignore-reason": "vendor image with one health endpoint"});
    let (_, out) = post(&client, &server.url("/validate/enforce"), &review("e2", "CREATE", Some(&ignored), None)).await;
    assert_eq!(response(&out)["allowed"], true, "ignored with a reason: {out}");

    let mut unexplained = ignored.clone();
    unexplained["metadata"]["annotations"].as_object_mut().expect("annotations").remove("lifeguard.dev/ignore-reason");
    let (_, out) =
        post(&client, &server.url("/validate/enforce"), &review("e3", "CREATE", Some(&unexplained), None)).await;
    assert_eq!(response(&out)["allowed"], false, "an ignore without a reason does not apply: {out}");
    assert!(warnings(&out).iter().any(|w| w.starts_with("ignore-annotation-invalid: ")), "{out}");

    // The policy's `mode: warn` is what plain /validate does.
    let plain = deployment("orders", json!([shared_endpoint_container("orders")]));
    let (_, out) = post(&client, &server.url("/validate"), &review("e4", "CREATE", Some(&plain), None)).await;
    assert_eq!(response(&out)["allowed"], true, "{out}");
    assert_eq!(warnings(&out).len(), 1, "{out}");
    assert_eq!(response(&out)["auditAnnotations"]["mode"], "warn");
}

#[tokio::test(flavor = "multi_thread")]
async fn dry_run_requests_get_the_same_answer() {
    let server = Server::start(Start::default());
    let client = server.client(true);
    let object = deployment("web", json!([aggressive_container()]));
    let wet = review("d1", "CREATE", Some(&object), None);
    let mut dry = wet.clone();
    dry["request"]["dryRun"] = json!(true);
    for path in ["/validate/warn", "/mutate"] {
        let (_, a) = post(&client, &server.url(path), &wet).await;
        let (_, b) = post(&client, &server.url(path), &dry).await;
        assert_eq!(a, b, "{path}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn client_certificates_are_required_with_client_ca() {
    let client_ca = common::Ca::new("api server client CA");
    let client = client_ca.client("kube-apiserver", &[]);
    let (client_cert, client_key) = (client.cert, client.key);
    let dir = tempfile::tempdir().expect("tempdir");
    let ca_path = dir.path().join("client-ca.pem");
    std::fs::write(&ca_path, &client_ca.pem).expect("write");
    let server = Server::start(Start::args(&["--client-ca", ca_path.to_str().expect("utf-8")]));
    let body = review("c1", "CREATE", Some(&deployment("web", json!([clean_container("web")]))), None);
    let anonymous = server.client(true);
    let refused = anonymous.post(server.url("/validate")).body(body.to_string()).send().await;
    assert!(refused.is_err(), "no client certificate, no admission");
    let stranger = common::Ca::new("someone else");
    let intruder = stranger.client("intruder", &[]);
    let (bad_cert, bad_key) = (intruder.cert, intruder.key);
    let wrong = common::client_trusting(&server.ca().pem, true, Some((&bad_cert, &bad_key)));
    assert!(wrong.post(server.url("/validate")).body(body.to_string()).send().await.is_err());
    let trusted = common::client_trusting(&server.ca().pem, true, Some((&client_cert, &client_key)));
    let (status, out) = post(&trusted, &server.url("/validate"), &body).await;
    assert_eq!((status, &response(&out)["allowed"]), (200, &json!(true)), "{out}");
}

#[tokio::test(flavor = "multi_thread")]
async fn tls_1_2_and_1_3_are_both_served() {
    use rustls::pki_types::ServerName;
    use rustls::pki_types::pem::PemObject;
    let server = Server::start(Start::default());
    for version in [&rustls::version::TLS12, &rustls::version::TLS13] {
        let mut roots = rustls::RootCertStore::empty();
        for cert in rustls::pki_types::CertificateDer::pem_slice_iter(server.ca().pem.as_bytes()) {
            roots.add(cert.expect("pem")).expect("root");
        }
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&[version])
            .expect("version")
            .with_root_certificates(roots)
            .with_no_client_auth();
        let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config));
        let tcp = tokio::net::TcpStream::connect(server.admission).await.expect("connect");
        let tls = connector.connect(ServerName::try_from("localhost").expect("name"), tcp).await.expect("handshake");
        assert_eq!(tls.get_ref().1.protocol_version(), Some(version.version));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_review_is_counted_and_logged() {
    let server = Server::start(Start::default());
    let client = server.client(true);
    let bad = deployment("orders", json!([shared_endpoint_container("orders")]));
    let _ = post(&client, &server.url("/validate/enforce"), &review("log-1", "CREATE", Some(&bad), None)).await;
    let _ = post(
        &client,
        &server.url("/mutate"),
        &review("log-2", "CREATE", Some(&deployment("w", json!([aggressive_container()]))), None),
    )
    .await;
    let (_, text) = server.health_get("/metrics");
    for series in [
        r#"lifeguard_webhook_requests_total{endpoint="validate",mode="enforce",verdict="denied"} 1"#,
        r#"lifeguard_webhook_requests_total{endpoint="mutate",mode="none",verdict="patched"} 1"#,
        r#"lifeguard_webhook_findings_total{rule="probe-endpoint-reused"} 1"#,
        r#"lifeguard_webhook_request_duration_seconds_count{endpoint="validate"} 1"#,
        "lifeguard_webhook_in_flight_requests 0",
        r#"lifeguard_webhook_reloads_total{what="certificate",result="success"} 1"#,
        "lifeguard_webhook_self_test_ok 1",
        "lifeguard_webhook_log_lines_dropped_total 0",
    ] {
        assert!(text.lines().any(|l| l == series), "{series} in /metrics:\n{text}");
    }
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs() as f64;
    assert!(server.metric("lifeguard_webhook_certificate_expiry_timestamp_seconds", &[]) > now);
    let line = server.wait_log(|l| l["message"] == "review" && l["uid"] == "log-1", std::time::Duration::from_secs(2));
    assert_eq!(line["object"], "Deployment/shop/orders");
    assert_eq!(line["operation"], "CREATE");
    assert_eq!(
        (line["endpoint"].as_str(), line["mode"].as_str(), line["verdict"].as_str()),
        (Some("validate"), Some("enforce"), Some("denied"))
    );
    assert_eq!(line["rules"], "probe-endpoint-reused");
    assert!(line["duration_ms"].as_f64().is_some(), "{line}");
}

#[tokio::test(flavor = "multi_thread")]
async fn audit_mode_findings_are_counted_as_audited_not_warned() {
    let server = Server::start(Start::default());
    let client = server.client(true);
    let bad = deployment("orders", json!([shared_endpoint_container("orders")]));
    for (uid, mode) in [("a-1", "audit"), ("a-2", "audit"), ("w-1", "warn")] {
        let (status, _) =
            post(&client, &server.url(&format!("/validate/{mode}")), &review(uid, "CREATE", Some(&bad), None)).await;
        assert_eq!(status, 200);
    }
    let (_, text) = server.health_get("/metrics");
    for series in [
        r#"lifeguard_webhook_requests_total{endpoint="validate",mode="audit",verdict="audited"} 2"#,
        r#"lifeguard_webhook_requests_total{endpoint="validate",mode="warn",verdict="warned"} 1"#,
    ] {
        assert!(text.lines().any(|l| l == series), "{series} in /metrics:\n{text}");
    }
    assert!(!text.contains(r#"mode="audit",verdict="warned""#), "audit mode warns nobody:\n{text}");
    let line = server.wait_log(|l| l["message"] == "review" && l["uid"] == "a-1", std::time::Duration::from_secs(2));
    assert_eq!((line["mode"].as_str(), line["verdict"].as_str()), (Some("audit"), Some("audited")), "{line}");
}
