//! `lifeguard simulate` on every real manifest of the shared corpus: no
//! input error and no panic, and its stall verdicts agree with `lint`'s
//! findings where both speak: a `probe-endpoint-reused` or
//! `liveness-checks-dependency` finding on a container implies a restart in
//! the standard stall scenario, and no other container restarts in it.

use std::collections::BTreeSet;

use lifeguard::input::{Limits, discover};
use lifeguard::lint::lint_paths;
use lifeguard::simulate::read::{Options, simulate_found};
use lifeguard_e2e::corpus_dir;
use policies::Policy;
use policies::model::{ProbeKind, Workload, object_label};
use policies::simulate::{Assumptions, STANDARD, Scenario, containers, run_scenario};

/// The standard set's stall.
fn standard_stall() -> Scenario {
    let stall = STANDARD.iter().find(|s| s.starts_with("stall:")).expect("the standard set has a stall");
    Scenario::parse(stall).expect("a valid scenario")
}

/// Whether a stall outlasting the container's liveness failure window
/// restarts it. Such a liveness tolerates the standard stall, and only a
/// longer one shows what lint warns about; `None` when its window is no
/// longer than the standard stall (then the standard stall should have restarted it).
fn restarts_in_a_stall_past_its_liveness_window(file: &str, name: &str, container: &str) -> Option<bool> {
    let text = std::fs::read_to_string(file).expect("read");
    let (docs, _) = lifeguard::input::parse_stream(&text, &Limits::default());
    let policy = Policy::default();
    for doc in &docs {
        for (_, object) in policies::objects_in(&doc.value) {
            let Ok(Some(w)) = Workload::from_object(object) else { continue };
            if w.name.as_deref() != Some(name) {
                continue;
            }
            let models = containers(&w, &policy, &Assumptions::default(), 1).expect("readable annotations");
            let model = models.iter().find(|m| m.name == container)?;
            let live = model.probe(ProbeKind::Liveness)?.timing;
            let policies::simulate::ScenarioKind::Stall(standard) = standard_stall().kind else { return None };
            if live.failure_window() <= standard {
                return None;
            }
            let long = Scenario::parse(&format!("stall:{}s", live.failure_window() + live.period)).ok()?;
            return Some(run_scenario(model, &long, &Assumptions::default()).worst.restarts > 0);
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
    let options = Options { scenarios: &scenarios, assumptions: &assumptions, diff_fix: true, helm_chart_root: None };
    let sim = simulate_found(discover(std::slice::from_ref(&files)), &policy, &options, &limits);
    assert!(sim.errors.is_empty(), "input errors: {:#?}", sim.errors);
    let lint = lint_paths(std::slice::from_ref(&files), &policy, &limits);
    assert_eq!(sim.simulated.len(), lint.objects, "simulate and lint see the same pod-bearing objects");

    // (file, object line, object, container) of every container lint says restarts on a stalled dependency.
    let flagged: BTreeSet<(String, u32, String, String)> = lint
        .findings
        .iter()
        .filter(|f| matches!(f.finding.rule.as_str(), "probe-endpoint-reused" | "liveness-checks-dependency"))
        .filter_map(|f| Some((f.file.to_string(), f.object_at.line, f.object(), f.finding.container.clone()?)))
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
    // A flagged container the standard stall does not restart must have a
    // liveness that tolerates more than the stall (jetstream-pytorch's
    // failureThreshold 30 x periodSeconds 60 = 1800 s, which
    // probe-window-too-long also reports): a stall past that window restarts it.
    for (file, _, label, container) in &tolerant {
        let name = label.rsplit('/').next().unwrap_or_default();
        assert_eq!(
            restarts_in_a_stall_past_its_liveness_window(file, name, container),
            Some(true),
            "{label} container {container:?} is flagged by lint but does not restart in {stall}, nor in a stall past its liveness window"
        );
    }
    assert!(tolerant.len() <= 2, "more flagged containers than expected tolerate {stall}: {tolerant:#?}");
    assert!(restarted.len() >= 50, "only {} containers restart in {stall}", restarted.len());
    eprintln!(
        "{} objects, {outcomes} containers: {} restart in {stall}, all flagged by lint; {} flagged tolerate it ({tolerant:?})",
        sim.simulated.len(),
        restarted.len(),
        tolerant.len()
    );
}
