//! Writing a plan in runs located in one parse gives the text (or the
//! error) that applying its operations one by one, re-parsing after each,
//! gives; and the common case, independent edits, takes one parse.

use serde_json::{Value, json};

use super::edit::{EditError, apply};
use super::splice::apply_in_runs;
use crate::input::Limits;

type Op = (&'static str, Value);

/// Applies the operations one by one, re-parsing after each.
fn one_by_one(text: &str, ops: &[Op], json: bool) -> Result<String, (usize, EditError)> {
    let mut text = text.to_owned();
    for (i, (pointer, value)) in ops.iter().enumerate() {
        text = apply(&text, 0, pointer, value, json, &Limits::default()).map_err(|e| (i, e))?;
    }
    Ok(text)
}

/// The text written in runs, checked against one by one; and the runs.
fn in_runs(text: &str, ops: &[Op]) -> (Result<String, (usize, EditError)>, usize) {
    let json = serde_json::from_str::<Value>(text).is_ok();
    let owned: Vec<(String, &Value)> = ops.iter().map(|(p, v)| ((*p).to_owned(), v)).collect();
    let got = apply_in_runs(text, 0, &owned, json, &Limits::default());
    let runs = got.as_ref().map_or(0, |(_, runs)| *runs);
    let got = got.map(|(text, _)| text);
    let want = one_by_one(text, ops, json);
    assert_eq!(got, want, "operations {ops:?} on:\n{text}");
    (got, runs)
}

/// Only that the runs come out as one by one (errors included).
fn same(text: &str, ops: &[Op]) {
    let _ = in_runs(text, ops);
}

const BLOCK: &str = "\
spec:
  containers:
    - name: a   # the web server
      image: x
      livenessProbe:
        httpGet:
          path: /livez
        periodSeconds: 5
        failureThreshold: 1
    - name: b
      livenessProbe:
        exec:
          command: [check]
        failureThreshold: 1
";

#[test]
fn block_style_probes_of_several_containers_in_one_parse() {
    let ops = [
        ("/spec/containers/0/livenessProbe/failureThreshold", json!(3)),
        ("/spec/containers/0/livenessProbe/timeoutSeconds", json!(5)),
        ("/spec/containers/1/livenessProbe/failureThreshold", json!(3)),
        ("/spec/containers/1/livenessProbe/timeoutSeconds", json!(5)),
    ];
    let (out, runs) = in_runs(BLOCK, &ops);
    assert_eq!(runs, 1);
    assert_eq!(
        out.ok().as_deref(),
        Some(
            "spec:\n  containers:\n    - name: a   # the web server\n      image: x\n      livenessProbe:\n        httpGet:\n          path: /livez\n        periodSeconds: 5\n        failureThreshold: 3\n        timeoutSeconds: 5\n    - name: b\n      livenessProbe:\n        exec:\n          command: [check]\n        failureThreshold: 3\n        timeoutSeconds: 5\n"
        )
    );
    // The same operations in another order come out as one by one too.
    let reversed: Vec<Op> = ops.iter().rev().cloned().collect();
    assert_eq!(in_runs(BLOCK, &reversed).1, 1);
}

#[test]
fn two_inserts_under_one_parent_keep_their_order() {
    let ops = [
        ("/spec/containers/1/startupProbe", json!({"exec": {"command": ["check"]}, "failureThreshold": 30})),
        ("/spec/containers/1/terminationMessagePolicy", json!("FallbackToLogsOnError")),
        ("/spec/containers/0/livenessProbe/timeoutSeconds", json!(5)),
        ("/spec/containers/0/livenessProbe/successThreshold", json!(1)),
    ];
    let (out, runs) = in_runs(BLOCK, &ops);
    assert_eq!(runs, 1);
    let out = out.unwrap_or_default();
    assert!(out.ends_with(
        "        failureThreshold: 1\n      startupProbe:\n        exec:\n          command:\n            - check\n        failureThreshold: 30\n      terminationMessagePolicy: FallbackToLogsOnError\n"
    ));
    assert!(out.contains(
        "        failureThreshold: 1\n        timeoutSeconds: 5\n        successThreshold: 1\n    - name: b\n"
    ));
}

#[test]
fn inserts_into_a_mapping_and_into_its_last_entry_in_either_order() {
    // Both go on the line after the probe's last entry.
    let probe = ("/spec/containers/1/livenessProbe/timeoutSeconds", json!(5));
    let container = ("/spec/containers/1/startupProbe", json!({"tcpSocket": {"port": 80}}));
    let spec = ("/spec/terminationGracePeriodSeconds", json!(45));
    for ops in [
        vec![probe.clone(), container.clone(), spec.clone()],
        vec![spec.clone(), container.clone(), probe.clone()],
        vec![container.clone(), probe.clone(), spec.clone()],
    ] {
        assert_eq!(in_runs(BLOCK, &ops).1, 1);
        // Without the final line break, each goes after a new one.
        same(BLOCK.trim_end(), &ops);
    }
}

#[test]
fn flow_style_entries_and_values() {
    let text = "spec:\n  containers:\n  - {name: a, livenessProbe: {httpGet: {path: /x, port: 80}, failureThreshold: 1}}\n  - name: b\n    livenessProbe: {exec: {command: [c]}, failureThreshold: 1}  # tight\n    ports: []\n";
    let ops = [
        ("/spec/containers/0/livenessProbe/failureThreshold", json!(3)),
        ("/spec/containers/0/livenessProbe/timeoutSeconds", json!(5)),
        ("/spec/containers/0/livenessProbe/periodSeconds", json!(10)),
        ("/spec/containers/1/livenessProbe/failureThreshold", json!(3)),
        ("/spec/containers/1/livenessProbe/timeoutSeconds", json!(5)),
        ("/spec/containers/1/readinessProbe", json!({"tcpSocket": {"port": 80}})),
    ];
    let (out, runs) = in_runs(text, &ops);
    assert_eq!(runs, 1);
    assert_eq!(
        out.ok().as_deref(),
        Some(
            // A new probe goes beside the container's other probes.
            "spec:\n  containers:\n  - {name: a, livenessProbe: {httpGet: {path: /x, port: 80}, failureThreshold: 3, timeoutSeconds: 5, periodSeconds: 10}}\n  - name: b\n    livenessProbe: {exec: {command: [c]}, failureThreshold: 3, timeoutSeconds: 5}  # tight\n    readinessProbe:\n      tcpSocket:\n        port: 80\n    ports: []\n"
        )
    );
    // Two keys into an empty flow mapping: the second follows the first.
    let empty = "a: {}\nb: 1\n";
    let (out, runs) = in_runs(empty, &[("/a/x", json!(1)), ("/a/y", json!(2)), ("/b", json!(2))]);
    assert_eq!((out.ok().as_deref(), runs), (Some("a: {x: 1, \"y\": 2}\nb: 2\n"), 2));
}

#[test]
fn json_keeps_its_indentation() {
    let text = "{\n  \"spec\": {\n    \"containers\": [\n      {\n        \"name\": \"a\",\n        \"livenessProbe\": {\n          \"periodSeconds\": 5,\n          \"failureThreshold\": 1\n        }\n      },\n      {\"name\": \"b\", \"livenessProbe\": {\"failureThreshold\": 1}, \"securityContext\": {}}\n    ]\n  }\n}\n";
    let ops = [
        ("/spec/containers/0/livenessProbe/failureThreshold", json!(3)),
        ("/spec/containers/0/livenessProbe/timeoutSeconds", json!(5)),
        ("/spec/containers/0/startupProbe", json!({"tcpSocket": {"port": 80}})),
        ("/spec/containers/1/livenessProbe/failureThreshold", json!(3)),
        ("/spec/containers/1/livenessProbe/timeoutSeconds", json!(5)),
        ("/spec/containers/1/image", json!("x")),
    ];
    let (out, runs) = in_runs(text, &ops);
    assert_eq!(runs, 1);
    assert_eq!(
        out.ok().as_deref(),
        Some(
            "{\n  \"spec\": {\n    \"containers\": [\n      {\n        \"name\": \"a\",\n        \"livenessProbe\": {\n          \"periodSeconds\": 5,\n          \"failureThreshold\": 3,\n          \"timeoutSeconds\": 5\n        },\n        \"startupProbe\": {\n          \"tcpSocket\": {\n            \"port\": 80\n          }\n        }\n      },\n      {\"name\": \"b\", \"livenessProbe\": {\"failureThreshold\": 3, \"timeoutSeconds\": 5}, \"securityContext\": {}, \"image\": \"x\"}\n    ]\n  }\n}\n"
        )
    );
}

#[test]
fn comments_of_replaced_mappings_are_kept() {
    let text = "c:\n- name: a\n  lifecycle:\n    preStop:\n      exec:\n        # the load balancer needs 45 s\n        command: [sleep, \"60\"]  # not less\n  grace: 1\n- name: b\n  lifecycle:\n    preStop: {exec: {\n      # why\n      command: [sleep, \"60\"]}}\n  grace: 1\n";
    let ops = [
        ("/c/0/lifecycle/preStop", json!({"sleep": {"seconds": 60}})),
        ("/c/0/grace", json!(75)),
        ("/c/1/lifecycle/preStop", json!({"sleep": {"seconds": 60}})),
        ("/c/1/grace", json!(75)),
    ];
    let (out, runs) = in_runs(text, &ops);
    assert_eq!(runs, 1);
    let out = out.unwrap_or_default();
    assert!(out.contains(
        "    preStop:\n      # the load balancer needs 45 s\n      sleep:\n        seconds: 60  # not less\n"
    ));
    assert!(out.contains("    preStop: {sleep: {seconds: 60}}\n             # why\n  grace: 75\n"));
    // A key added after the comments moved below a value goes where one by one puts it.
    let (_, runs) = in_runs(text, &[ops[2].clone(), ("/c/1/lifecycle/postStart", json!({"sleep": {"seconds": 1}}))]);
    assert_eq!(runs, 2);
}

#[test]
fn a_path_an_earlier_operation_created_is_found_in_the_next_parse() {
    let text = "spec:\n  containers:\n  - name: a\n  - name: b\n";
    let ops = [
        ("/spec/containers/0/lifecycle/preStop", json!({"sleep": {"seconds": 5}})),
        ("/spec/containers/0/lifecycle/preStop/sleep/seconds", json!(10)),
        ("/spec/containers/0/lifecycle/postStart", json!({"sleep": {"seconds": 1}})),
        ("/spec/containers/1/lifecycle/preStop", json!({"sleep": {"seconds": 5}})),
    ];
    let (out, runs) = in_runs(text, &ops);
    assert_eq!(runs, 2);
    assert_eq!(
        out.ok().as_deref(),
        Some(
            "spec:\n  containers:\n  - name: a\n    lifecycle:\n      preStop:\n        sleep:\n          seconds: 10\n      postStart:\n        sleep:\n          seconds: 1\n  - name: b\n    lifecycle:\n      preStop:\n        sleep:\n          seconds: 5\n"
        )
    );
}

#[test]
fn errors_are_those_of_one_by_one() {
    let text = "base: &probe\n  port: 80\nlive: *probe\nother:\n  s: |\n    text\n  k: 1\n";
    let (out, _) = in_runs(text, &[("/other/k", json!(2)), ("/other/m", json!(3)), ("/live/x", json!(1))]);
    assert_eq!(out, Err((2, EditError::Aliased("/live".into()))));
    let (out, _) = in_runs(text, &[("/other/k", json!(2)), ("/other/s", json!("x"))]);
    assert_eq!(out, Err((1, EditError::BlockScalar("/other/s".into()))));
    let (out, _) = in_runs(text, &[("/other/k", json!(2)), ("/base/port", json!(81))]);
    assert!(matches!(out, Err((1, EditError::Anchored { .. }))));
    // A value that now ends a line with `|`: the line after it reads as its content.
    let (out, _) = in_runs("m: 1\nk: 2\n", &[("/m", json!("a |")), ("/k", json!(3))]);
    assert_eq!(out, Err((1, EditError::BlockScalar("/k".into()))));
}

#[test]
fn a_replacement_that_changes_the_files_indentation_ends_the_run() {
    // Two mappings indented by 4, one by 2: 4 until the first is rewritten.
    let text = "a:\n    x:\n        y: 1\nb:\n  z: 1\nc: 1\n";
    let ops = [("/a", json!({"w": 1})), ("/d", json!({"e": {"f": 1}})), ("/c", json!(2))];
    let (out, runs) = in_runs(text, &ops);
    assert_eq!(runs, 2);
    assert_eq!(out.ok().as_deref(), Some("a:\n    w: 1\nb:\n  z: 1\nc: 2\nd:\n  e:\n    f: 1\n"));
    // One that keeps it does not.
    let (_, runs) = in_runs(text, &[("/a/x", json!({"w": {"v": 1}})), ("/d", json!({"e": 1}))]);
    assert_eq!(runs, 1);
}

/// One Pod three ways: block YAML with flow parts and no final line break,
/// block YAML indented by 4 with CRLF, comments and non-ASCII text, and JSON.
const MIXED: [&str; 3] = [
    "kind: Pod\nspec:\n  containers:\n  - name: a\n    livenessProbe:\n      httpGet: {path: /x, port: 80}\n      failureThreshold: 1\n    lifecycle:\n      preStop: {exec: {  # why\n        command: [sleep, \"5\"]}}\n  - {name: b, livenessProbe: {failureThreshold: 1}, securityContext: {}}\n  terminationGracePeriodSeconds: 5",
    "# café\r\nkind: Pod\r\nspec:\r\n    containers:\r\n        - name: a  # ☕\r\n          livenessProbe:\r\n              httpGet:\r\n                  path: /x\r\n                  port: 80\r\n              failureThreshold: 1   # one\r\n          lifecycle:\r\n              preStop:\r\n                  exec:\r\n                      # why 5\r\n                      command: [sleep, \"5\"]\r\n        - name: b\r\n          livenessProbe: {failureThreshold: 1}\r\n          securityContext: {}\r\n    terminationGracePeriodSeconds: 5\r\n",
    "{\n  \"kind\": \"Pod\",\n  \"spec\": {\n    \"containers\": [\n      {\n        \"name\": \"a\",\n        \"livenessProbe\": {\"httpGet\": {\"path\": \"/x\", \"port\": 80}, \"failureThreshold\": 1},\n        \"lifecycle\": {\n          \"preStop\": {\n            \"exec\": {\"command\": [\"sleep\", \"5\"]}\n          }\n        }\n      },\n      {\"name\": \"b\", \"livenessProbe\": {\"failureThreshold\": 1}, \"securityContext\": {}}\n    ],\n    \"terminationGracePeriodSeconds\": 5\n  }\n}\n",
];

#[test]
fn every_order_of_a_mixed_plan_comes_out_as_one_by_one() {
    let pool: Vec<Op> = vec![
        ("/spec/containers/0/livenessProbe/failureThreshold", json!(3)),
        ("/spec/containers/0/livenessProbe/timeoutSeconds", json!(5)),
        ("/spec/containers/0/livenessProbe/httpGet/scheme", json!("HTTP")),
        ("/spec/containers/0/lifecycle/preStop", json!({"sleep": {"seconds": 5}})),
        ("/spec/containers/0/lifecycle/postStart", json!({"sleep": {"seconds": 1}})),
        ("/spec/containers/0/startupProbe", json!({"httpGet": {"path": "/x", "port": 80}})),
        ("/spec/containers/0/startupProbe/failureThreshold", json!(30)),
        ("/spec/containers/1/livenessProbe/failureThreshold", json!(3)),
        ("/spec/containers/1/livenessProbe/timeoutSeconds", json!(5)),
        ("/spec/containers/1/image", json!("x")),
        ("/spec/containers/1/securityContext/runAsNonRoot", json!(true)),
        ("/spec/containers/1/securityContext/readOnlyRootFilesystem", json!(true)),
        ("/spec/terminationGracePeriodSeconds", json!(45)),
        ("/spec/dnsPolicy", json!("Default")),
    ];
    let n = pool.len();
    for text in MIXED {
        for a in 0..n {
            for b in 0..n {
                same(text, &[pool[a].clone(), pool[b].clone()]);
                for c in (0..n).step_by(3) {
                    same(text, &[pool[a].clone(), pool[b].clone(), pool[(c + a) % n].clone()]);
                }
            }
        }
        let (out, runs) = in_runs(text, &pool);
        assert!(out.is_ok() && runs < pool.len(), "{runs} runs");
    }
}

#[test]
fn a_thousand_containers_in_one_parse() {
    let container = |i: usize, failure: &str, timeout: &str| {
        format!(
            "  - name: c{i}\n    livenessProbe:\n      httpGet: {{path: /livez, port: {i}}}\n      failureThreshold: {failure}\n{timeout}"
        )
    };
    let mut text = String::from("spec:\n  containers:\n");
    let mut want = text.clone();
    let mut ops: Vec<(String, Value)> = Vec::new();
    for i in 0..1000 {
        text.push_str(&container(i, "1", ""));
        want.push_str(&container(i, "3", "      timeoutSeconds: 5\n"));
        ops.push((format!("/spec/containers/{i}/livenessProbe/failureThreshold"), json!(3)));
        ops.push((format!("/spec/containers/{i}/livenessProbe/timeoutSeconds"), json!(5)));
    }
    let ops: Vec<(String, &Value)> = ops.iter().map(|(p, v)| (p.clone(), v)).collect();
    let got = apply_in_runs(&text, 0, &ops, false, &Limits::default());
    assert_eq!(got.as_ref().map(|(_, runs)| *runs), Ok(1));
    assert!(got.is_ok_and(|(out, _)| out == want));
}

#[test]
fn lifeguard_fix_fixes_a_thousand_containers() {
    use policies::{Batch, Policy};

    use super::file::fix_text;
    use crate::documents::parse_text;

    let mut text = String::from("apiVersion: v1\nkind: Pod\nmetadata:\n  name: many\nspec:\n  containers:\n");
    let mut want = text.clone();
    for i in 0..1000 {
        let head = format!(
            "  - name: c{i}\n    image: example/app:1\n    livenessProbe:\n      httpGet: {{path: /livez, port: 8080}}\n      periodSeconds: 5\n"
        );
        text.push_str(&format!("{head}      failureThreshold: 1\n"));
        want.push_str(&format!("{head}      failureThreshold: 3\n      timeoutSeconds: 5\n"));
    }
    let limits = Limits::default();
    let parse = parse_text("many.yaml", &text, &limits);
    let out = fix_text("many.yaml", &text, parse, &Batch::default(), &Policy::default(), None, &limits);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert!(out.skipped.is_empty(), "{:?}", out.skipped);
    assert_eq!(out.fix_count(), 1000);
    assert!(out.fixed == want, "the fixed text differs");
}
