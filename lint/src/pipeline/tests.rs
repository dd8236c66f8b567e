use super::*;

fn lint(sources: &[(&str, &str)]) -> Outcome {
    let owned: Vec<(String, String)> = sources.iter().map(|(n, t)| ((*n).to_owned(), (*t).to_owned())).collect();
    lint_sources(&owned, &Policy::default(), &Limits::default()).outcome
}

const WORKLOAD: &str = "kind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: web\n        ports: [{containerPort: 80}]\n";
const SELECTING: &str = "kind: Service\nmetadata: {name: web}\nspec: {selector: {app: web}}\n";
const OTHER: &str = "kind: Service\nmetadata: {name: other}\nspec: {selector: {app: other}}\n";

fn readiness_messages(out: &Outcome) -> Vec<String> {
    out.findings
        .iter()
        .filter(|f| f.finding.rule == "readiness-probe-missing")
        .map(|f| f.finding.message.clone())
        .collect()
}

#[test]
fn a_service_after_its_workload_gives_the_same_verdict_as_before_it() {
    let before = lint(&[("a.yaml", &format!("{SELECTING}---\n{WORKLOAD}"))]);
    let after = lint(&[("a.yaml", &format!("{WORKLOAD}---\n{SELECTING}"))]);
    let across = lint(&[("a.yaml", WORKLOAD), ("b.yaml", SELECTING)]);
    assert_eq!(readiness_messages(&before).len(), 1);
    assert!(readiness_messages(&before)[0].contains("Service/web"), "{:?}", readiness_messages(&before));
    assert_eq!(readiness_messages(&after), readiness_messages(&before));
    assert_eq!(readiness_messages(&across), readiness_messages(&before));
}

#[test]
fn a_later_service_that_selects_nothing_removes_the_ports_only_finding() {
    let alone = lint(&[("a.yaml", WORKLOAD)]);
    let with_other = lint(&[("a.yaml", &format!("{WORKLOAD}---\n{OTHER}"))]);
    assert_eq!(readiness_messages(&alone).len(), 1);
    assert!(readiness_messages(&with_other).is_empty());
}

#[test]
fn syntax_errors_are_returned_by_source_and_documents_before_them_linted() {
    let owned =
        vec![("a.yaml".to_owned(), format!("{WORKLOAD}---\nx: [1, 2\n")), ("b.yaml".to_owned(), WORKLOAD.to_owned())];
    let linted = lint_sources(&owned, &Policy::default(), &Limits::default());
    let (out, syntax) = (linted.outcome, linted.syntax_errors);
    assert_eq!(out.objects, 2);
    assert_eq!(syntax.len(), 1);
    assert_eq!(syntax[0].0, 0);
    assert_eq!(out.files, 2);
}

#[test]
fn the_parallel_path_falls_back_only_for_the_contexts_it_cannot_cut() {
    let policy = Policy::default();
    let stream = format!("{WORKLOAD}---\n{WORKLOAD}---\n{SELECTING}");
    let broken = format!("{WORKLOAD}---\nx: [1, 2\n");
    let directive = format!("%YAML 1.2\n---\n{WORKLOAD}");
    let texts = [("a.yaml", stream.as_str(), 0), ("b.yaml", broken.as_str(), 1), ("c.yaml", directive.as_str(), 2)];
    let sources: Vec<Source<'_>> =
        texts.iter().map(|&(name, text, context)| Source { name, text, context, policy: &policy }).collect();
    let results =
        parallel::run(&sources, vec![Batch::default(); 3], &Limits::default(), 2, &Lint, &mut Keep::default());
    let serial: Vec<bool> = results.iter().map(|r| r.serial).collect();
    // A directive keeps a stream whole, which the parallel path still reads.
    assert_eq!(serial, [false, true, false]);
    assert!(results[1].syntax.is_some());
    assert_eq!(results[0].out.objects, 2);
}
