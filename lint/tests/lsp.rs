//! `lifeguard lsp` driven over its real stdio, message by message: the
//! diagnostics are `lint`'s findings at their exact ranges, a quick fix
//! writes what `lifeguard fix` writes, "ignore" adds the annotations, a
//! sibling's Service or the policy file changing relints the open file,
//! bad input is a diagnostic and never a crash, and a stream of random
//! edits leaves the server answering.
//!
//! Over 400 lines: ten tests, each a session with the real server (open, edit,
//! ask, compare with `lifeguard lint` or `fix`), sharing the few helpers above
//! them; split, they would only be more test binaries each linking the whole
//! tree.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use lifeguard_e2e::lsp_client::{Client, Random, apply_edits, file_uri, logged, random_edits};
use serde_json::{Value, json};

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_lifeguard"))
}

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples")
}

/// A directory holding copies of `files` from lint/examples.
fn workspace(files: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for f in files {
        std::fs::copy(examples().join(f), dir.path().join(f)).expect("copy an example");
    }
    dir
}

/// `lifeguard lint --format json FILE`: (rule, line, column) of each finding.
fn linted(file: &Path) -> Vec<(String, u64, u64)> {
    let out = Command::new(binary())
        .args(["lint", "--format", "json", "--fail-on", "never"])
        .arg(file)
        .env_remove("LIFEGUARD_POLICY")
        .output()
        .expect("run lint");
    let entries: Vec<Value> = serde_json::from_slice(&out.stdout).expect("JSON");
    let mut found: Vec<(String, u64, u64)> = entries
        .iter()
        .filter(|e| e["rule"].is_string())
        .map(|e| {
            (
                e["rule"].as_str().unwrap_or_default().to_owned(),
                e["line"].as_u64().unwrap_or(0),
                e["column"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    found.sort();
    found
}

/// The diagnostics as (rule, line, column), 1-based as `lint` prints them
/// (the test files are ASCII, so a UTF-16 column is a character column).
fn as_lint(diagnostics: &[Value]) -> Vec<(String, u64, u64)> {
    let mut found: Vec<(String, u64, u64)> = diagnostics
        .iter()
        .filter(|d| d["code"].is_string())
        .map(|d| {
            let start = &d["range"]["start"];
            (
                d["code"].as_str().unwrap_or_default().to_owned(),
                start["line"].as_u64().unwrap_or(0) + 1,
                start["character"].as_u64().unwrap_or(0) + 1,
            )
        })
        .collect();
    found.sort();
    found
}

#[test]
fn diagnostics_are_lints_findings_with_their_ranges_codes_and_related_places() {
    let dir = workspace(&["web-api.yaml"]);
    let file = dir.path().join("web-api.yaml");
    let uri = file_uri(&file);
    let mut client = Client::start(&binary(), dir.path(), dir.path());
    client.open(&uri, &std::fs::read_to_string(&file).expect("read"));
    let diagnostics = client.diagnostics(&uri);
    assert_eq!(as_lint(&diagnostics), linted(&file));
    let reused = diagnostics.iter().find(|d| d["code"] == "probe-endpoint-reused").expect("probe-endpoint-reused");
    assert_eq!(reused["severity"], 1, "error");
    assert_eq!(reused["source"], "lifeguard");
    assert!(
        reused["codeDescription"]["href"].as_str().is_some_and(|h| h.ends_with("docs/rules.md#probe-endpoint-reused"))
    );
    // The whole livenessProbe block, and the readiness probe it shares a handler with.
    assert_eq!(reused["range"]["end"]["line"], 29, "{reused}");
    assert_eq!(reused["relatedInformation"][0]["location"]["range"]["start"]["line"], 29, "{reused}");
    let aggressive = diagnostics.iter().find(|d| d["code"] == "liveness-too-aggressive").expect("a warning");
    assert_eq!(aggressive["severity"], 2);
    assert_eq!(diagnostics.iter().find(|d| d["code"] == "exec-probe").map(|d| d["severity"].clone()), Some(json!(3)));
    assert_eq!(client.shutdown(), Some(0));
}

fn code_actions(client: &mut Client, uri: &str, diagnostic: &Value) -> Vec<Value> {
    let params = json!({"textDocument": {"uri": uri}, "range": diagnostic["range"],
        "context": {"diagnostics": [diagnostic]}});
    client.request("textDocument/codeAction", params).as_array().cloned().unwrap_or_default()
}

#[test]
fn a_quick_fix_and_fix_all_write_what_lifeguard_fix_writes() {
    let dir = workspace(&["gpu-model-server.yaml", "web-api.yaml"]);
    let mut client = Client::start(&binary(), dir.path(), dir.path());
    for name in ["gpu-model-server.yaml", "web-api.yaml"] {
        let file = dir.path().join(name);
        let uri = file_uri(&file);
        let text = std::fs::read_to_string(&file).expect("read");
        client.open(&uri, &text);
        let diagnostics = client.diagnostics(&uri);
        let fixed_by_cli = {
            let copy = dir.path().join(format!("cli-{name}"));
            std::fs::write(&copy, &text).expect("write");
            Command::new(binary()).arg("fix").arg(&copy).env_remove("LIFEGUARD_POLICY").output().expect("fix");
            std::fs::read_to_string(&copy).expect("read the fixed copy")
        };
        let mut fix_all = None;
        for diagnostic in &diagnostics {
            for action in code_actions(&mut client, &uri, diagnostic) {
                let title = action["title"].as_str().unwrap_or_default();
                if title == "lifeguard: apply every fix in this file" {
                    fix_all = Some(apply_edits(&text, &action["edit"], &uri));
                }
            }
        }
        assert_eq!(fix_all.as_deref(), Some(fixed_by_cli.as_str()), "{name}: fix all");
        // Each rule's quick fix alone is `lifeguard fix --rule RULE`.
        for diagnostic in diagnostics.iter().filter(|d| d["code"].is_string()) {
            let rule = diagnostic["code"].as_str().unwrap_or_default();
            let quick: Vec<Value> = code_actions(&mut client, &uri, diagnostic)
                .into_iter()
                .filter(|a| a["isPreferred"] == true && a["diagnostics"][0]["code"] == rule)
                .collect();
            let copy = dir.path().join(format!("rule-{rule}-{name}"));
            std::fs::write(&copy, &text).expect("write");
            Command::new(binary())
                .args(["fix", "--rule", rule])
                .arg(&copy)
                .env_remove("LIFEGUARD_POLICY")
                .output()
                .expect("fix");
            let by_rule = std::fs::read_to_string(&copy).expect("read");
            match quick.first() {
                Some(action) => assert_eq!(apply_edits(&text, &action["edit"], &uri), by_rule, "{name}: {rule}"),
                None => assert_eq!(by_rule, text, "{name}: {rule} has a fix but no quick fix"),
            }
        }
    }
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn ignore_adds_the_annotations_and_asks_for_a_reason() {
    let dir = workspace(&["web-api.yaml"]);
    let file = dir.path().join("web-api.yaml");
    let uri = file_uri(&file);
    let text = std::fs::read_to_string(&file).expect("read");
    let mut client = Client::start(&binary(), dir.path(), dir.path());
    client.open(&uri, &text);
    let diagnostics = client.diagnostics(&uri);
    let reused = diagnostics.iter().find(|d| d["code"] == "probe-endpoint-reused").expect("found").clone();
    let ignore = code_actions(&mut client, &uri, &reused)
        .into_iter()
        .find(|a| a["title"].as_str().is_some_and(|t| t.starts_with("lifeguard: ignore probe-endpoint-reused")))
        .expect("an ignore action");
    let ignored = apply_edits(&text, &ignore["edit"], &uri);
    assert!(
        ignored.contains("    lifeguard.dev/ignore: probe-endpoint-reused\n    lifeguard.dev/ignore-reason: \"\"\n"),
        "{ignored}"
    );
    client.change(&uri, 2, &ignored);
    let after = client.diagnostics(&uri);
    // No reason yet: the annotation does not apply, and lint says so.
    assert!(after.iter().any(|d| d["code"] == "ignore-annotation-invalid"), "{after:#?}");
    let reasoned = ignored.replace("ignore-reason: \"\"", "ignore-reason: \"one endpoint in this image (APP-12)\"");
    client.change(&uri, 3, &reasoned);
    let after = client.diagnostics(&uri);
    assert!(
        !after.iter().any(|d| d["code"] == "probe-endpoint-reused" || d["code"] == "ignore-annotation-invalid"),
        "{after:#?}"
    );
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn hover_explains_a_finding_and_an_annotation() {
    let dir = workspace(&["gpu-model-server.yaml"]);
    let file = dir.path().join("gpu-model-server.yaml");
    let uri = file_uri(&file);
    let text = std::fs::read_to_string(&file).expect("read");
    let mut client = Client::start(&binary(), dir.path(), dir.path());
    client.open(&uri, &text);
    let diagnostics = client.diagnostics(&uri);
    let first = diagnostics.iter().find(|d| d["code"].is_string()).expect("a finding");
    let hover = client
        .request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": first["range"]["start"]}));
    let value = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(value.starts_with(&format!("**{}**", first["code"].as_str().unwrap_or_default())), "{value}");
    assert!(value.contains("**Help**"), "{value}");
    // A finding that rests on an assumption names it, its source and how to declare it.
    let assuming = diagnostics.iter().find_map(|d| {
        let hover = client
            .request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": d["range"]["start"]}));
        let value = hover["contents"]["value"].as_str()?.to_owned();
        value.contains("**Assumes**").then_some(value)
    });
    let assuming = assuming.expect("a finding of the GPU model server rests on an assumption");
    assert!(assuming.contains("(declare: "), "{assuming}");
    let line = text.lines().position(|l| l.contains("lifeguard.dev/cold-start-seconds")).expect("the annotation");
    let column = text.lines().nth(line).and_then(|l| l.find("cold-start")).unwrap_or(0);
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": column}}),
    );
    assert!(hover["contents"]["value"].as_str().is_some_and(|v| v.contains("slowest valid start")), "{hover}");
    let nothing = client
        .request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}));
    assert!(nothing.is_null(), "{nothing}");
    assert_eq!(client.shutdown(), Some(0));
}

/// An info finding with a fix the default policy leaves out
/// (`prestop-sleep-only`'s rewrite of an exec sleep).
const OPT_IN: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: example/web:1
          ports: [{containerPort: 8080}]
          readinessProbe:
            httpGet: {path: /ready, port: 8080}
          lifecycle:
            preStop:
              exec: {command: [sleep, \"5\"]}
";

#[test]
fn the_hover_names_the_fix_lint_names() {
    let dir = workspace(&["web-api.yaml"]);
    std::fs::write(dir.path().join("opt-in.yaml"), OPT_IN).expect("write");
    let mut client = Client::start(&binary(), dir.path(), dir.path());
    let mut seen = Vec::new();
    for name in ["web-api.yaml", "opt-in.yaml"] {
        let file = dir.path().join(name);
        let text = std::fs::read_to_string(&file).expect("read");
        // `lint`'s text report: each finding's `fix: ...` or `no automatic fix: ...` line.
        let out = Command::new(binary())
            .args(["lint", "--fail-on", "never", "--color", "never"])
            .arg(&file)
            .output()
            .expect("lint");
        let report = String::from_utf8_lossy(&out.stdout).into_owned();
        let uri = file_uri(&file);
        client.open(&uri, &text);
        for d in client.diagnostics(&uri).iter().filter(|d| d["code"].is_string()) {
            let hover = client
                .request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": d["range"]["start"]}));
            let value = hover["contents"]["value"].as_str().unwrap_or_default().to_owned();
            let start = value.find("\n\n**Fix**").or_else(|| value.find("\n\n**No automatic fix**"));
            let (label, note) = start
                .and_then(|at| value[at + 4..].split("\n\n").next())
                .and_then(|fix| fix.split_once("**"))
                .unwrap_or_else(|| panic!("a fix line in {value}"));
            let note = note.trim_start_matches(" (quick fix, or `lifeguard fix`)").trim_start_matches(": ");
            let lint_label = if label == "No automatic fix" { "no automatic fix: " } else { "fix: " };
            assert!(
                report.contains(&format!("{lint_label}{note}\n")),
                "{} hover says {label}: {note}\nlint:\n{report}",
                d["code"]
            );
            seen.push((d["code"].as_str().unwrap_or_default().to_owned(), label.to_owned()));
        }
    }
    assert!(seen.contains(&("prestop-sleep-only".to_owned(), "Fix".to_owned())), "{seen:?}");
    assert!(seen.contains(&("probe-endpoint-reused".to_owned(), "No automatic fix".to_owned())), "{seen:?}");
    assert_eq!(client.shutdown(), Some(0));
}

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
        - name: api
          image: example/api:1
          ports: [{name: http, containerPort: 8080}]
          livenessProbe:
            httpGet: {path: /livez, port: http}
            periodSeconds: 1
            failureThreshold: 1
";

fn service(app: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{name: api, namespace: shop}}\nspec:\n  selector: {{app: {app}}}\n  ports: [{{port: 80, targetPort: http}}]\n"
    )
}

fn rules(diagnostics: &[Value]) -> Vec<String> {
    diagnostics.iter().filter_map(|d| d["code"].as_str().map(str::to_owned)).collect()
}

#[test]
fn a_siblings_service_and_the_policy_file_relint_the_open_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (app, svc) = (dir.path().join("api.yaml"), dir.path().join("svc.yaml"));
    std::fs::write(&app, DEPLOYMENT).expect("write");
    std::fs::write(&svc, service("other")).expect("write");
    let (app_uri, svc_uri) = (file_uri(&app), file_uri(&svc));
    let mut client = Client::start(&binary(), dir.path(), dir.path());
    client.open(&app_uri, DEPLOYMENT);
    let first = rules(&client.diagnostics(&app_uri));
    assert!(!first.contains(&"readiness-probe-missing".to_owned()), "the Service selects another app: {first:?}");
    assert!(first.contains(&"liveness-too-aggressive".to_owned()), "{first:?}");
    // The sibling, edited in the editor (not saved): now it selects the app.
    client.open(&svc_uri, &service("other"));
    let _ = client.diagnostics(&svc_uri);
    client.change(&svc_uri, 2, &service("api"));
    let missing = loop {
        let found = client.diagnostics(&app_uri);
        if let Some(d) = found.iter().find(|d| d["code"] == "readiness-probe-missing") {
            break d.clone();
        }
    };
    // The Service that sends the traffic, in the other file, as the editor has it.
    let related = &missing["relatedInformation"][0];
    assert_eq!(related["location"]["uri"], svc_uri.as_str(), "{missing}");
    assert_eq!(related["location"]["range"]["start"]["line"], 0, "{missing}");
    assert!(related["message"].as_str().is_some_and(|m| m.starts_with("Service shop/api sends")), "{missing}");
    let relinted = vec!["readiness-probe-missing".to_owned(), "liveness-too-aggressive".to_owned()];
    // The policy file appears and is saved: the rule it disables goes.
    let policy = dir.path().join(".lifeguard.yaml");
    let policy_text =
        "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\nrules:\n  liveness-too-aggressive: {enabled: false}\n";
    std::fs::write(&policy, policy_text).expect("write the policy");
    let policy_uri = file_uri(&policy);
    client.open(&policy_uri, policy_text);
    client.notify("textDocument/didSave", json!({"textDocument": {"uri": policy_uri}}));
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut latest = relinted;
    while latest.contains(&"liveness-too-aggressive".to_owned()) && Instant::now() < deadline {
        latest = rules(&client.diagnostics(&app_uri));
    }
    assert!(!latest.contains(&"liveness-too-aggressive".to_owned()), "{latest:?}");
    assert!(latest.contains(&"readiness-probe-missing".to_owned()), "{latest:?}");
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn bad_input_is_one_diagnostic_at_its_place_and_the_server_goes_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut client = Client::start(&binary(), dir.path(), dir.path());
    let broken = file_uri(&dir.path().join("broken.yaml"));
    client.open(&broken, "kind: Deployment\nmetadata: {name: x\nspec: {}\n");
    let diagnostics = client.diagnostics(&broken);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    assert_eq!(diagnostics[0]["severity"], 1);
    assert!(diagnostics[0]["range"]["start"]["line"].as_u64().is_some_and(|l| l >= 1), "{diagnostics:#?}");
    // An alias bomb: over lint's expansion limit, said once, not expanded.
    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for (name, previous) in ["b", "c", "d", "e", "f", "g"].iter().zip(["a", "b", "c", "d", "e", "f"]) {
        bomb.push_str(&format!("{name}: &{name} [*{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}]\n"));
    }
    let bomb_uri = file_uri(&dir.path().join("bomb.yaml"));
    client.open(&bomb_uri, &bomb);
    let diagnostics = client.diagnostics(&bomb_uri);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    assert!(diagnostics[0]["message"].as_str().is_some_and(|m| m.contains("alias")), "{diagnostics:#?}");
    // A request for a file it does not know, and one it does not serve.
    let none = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": "file:///nowhere.yaml"}, "position": {"line": 0, "character": 0}}),
    );
    assert!(none.is_null());
    let unknown = client.request_raw(
        "textDocument/definition",
        json!({"textDocument": {"uri": broken}, "position": {"line": 0, "character": 0}}),
    );
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn a_known_request_with_bad_params_is_invalid_params_saying_what_is_wrong() {
    let dir = workspace(&["web-api.yaml"]);
    let file = dir.path().join("web-api.yaml");
    let uri = file_uri(&file);
    let mut client = Client::start(&binary(), dir.path(), dir.path());
    client.open(&uri, &std::fs::read_to_string(&file).expect("read"));
    client.diagnostics(&uri);
    // A hover whose position is a string, and one with no position at all.
    let wrong_type =
        client.request_raw("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": "line 3"}));
    assert_eq!(wrong_type["error"]["code"], -32602, "{wrong_type}");
    let message = wrong_type["error"]["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("invalid params for textDocument/hover: "), "{message}");
    // The field, or (lsp-types flattens the position into the params) its type.
    assert!(message.to_lowercase().contains("position") && message.contains("invalid type"), "{message}");
    let missing = client.request_raw("textDocument/hover", json!({"textDocument": {"uri": uri}}));
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    assert!(missing["error"]["message"].as_str().is_some_and(|m| m.contains("missing field `position`")), "{missing}");
    // A code action whose range is not a range, and one with no params.
    let bad_range = client.request_raw(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": [0, 1], "context": {"diagnostics": []}}),
    );
    assert_eq!(bad_range["error"]["code"], -32602, "{bad_range}");
    assert!(bad_range["error"]["message"].as_str().is_some_and(|m| m.to_lowercase().contains("range")), "{bad_range}");
    let no_params = client.request_raw("textDocument/codeAction", Value::Null);
    assert_eq!(no_params["error"]["code"], -32602, "{no_params}");
    // An unknown method stays MethodNotFound, even with bad params.
    let unknown = client.request_raw("textDocument/definition", json!("not params"));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    // The server goes on answering.
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 23, "character": 12}}),
    );
    assert!(hover.is_object() || hover.is_null(), "{hover}");
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn a_stream_of_random_edits_never_stops_the_server() {
    let files = ["web-api.yaml", "gpu-model-server.yaml", "postgres.yaml"];
    let dir = workspace(&files);
    let mut client = Client::start(&binary(), dir.path(), dir.path());
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let mut edits = 0;
    for (i, name) in files.iter().enumerate() {
        let uri = file_uri(&dir.path().join(name));
        let text = std::fs::read_to_string(dir.path().join(name)).expect("read");
        // 3 s a file at most, 1,000 edits a file at most.
        let deadline = Instant::now() + Duration::from_secs(3);
        edits += random_edits(&mut client, &uri, text, &mut random, deadline, 1000);
        assert!(edits > i, "no edit sent to {name}");
    }
    assert!(edits >= 100, "{edits} edits");
    assert!(logged(&client).is_empty(), "{:#?}", logged(&client));
    assert_eq!(client.shutdown(), Some(0), "after {edits} random edits");
}

#[test]
fn a_document_over_lints_size_limit_is_one_diagnostic_saying_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut client = Client::start(&binary(), dir.path(), dir.path());
    let uri = file_uri(&dir.path().join("huge.yaml"));
    // One document of 33,554,433 characters, one past lint's limit.
    let mut text = String::from("kind: ConfigMap\ndata:\n  blob: \"");
    text.push_str(&"x".repeat(33_554_433 - text.len() - 2));
    text.push_str("\"\n");
    assert_eq!(text.chars().count(), 33_554_433);
    client.open(&uri, &text);
    let diagnostics = client.diagnostics(&uri);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    let message = diagnostics[0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("document larger than 33554432 characters"), "{message}");
    assert_eq!(diagnostics[0]["severity"], 1);
    // The server goes on: a small file after it is linted.
    let small = file_uri(&dir.path().join("web-api.yaml"));
    client.open(&small, &std::fs::read_to_string(examples().join("web-api.yaml")).expect("read"));
    assert!(!client.diagnostics(&small).is_empty());
    assert_eq!(client.shutdown(), Some(0));
}
