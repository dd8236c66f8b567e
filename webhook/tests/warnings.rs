//! What `kubectl` prints of the webhook's warnings, the only thing a user of
//! warn mode sees: each finding's short form whole (`rule: short`, written
//! to fit in 120 characters), and a line that a long name the user gave
//! makes longer cut after a whole word, never inside one. Judged in process
//! on the seed's naive GPU server and on the examples `lifeguard` ships.

mod common;

use common::review;
use kube_core::admission::AdmissionResponse;
use lifeguard::input::Limits;
use lifeguard_e2e::repo_root;
use lifeguard_e2e::support::deployment::naive_gpu;
use policies::policy::AdmissionMode;
use policies::yaml::parse_stream;
use policies::{Batch, Policy, lint_object, objects_in, plan_fixes};
use serde_json::{Value, json};
use webhook::review::{Endpoint, MAX_WARNING_CHARS, Reply, ReviewOptions};

fn answer(endpoint: Endpoint, body: &Value) -> AdmissionResponse {
    let body = serde_json::to_vec(body).expect("json");
    match webhook::review::review(&body, endpoint, &Policy::default(), &ReviewOptions::default()) {
        Reply::Review { review, .. } => review.response.expect("a response"),
        Reply::Invalid(_) => panic!("not a review"),
    }
}

fn warnings(endpoint: Endpoint, body: &Value) -> Vec<String> {
    answer(endpoint, body).warnings.unwrap_or_default()
}

const WARN: Endpoint = Endpoint::Validate(Some(AdmissionMode::Warn));
const ENFORCE: Endpoint = Endpoint::Validate(Some(AdmissionMode::Enforce));

/// `rule: short` of each finding the engine reports on `object`.
fn short_lines(object: &Value) -> Vec<String> {
    let report = lint_object(object, &Batch::default(), &Policy::default()).expect("lints").expect("a pod spec");
    report.findings.iter().map(|f| format!("{}: {}", f.rule, f.located_short())).collect()
}

/// A line that ends as written: no `...`, a word, a number or a closing mark last.
fn ends_whole(line: &str) -> bool {
    !line.ends_with("...")
        && !line.ends_with('…')
        && line.chars().last().is_some_and(|c| c.is_alphanumeric() || ")\"'`".contains(c))
}

/// The objects of lint/examples/*.yaml that carry a pod spec.
fn examples() -> Vec<(String, Value)> {
    let dir = repo_root().join("lint/examples");
    let mut files: Vec<_> = std::fs::read_dir(&dir).expect("lint/examples").flatten().map(|e| e.path()).collect();
    files.sort();
    let mut out = Vec::new();
    for path in files.iter().filter(|p| p.extension().is_some_and(|e| e == "yaml")) {
        let text = std::fs::read_to_string(path).expect("read example");
        let (docs, error) = parse_stream(&text, &Limits::default());
        assert!(error.is_none(), "{}: {error:?}", path.display());
        for doc in docs {
            for (_, object) in objects_in(&doc.value) {
                if lint_object(object, &Batch::default(), &Policy::default()).ok().flatten().is_some() {
                    out.push((path.display().to_string(), object.clone()));
                }
            }
        }
    }
    out
}

#[test]
fn warn_mode_prints_each_finding_whole() {
    let mut objects = vec![("the naive GPU server".to_owned(), naive_gpu("llm"))];
    objects.extend(examples());
    let mut warned = 0;
    for (origin, object) in &objects {
        let lines = warnings(WARN, &review("w", "CREATE", Some(object), None));
        assert_eq!(lines, short_lines(object), "{origin}: the warnings are the findings' short forms");
        for line in &lines {
            assert!(line.chars().count() <= MAX_WARNING_CHARS, "{origin}: {line:?}");
            assert!(ends_whole(line), "{origin}: {line:?} is cut");
        }
        warned += lines.len();
    }
    assert!(warned >= 5, "the examples warn: {warned}");
}

#[test]
fn the_naive_gpu_server_warns_in_few_words() {
    let lines = warnings(WARN, &review("w", "CREATE", Some(&naive_gpu("llm")), None));
    assert_eq!(
        lines,
        [
            "probe-endpoint-reused: container \"vllm\": shared handler is local; readiness cannot fail alone",
            "startup-probe-missing: container \"vllm\": slow boot (GPU); add a startup probe",
        ]
    );
}

#[test]
fn ratcheted_findings_keep_their_tag_and_their_words() {
    let object = naive_gpu("llm");
    let mut relabelled = object.clone();
    relabelled["metadata"]["labels"]["team"] = json!("ml");
    let body = review("r", "UPDATE", Some(&relabelled), Some(&object));
    let response = answer(ENFORCE, &body);
    assert!(response.allowed, "old findings do not deny");
    let lines = response.warnings.unwrap_or_default();
    assert_eq!(lines.len(), 2, "{lines:?}");
    for line in &lines {
        // Only a finding that would deny is ratcheted: the info one (a
        // model server's local /health shared by both probes) is as new.
        let denies = line.starts_with("startup-probe-missing");
        let tagged = line.contains(" (already there before this update): container \"vllm\": ");
        assert_eq!(tagged, denies, "{line:?}");
        assert!(line.chars().count() <= MAX_WARNING_CHARS && ends_whole(line), "{line:?}");
    }
}

/// `line` is `full` cut after a whole word: a prefix of it that ends where
/// a word of it ends, then `...`.
fn cut_after_a_word(line: &str, full: &str) -> bool {
    let Some(kept) = line.strip_suffix("...") else { return false };
    full.starts_with(kept)
        && kept.chars().last().is_some_and(|c| !c.is_whitespace())
        && full[kept.len()..].starts_with(|c: char| c.is_whitespace() || ",;:".contains(c))
}

#[test]
fn a_long_container_name_is_cut_after_a_whole_word() {
    // The longest name Kubernetes accepts (a DNS label).
    let name = format!("inference-server-{}", "x".repeat(46));
    assert_eq!(name.len(), 63);
    let mut object = naive_gpu("llm");
    object["spec"]["template"]["spec"]["containers"][0]["name"] = json!(name);
    let lines = warnings(WARN, &review("w", "CREATE", Some(&object), None));
    let full = short_lines(&object);
    assert_eq!(lines.len(), full.len());
    for (line, full) in lines.iter().zip(&full) {
        assert!(line.chars().count() <= MAX_WARNING_CHARS, "{line:?}");
        if line != full {
            assert!(cut_after_a_word(line, full), "{line:?} is not {full:?} cut after a word");
        }
    }
    assert!(lines.iter().any(|l| l.ends_with("...")), "a name this long makes some line too long: {lines:?}");
}

#[test]
fn fix_warnings_are_cut_after_a_whole_word() {
    let object = naive_gpu("llm");
    let lines = warnings(Endpoint::Mutate, &review("m", "CREATE", Some(&object), None));
    let plan = plan_fixes(&object, &Batch::default(), &Policy::default(), None).expect("plans").expect("a pod spec");
    let full: Vec<String> =
        plan.applied.iter().map(|a| format!("{} (fixed by lifeguard): {}", a.rule, a.description)).collect();
    assert!(!full.is_empty(), "the startup probe is fixed");
    assert_eq!(lines.len(), full.len());
    for (line, full) in lines.iter().zip(&full) {
        assert!(line.chars().count() <= MAX_WARNING_CHARS, "{line:?}");
        assert!(line == full || cut_after_a_word(line, full), "{line:?} is not {full:?} cut after a word");
    }
}
