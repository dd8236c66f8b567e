//! Text-editing cases: each applies one operation and checks the exact text,
//! so a changed byte outside the edit fails.

use serde_json::{Value, json};

use super::edit::{EditError, apply};
use crate::input::{Limits, parse_stream};

fn set(text: &str, pointer: &str, value: Value) -> Result<String, EditError> {
    set_in(text, 0, pointer, value)
}

fn set_in(text: &str, doc: usize, pointer: &str, value: Value) -> Result<String, EditError> {
    let json = serde_json::from_str::<Value>(text).is_ok();
    let out = apply(text, doc, pointer, &value, json, &Limits::default())?;
    // Every edit must read back as the patched document.
    let (before, _) = parse_stream(text, &Limits::default());
    let (after, err) = parse_stream(&out, &Limits::default());
    assert_eq!(err, None, "edited text does not parse:\n{out}");
    let mut want = before[doc].value.clone();
    let op = json_patch::PatchOperation::Add(json_patch::AddOperation {
        path: json_patch::jsonptr::PointerBuf::parse(pointer).expect("pointer"),
        value,
    });
    if json_patch::patch(&mut want, &[op]).is_ok() {
        assert_eq!(after[doc].value, want, "edited text:\n{out}");
    }
    Ok(out)
}

#[test]
fn replaces_a_scalar_in_place_keeping_comments_and_quotes() {
    let text = "spec:\n  grace: 30   # seconds\n  name: 'web'\n  id: \"a\"\n";
    assert_eq!(
        set(text, "/spec/grace", json!(45)).ok().as_deref(),
        Some("spec:\n  grace: 45   # seconds\n  name: 'web'\n  id: \"a\"\n")
    );
    assert_eq!(
        set(text, "/spec/name", json!("it's")).ok().as_deref(),
        Some("spec:\n  grace: 30   # seconds\n  name: 'it''s'\n  id: \"a\"\n")
    );
    assert_eq!(
        set(text, "/spec/id", json!("b")).ok().as_deref(),
        Some("spec:\n  grace: 30   # seconds\n  name: 'web'\n  id: \"b\"\n")
    );
}

#[test]
fn adds_a_key_after_the_last_entry_at_its_indentation() {
    let text =
        "c:\n    - name: a\n      probe:\n          port: 80   # http\n\n      # trailing comment\n    - name: b\n";
    assert_eq!(
        set(text, "/c/0/probe/failureThreshold", json!(3)).ok().as_deref(),
        Some(
            "c:\n    - name: a\n      probe:\n          port: 80   # http\n          failureThreshold: 3\n\n      # trailing comment\n    - name: b\n"
        )
    );
}

#[test]
fn nested_values_follow_the_files_step_and_dash_style() {
    let text = "c:\n  - name: a\n    ports:\n      - containerPort: 80\n";
    let out = set(text, "/c/0/startupProbe", json!({"exec": {"command": ["sh", "-c", "x"]}, "periodSeconds": 10}));
    assert_eq!(
        out.ok().as_deref(),
        Some(
            "c:\n  - name: a\n    ports:\n      - containerPort: 80\n    startupProbe:\n      exec:\n        command:\n          - sh\n          - -c\n          - x\n      periodSeconds: 10\n"
        )
    );
}

#[test]
fn adds_to_a_flow_mapping_in_flow_style() {
    let text = "p: {port: 80, path: /x}  # probe\nq: {}\n";
    assert_eq!(
        set(text, "/p/failureThreshold", json!(3)).ok().as_deref(),
        Some("p: {port: 80, path: /x, failureThreshold: 3}  # probe\nq: {}\n")
    );
    assert_eq!(
        set(text, "/q/a", json!({"b": "8080"})).ok().as_deref(),
        Some("p: {port: 80, path: /x}  # probe\nq: {a: {b: \"8080\"}}\n")
    );
}

#[test]
fn replaces_a_whole_mapping_by_its_span() {
    let text = "lifecycle:\n  preStop:\n    # bridge\n    exec:\n      command: [\"sleep\", \"5\"]   # s\n  postStart: {}\nnext: 1\n";
    assert_eq!(
        set(text, "/lifecycle/preStop", json!({"sleep": {"seconds": 5}})).ok().as_deref(),
        Some("lifecycle:\n  preStop:\n    # bridge\n    sleep:\n      seconds: 5   # s\n  postStart: {}\nnext: 1\n")
    );
    let flow = "lifecycle: {preStop: {exec: {command: [sleep, \"5\"]}}}\n";
    assert_eq!(
        set(flow, "/lifecycle/preStop", json!({"sleep": {"seconds": 5}})).ok().as_deref(),
        Some("lifecycle: {preStop: {sleep: {seconds: 5}}}\n")
    );
}

#[test]
fn creates_missing_parents_as_block_mappings() {
    let text = "spec:\n  containers:\n  - name: a\n";
    assert_eq!(
        set(text, "/spec/containers/0/lifecycle/preStop", json!({"sleep": {"seconds": 5}})).ok().as_deref(),
        Some(
            "spec:\n  containers:\n  - name: a\n    lifecycle:\n      preStop:\n        sleep:\n          seconds: 5\n"
        )
    );
}

#[test]
fn keeps_crlf_and_a_missing_final_newline() {
    let text = "a:\r\n  b: 1\r\n  c: 2";
    assert_eq!(set(text, "/a/d", json!(3)).ok().as_deref(), Some("a:\r\n  b: 1\r\n  c: 2\r\n  d: 3"));
    assert_eq!(set(text, "/a/b", json!(9)).ok().as_deref(), Some("a:\r\n  b: 9\r\n  c: 2"));
    assert_eq!(set("a:\n  b: 1", "/a/c", json!(2)).ok().as_deref(), Some("a:\n  b: 1\n  c: 2"));
}

#[test]
fn edits_one_document_of_a_stream_and_list_items() {
    let text = "# head\n---\nkind: A\nx: 1\n---\n\n---\nkind: List\nitems:\n- kind: B\n  y: 2\n...\n";
    assert_eq!(
        set_in(text, 1, "/items/0/z", json!(3)).ok().as_deref(),
        Some("# head\n---\nkind: A\nx: 1\n---\n\n---\nkind: List\nitems:\n- kind: B\n  y: 2\n  z: 3\n...\n")
    );
    assert_eq!(
        set_in(text, 0, "/x", json!(5)).ok().as_deref(),
        Some("# head\n---\nkind: A\nx: 5\n---\n\n---\nkind: List\nitems:\n- kind: B\n  y: 2\n...\n")
    );
}

#[test]
fn json_stays_json_with_its_indentation() {
    let text = "{\n    \"spec\": {\n        \"grace\": 30,\n        \"c\": {\"a\": 1}\n    }\n}\n";
    assert_eq!(
        set(text, "/spec/probe", json!({"httpGet": {"port": 80}})).ok().as_deref(),
        Some(
            "{\n    \"spec\": {\n        \"grace\": 30,\n        \"c\": {\"a\": 1},\n        \"probe\": {\n            \"httpGet\": {\n                \"port\": 80\n            }\n        }\n    }\n}\n"
        )
    );
    assert_eq!(
        set(text, "/spec/c/b", json!("x")).ok().as_deref(),
        Some("{\n    \"spec\": {\n        \"grace\": 30,\n        \"c\": {\"a\": 1, \"b\": \"x\"}\n    }\n}\n")
    );
    assert_eq!(
        set(text, "/spec/grace", json!(45)).ok().as_deref(),
        Some("{\n    \"spec\": {\n        \"grace\": 45,\n        \"c\": {\"a\": 1}\n    }\n}\n")
    );
}

#[test]
fn values_after_block_scalars_and_empty_values() {
    let text = "a:\n  s: |\n    line\n    # not a comment\n\n  # a comment\nb:\n  e:\n";
    assert_eq!(
        set(text, "/a/t", json!(1)).ok().as_deref(),
        Some("a:\n  s: |\n    line\n    # not a comment\n  t: 1\n\n  # a comment\nb:\n  e:\n")
    );
    assert_eq!(
        set(text, "/b/e", json!(2)).ok().as_deref(),
        Some("a:\n  s: |\n    line\n    # not a comment\n\n  # a comment\nb:\n  e: 2\n")
    );
    assert_eq!(set(text, "/a/s", json!("x")), Err(EditError::BlockScalar("/a/s".into())));
}

#[test]
fn aliases_and_shared_anchors_are_refused() {
    let text = "base: &probe\n  port: 80\nlive: *probe\nmerged:\n  <<: *probe\n  path: /\n";
    assert_eq!(set(text, "/live/failureThreshold", json!(3)), Err(EditError::Aliased("/live".into())));
    assert_eq!(set(text, "/merged/port", json!(81)), Err(EditError::Aliased("/merged/port".into())));
    assert!(matches!(
        set(text, "/base/port", json!(81)),
        Err(EditError::Anchored { anchor, .. }) if anchor == "probe"
    ));
    // An explicit key beside a merge is the mapping's own.
    assert_eq!(
        set(text, "/merged/path", json!("/x")).ok().as_deref(),
        Some("base: &probe\n  port: 80\nlive: *probe\nmerged:\n  <<: *probe\n  path: /x\n")
    );
    // An anchor no alias uses is plain text.
    assert_eq!(set("a: &x\n  b: 1\n", "/a/b", json!(2)).ok().as_deref(), Some("a: &x\n  b: 2\n"));
}

#[test]
fn non_ascii_text_before_the_edit() {
    let text = "# café ☕\na:\n  note: \"naïve\"\n  b: 1\n";
    assert_eq!(set(text, "/a/c", json!(2)).ok().as_deref(), Some("# café ☕\na:\n  note: \"naïve\"\n  b: 1\n  c: 2\n"));
}

#[test]
fn json_with_tabs_keeps_tabs() {
    let text = "{\n\t\"spec\": {\n\t\t\"grace\": 30\n\t}\n}";
    assert_eq!(
        set(text, "/spec/probe", json!({"port": 80})).ok().as_deref(),
        Some("{\n\t\"spec\": {\n\t\t\"grace\": 30,\n\t\t\"probe\": {\n\t\t\t\"port\": 80\n\t\t}\n\t}\n}")
    );
}

#[test]
fn comments_inside_a_replaced_mapping_survive_above_it() {
    let text = "lifecycle:\n  preStop:\n    exec:\n      # 60 s: the load balancer deregisters in 45\n      command: [sleep, \"60\"]  # not less\n  postStart: {}\n";
    assert_eq!(
        set(text, "/lifecycle/preStop", json!({"sleep": {"seconds": 60}})).ok().as_deref(),
        Some(
            "lifecycle:\n  preStop:\n    # 60 s: the load balancer deregisters in 45\n    sleep:\n      seconds: 60  # not less\n  postStart: {}\n"
        )
    );
}

#[test]
fn comments_inside_a_replaced_flow_or_item_go_below_it() {
    let text = "lifecycle:\n  preStop: {exec: {\n    # why 60\n    command: [sleep, \"60\"]}}\nnext: 1\n";
    assert_eq!(
        set(text, "/lifecycle/preStop", json!({"sleep": {"seconds": 60}})).ok().as_deref(),
        Some("lifecycle:\n  preStop: {sleep: {seconds: 60}}\n           # why 60\nnext: 1\n")
    );
    // A JSON Patch `add` at an index inserts; the text edit replaces the item.
    let item = "hooks:\n- exec:\n    # why\n    command: [x]";
    let out = apply(item, 0, "/hooks/0", &json!({"sleep": {"seconds": 5}}), false, &Limits::default());
    assert_eq!(out.as_deref(), Ok("hooks:\n- sleep:\n    seconds: 5\n  # why"));
    let (docs, err) = parse_stream("hooks:\n- sleep:\n    seconds: 5\n  # why", &Limits::default());
    assert_eq!((err, &docs[0].value), (None, &json!({"hooks": [{"sleep": {"seconds": 5}}]})));
}
