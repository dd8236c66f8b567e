//! `--format sarif` output validates against the SARIF 2.1.0 JSON schema
//! (`tests/fixtures/sarif/`, see its README for where the file comes from),
//! with `format` keywords checked (`uri-reference` for artifact URIs). The
//! schema is shown to reject what it must, so a pass means something.

mod support;

use std::path::{Path, PathBuf};

use jsonschema::Validator;
use serde_json::{Value, json};

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn validator() -> Validator {
    let path = manifest_dir().join("tests/fixtures/sarif/sarif-schema-2.1.0.json");
    let text = std::fs::read_to_string(&path).expect("the SARIF schema fixture");
    let mut schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
    assert_eq!(schema["title"], "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema");
    // The published `language` patterns (of `run` and `toolComponent`) have a
    // stray `]`, which the meta-schema's ECMA-262 regex check rejects, so the
    // schema would not compile. Escaping it keeps its meaning (a literal `]`,
    // as lenient engines read it); lifeguard never writes `language`.
    for owner in ["run", "toolComponent"] {
        let pattern = schema
            .pointer_mut(&format!("/definitions/{owner}/properties/language/pattern"))
            .expect("language has a pattern");
        assert_eq!(pattern, "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$");
        *pattern = Value::String(r"^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}\]?$".to_owned());
    }
    jsonschema::options().should_validate_formats(true).build(&schema).expect("the SARIF schema compiles")
}

fn sarif(args: &[&str], stdin: Option<&str>, dir: &Path) -> (i32, Value) {
    let args: Vec<&str> = ["lint", "--format", "sarif"].into_iter().chain(args.iter().copied()).collect();
    let run = support::lifeguard(dir, &args, stdin, &[]);
    let log = serde_json::from_str(&run.stdout).expect("stdout is one SARIF log");
    (run.code, log)
}

fn errors(validator: &Validator, log: &Value) -> Vec<String> {
    validator.iter_errors(log).map(|e| format!("{} at {}", e, e.instance_path())).collect()
}

#[test]
fn sarif_output_is_valid_sarif_2_1_0() {
    let validator = validator();
    let fixtures = manifest_dir().join("tests/fixtures/formats");
    let rendered = std::fs::read_to_string(fixtures.join("helm-rendered.yaml")).expect("fixture");

    let (code, log) = sarif(&["."], None, &fixtures);
    assert_eq!(code, 1);
    assert_eq!(log["runs"][0]["results"].as_array().map(Vec::len), Some(5));
    assert_eq!(errors(&validator, &log), Vec::<String>::new());

    // Helm output on stdin, with and without --helm-chart-root (the chart's
    // templates are in `tests/fixtures/charts/shop`): results at templates
    // and at rendered lines, with related locations.
    for args in [&["-"][..], &["--helm-chart-root", "charts/shop", "-"]] {
        let (_, log) = sarif(args, Some(&rendered), &fixtures.join(".."));
        assert_eq!(errors(&validator, &log), Vec::<String>::new(), "{args:?}");
        assert!(log["runs"][0]["results"][0]["relatedLocations"].is_array(), "{args:?}");
    }

    // Plain stdin (`<stdin>` is not a URI as is), an absolute path, a name
    // with a space, and an input error (a notification).
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::copy(fixtures.join("web.yaml"), dir.path().join("my web.yaml")).expect("copy");
    std::fs::write(dir.path().join("broken.yaml"), "kind: [\n").expect("write");
    let web = std::fs::read_to_string(fixtures.join("web.yaml")).expect("fixture");
    let (_, log) = sarif(&["-"], Some(&web), dir.path());
    assert_eq!(errors(&validator, &log), Vec::<String>::new());
    let absolute = dir.path().display().to_string();
    let (code, log) = sarif(&[&absolute], None, dir.path());
    assert_eq!(code, 2);
    assert_eq!(log["runs"][0]["invocations"][0]["executionSuccessful"], false);
    assert_eq!(errors(&validator, &log), Vec::<String>::new());
    let uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        .as_str()
        .expect("uri");
    assert!(uri.starts_with("file:///") && uri.ends_with("/my%20web.yaml"), "{uri}");

    // No finding at all is still a valid log.
    let empty = tempfile::tempdir().expect("temp dir");
    let (code, log) = sarif(&["."], None, empty.path());
    assert_eq!(code, 0);
    assert_eq!(errors(&validator, &log), Vec::<String>::new());
}

#[test]
fn the_schema_rejects_what_github_would_reject() {
    let validator = validator();
    let fixtures = manifest_dir().join("tests/fixtures/formats");
    let (_, good) = sarif(&["."], None, &fixtures);
    // Sets (or adds) the field `pointer` names and validates the result.
    let broken = |pointer: &str, value: Value| {
        let mut log = good.clone();
        let (parent, key) = pointer.rsplit_once('/').expect("a pointer");
        let parent = log.pointer_mut(parent).and_then(Value::as_object_mut).expect("parent exists");
        parent.insert(key.to_owned(), value);
        errors(&validator, &log)
    };
    assert!(broken("/runs/0/results/0/level", json!("warning")).is_empty(), "the control is valid");
    assert!(!broken("/version", json!("2.0.0")).is_empty());
    assert!(!broken("/runs/0/results/0/level", json!("fatal")).is_empty());
    // Format keywords are checked: a raw `<stdin>` is not a URI reference.
    let uri = "/runs/0/results/0/locations/0/physicalLocation/artifactLocation/uri";
    assert!(!broken(uri, json!("<stdin>")).is_empty());
    assert!(!broken("/runs/0/results/0/locations/0/physicalLocation/region/startLine", json!(0)).is_empty());
    // A SARIF fix needs text replacements; lifeguard's fixes are JSON Patch,
    // which is why the fix description is a result property instead.
    assert!(!broken("/runs/0/results/0/fixes", json!([{"description": {"text": "raise it"}}])).is_empty());
}
