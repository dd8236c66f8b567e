//! Broken input through the real binary: each bad file gets one clear error
//! naming the file and the line of the problem, exit code 2, no panic and no
//! hang, and the findings of the good file linted with it are still printed.
//! Also what is *not* an error (Helm's empty documents, other kinds, objects
//! without a name). The documented limits are in `input_limits.rs`.

mod support;

use std::path::Path;

use support::Run;

/// A Deployment with one known finding, linted after every bad file.
const GOOD: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: example/web:1.0
          livenessProbe:
            httpGet: {path: /actuator/health, port: 8080}
          readinessProbe:
            httpGet: {path: /actuator/health, port: 8080}
";

/// How the good file's finding is printed.
const GOOD_FINDING: &str = "good.yaml:16:11 error[probe-endpoint-reused] Deployment/shop/web";

/// Lints `name` (holding `bytes`) and then the good file, in a fresh directory.
fn lint_beside_good(name: &str, bytes: &[u8]) -> Run {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join(name), bytes).expect("write bad file");
    std::fs::write(dir.path().join("good.yaml"), GOOD).expect("write good file");
    lint_in(dir.path(), &["lint", name, "good.yaml"])
}

fn lint_in(dir: &Path, args: &[&str]) -> Run {
    let r = support::lifeguard(dir, args, None, &[("NO_COLOR", Some("1"))]);
    r.assert_no_panic();
    r
}

/// Exit 2; stderr is exactly one error, starting `where` (`file:line:col` or
/// `file`) and containing `what`; the good file's finding is still printed.
fn assert_one_error(r: &Run, at: &str, what: &str) {
    assert_eq!(r.code, 2, "exit code\nstdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one error on stderr, got:\n{}", r.stderr);
    assert!(lines[0].starts_with(&format!("{at} input error: ")), "error should start with {at:?}: {}", lines[0]);
    assert!(lines[0].contains(what), "error should say {what:?}: {}", lines[0]);
    assert!(r.stdout.contains(GOOD_FINDING), "the other file's finding is missing:\n{}", r.stdout);
    assert!(r.stdout.ends_with("; 1 input error\n"), "summary: {}", r.stdout);
}

/// A Pod whose container ends with `tail` (line 8 onwards).
fn pod(tail: &str) -> String {
    format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: broken\nspec:\n  containers:\n    - name: app\n{tail}")
}

#[test]
fn yaml_syntax_errors_point_at_the_line() {
    let r = lint_beside_good("bad.yaml", pod("      image: example/app: 1.0\n").as_bytes());
    assert_one_error(&r, "bad.yaml:8:25", "mapping values are not allowed");

    // A key indented under a scalar.
    let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: broken\n   labels: {app: x}\nspec: {}\n";
    let r = lint_beside_good("bad.yaml", text.as_bytes());
    assert_one_error(&r, "bad.yaml:5:10", "mapping values are not allowed");
}

#[test]
fn json_syntax_error_points_at_the_line() {
    // The comma after "Pod" is missing: the parser stops at the next key.
    let text = "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"Pod\"\n  \"metadata\": {\"name\": \"x\"}\n}\n";
    let r = lint_beside_good("bad.json", text.as_bytes());
    assert_one_error(
        &r,
        "bad.json:4:3",
        "not JSON (a .json file must be RFC 8259 JSON, as kubectl reads it): expected `,` or `}`",
    );
}

/// What YAML's flow syntax allows and kubectl refuses in a `.json` file:
/// each an input error at its position, the other file still linted; the
/// same text in a `.yaml` file is YAML, and fine.
#[test]
fn json_files_are_strict_json() {
    let cases = [
        ("{\"apiVersion\": \"v1\", \"kind\": \"Pod\",}\n", "bad.json:1:35", "trailing comma"),
        (
            "{\n  \"apiVersion\": \"v1\", // a pod\n  \"kind\": \"Pod\"\n}\n",
            "bad.json:2:23",
            "a comment (JSON has none)",
        ),
        ("{'apiVersion': 'v1', 'kind': 'Pod'}\n", "bad.json:1:2", "key must be a string"),
        ("{apiVersion: v1, kind: Pod}\n", "bad.json:1:2", "key must be a string"),
    ];
    for (text, at, what) in cases {
        let r = lint_beside_good("bad.json", text.as_bytes());
        assert_one_error(&r, at, what);
        let r = lint_beside_good("fine.yaml", text.as_bytes());
        assert_eq!(r.code, 1, "YAML flow syntax in a .yaml file is fine: {}", r.stderr);
        // No pod spec in it (the object as YAML reads it): a note, no error.
        assert!(r.stderr.starts_with("fine.yaml input note: no object checked: "), "{}", r.stderr);
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    }
    // A duplicate key is JSON; it warns as in YAML (and as kubectl's field validation does).
    let r = lint_beside_good("dup.json", b"{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"kind\": \"Pod\"}\n");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("dup.json:1:") && r.stderr.contains("kind"), "{}", r.stderr);
    // fix and simulate read files the same way.
    for command in ["fix", "simulate"] {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("bad.json"), cases[0].0).expect("write");
        std::fs::write(dir.path().join("good.yaml"), GOOD).expect("write");
        let r = lint_in(dir.path(), &[command, "bad.json", "good.yaml"]);
        assert_eq!(r.code, 2, "{command}: {}", r.stderr);
        assert!(r.stderr.contains("bad.json:1:35") && r.stderr.contains("not JSON"), "{command}: {}", r.stderr);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("bad.json")).expect("read"),
            cases[0].0,
            "{command} left it"
        );
    }
}

#[test]
fn truncated_files_are_errors_at_the_cut() {
    // Cut in the middle of a string, as an interrupted download leaves it.
    let text = "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"Pod\",\n  \"metadata\": {\"name\": \"trunc";
    let r = lint_beside_good("bad.json", text.as_bytes());
    assert_one_error(&r, "bad.json:4:30", "the input ends here, inside a string");

    let r = lint_beside_good("bad.yaml", pod("      image: \"example/app").as_bytes());
    assert_one_error(&r, "bad.yaml:8:14", "unexpected end of stream");

    // Cut after an opening bracket: the error is on the last line, not past it.
    let text = "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"Pod\",\n  \"spec\": {\"containers\": [\n";
    let r = lint_beside_good("bad.json", text.as_bytes());
    assert_one_error(&r, "bad.json:4:27", "the input ends here, inside a list");
}

#[test]
fn a_string_where_an_integer_goes_points_at_the_field() {
    let tail = "      image: example/app:1.0\n      livenessProbe:\n        httpGet: {path: /livez, port: 8080}\n        periodSeconds: ten\n";
    let r = lint_beside_good("bad.yaml", pod(tail).as_bytes());
    assert_one_error(
        &r,
        "bad.yaml:11:9",
        "Pod/broken: /spec/containers/0/livenessProbe/periodSeconds: expected a whole number, got the string \"ten\"",
    );

    let tail = "      image: example/app:1.0\n      ports:\n        - containerPort: eighty\n";
    let r = lint_beside_good("bad.yaml", pod(tail).as_bytes());
    assert_one_error(
        &r,
        "bad.yaml:10:11",
        "/spec/containers/0/ports/0/containerPort: expected a whole number, got the string",
    );
}

#[test]
fn a_map_where_a_list_goes_points_at_the_field() {
    let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers: {name: x}\n";
    let r = lint_beside_good("bad.yaml", text.as_bytes());
    assert_one_error(
        &r,
        "bad.yaml:8:7",
        "Deployment/web: /spec/template/spec/containers: expected a list, got a mapping",
    );
}

#[test]
fn binary_and_non_utf8_files_name_the_line() {
    // A PNG header: its first NUL byte is on line 3 (after `\r\n` and `\x1a\n`).
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\x01\0";
    let r = lint_beside_good("logo.png", png);
    assert_one_error(&r, "logo.png", "not a text file: NUL byte at line 3");

    // Latin-1 text that is not UTF-8, on line 4.
    let r = lint_beside_good("bad.yaml", b"apiVersion: v1\nkind: ConfigMap\ndata:\n  city: Z\xfcrich\n");
    assert_one_error(&r, "bad.yaml", "not a text file: invalid UTF-8 at line 4");
}

#[test]
fn documents_before_a_syntax_error_are_still_linted() {
    // The first document has a finding of its own; the second is broken.
    let text = format!("{GOOD}---\nkind: Pod\nspec: [unclosed\n");
    let r = lint_beside_good("bad.yaml", text.as_bytes());
    assert_one_error(&r, "bad.yaml:22:16", "expected ',' or ']'; the input ends here");
    assert!(r.stdout.contains("bad.yaml:16:11 error[probe-endpoint-reused]"), "{}", r.stdout);
}

#[test]
fn a_wrong_type_spoils_only_its_object() {
    // The same file holds a valid object with a finding after the broken one.
    let broken = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: broken\nspec:\n  containers: {name: x}\n---\n";
    let r = lint_beside_good("bad.yaml", format!("{broken}{GOOD}").as_bytes());
    assert_one_error(&r, "bad.yaml:6:3", "Pod/broken: /spec/containers: expected a list, got a mapping");
    assert!(r.stdout.contains("bad.yaml:23:11 error[probe-endpoint-reused]"), "{}", r.stdout);
}

/// Things Helm and real repositories produce that must lint cleanly.
const NOT_ERRORS: &[(&str, &str)] = &[
    ("empty.yaml", ""),
    ("separators.yaml", "---\n---\n\n---\n...\n"),
    ("comments.yaml", "# Source: chart/templates/disabled.yaml\n# (nothing rendered)\n"),
    (
        "helm.yaml",
        "---\n# Source: chart/templates/cm.yaml\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ntype: Opaque\n---\n",
    ),
    (
        "unnamed.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n        - name: app\n          ports:\n            - {name: http, containerPort: 8080}\n          livenessProbe:\n            httpGet: {path: /actuator/health, port: http}\n          readinessProbe:\n            httpGet: {path: /actuator/health, port: 8080}\n",
    ),
];

#[test]
fn empty_documents_other_kinds_and_unnamed_objects_are_not_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in NOT_ERRORS {
        std::fs::write(dir.path().join(name), text).expect("write file");
    }
    let r = lint_in(dir.path(), &["lint", "."]);
    // No input error: a note for each input that gave no object, saying why.
    assert_eq!(
        r.stderr,
        "./comments.yaml input note: no object checked: it holds no document\n\
         ./empty.yaml input note: no object checked: it holds no document\n\
         ./helm.yaml input note: no object checked: its kinds (ConfigMap, Secret) hold no pod template lifeguard reads\n\
         ./separators.yaml input note: no object checked: it holds no document\n"
    );
    // The unnamed Deployment (no name, namespace or image) is linted; its
    // probes name one port by name and one by number, which are the same port.
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout.starts_with(
            "./unnamed.yaml:10:11 error[probe-endpoint-reused] Deployment/<unnamed>\n  container \"app\": liveness and readiness use the same handler (httpGet :8080/actuator/health"
        ),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("in 1 object across 5 files; 4 inputs with no object checked\n"), "{}", r.stdout);
}

/// `helm template ... | lifeguard lint -` where helm failed feeds an empty
/// stream: that is an input error (exit 2) for every command reading stdin,
/// unless `--allow-empty`; an empty file named on the command line is not.
#[test]
fn an_empty_stdin_is_an_input_error_unless_allowed() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("empty.yaml"), "").expect("write");
    for stdin in ["", "\n\n", "# rendered nothing\n---\n"] {
        for command in ["lint", "fix", "simulate"] {
            let r = support::lifeguard(dir.path(), &[command, "-"], Some(stdin), &[("NO_COLOR", Some("1"))]);
            r.assert_no_panic();
            assert_eq!(r.code, 2, "{command} on {stdin:?}: {}", r.stderr);
            assert!(r.stderr.contains("<stdin>") && r.stderr.contains("no document on stdin"), "{}", r.stderr);
            assert!(r.stderr.contains("--allow-empty"), "the error says how to accept it: {}", r.stderr);
            let r = support::lifeguard(dir.path(), &[command, "--allow-empty", "-"], Some(stdin), &[]);
            assert_eq!(r.code, 0, "{command} --allow-empty on {stdin:?}: {}", r.stderr);
        }
    }
    // A document, even an empty mapping, is input someone wrote.
    let r = support::lifeguard(dir.path(), &["lint", "-"], Some("{}\n"), &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = support::lifeguard(dir.path(), &["lint", "empty.yaml"], None, &[]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (0, "empty.yaml input note: no object checked: it holds no document\n"),
        "an empty file named on the command line is not an error, and is said to hold nothing"
    );
}
