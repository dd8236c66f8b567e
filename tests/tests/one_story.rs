//! One story from lint, fix and simulate: about one object, a finding, a
//! fix and a verdict rest on the same assumptions and never contradict one
//! another. Each contradiction seen on a real repository is reproduced
//! here first (`one_story/*.yaml`), then held over every rule fixture, the
//! examples and, when it is there, the shared corpus:
//!
//! - (a) an object `fix` changes is no worse in any scenario, and `ok` in
//!   the scenario each applied fix addresses;
//! - (b) an error-severity finding shows its harm in a scenario its rule
//!   names, or its rule says why simulate cannot show it;
//! - (c) no `ok` whose own timeline shows a harm;
//! - (d) a finding and a verdict about one container that rest on the same
//!   assumption (the boot, a shared handler's reach, the drain) name the
//!   same value from the same source;
//! - (e) a finding of a workload rule (its harm shown in `rollout` or
//!   `drain`) shows in that scenario's verdict for its object, and once its
//!   fix is applied, no more; a verdict that only one rule names
//!   (`progress-deadline-exceeded`, `eviction-blocked`) comes with that
//!   rule's finding; a fixed object's rollout and drain are no worse.
//!
//! Over 400 lines: the nine tests that reproduce contradictions seen (about
//! 100 lines), the checks (a) to (e) as `problems` and `workload_problems`
//! (about 160 lines) and the three tests that run those checks over every
//! file all name the same harms, so they read best in one file.

use std::path::PathBuf;

use lifeguard_e2e::{corpus_dir, repo_root, yaml_files};
use policies::finding::Severity;
use policies::rules::{Harm, HarmShown, RULES};
use policies::simulate::{
    Assumptions, ContainerOutcome, EventKind, Scenario, Verdict, WorkloadOutcome, simulate_object,
};
use policies::yaml::{Limits, parse_stream};
use policies::{Batch, Finding, Policy, lint_object, plan_fixes};
use serde_json::Value;

/// The scenarios every object runs: the standard set, and the workload's
/// rollout and drain.
fn scenarios() -> Vec<Scenario> {
    let mut all = Scenario::standard();
    all.extend(["rollout", "drain"].iter().filter_map(|s| Scenario::parse(s).ok()));
    all
}

/// One pod-bearing object: what lint finds, what fix does, and what
/// simulate says before and after.
struct Story {
    /// `file: Kind/name`
    at: String,
    findings: Vec<Finding>,
    /// The rule and container of each fix applied.
    fixed: Vec<(String, Option<String>)>,
    before: Vec<ContainerOutcome>,
    after: Option<Vec<ContainerOutcome>>,
    /// The workload's rollout and drain, before and after the fixes.
    workload_before: Vec<WorkloadOutcome>,
    workload_after: Option<Vec<WorkloadOutcome>>,
}

fn documents(text: &str, file: &str) -> Vec<Value> {
    let (docs, error) = parse_stream(text, &Limits::default());
    assert!(error.is_none(), "{file}: {error:?}");
    docs.into_iter().map(|d| d.value).filter(|v| v.is_object()).collect()
}

/// The stories of every pod-bearing object of one file, with the file's
/// Services as lint reads them.
fn stories(text: &str, file: &str, policy: &Policy) -> Vec<Story> {
    let docs = documents(text, file);
    let batch = Batch::from_objects(docs.iter());
    let assumptions = Assumptions::default();
    let mut out = Vec::new();
    for doc in &docs {
        for (_, object) in policies::objects_in(doc) {
            let Ok(Some(report)) = lint_object(object, &batch, policy) else { continue };
            let Ok(Some(sim)) = simulate_object(object, &batch, policy, &scenarios(), &assumptions) else {
                continue;
            };
            let at = format!(
                "{file}: {}/{}",
                object["kind"].as_str().unwrap_or_default(),
                object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default()
            );
            let plan = plan_fixes(object, &batch, policy, None).ok().flatten();
            let (fixed, after) = match plan.filter(|p| !p.applied.is_empty()) {
                Some(p) => {
                    let fixed = p.fixed.clone().expect("a plan with fixes has the fixed object");
                    let sim = simulate_object(&fixed, &batch, policy, &scenarios(), &assumptions)
                        .expect("the fixed object simulates")
                        .expect("the fixed object has a pod spec");
                    let applied = p.applied.iter().map(|a| (a.rule.clone(), a.container.clone())).collect();
                    (applied, Some((sim.outcomes, sim.workload)))
                }
                None => (Vec::new(), None),
            };
            let (after, workload_after) = after.unzip();
            out.push(Story {
                at,
                findings: report.findings,
                fixed,
                before: sim.outcomes,
                after,
                workload_before: sim.workload,
                workload_after,
            });
        }
    }
    out
}

fn one_story(name: &str) -> Story {
    let path = fixtures().join(name);
    let text = std::fs::read_to_string(&path).expect("fixture");
    let mut all = stories(&text, name, &Policy::default());
    assert_eq!(all.len(), 1, "{name}: one pod-bearing object");
    all.remove(0)
}

fn fixtures() -> PathBuf {
    repo_root().join("lint/tests/fixtures/one_story")
}

fn outcome<'a>(outcomes: &'a [ContainerOutcome], scenario: &str) -> &'a ContainerOutcome {
    outcomes.iter().find(|o| o.scenario == scenario).unwrap_or_else(|| panic!("no {scenario} outcome"))
}

fn finding<'a>(s: &'a Story, rule: &str) -> Option<&'a Finding> {
    s.findings.iter().find(|f| f.rule == rule)
}

/// How bad a verdict is, for "no worse": its severity, where `ok`, a
/// wedge the kubelet restarts and the outage a dependency-aware readiness
/// chooses (info) are all no harm of the pod's own making.
fn rank(v: Verdict) -> u8 {
    match v.severity() {
        None | Some(Severity::Info) => 0,
        Some(Severity::Warning) => 1,
        Some(Severity::Error) => 2,
    }
}

/// (c): what an `ok` verdict's own timeline shows that is not ok. (Whether
/// requests reach a stopped or booting process depends on the Services,
/// which the verdict reads: `connections-refused`, tested by name above.)
fn harm_in_ok(o: &ContainerOutcome) -> Option<String> {
    if o.verdict != Verdict::Ok {
        return None;
    }
    if o.worst.restarts > 0 {
        return Some(format!("{} restarts", o.worst.restarts));
    }
    let at = |kind: EventKind| o.events.iter().find(|e| e.kind == kind).map(|e| e.at_ms);
    if let Some(kill) = at(EventKind::Sigkill) {
        return Some(format!("SIGKILL at {kill} ms"));
    }
    None
}

// --- the seven contradictions seen on real repositories -------------------

/// 1. A fix its own simulator restarts: the startup probe added to a vLLM
///    Deployment must cover the assumed boot with a period to spare.
#[test]
fn a_startup_probe_fix_boots_the_boot_it_was_sized_for_without_a_restart() {
    let s = one_story("vllm-liveness-delay.yaml");
    assert!(s.fixed.iter().any(|(r, _)| r == "startup-probe-missing"), "{:?}", s.fixed);
    let after = s.after.as_deref().expect("fixed");
    let boot = outcome(after, "boot");
    assert_eq!(boot.verdict, Verdict::Ok, "{}", boot.message);
}

/// 2. `ok` beside its own harm: no preStop, a Service sends traffic, and
///    SIGTERM comes before endpoint removal reaches the proxies.
#[test]
fn a_delete_that_refuses_connections_is_not_ok() {
    let s = one_story("no-prestop-service.yaml");
    let delete = outcome(&s.before, "delete");
    assert_ne!(delete.verdict, Verdict::Ok, "{}", delete.message);
    assert!(delete.message.contains("prestop-bridge-missing"), "names the rule: {}", delete.message);
    assert!(delete.message.contains("2 s"), "names the propagation it assumes: {}", delete.message);
}

/// 3. bank-of-anthos' frontend: a `sleep 60` preStop in a 60 s grace period
///    leaves no time to shut down; lint says error, so simulate must show it.
#[test]
fn a_prestop_sleep_that_uses_the_grace_period_is_not_ok_in_the_delete() {
    let s = one_story("prestop-sleep-whole-grace.yaml");
    let f = finding(&s, "prestop-sleep-only").expect("lint reports it");
    assert_eq!(f.severity, Severity::Error);
    let delete = outcome(&s.before, "delete");
    assert_eq!(delete.verdict, Verdict::SigkillInFlight, "{}", delete.message);
}

/// 4. A model server's shared `/health` is local to its engine: simulate's
///    stall leaves it alone, so lint must not call the reuse an error.
#[test]
fn a_shared_handler_local_to_its_engine_is_not_an_error() {
    let s = one_story("vllm-shared-health.yaml");
    let stall = outcome(&s.before, "stall:2m");
    assert_eq!(stall.verdict, Verdict::Ok, "{}", stall.message);
    let f = finding(&s, "probe-endpoint-reused").expect("the anti-pattern stays reported");
    assert!(f.severity < Severity::Error, "{:?}: {}", f.severity, f.message);
    assert!(f.message.contains("local"), "names the evidence: {}", f.message);
}

/// 4. A shared handler nothing says reaches a dependency: unknown, a
///    warning that says how to declare it; the stall does not storm.
#[test]
fn a_shared_handler_of_unknown_reach_is_a_warning_and_no_storm() {
    let s = one_story("shared-health-unknown.yaml");
    let f = finding(&s, "probe-endpoint-reused").expect("the anti-pattern stays reported");
    assert_eq!(f.severity, Severity::Warning, "{}", f.message);
    assert!(f.message.contains("lifeguard.dev/probe-checks"), "says how to declare it: {}", f.message);
    let stall = outcome(&s.before, "stall:2m");
    assert_ne!(stall.verdict, Verdict::RestartStorm, "{}", stall.message);
}

/// 4. Declared: the same handler, the annotation saying it checks a
///    dependency: an error, and the storm simulate shows.
#[test]
fn a_shared_handler_declared_to_reach_a_dependency_is_an_error_and_a_storm() {
    let s = one_story("shared-health-dependency.yaml");
    let f = finding(&s, "probe-endpoint-reused").expect("reported");
    assert_eq!(f.severity, Severity::Error, "{}", f.message);
    let stall = outcome(&s.before, "stall:2m");
    assert_eq!(stall.verdict, Verdict::RestartStorm, "{}", stall.message);
}

/// 4b. Conflicting declarations of one shared handler (liveness local,
///     readiness a dependency): one handler checks one thing, so the
///     dependency holds for both, in lint's error and in the stall's storm,
///     and both name the same reach from the same annotation.
#[test]
fn a_shared_handler_declared_both_ways_reads_as_a_dependency_in_lint_and_simulate() {
    let s = one_story("shared-health-conflicting.yaml");
    let f = finding(&s, "probe-endpoint-reused").expect("reported");
    assert_eq!(f.severity, Severity::Error, "{}", f.message);
    let stall = outcome(&s.before, "stall:2m");
    assert_eq!(stall.verdict, Verdict::RestartStorm, "{}", stall.message);
    let reach = |list: &[policies::Assumption]| {
        list.iter().find(|a| a.about == policies::About::Reach).map(|a| (a.value.clone(), a.source))
    };
    let expected = Some(("dependency".to_owned(), policies::Source::Annotation));
    assert_eq!(reach(&f.assumptions), expected, "{:?}", f.assumptions);
    assert_eq!(reach(&stall.assumptions), expected, "{:?}", stall.assumptions);
}

/// 5. simulate's boot-loop (an error) from the assumed model-server boot
///    where lint gave the container only a warning.
#[test]
fn a_boot_loop_simulate_shows_is_an_error_in_lint() {
    let s = one_story("model-image-no-gpu.yaml");
    let boot = outcome(&s.before, "boot");
    assert_eq!(boot.verdict, Verdict::BootLoop, "{}", boot.message);
    let f = finding(&s, "startup-probe-missing").expect("reported");
    assert_eq!(f.severity, Severity::Error, "{}", f.message);
}

/// 7. deploy-sourcegraph's cadvisor: a DaemonSet no Service of the input
///    selects, in an input that has Services: evidence of no traffic.
#[test]
fn no_readiness_finding_where_the_inputs_services_select_other_pods() {
    let s = one_story("daemonset-no-service.yaml");
    assert!(finding(&s, "readiness-probe-missing").is_none(), "{:?}", s.findings);
}

// --- the same checks over every input -------------------------------------

/// The rule's statement of where simulate shows an error finding's harm.
fn harms(rule: &str) -> Option<&'static [Harm]> {
    match RULES.iter().find(|r| r.name == rule).map(|r| r.harm) {
        Some(HarmShown::In(harms)) => Some(harms),
        _ => None,
    }
}

/// The rule's statement of where a workload scenario shows its findings' harm.
fn workload_harms(rule: &str) -> Option<&'static [Harm]> {
    match RULES.iter().find(|r| r.name == rule).map(|r| r.harm) {
        Some(HarmShown::InWorkload(harms)) => Some(harms),
        _ => None,
    }
}

/// Whether a workload outcome shows one of a rule's harms.
fn shows_in_workload(harms: &[Harm], o: &WorkloadOutcome) -> bool {
    harms.iter().any(|h| h.scenario == o.scenario && h.verdicts.contains(&o.verdict))
}

/// (e): a workload rule's finding shows in its scenario, or is masked
/// there by an error (a rollout stuck on a boot loop cannot show its
/// deadline); its fix leaves it shown no more; a fix makes no workload
/// scenario worse.
fn workload_problems(s: &Story) -> Vec<String> {
    let mut out = Vec::new();
    for f in &s.findings {
        let Some(harms) = workload_harms(&f.rule) else { continue };
        let in_scenario = |o: &&WorkloadOutcome| harms.iter().any(|h| h.scenario == o.scenario);
        let shown = s
            .workload_before
            .iter()
            .filter(in_scenario)
            .any(|o| shows_in_workload(harms, o) || o.verdict.severity() == Some(Severity::Error));
        if !shown {
            let said: Vec<String> = s
                .workload_before
                .iter()
                .map(|o| format!("{} {}: {}", o.scenario, o.verdict.name(), o.message))
                .collect();
            out.push(format!("{}: {} shows no harm in its workload scenario: {} / {said:?}", s.at, f.rule, f.message));
        }
    }
    // And the other way: a workload verdict a rule names is that rule's
    // finding, unless it rests on what the rule does not assume (unset
    // replicas taken as the API server's 1, a model server's boot that is
    // only the policy's gpuBootSeconds: the rule waits for the manifest to
    // say) or on a new pod's own harmed boot (another rule's story).
    let unassumed = |o: &WorkloadOutcome| {
        o.new_pod.verdict.severity().is_some()
            || o.assumptions.iter().any(|a| {
                (a.about == policies::About::Replicas && a.source == policies::Source::Default)
                    || (a.about == policies::About::Boot && a.source == policies::Source::Policy)
            })
    };
    for o in s.workload_before.iter().filter(|o| !unassumed(o)) {
        let named = RULES.iter().filter(|r| match r.harm {
            HarmShown::InWorkload(harms) => {
                harms.iter().any(|h| h.scenario == o.scenario && h.verdicts == [o.verdict].as_slice())
            }
            _ => false,
        });
        for rule in named {
            if !s.findings.iter().any(|f| f.rule == rule.name) {
                out.push(format!(
                    "{}: {} {} without a {} finding: {}",
                    s.at,
                    o.scenario,
                    o.verdict.name(),
                    rule.name,
                    o.message
                ));
            }
        }
    }
    if let Some(after) = &s.workload_after {
        for b in &s.workload_before {
            let Some(a) = after.iter().find(|a| a.scenario == b.scenario) else { continue };
            if rank(a.verdict) > rank(b.verdict) {
                out.push(format!("{}: {}: fixed is worse: {} -> {}", s.at, b.scenario, b.message, a.message));
            }
        }
        for (rule, _) in &s.fixed {
            let Some(harms) = workload_harms(rule) else { continue };
            // A new pod whose own boot is harmed (restarted past its startup
            // window, a loop) is another rule's story: the deadline is held
            // to the window.
            let own_boot = |a: &&WorkloadOutcome| a.new_pod.verdict.severity().is_none();
            for a in after.iter().filter(own_boot).filter(|a| shows_in_workload(harms, a)) {
                out.push(format!("{}: the {rule} fix leaves {} {}: {}", s.at, a.scenario, a.verdict.name(), a.message));
            }
        }
    }
    out
}

/// Whether an outcome shows one of a rule's harms.
fn shows(harms: &[Harm], o: &ContainerOutcome) -> bool {
    harms.iter().any(|h| h.scenario == o.scenario && h.verdicts.contains(&o.verdict))
}

/// Every problem of (a), (b), (c) and (d) in one story.
fn problems(s: &Story, policy: &Policy) -> Vec<String> {
    let mut out = workload_problems(s);
    for o in s.before.iter().chain(s.after.iter().flatten()) {
        if let Some(harm) = harm_in_ok(o) {
            out.push(format!("{}: container {:?} {} is ok but shows {harm}", s.at, o.container, o.scenario));
        }
    }
    if let Some(after) = &s.after {
        for b in &s.before {
            let Some(a) = after.iter().find(|a| a.container == b.container && a.scenario == b.scenario) else {
                continue;
            };
            if rank(a.verdict) > rank(b.verdict) {
                out.push(format!(
                    "{}: container {:?} {}: fixed ({:?}) is worse: {} -> {}",
                    s.at, b.container, b.scenario, s.fixed, b.message, a.message
                ));
            }
        }
        for (rule, container) in &s.fixed {
            let Some(harms) = harms(rule) else { continue };
            let fixed_here = |a: &&ContainerOutcome| container.as_deref().is_none_or(|c| c == a.container);
            for a in after.iter().filter(fixed_here).filter(|a| shows(harms, a)) {
                out.push(format!(
                    "{}: container {:?}: the {rule} fix leaves {} {}: {}",
                    s.at,
                    a.container,
                    a.scenario,
                    a.verdict.name(),
                    a.message
                ));
            }
        }
    }
    // (d) A finding and a verdict about one container that rest on the same
    // assumption name the same value, from the same source.
    for f in &s.findings {
        let mine = |o: &&ContainerOutcome| f.container.as_deref() == Some(o.container.as_str());
        for o in s.before.iter().filter(mine) {
            for a in &f.assumptions {
                let Some(b) = o.assumptions.iter().find(|b| b.about == a.about) else { continue };
                if (&a.value, a.source) != (&b.value, b.source) {
                    out.push(format!(
                        "{}: container {:?}: {} assumes {} where {} assumes {}",
                        s.at,
                        o.container,
                        f.rule,
                        a.line(),
                        o.scenario,
                        b.line()
                    ));
                }
            }
        }
    }
    // An annotation that cannot be read is about the input, not the pod.
    let about_the_pod = |f: &&Finding| !f.pointer.contains("/metadata/annotations");
    // A severity the policy sets (gpu-serving makes readiness-probe-missing
    // an error everywhere) is its choice, not a claim of harm.
    let own = |f: &&Finding| policy.severity_override(&f.rule).is_none();
    for f in s.findings.iter().filter(|f| f.severity == Severity::Error).filter(about_the_pod).filter(own) {
        let Some(harms) = harms(&f.rule) else { continue };
        // Shown, or masked by a worse harm in the same scenario (requests
        // to a booting app cannot show while the boot never completes).
        let masked = |o: &ContainerOutcome| {
            harms.iter().any(|h| h.scenario == o.scenario) && o.verdict.severity() == Some(Severity::Error)
        };
        let shown = s
            .before
            .iter()
            .any(|o| (shows(harms, o) || masked(o)) && f.container.as_deref().is_none_or(|c| c == o.container));
        if !shown {
            out.push(format!(
                "{}: error {} on {:?} shows no harm in simulate: {}",
                s.at, f.rule, f.container, f.message
            ));
        }
    }
    out
}

fn check_all(files: &[PathBuf]) -> (usize, Vec<String>) {
    let mut objects = 0;
    let mut all = Vec::new();
    // The default pack, and gpu-serving's (its preStop bridge, its
    // model-server drain, its fixes of info findings).
    for pack in ["default", "gpu-serving"] {
        let policy = Policy::pack(pack).expect("a built-in pack");
        let (n, problems) = check_all_with(files, &policy);
        objects = objects.max(n);
        all.extend(problems.into_iter().map(|p| format!("[{pack}] {p}")));
    }
    (objects, all)
}

fn check_all_with(files: &[PathBuf], policy: &Policy) -> (usize, Vec<String>) {
    let mut objects = 0;
    let mut all = Vec::new();
    for path in files {
        let Ok(text) = std::fs::read_to_string(path) else { continue };
        // Inputs that are not YAML a parser reads (templates) are lint's
        // input errors, tested elsewhere.
        let (_, error) = parse_stream(&text, &Limits::default());
        if error.is_some() {
            continue;
        }
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        for s in stories(&text, &name, policy) {
            objects += 1;
            all.extend(problems(&s, policy));
        }
    }
    (objects, all)
}

#[test]
fn the_rule_fixtures_examples_and_one_story_fixtures_tell_one_story() {
    let root = repo_root();
    let mut files = Vec::new();
    for dir in ["policies/src/rules", "lint/tests/fixtures/one_story", "lint/examples", "lint/tests/fix_fixtures"] {
        yaml_files(&root.join(dir), &mut files);
    }
    files.retain(|f| !f.to_string_lossy().ends_with(".policy.yaml"));
    let (objects, problems) = check_all(&files);
    assert!(objects > 50, "{objects} objects");
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

#[test]
fn the_corpus_tells_one_story() {
    let Some(corpus) = corpus_dir() else { return };
    let mut files = Vec::new();
    yaml_files(&corpus.join("files"), &mut files);
    let (objects, problems) = check_all(&files);
    assert!(objects > 250, "{objects} objects");
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

/// The custom resources GPU serving runs on (LeaderWorkerSet's examples,
/// KubeRay's samples), each of whose pod templates is judged and simulated
/// as its own pod.
#[test]
fn the_custom_resources_of_the_layouts_tell_one_story() {
    let Some(corpus) = corpus_dir() else { return };
    let mut files = Vec::new();
    yaml_files(&corpus.join("layouts/lws/docs/examples"), &mut files);
    yaml_files(&corpus.join("layouts/kuberay/ray-operator/config/samples"), &mut files);
    let (objects, problems) = check_all(&files);
    assert!(objects > 60, "{objects} objects");
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}
