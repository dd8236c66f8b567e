//! Reading inputs as `lint` does and running the simulation on every
//! pod-bearing object, each placed at its file and line.

use std::panic::{AssertUnwindSafe, catch_unwind};

use policies::model::object_label_of;
use policies::simulate::{Assumptions, ObjectSimulation, Scenario, simulate_object};
use policies::{Batch, Policy, objects_in, plan_fixes};

use crate::input::{Discovered, Document, Limits, Template, TemplateFinder};
use crate::outcome::{InputError, Origin};
use crate::pipeline::{self, Keeper, Source, Step};
use crate::policy_discovery::Resolved;

use super::fail_on::{FailOnVerdict, fails};

/// What a simulation run is asked to do.
#[derive(Debug, Clone, Copy)]
pub struct ReadOptions<'a> {
    /// The scenarios.
    pub scenarios: &'a [Scenario],
    /// Assumptions beyond the manifest.
    pub assumptions: &'a Assumptions,
    /// Whether to simulate the fixed object too.
    pub diff_fix: bool,
    /// `--helm-chart-root`.
    pub helm_chart_root: Option<&'a str>,
}

/// One simulated object, placed in its file (or, for `audit --simulate`,
/// in the cluster).
#[derive(Debug, Clone)]
pub struct Simulated {
    /// Where the object was read: a file (`simulate`), or the cluster
    /// (`audit --simulate`), where `file` and the lines are not shown.
    pub origin: Origin,
    /// File shown (the Helm template when it is on disk and matched).
    pub file: String,
    /// Line of the object's start.
    pub line: u32,
    /// Line of each outcome's container (aligned with `simulation.outcomes`).
    pub container_lines: Vec<u32>,
    /// The engine's simulation.
    pub simulation: ObjectSimulation,
    /// The same scenarios on the object as `lifeguard fix` would leave it
    /// (`--diff-fix`), with what the fixes change (nothing, when no fix
    /// applies); `None` without the flag.
    pub fixed: Option<Fixed>,
}

impl Simulated {
    /// An object `lifeguard audit --simulate` read from the cluster: no
    /// file or line, no fixed object.
    pub fn in_cluster(simulation: ObjectSimulation) -> Simulated {
        Simulated {
            origin: Origin::Cluster,
            file: String::new(),
            line: 0,
            container_lines: Vec::new(),
            simulation,
            fixed: None,
        }
    }
}

/// The object as `lifeguard fix` would leave it, simulated.
#[derive(Debug, Clone)]
pub struct Fixed {
    /// The fixes applied, as `lifeguard fix` describes them.
    pub fixes: Vec<String>,
    /// The simulation of the fixed object (aligned with the original's outcomes).
    pub simulation: ObjectSimulation,
}

/// Everything a simulate run found.
#[derive(Debug, Default)]
pub struct SimulateRun {
    /// Objects in input order.
    pub simulated: Vec<Simulated>,
    /// Input errors in input order.
    pub errors: Vec<InputError>,
}

impl SimulateRun {
    /// 2 on input errors; 1 when a verdict of the manifests as written fails under `--fail-on`; else 0.
    pub fn exit_code(&self, fail_on: &[FailOnVerdict]) -> u8 {
        if !self.errors.is_empty() {
            return 2;
        }
        let sims = || self.simulated.iter().map(|s| &s.simulation);
        let failing = sims().flat_map(|s| &s.outcomes).any(|o| fails(fail_on, o.verdict))
            || sims().flat_map(|s| &s.workload).any(|o| fails(fail_on, o.verdict));
        u8::from(failing)
    }
}

/// Simulates every input with its own policy, as `lint` lints them
/// ([`crate::policy_discovery`]); a policy file that is not valid is an
/// input error, and the inputs it governs are not simulated.
pub fn simulate_resolved(resolved: &mut Resolved, options: &ReadOptions<'_>, limits: &Limits) -> SimulateRun {
    let mut out = SimulateRun::default();
    out.errors.append(&mut resolved.errors);
    for (index, found) in std::mem::take(&mut resolved.runs) {
        let Some(in_force) = resolved.policies.get(index) else { continue };
        let mut part = simulate_found(found, &in_force.policy, options, limits);
        out.simulated.append(&mut part.simulated);
        out.errors.append(&mut part.errors);
    }
    out
}

/// Reads, parses and simulates discovered inputs under one policy.
pub fn simulate_found(found: Discovered, policy: &Policy, options: &ReadOptions<'_>, limits: &Limits) -> SimulateRun {
    let keep = &mut Placing { templates: TemplateFinder::on_disk(options.helm_chart_root).knowing(&found.inputs) };
    // The simulation names the Services of the object's context that lose
    // their endpoints, and the fixes see them, as in `lint`.
    let (outs, mut errors) = pipeline::run_found(&found, policy, limits, &Simulate(options), keep);
    let mut out = SimulateRun::default();
    for part in outs {
        Simulate::join(&mut out, part);
    }
    errors.append(&mut out.errors);
    out.errors = errors;
    out
}

/// `simulate` a document: every pod-bearing object of it, placed at its line.
struct Simulate<'a, 'o>(&'a ReadOptions<'o>);

impl Step for Simulate<'_, '_> {
    type Out = SimulateRun;

    fn document(&self, source: &Source<'_>, document: &Document, batch: &Batch) -> SimulateRun {
        let mut out = SimulateRun::default();
        simulate_document(source.name, document, batch, source.policy, self.0, &mut out);
        out
    }

    fn join(into: &mut SimulateRun, mut part: SimulateRun) {
        into.simulated.append(&mut part.simulated);
        into.errors.append(&mut part.errors);
    }
}

/// Places each simulated object in the Helm template it was rendered from,
/// when it is on disk: the template's own lines where they are matched,
/// else the rendered ones.
struct Placing {
    templates: TemplateFinder,
}

impl Keeper<SimulateRun> for Placing {
    fn templates(&mut self) -> &mut TemplateFinder {
        &mut self.templates
    }

    fn document(&mut self, out: &mut SimulateRun, template: Option<Template>) {
        let Some(template) = template else { return };
        for simulated in &mut out.simulated {
            if let Some((file, line, _)) = template.place(simulated.line) {
                (simulated.file, simulated.line) = (file.to_owned(), line);
            }
            for line in &mut simulated.container_lines {
                *line = template.line(*line).unwrap_or(*line);
            }
        }
    }
}

fn simulate_document(
    file: &str,
    doc: &Document,
    batch: &Batch,
    policy: &Policy,
    options: &ReadOptions<'_>,
    out: &mut SimulateRun,
) {
    for (prefix, object) in objects_in(&doc.value) {
        if !object.is_object() {
            continue;
        }
        let result = catch_unwind(AssertUnwindSafe(|| {
            simulate_object(object, batch, policy, options.scenarios, options.assumptions)
        }));
        let internal = |what: &str| InputError {
            file: file.to_owned(),
            line: Some(doc.start.line),
            column: None,
            message: format!("{}: internal error in the {what} (please report)", object_label_of(object)),
        };
        match result {
            Ok(Ok(None)) => {}
            Ok(Ok(Some(simulation))) => {
                // Lines as rendered; the Helm template's, if any, come later ([`Placing`]).
                let line = doc.locate(&prefix).line;
                let container_lines =
                    simulation.outcomes.iter().map(|o| doc.locate(&format!("{prefix}{}", o.pointer)).line).collect();
                let fixed = if options.diff_fix {
                    match catch_unwind(AssertUnwindSafe(|| fixed(object, batch, policy, options))) {
                        // No fix applies: the fixed object is the object.
                        Ok(fixed) => {
                            Some(fixed.unwrap_or_else(|| Fixed { fixes: Vec::new(), simulation: simulation.clone() }))
                        }
                        Err(_) => {
                            out.errors.push(internal("fixer"));
                            None
                        }
                    }
                } else {
                    None
                };
                out.simulated.push(Simulated {
                    origin: Origin::File,
                    file: file.to_owned(),
                    line,
                    container_lines,
                    simulation,
                    fixed,
                });
            }
            Ok(Err(e)) => {
                let pointer = format!("{prefix}{}", e.pointer);
                let at = doc.locate(&pointer);
                out.errors.push(InputError {
                    file: file.to_owned(),
                    line: Some(at.line),
                    column: Some(at.column),
                    message: format!("{}: {pointer}: {}", object_label_of(object), e.message),
                });
            }
            Err(_) => out.errors.push(internal("simulation")),
        }
    }
}

/// The object as `lifeguard fix` would leave it, simulated; `None` when
/// no fix applies (the fixed object is the object).
fn fixed(object: &serde_json::Value, batch: &Batch, policy: &Policy, options: &ReadOptions<'_>) -> Option<Fixed> {
    let plan = plan_fixes(object, batch, policy, None).ok()??;
    let fixed_object = plan.fixed.as_ref()?;
    let simulation = simulate_object(fixed_object, batch, policy, options.scenarios, options.assumptions).ok()??;
    Some(Fixed { fixes: plan.applied.iter().map(|a| a.description.clone()).collect(), simulation })
}
