//! The GitHub Action (`action.yml`) and the README's workflow example agree:
//! the workflow gives the action only inputs it declares and reads only
//! outputs it declares; the action passes every input it declares to its
//! script, and the script reads only what the action sets. (`.ci/run` also
//! checks both files with actionlint and check-jsonschema.)

use std::collections::BTreeSet;

use lifeguard::input::{Limits, parse_stream};
use lifeguard_e2e::repo_root;
use serde_json::Value;

fn read(relative: &str) -> String {
    std::fs::read_to_string(repo_root().join(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

fn yaml(text: &str, what: &str) -> Value {
    let (docs, error) = parse_stream(text, &Limits::default());
    assert!(error.is_none(), "{what}: {error:?}");
    docs.into_iter().next().map(|d| d.value).unwrap_or_else(|| panic!("{what}: no document"))
}

fn action() -> Value {
    yaml(&read("action.yml"), "action.yml")
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default()
}

/// The README's workflow: the yaml block between the `github-workflow` markers.
fn readme_workflow() -> Value {
    let readme = read("docs/ci.md");
    let start = readme.find("<!-- github-workflow").expect("the github-workflow marker in docs/ci.md");
    let block = &readme[start..readme.find("<!-- /github-workflow -->").expect("its end marker")];
    let body: String = block.lines().skip(1).filter(|l| !l.starts_with("```")).map(|l| format!("{l}\n")).collect();
    yaml(&body, "the README's workflow")
}

/// Every `NAME.WORD` reference in the text (`inputs.fail-on`, `outputs.sarif-file`).
fn references(text: &str, prefix: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find(prefix) {
        rest = &rest[i + prefix.len()..];
        let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').collect();
        if !name.is_empty() {
            found.insert(name);
        }
    }
    found
}

#[test]
fn the_readme_workflow_uses_only_the_inputs_and_outputs_the_action_declares() {
    let action = action();
    let (inputs, outputs) = (keys(&action["inputs"]), keys(&action["outputs"]));
    let workflow = readme_workflow();
    let mut uses_action = 0;
    for (job, spec) in workflow["jobs"].as_object().expect("jobs") {
        let steps = spec["steps"].as_array().expect("steps");
        for step in
            steps.iter().filter(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("lifeguard-dev/lifeguard@")))
        {
            uses_action += 1;
            let given = keys(&step["with"]);
            let unknown: Vec<&String> = given.difference(&inputs).collect();
            assert!(unknown.is_empty(), "{job}: inputs action.yml does not declare: {unknown:?}");
            let required: BTreeSet<String> =
                inputs.iter().filter(|i| action["inputs"][i.as_str()]["required"] == true).cloned().collect();
            assert!(required.is_subset(&given), "{job}: required inputs missing: {required:?}");
            // Later steps read its outputs by id.
            let id = step["id"].as_str().expect("the action's step has an id, for its outputs");
            let read = references(&serde_json::to_string(steps).expect("JSON"), &format!("steps.{id}.outputs."));
            assert!(!read.is_empty(), "{job}: the SARIF upload reads the action's sarif-file output");
            let missing: Vec<&String> = read.difference(&outputs).collect();
            assert!(missing.is_empty(), "{job}: outputs action.yml does not declare: {missing:?}");
        }
    }
    assert_eq!(uses_action, 1, "the README's workflow uses the action once");
}

#[test]
fn the_action_hands_every_input_to_its_script_and_the_script_reads_only_those() {
    let text = read("action.yml");
    let action = action();
    let inputs = keys(&action["inputs"]);
    assert!(inputs.contains("fail-on") && inputs.contains("paths") && inputs.contains("charts"), "{inputs:?}");
    let used = references(&text, "inputs.");
    assert_eq!(used, inputs, "every input declared is used, and only those");
    let steps = action["runs"]["steps"].as_array().expect("composite steps");
    assert_eq!(action["runs"]["using"], "composite");
    // Each step that runs a script of action/ sets exactly the LG_ variables
    // that script reads.
    let mut scripts = BTreeSet::new();
    for step in steps {
        let run = step["run"].as_str().unwrap_or_default();
        let Some(name) = run.strip_prefix("bash \"$ACTION_PATH/action/").and_then(|r| r.strip_suffix(".sh\"")) else {
            continue;
        };
        let set: BTreeSet<String> = keys(&step["env"]).into_iter().filter(|k| k.starts_with("LG_")).collect();
        let script = read(&format!("action/{name}.sh"));
        let reads = references(&script, "${LG_")
            .into_iter()
            .chain(references(&script, "$LG_"))
            .map(|n| format!("LG_{n}"))
            .collect::<BTreeSet<String>>();
        assert_eq!(reads, set, "action/{name}.sh reads exactly the variables its step sets");
        scripts.insert(name.to_owned());
    }
    assert_eq!(scripts, BTreeSet::from(["install".to_owned(), "lint".to_owned()]), "the steps that run action/*.sh");
    let script = read("action/lint.sh");
    // Outputs come from the script's step.
    for (name, output) in action["outputs"].as_object().expect("outputs") {
        let value = output["value"].as_str().unwrap_or_default();
        assert_eq!(value, format!("${{{{ steps.lint.outputs.{name} }}}}"), "{name}");
        assert!(script.contains(&format!("echo \"{name}=")), "the script writes {name}");
    }
}

#[test]
fn the_inputs_table_of_the_docs_lists_every_input_with_its_default() {
    let action = action();
    let declared: Vec<(String, String)> = action["inputs"]
        .as_object()
        .expect("inputs")
        .iter()
        .map(|(name, spec)| (name.clone(), spec["default"].as_str().unwrap_or_default().to_owned()))
        .collect();
    // `| `name` | `default` or (none) | what |` rows, in the order action.yml declares them.
    let documented: Vec<(String, String)> = read("docs/ci.md")
        .lines()
        .skip_while(|l| !l.starts_with("| input | default | what |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let default = if cells[2] == "(none)" { "" } else { cells[2].trim_matches('`') };
            (cells[1].trim_matches('`').to_owned(), default.to_owned())
        })
        .collect();
    assert_eq!(documented, declared, "docs/ci.md's inputs table and action.yml's inputs (names and defaults)");
}
