//! `lifeguard simulate` on every real manifest of the shared corpus: no
//! input error and no panic, and its stall verdicts agree with `lint`'s
//! findings where both speak: an error-severity `probe-endpoint-reused` or
//! a `liveness-checks-dependency` finding on a container implies a restart
//! in the standard stall scenario (unless its liveness outlasts it), no
//! other container restarts in it, and a shared handler of unknown reach
//! (a warning that says how to declare it) restarts nothing. Its rollouts
//! and drains agree with the workload rules as exactly.

// A test's edge: it tells on the terminal what it measured, skipped or saw fail.
#![allow(clippy::print_stderr)]

use std::collections::BTreeSet;

use lifeguard::input::{Limits, discover};
use lifeguard::lint::lint_paths;
use lifeguard::simulate::read::{ReadOptions, simulate_found};
use lifeguard_e2e::corpus_dir;
use policies::Policy;
use policies::model::{ProbeKind, Workload, is_model_server, object_label, shared_liveness_readiness};
use policies::simulate::{Assumptions, ProbeCheck, STANDARD, Scenario, Traffic, containers, run_scenario};

/// The standard set's stall.
fn standard_stall() -> Scenario {
    let stall = STANDARD.iter().find(|s| s.starts_with("stall:")).expect("the standard set has a stall");
    Scenario::parse(stall).expect("a valid scenario")
}

/// Why a container lint flags rides out the standard stall.
#[derive(Debug, PartialEq, Eq)]
enum Tolerates {
    /// Its liveness failure window outlasts the stall, and a stall past
    /// that window restarts it (`Some(true)`), which is what lint warns about.
    LongLiveness(Option<bool>),
    /// A model server whose liveness shares readiness's handler without
    /// anything the handler shows reaching another service: read as its own
    /// engine's health (local), so no stall of a dependency reaches it.
    ModelServerHealth,
}

/// Why a flagged container does not restart in the standard stall; `None`
/// when nothing explains it (then the standard stall should have restarted it).
fn why_it_tolerates_the_stall(file: &str, name: &str, container: &str) -> Option<Tolerates> {
    let text = std::fs::read_to_string(file).expect("read");
    let (docs, _) = lifeguard::input::parse_stream(&text, &Limits::default());
    let policy = Policy::default();
    for doc in &docs {
        for (_, object) in policies::objects_in(&doc.value) {
            let Ok(Some(w)) = Workload::from_object(object) else { continue };
            if w.name.as_deref() != Some(name) {
                continue;
            }
            let traffic = Traffic { services: &[], receivers: &[], input_has_services: false };
            let models = containers(&w, &policy, &Assumptions::default(), 1, traffic).expect("readable annotations");
            let model = models.iter().find(|m| m.name == container)?;
            let live = model.probe(ProbeKind::Liveness)?;
            let view = w.containers().find(|c| c.name() == container)?;
            if live.check == ProbeCheck::Local
                && is_model_server(&view, &policy)
                && shared_liveness_readiness(view.container).is_some()
            {
                return Some(Tolerates::ModelServerHealth);
            }
            let live = live.timing;
            let policies::simulate::ScenarioKind::Stall(standard) = standard_stall().kind else { return None };
            if live.failure_window() <= standard {
                return None;
            }
            let long = Scenario::parse(&format!("stall:{}s", live.failure_window() + live.period)).ok()?;
            return Some(Tolerates::LongLiveness(Some(
                run_scenario(model, &long, &Assumptions::default()).worst.restarts > 0,
            )));
        }
    }
    None
}

#[test]
fn every_corpus_file_simulates_and_stall_restarts_agree_with_lint() {
    let Some(corpus) = corpus_dir() else { return };
    let files = corpus.join("files").display().to_string();
    let policy = Policy::default();
    let limits = Limits::default();
    let scenarios = Scenario::standard();
    let assumptions = Assumptions::default();
    let options =
        ReadOptions { scenarios: &scenarios, assumptions: &assumptions, diff_fix: true, helm_chart_root: None };
    let sim = simulate_found(discover(std::slice::from_ref(&files)), &policy, &options, &limits);
    assert!(sim.errors.is_empty(), "input errors: {:#?}", sim.errors);
    let lint = lint_paths(std::slice::from_ref(&files), &policy, &limits);
    assert_eq!(sim.simulated.len(), lint.objects, "simulate and lint see the same pod-bearing objects");

    // (file, object line, object, container) of every container lint says restarts on a stalled dependency.
    let key = |f: &lifeguard::outcome::Located| {
        Some((f.file.to_string(), f.object_at.line, f.object(), f.finding.container.clone()?))
    };
    let flagged: BTreeSet<(String, u32, String, String)> = lint
        .findings
        .iter()
        .filter(|f| match f.finding.rule.as_str() {
            "liveness-checks-dependency" => true,
            "probe-endpoint-reused" => f.finding.severity == policies::Severity::Error,
            _ => false,
        })
        .filter_map(key)
        .collect();
    // Shared handlers nothing says reaches a dependency: reported, not stalled.
    let unknown: BTreeSet<(String, u32, String, String)> = lint
        .findings
        .iter()
        .filter(|f| f.finding.rule == "probe-endpoint-reused" && f.finding.message.contains("is unknown"))
        .filter_map(key)
        .collect();
    let stall = standard_stall().label;
    let mut restarted = BTreeSet::new();
    let mut tolerant = Vec::new();
    let mut outcomes = 0;
    for s in &sim.simulated {
        let label = object_label(&s.simulation.kind, s.simulation.namespace.as_deref(), s.simulation.name.as_deref());
        for o in s.simulation.outcomes.iter().filter(|o| o.scenario == stall) {
            outcomes += 1;
            let key = (s.file.clone(), s.line, label.clone(), o.container.clone());
            if o.worst.restarts > 0 {
                restarted.insert(key);
            } else if flagged.contains(&key) {
                tolerant.push(key);
            }
        }
    }
    assert!(outcomes >= 250, "only {outcomes} containers simulated");
    let unflagged: Vec<_> = restarted.difference(&flagged).collect();
    assert!(unflagged.is_empty(), "restart in {stall} without a lint finding: {unflagged:#?}");
    // A flagged container the standard stall does not restart must either
    // have a liveness that tolerates more than the stall, and a stall past
    // that window restarts it (probe-window-too-long reports such a
    // window), or be a model server whose shared /health is its own engine's
    // (the vLLM server of nemo-rl-on-gke, jetstream-pytorch).
    let mut model_servers = 0;
    for (file, _, label, container) in &tolerant {
        let name = label.rsplit('/').next().unwrap_or_default();
        let why = why_it_tolerates_the_stall(file, name, container);
        model_servers += usize::from(why == Some(Tolerates::ModelServerHealth));
        assert!(
            matches!(why, Some(Tolerates::ModelServerHealth | Tolerates::LongLiveness(Some(true)))),
            "{label} container {container:?} is flagged by lint but does not restart in {stall} ({why:?})"
        );
    }
    assert!(tolerant.len() <= 2, "more flagged containers than expected tolerate {stall}: {tolerant:#?}");
    assert_eq!(model_servers, 0, "a model server's shared /health is local: not an error: {tolerant:#?}");
    let stalled_unknown: Vec<_> = unknown.intersection(&restarted).collect();
    assert!(stalled_unknown.is_empty(), "unknown reach restarted in {stall}: {stalled_unknown:#?}");
    assert!(unknown.len() >= 50, "only {} shared handlers of unknown reach", unknown.len());
    eprintln!(
        "{} objects, {outcomes} containers: {} restart in {stall}, all flagged by lint; {} flagged tolerate it; {} shared handlers of unknown reach restart nothing",
        sim.simulated.len(),
        restarted.len(),
        tolerant.len(),
        unknown.len()
    );
}

/// `rollout` and `drain` on every corpus file: each simulates without an
/// input error, and the objects whose rollout exceeds its progress
/// deadline and whose drain is blocked are exactly those lint reports
/// (`progress-deadline-too-short`, `pdb-blocks-eviction`).
#[test]
fn the_corpus_rollouts_and_drains_agree_with_the_workload_rules() {
    let Some(corpus) = corpus_dir() else { return };
    let files = corpus.join("files").display().to_string();
    let policy = Policy::default();
    let limits = Limits::default();
    let scenarios: Vec<Scenario> = ["rollout", "drain"].iter().filter_map(|s| Scenario::parse(s).ok()).collect();
    let assumptions = Assumptions::default();
    let options =
        ReadOptions { scenarios: &scenarios, assumptions: &assumptions, diff_fix: false, helm_chart_root: None };
    let sim = simulate_found(discover(std::slice::from_ref(&files)), &policy, &options, &limits);
    assert!(sim.errors.is_empty(), "input errors: {:#?}", sim.errors);
    let lint = lint_paths(std::slice::from_ref(&files), &policy, &limits);
    let of_rule = |rule: &str| -> BTreeSet<(String, u32)> {
        lint.findings
            .iter()
            .filter(|f| f.finding.rule == rule)
            .map(|f| (f.file.to_string(), f.object_at.line))
            .collect()
    };
    let of_verdict = |verdict: &str| -> BTreeSet<(String, u32)> {
        sim.simulated
            .iter()
            .filter(|s| s.simulation.workload.iter().any(|o| o.verdict.name() == verdict))
            .map(|s| (s.file.clone(), s.line))
            .collect()
    };
    let exceeded = of_verdict("progress-deadline-exceeded");
    let blocked = of_verdict("eviction-blocked");
    let drains: usize =
        sim.simulated.iter().map(|s| s.simulation.workload.iter().filter(|o| o.scenario == "drain").count()).sum();
    eprintln!("corpus: {} deadlines exceeded, {} drains blocked of {drains}", exceeded.len(), blocked.len());
    assert_eq!(exceeded, of_rule("progress-deadline-too-short"));
    assert_eq!(blocked, of_rule("pdb-blocks-eviction"));
    assert!(!blocked.is_empty() && drains > 200, "{} blocked of {drains}", blocked.len());
}
