//! `lifeguard audit --simulate`: each audited workload run through
//! `lifeguard simulate`'s scenarios ([`policies::simulate`]), its verdicts
//! kept as few lines as the report needs: every verdict as a JSON entry,
//! rendered as the namespace is judged; the ones to act on for the text
//! section that ends the report. For the HTML report, the namespace's
//! whole simulations (their events, which the SVG timelines draw) are
//! kept until the namespace is rendered, as `simulate --format html` draws
//! them ([`html`]).

use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};

use policies::model::object_label_of;
use policies::simulate::{Assumptions, ContainerOutcome, ObjectSimulation, Scenario, Verdict, simulate_object};
use policies::{Batch, Policy, Severity};
use serde_json::{Map, Value, json};

use crate::simulate::read::Simulated;

/// What `--simulate` asks and what it found so far.
#[derive(Debug)]
pub struct Simulation {
    scenarios: Vec<Scenario>,
    assumptions: Assumptions,
    /// Workloads simulated.
    pub workloads: usize,
    /// The verdicts to act on (those with a severity), in audit order.
    pub notable: Vec<Notable>,
    /// Objects that could not be simulated, and why.
    pub errors: Vec<String>,
    /// Whether whole simulations are kept for the HTML report.
    keep: bool,
    /// The simulations kept since the last [`Simulation::take_kept`].
    kept: Vec<ObjectSimulation>,
}

/// One verdict with a severity: what the text section lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notable {
    /// Index of the scenario in the run's list.
    pub scenario: usize,
    /// The verdict.
    pub verdict: Verdict,
    /// `Kind/namespace/name`.
    pub workload: String,
    /// The container.
    pub container: String,
    /// The verdict's line.
    pub message: String,
}

impl Simulation {
    /// The simulation of `scenarios` (the standard set when empty) with
    /// `lifeguard simulate`'s default assumptions, as a run of it on the
    /// object's file gives.
    pub fn new(scenarios: &[Scenario]) -> Simulation {
        let scenarios = if scenarios.is_empty() { Scenario::standard() } else { scenarios.to_vec() };
        Simulation {
            scenarios,
            assumptions: Assumptions::default(),
            workloads: 0,
            notable: Vec::new(),
            errors: Vec::new(),
            keep: false,
            kept: Vec::new(),
        }
    }

    /// The same, keeping each workload's whole simulation until
    /// [`Simulation::take_kept`] takes it: for the HTML report's timelines.
    pub fn keeping_timelines(self) -> Simulation {
        Simulation { keep: true, ..self }
    }

    /// The simulations kept since the last call (a namespace's), in order.
    pub fn take_kept(&mut self) -> Vec<ObjectSimulation> {
        std::mem::take(&mut self.kept)
    }

    /// Simulates one audited workload with its namespace's Services: its
    /// verdicts as JSON entries (one per container and scenario), the
    /// notable ones kept.
    pub fn run(&mut self, object: &Value, batch: &Batch, policy: &Policy) -> Vec<Value> {
        let label = object_label_of(object);
        let result = catch_unwind(AssertUnwindSafe(|| {
            simulate_object(object, batch, policy, &self.scenarios, &self.assumptions)
        }));
        let simulation = match result {
            Ok(Ok(Some(s))) => s,
            Ok(Ok(None)) => return Vec::new(),
            Ok(Err(e)) => {
                self.errors.push(format!("{label}: {}: {}; not simulated", e.pointer, e.message));
                return Vec::new();
            }
            Err(_) => {
                self.errors.push(format!("{label}: internal error in the simulation (please report)"));
                return Vec::new();
            }
        };
        self.workloads += 1;
        for o in &simulation.outcomes {
            if o.verdict.severity().is_some() {
                self.notable.push(Notable {
                    scenario: self.scenarios.iter().position(|s| s.label == o.scenario).unwrap_or(0),
                    verdict: o.verdict,
                    workload: label.clone(),
                    container: o.container.clone(),
                    message: o.message.clone(),
                });
            }
        }
        let entries = simulation.outcomes.iter().map(|o| entry(&simulation, o)).collect();
        if self.keep {
            self.kept.push(simulation);
        }
        entries
    }

    /// The text section: the verdicts to act on, most severe first, each
    /// with the workloads that meet it.
    pub fn render(&self) -> String {
        let labels: Vec<&str> = self.scenarios.iter().map(|s| s.label.as_str()).collect();
        let mut out = format!(
            "simulated {} ({}): ",
            policies::simulate::plural(self.workloads as i64, "workload"),
            labels.join(", ")
        );
        let mut groups: Vec<(Severity, usize, Verdict)> =
            self.notable.iter().filter_map(|n| Some((n.verdict.severity()?, n.scenario, n.verdict))).collect();
        groups.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        groups.dedup();
        if groups.is_empty() {
            out.push_str("no verdict to act on\n");
            return out;
        }
        let mut workloads: Vec<&str> = self.notable.iter().map(|n| n.workload.as_str()).collect();
        workloads.sort_unstable();
        workloads.dedup();
        let _ = writeln!(
            out,
            "{} with a verdict to act on",
            policies::simulate::plural(workloads.len() as i64, "workload")
        );
        for (severity, scenario, verdict) in groups {
            let met: Vec<&Notable> =
                self.notable.iter().filter(|n| n.scenario == scenario && n.verdict == verdict).collect();
            let mut names: Vec<&str> = met.iter().map(|n| n.workload.as_str()).collect();
            names.dedup();
            let label = labels.get(scenario).copied().unwrap_or_default();
            let _ = writeln!(
                out,
                "{label}: {} ({}), {}:",
                verdict.name(),
                severity.as_str(),
                policies::simulate::plural(names.len() as i64, "workload")
            );
            for n in met {
                let _ = writeln!(out, "  {} container {:?}: {}", n.workload, n.container, n.message);
            }
        }
        out
    }
}

/// The HTML report's sections of `simulated` (a namespace's workloads):
/// per workload and container, its verdicts and SVG timeline, as
/// `lifeguard simulate --format html` renders them.
pub fn html(simulated: Vec<ObjectSimulation>) -> String {
    let mut s = String::new();
    for simulation in simulated {
        crate::report::simulate::html::write_object(&mut s, &Simulated::in_cluster(simulation));
    }
    s
}

/// One verdict as a JSON entry: a finding's fields (`rule` is `simulate`,
/// `severity` the verdict's, null for one that needs no action; `path` the
/// container) and those of `lifeguard simulate --format json` (`scenario`,
/// `verdict`, the worst case's `restarts`, `restart_at`, `unready_seconds`,
/// `sigkill`).
fn entry(simulation: &ObjectSimulation, o: &ContainerOutcome) -> Value {
    let mut m = Map::new();
    m.insert("rule".into(), json!("simulate"));
    m.insert("severity".into(), json!(o.verdict.severity().map(Severity::as_str)));
    m.insert("file".into(), Value::Null);
    m.insert("line".into(), Value::Null);
    m.insert("column".into(), Value::Null);
    m.insert("kind".into(), json!(simulation.kind));
    m.insert("namespace".into(), json!(simulation.namespace));
    m.insert("name".into(), json!(simulation.name));
    m.insert("container".into(), json!(o.container));
    m.insert("message".into(), json!(o.message));
    m.insert("help".into(), json!("`lifeguard simulate` on this object's manifest shows the timeline"));
    m.insert("path".into(), json!(o.pointer));
    m.insert("fixable".into(), json!(false));
    m.insert("fix".into(), Value::Null);
    m.insert("template".into(), Value::Null);
    m.insert("scenario".into(), json!(o.scenario));
    m.insert("verdict".into(), json!(o.verdict.name()));
    m.extend(crate::report::simulate::json::figures(&o.worst));
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment(name: &str, liveness_path: &str) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": "shop"},
            "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "api", "image": "example/api:1",
                "ports": [{"name": "http", "containerPort": 8080}],
                "livenessProbe": {"httpGet": {"path": liveness_path, "port": "http"}},
                "readinessProbe": {"httpGet": {"path": "/readyz", "port": "http"}}}]}}}})
    }

    #[test]
    fn every_verdict_is_an_entry_and_only_those_to_act_on_are_listed() {
        let mut simulation = Simulation::new(&[Scenario::parse("stall:2m").expect("scenario")]);
        let policy = Policy::default();
        let none = Batch::default();
        let shared = simulation.run(&deployment("shared", "/readyz"), &none, &policy);
        let apart = simulation.run(&deployment("apart", "/livez"), &none, &policy);
        assert_eq!(simulation.workloads, 2);
        assert_eq!(shared.len(), 1);
        assert_eq!(shared[0]["rule"], "simulate");
        assert_eq!(shared[0]["verdict"], "restart-storm");
        assert_eq!(shared[0]["severity"], "error");
        assert_eq!(shared[0]["path"], "/spec/template/spec/containers/0");
        assert!(shared[0]["restarts"].as_u64().is_some_and(|n| n >= 3), "{}", shared[0]);
        // Separate probes: readiness takes the replicas out, nothing restarts.
        assert_eq!(apart[0]["verdict"], "dependency-outage");
        assert_eq!(apart[0]["severity"], "info");
        let text = simulation.render();
        assert!(text.starts_with("simulated 2 workloads (stall:2m): 2 workloads with a verdict to act on\n"), "{text}");
        let storm = text.find("stall:2m: restart-storm (error), 1 workload:").expect(&text);
        let outage = text.find("stall:2m: dependency-outage (info), 1 workload:").expect(&text);
        assert!(storm < outage, "the most severe first: {text}");
        assert!(text.contains("  Deployment/shop/shared container \"api\": restart storm"), "{text}");
    }

    #[test]
    fn the_html_report_draws_each_containers_verdicts_and_timeline_as_simulate_does() {
        let scenarios = [Scenario::parse("stall:2m").expect("scenario"), Scenario::parse("wedge").expect("scenario")];
        let policy = Policy::default();
        let none = Batch::default();
        // Without the HTML report, nothing is kept.
        let mut plain = Simulation::new(&scenarios);
        plain.run(&deployment("shared", "/readyz"), &none, &policy);
        assert!(plain.take_kept().is_empty());

        let mut simulation = Simulation::new(&scenarios).keeping_timelines();
        let mut hostile = deployment("x<script>", "/readyz");
        hostile["spec"]["template"]["spec"]["containers"][0]["name"] = json!("c\"><b>");
        let sidecar = json!({"name": "sidecar", "image": "example/sidecar:1"});
        hostile["spec"]["template"]["spec"]["containers"].as_array_mut().expect("containers").push(sidecar);
        let entries = [
            simulation.run(&deployment("shared", "/readyz"), &none, &policy),
            simulation.run(&hostile, &none, &policy),
        ]
        .concat();
        let kept = simulation.take_kept();
        assert_eq!(kept.len(), 2);
        assert!(simulation.take_kept().is_empty(), "taken once");
        let page = html(kept);
        // A row and a timeline panel per verdict, an SVG per container.
        assert_eq!(page.matches("<tr class=\"verdict\"").count(), entries.len(), "{page}");
        assert_eq!(page.matches("<g class=\"panel\">").count(), entries.len(), "{page}");
        assert_eq!(page.matches("<svg ").count(), 3, "{page}");
        assert_eq!(page.matches("<article class=\"object\">").count(), 2, "{page}");
        assert!(page.contains("<h3>simulate \u{b7} Deployment/shop/shared</h3>"), "{page}");
        assert!(page.contains("data-severity=\"error\" data-rule=\"restart-storm\""), "{page}");
        // A cluster's object has no file or line to show.
        assert!(!page.contains("(line ") && !page.contains(": Deployment/"), "{page}");
        // The object's strings are escaped, in the page and in its SVG.
        assert!(page.contains("Deployment/shop/x&lt;script&gt;") && page.contains("c&quot;&gt;&lt;b&gt;"), "{page}");
        assert!(!page.contains("<script") && !page.contains("\"><b>"), "{page}");
    }

    #[test]
    fn an_unreadable_annotation_is_named_and_the_workload_not_simulated() {
        let mut simulation = Simulation::new(&[]);
        let mut object = deployment("odd", "/livez");
        object["metadata"]["annotations"] = json!({"lifeguard.dev/probe-checks": "liveness=sometimes"});
        assert!(simulation.run(&object, &Batch::default(), &Policy::default()).is_empty());
        assert_eq!(simulation.workloads, 0);
        assert_eq!(simulation.errors.len(), 1, "{:?}", simulation.errors);
        assert!(
            simulation.errors[0].starts_with("Deployment/shop/odd: /metadata/annotations/"),
            "{:?}",
            simulation.errors
        );
        assert_eq!(
            simulation.render(),
            "simulated 0 workloads (boot, stall:2m, pause:5s, wedge, delete): no verdict to act on\n"
        );
    }
}
