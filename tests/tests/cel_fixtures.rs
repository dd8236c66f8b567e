//! Each covered rule's CEL on the rule's fixtures, without a cluster: the
//! ValidatingAdmissionPolicies `lifeguard export vap --mode warn` writes
//! (the default pack), evaluated by the kyverno CLI (`kyverno apply`, as
//! `.ci/install-peers.sh` builds it), which runs Kubernetes' own validator
//! (k8s.io/apiserver's `validating.NewValidator`: variables, validations,
//! `messageExpression` and its fall-backs) in its CEL environment. Every
//! object of a covered rule's fixtures gets exactly the covered findings
//! `lifeguard lint` reports on it alone (same rule, same containers; of a
//! partly covered rule, all of the part the export carries, and nothing
//! else), as `cluster_vap`'s parity holds against the real API server, with
//! the expectations of `lifeguard_e2e::vap_parity` both share; and under
//! `--mode enforce` an object is denied only where the linter denies it,
//! and wherever it denies it by a finding the export settles.
//!
//! How the CLI is run, and why:
//! - In rounds, each a run per core on its share of the objects: kyverno
//!   reports one result per policy, the first validation that fails, where
//!   the API server reports every one. The first round runs the pair of
//!   policies on every object; an object a policy failed on runs again
//!   with that policy's validations after the one that failed (and the
//!   variables they read), until none fails. Each round's policies name
//!   their objects (`resourceNames` in the binding), so a policy is
//!   compiled only for the objects it judges: kyverno compiles a policy's
//!   CEL anew for each object (about 0.4 s for one of the export's), and
//!   that is the time the test takes; one policy per validation would
//!   compile twice as much.
//! - Only `lifeguard-deny` and `lifeguard-warn`: the further pairs
//!   (`-2`, ...) judge further pod templates of custom kinds, and every
//!   fixture is a built-in kind ([`lifeguard_e2e::vap_parity::judged`]).
//! - The objects renamed `cel-NNN` in one namespace: fixture files reuse
//!   names, and kyverno refuses two objects of one kind, namespace and
//!   name in a run; the policies read no name (nor, beyond the selector,
//!   the namespace), and the name leads back to the fixture.
//! - With a mutation first that sets `metadata.generation` (what the API
//!   server sets on a create before admission): `kyverno apply` turns every
//!   number of its input into a float (for JMESPath: kyverno#11905, fixed
//!   so in #12037), so `failureThreshold * periodSeconds` meets no
//!   overload where the API server hands the CEL integers. A mutated
//!   object is read back from JSON, its whole numbers integers again.
//! - The export's policies are the same in every mode (the bindings'
//!   actions differ): the enforce check reads the same runs, a finding of
//!   a policy whose enforce binding denies being a denial.
//! - `--kube-version` changes only the comments of the export (checked
//!   against 1.36, the release whose k8s.io/apiserver kyverno v1.19.1
//!   embeds), so the default, the oldest release, stands for all.
//!
//! What the CLI does not do as an API server would: it does not default
//! the object (no `periodSeconds: 10` filled in; the CEL reads the
//! defaults as a custom kind's template needs), convert it to its typed
//! form (a quantity stays the number the file holds) or validate it (an
//! object the API server refuses before admission, such as a probe with
//! two handlers, is judged here), and it reads a policy's
//! `matchConstraints` only through the binding (the runs' bindings carry
//! them).
//!
//! Over 400 lines: the rounds that work around the CLI (the objects renamed,
//! the integers restored, each round's policies cut to the validations left)
//! and the parity and enforce checks read the same runs, built once; apart,
//! each would need the runs' bookkeeping in view.

// A test's edge: it tells on the terminal what it measured and skipped.
#![allow(clippy::print_stderr)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Instant;

use lifeguard_e2e::repo_root;
use lifeguard_e2e::vap_parity::{carried, covered, denies, export, fixture_files, linted, objects};
use policies::yaml::{Limits, parse_stream};
use policies::{Batch, Policy, lint_object};
use serde_json::{Value, json};

/// The namespace of every object in the runs.
const NAMESPACE: &str = "lifeguard-cel";

/// The pair of policies that judges the built-in kinds.
const PAIR: [&str; 2] = ["lifeguard-deny", "lifeguard-warn"];

/// The mutation that gives the objects back their integers.
const INTEGERS: &str = "kyverno-integers";

/// One object of a rule's fixtures and what kyverno's runs report on it.
struct Judged {
    /// The rule whose fixtures hold it.
    rule: &'static str,
    /// Its file, under the rule's fixtures.
    file: String,
    /// As the file holds it.
    object: Value,
    /// (rule, container) of every message of a failed validation.
    flagged: BTreeSet<(String, String)>,
    /// Those of the policies whose binding denies under `--mode enforce`.
    denied: BTreeSet<(String, String)>,
    /// What is wrong beside the findings: an evaluation error, a message
    /// that names no covered rule (a `messageExpression` that fell back to
    /// the expression's text), a validation kyverno did not report on.
    problems: Vec<String>,
}

impl Judged {
    /// `FILE KIND/NAME`, for messages.
    fn label(&self) -> String {
        let name = self.object["metadata"]["name"].as_str().unwrap_or("(no name)");
        format!("{} {}/{name}", self.file, self.object["kind"].as_str().unwrap_or_default())
    }
}

/// Every fixture object of the covered rules, judged; or why that failed.
type Evaluation = Result<Vec<Judged>, String>;

/// The evaluation, run once for all tests; `None` without the kyverno CLI.
fn evaluation() -> Option<&'static [Judged]> {
    static ONCE: OnceLock<Evaluation> = OnceLock::new();
    // Each test that needs the CLI skips (or fails under LIFEGUARD_NO_SKIP) on its own.
    let kyverno = lifeguard_e2e::peers::tools::kyverno()?;
    let evaluated = ONCE.get_or_init(|| {
        // A panic here would leave the cell empty for the next test to run it all again.
        let run = std::panic::catch_unwind(|| evaluate(&kyverno));
        run.unwrap_or_else(|panic| {
            let text = panic.downcast_ref::<String>().cloned();
            Err(text.or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned())).unwrap_or_default())
        })
    });
    match evaluated {
        Ok(judged) => Some(judged),
        Err(e) => panic!("the kyverno run failed: {e}"),
    }
}

/// The documents of a YAML stream.
fn documents(yaml: &str) -> Vec<Value> {
    let (docs, err) = parse_stream(yaml, &Limits::default());
    assert!(err.is_none(), "the export reads: {err:?}");
    docs.into_iter().map(|d| d.value).filter(|v| !v.is_null()).collect()
}

/// The export's documents of `kind`, by name.
fn of_kind<'a>(docs: &'a [Value], kind: &str) -> BTreeMap<&'a str, &'a Value> {
    docs.iter().filter(|d| d["kind"] == kind).map(|d| (d["metadata"]["name"].as_str().expect("a name"), d)).collect()
}

/// The variables an expression names (`variables.NAME`).
fn variables_named(expression: &str) -> BTreeSet<String> {
    expression
        .split("variables.")
        .skip(1)
        .map(|rest| rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>())
        .filter(|name| !name.is_empty())
        .collect()
}

/// A policy of the pair, as the export writes it.
struct Exported<'a> {
    /// `lifeguard-deny` or `lifeguard-warn`.
    name: &'static str,
    policy: &'a Value,
    binding: &'a Value,
    /// Whether its binding denies under `--mode enforce`.
    denies: bool,
    /// The rule each validation reports, in order.
    rules: Vec<String>,
}

impl Exported<'_> {
    /// The policy with only the validations at `indices` (in order) and
    /// the variables they read, named `name`, and its binding, restricted
    /// to the objects `names` (`resourceNames` under the policy's own
    /// match constraints, which kyverno does not read when a binding names
    /// the policy).
    fn variant(&self, name: &str, indices: &[usize], names: &[String]) -> [Value; 2] {
        let spec = &self.policy["spec"];
        let variables = spec["variables"].as_array().cloned().unwrap_or_default();
        let expression_of = |name: &str| {
            variables.iter().find(|v| v["name"] == name).and_then(|v| v["expression"].as_str()).unwrap_or_default()
        };
        let validations: Vec<&Value> = indices.iter().map(|&k| &spec["validations"][k]).collect();
        let mut read: String =
            spec["matchConditions"].as_array().into_iter().flatten().filter_map(|c| c["expression"].as_str()).collect();
        for v in &validations {
            for field in ["expression", "messageExpression"] {
                read.push_str(v[field].as_str().unwrap_or_default());
                read.push(' ');
            }
        }
        let (mut needed, mut todo) = (BTreeSet::new(), variables_named(&read));
        while let Some(next) = todo.pop_first() {
            if needed.insert(next.clone()) {
                todo.extend(variables_named(expression_of(&next)));
            }
        }
        let mut policy = self.policy.clone();
        policy["metadata"]["name"] = json!(name);
        policy["spec"]["variables"] = json!(
            variables.iter().filter(|v| v["name"].as_str().is_some_and(|n| needed.contains(n))).collect::<Vec<_>>()
        );
        policy["spec"]["validations"] = json!(validations);
        let mut matching = spec["matchConstraints"].clone();
        for rule in matching["resourceRules"].as_array_mut().into_iter().flatten() {
            rule["resourceNames"] = json!(names);
        }
        let mut binding = self.binding.clone();
        binding["metadata"]["name"] = json!(name);
        binding["spec"]["policyName"] = json!(name);
        binding["spec"]["matchResources"] = matching;
        [policy, binding]
    }

    /// Where in `remaining` (indices of validations) the one whose failure
    /// kyverno reported with `message` may be: the first of its rule's
    /// (those before it passed; a later one of the rule, if it was that,
    /// fails again in the next round). A `messageExpression` that fell back
    /// to `failed expression: EXPR` is found by its expression.
    fn failed_at(&self, remaining: &[usize], message: &str) -> Option<usize> {
        let validations = &self.policy["spec"]["validations"];
        if let Some(expression) = message.strip_prefix("failed expression: ") {
            let text = |k: usize| validations[k]["expression"].as_str().unwrap_or_default().trim().to_owned();
            return remaining.iter().position(|&k| text(k) == expression.trim());
        }
        let rule = first_rule(message)?;
        remaining.iter().position(|&k| self.rules[k] == rule)
    }
}

/// The covered rule a validation reports: the first its message names.
fn rule_of(validation: &Value) -> Option<String> {
    first_rule(validation["messageExpression"].as_str().or(validation["message"].as_str())?)
}

/// The covered rule `text` names first (`RULE: `).
fn first_rule(text: &str) -> Option<String> {
    covered()
        .into_iter()
        .filter_map(|r| text.find(&format!("{r}: ")).map(|at| (at, r)))
        .min()
        .map(|(_, r)| r.to_owned())
}

/// A stream of JSON documents, which YAML reads.
fn stream(docs: &[Value]) -> String {
    docs.iter().map(Value::to_string).collect::<Vec<_>>().join("\n---\n") + "\n"
}

/// The objects as the runs hold them: renamed `cel-NNN` by their index,
/// in one namespace.
fn renamed(i: usize, object: &Value) -> Value {
    let mut o = object.clone();
    o["metadata"]["name"] = json!(name_of(i));
    o["metadata"]["namespace"] = json!(NAMESPACE);
    o
}

/// The name of the object of index `i` in the runs.
fn name_of(i: usize) -> String {
    format!("cel-{i:03}")
}

/// One result of a run: (policy, object's index, result, message).
type Outcome = (String, usize, String, String);

/// `kyverno apply` of `policies` on the objects `shares` (one run each,
/// at once): every result, of the policies and of [`INTEGERS`].
fn run(
    kyverno: &Path,
    dir: &Path,
    round: usize,
    policies: &[Value],
    shares: &[Vec<Value>],
) -> Result<Vec<Outcome>, String> {
    let io = |e: std::io::Error| e.to_string();
    let policy_file = dir.join(format!("policies-{round}.yaml"));
    std::fs::write(&policy_file, stream(policies)).map_err(io)?;
    let integers_file = dir.join("integers.yaml");
    let integers = json!({
        "apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": INTEGERS},
        "spec": {"background": false, "rules": [{"name": "integers",
            "match": {"any": [{"resources": {"kinds": ["*"]}}]},
            "mutate": {"patchesJson6902": "- op: add\n  path: /metadata/generation\n  value: 1\n"}}]}
    });
    std::fs::write(&integers_file, stream(&[integers])).map_err(io)?;
    let mut children = Vec::new();
    for (w, share) in shares.iter().enumerate() {
        let resources = dir.join(format!("objects-{round}-{w}.yaml"));
        std::fs::write(&resources, stream(share)).map_err(io)?;
        let report = dir.join(format!("report-{round}-{w}.json"));
        let errors = dir.join(format!("stderr-{round}-{w}.txt"));
        let child = Command::new(kyverno)
            .arg("apply")
            .args([&policy_file, &integers_file])
            .arg("--resource")
            .arg(&resources)
            .args(["--policy-report", "--output-format", "json", "--remove-color", "-o"])
            .arg(dir.join(format!("mutated-{round}-{w}.yaml")))
            .current_dir(dir)
            .stdout(std::fs::File::create(&report).map_err(io)?)
            .stderr(std::fs::File::create(&errors).map_err(io)?)
            .spawn()
            .map_err(|e| format!("run {}: {e}", kyverno.display()))?;
        children.push((child, report, errors));
    }
    let mut out = Vec::new();
    for (mut child, report, errors) in children {
        let status = child.wait().map_err(io)?;
        let stdout = std::fs::read_to_string(&report).map_err(io)?;
        let stderr = std::fs::read_to_string(&errors).unwrap_or_default();
        // The report follows the CLI's warnings and what it mutated, on the last one's line.
        let Some(at) = stdout.find("{\"kind\":") else {
            let start: String = stdout.chars().take(2000).collect();
            return Err(format!("kyverno exited {status} with no report:\n{start}\n{stderr}"));
        };
        let report: Value = serde_json::from_str(stdout[at..].trim()).map_err(|e| format!("kyverno's report: {e}"))?;
        for result in report["results"].as_array().into_iter().flatten() {
            let text = |pointer: &str| result.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_owned();
            let i = text("/resources/0/name").strip_prefix("cel-").and_then(|n| n.parse::<usize>().ok());
            let Some(i) = i else { return Err(format!("a result of no object of the runs: {result}")) };
            out.push((text("/policy"), i, text("/result"), text("/message")));
        }
    }
    Ok(out)
}

/// Exports, runs kyverno on every fixture object and reads its reports.
///
/// In rounds: the first runs the pair of policies on every object; an
/// object a policy failed on runs again with that policy's validations
/// after the one that failed, until none fails: kyverno reports only the
/// first validation of a policy that fails, where the API server reports
/// every one. Each round's policies name their objects (`resourceNames`),
/// so kyverno compiles a policy only for an object it judges.
fn evaluate(kyverno: &Path) -> Evaluation {
    let started = Instant::now();
    let warn = export(&["--policy", "default", "--mode", "warn"]);
    let uncommented = |yaml: &str| yaml.lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>().join("\n");
    // kyverno v1.19.1 embeds k8s.io/apiserver v0.36: Kubernetes 1.36's CEL.
    let embedded = export(&["--policy", "default", "--mode", "warn", "--kube-version", "1.36"]);
    if uncommented(&warn) != uncommented(&embedded) {
        return Err("--kube-version 1.36 changes the export: run kyverno on each release's".into());
    }
    let docs = documents(&warn);
    let enforce = documents(&export(&["--policy", "default", "--mode", "enforce"]));
    if of_kind(&docs, "ValidatingAdmissionPolicy") != of_kind(&enforce, "ValidatingAdmissionPolicy") {
        return Err("the policies differ between --mode warn and --mode enforce: one run cannot judge both".into());
    }
    let (policies, bindings) =
        (of_kind(&docs, "ValidatingAdmissionPolicy"), of_kind(&docs, "ValidatingAdmissionPolicyBinding"));
    let enforcing = of_kind(&enforce, "ValidatingAdmissionPolicyBinding");
    let mut pair = Vec::new();
    for name in PAIR {
        let (Some(policy), Some(binding), Some(enforced)) =
            (policies.get(name), bindings.get(name), enforcing.get(name))
        else {
            return Err(format!("the export has no {name} and its binding"));
        };
        if !binding["spec"]["matchResources"].is_null() {
            return Err(format!("{name}'s binding matches resources of its own: the runs' bindings replace it"));
        }
        let denies = enforced["spec"]["validationActions"].as_array().is_some_and(|a| a.contains(&json!("Deny")));
        let validations = policy["spec"]["validations"].as_array().map(Vec::as_slice).unwrap_or_default();
        let Some(rules) = validations.iter().map(rule_of).collect::<Option<Vec<String>>>() else {
            return Err(format!("a validation of {name} whose message names no covered rule"));
        };
        pair.push(Exported { name, policy, binding, denies, rules });
    }

    let mut judged = Vec::new();
    for rule in covered() {
        for file in fixture_files(rule) {
            let short = file.strip_prefix(repo_root()).unwrap_or(&file).display().to_string();
            for object in objects(&file) {
                let (flagged, denied, problems) = (BTreeSet::new(), BTreeSet::new(), Vec::new());
                judged.push(Judged { rule, file: short.clone(), object, flagged, denied, problems });
            }
        }
    }
    let dir = lifeguard_e2e::peers::work_dir();
    let cores = std::thread::available_parallelism().map_or(1, usize::from).clamp(1, 8);
    // What is left to run: (object, policy of the pair, its validations not yet judged).
    let mut pending: Vec<(usize, usize, Vec<usize>)> = (0..judged.len())
        .flat_map(|i| pair.iter().enumerate().map(move |(p, e)| (i, p, (0..e.rules.len()).collect())))
        .collect();
    let (mut rounds, mut compiled) = (Vec::new(), 0);
    while !pending.is_empty() {
        let round = rounds.len() + 1;
        let round_started = Instant::now();
        // One policy per distinct (policy of the pair, validations left), naming its objects.
        let mut variants: BTreeMap<(usize, Vec<usize>), Vec<usize>> = BTreeMap::new();
        for (i, p, left) in &pending {
            variants.entry((*p, left.clone())).or_default().push(*i);
        }
        let mut written = Vec::new();
        let mut named: BTreeMap<String, (usize, Vec<usize>, Vec<usize>)> = BTreeMap::new();
        for (v, ((p, left), objects)) in variants.into_iter().enumerate() {
            let name = format!("{}.{round}.{v}", pair[p].name);
            let names: Vec<String> = objects.iter().map(|&i| name_of(i)).collect();
            written.extend(pair[p].variant(&name, &left, &names));
            named.insert(name, (p, left, objects));
        }
        compiled += pending.len();
        // The round's objects, shared between the runs, one per core.
        let objects: BTreeSet<usize> = pending.iter().map(|(i, _, _)| *i).collect();
        let workers = cores.min(objects.len());
        let mut shares = vec![Vec::new(); workers];
        for (n, &i) in objects.iter().enumerate() {
            shares[n % workers].push(renamed(i, &judged[i].object));
        }
        let outcomes = run(kyverno, dir.path(), round, &written, &shares)?;
        let integers = outcomes.iter().filter(|(policy, _, result, _)| policy == INTEGERS && result == "pass").count();
        if integers != objects.len() {
            return Err(format!("round {round}: {INTEGERS} mutated {integers} of the {} objects", objects.len()));
        }
        let mut next = Vec::new();
        let mut reported: BTreeSet<(String, usize)> = BTreeSet::new();
        for (policy, i, result, message) in outcomes {
            if policy == INTEGERS {
                continue;
            }
            let Some((p, left, objects)) = named.get(&policy) else {
                return Err(format!("round {round}: a result of no policy of the round: {policy}"));
            };
            if !objects.contains(&i) || !reported.insert((policy.clone(), i)) {
                return Err(format!("round {round}: {policy} judged {} unasked or twice", name_of(i)));
            }
            let exported = &pair[*p];
            let j = &mut judged[i];
            match result.as_str() {
                "pass" | "skip" => {}
                "fail" => {
                    let found = lifeguard_e2e::vap_parity::flagged_in(&message);
                    if found.is_empty() {
                        j.problems.push(format!("{}: a message that names no covered rule: {message}", exported.name));
                    }
                    if exported.denies {
                        j.denied.extend(found.iter().cloned());
                    }
                    j.flagged.extend(found);
                    match exported.failed_at(left, &message) {
                        Some(at) if at + 1 < left.len() => next.push((i, *p, left[at + 1..].to_vec())),
                        Some(_) => {}
                        None => j.problems.push(format!(
                            "{}: a failure of none of the validations left ({left:?}): {message}",
                            exported.name
                        )),
                    }
                }
                other => j.problems.push(format!("{}: {other}: {message}", exported.name)),
            }
        }
        let asked: usize = named.values().map(|(_, _, objects)| objects.len()).sum();
        if reported.len() != asked {
            return Err(format!(
                "round {round}: kyverno judged {} of the {asked} (policy, object) pairs",
                reported.len()
            ));
        }
        rounds.push(format!("{} pairs of {} objects in {:.1?}", pending.len(), objects.len(), round_started.elapsed()));
        pending = next;
    }
    eprintln!(
        "kyverno: {PAIR:?} on {} fixture objects, {compiled} (policy, object) pairs compiled, {:.1?} in all; rounds: {}",
        judged.len(),
        started.elapsed(),
        rounds.join("; ")
    );
    Ok(judged)
}

/// The parity of `rule`'s fixtures: every object gets, from the warn
/// export, every covered finding the linter reports on it alone that the
/// export carries, and none the linter does not report; kyverno saw no
/// problem on any.
fn check_rule(rule: &str) {
    let Some(judged) = evaluation() else { return };
    let policy = Policy::pack("default").expect("the default pack");
    let mine: Vec<&Judged> = judged.iter().filter(|j| j.rule == rule).collect();
    let (mut differences, mut carried_own) = (Vec::new(), 0);
    for j in &mine {
        let lint = linted(&j.object, &policy);
        carried_own += lint.carried.iter().filter(|(r, _)| r == rule).count();
        if !lint.agrees(&j.flagged) {
            let missing: BTreeSet<_> = lint.carried.difference(&j.flagged).collect();
            let extra: BTreeSet<_> = j.flagged.difference(&lint.all).collect();
            differences.push(format!(
                "{}: CEL flags {:?}; lint: carried {:?}, all {:?}; missing {missing:?}, not the linter's {extra:?}",
                j.label(),
                j.flagged,
                lint.carried,
                lint.all
            ));
        }
        differences.extend(j.problems.iter().map(|p| format!("{}: {p}", j.label())));
    }
    let objects = mine.len();
    assert!(objects > 0, "{rule}: no fixture object the export judges");
    assert!(carried_own > 0, "{rule}: no fixture object has a finding of the rule the export carries");
    assert!(
        differences.is_empty(),
        "{rule}: {} of {objects} objects differ:\n{}",
        differences.len(),
        differences.join("\n")
    );
}

lifeguard_e2e::rule_tests! {
    check_rule;
    probe_invalid => "probe-invalid",
    probe_port_unknown => "probe-port-unknown",
    probe_endpoint_reused => "probe-endpoint-reused",
    startup_probe_missing => "startup-probe-missing",
    startup_budget_too_short => "startup-budget-too-short",
    liveness_too_aggressive => "liveness-too-aggressive",
    probe_window_too_long => "probe-window-too-long",
    readiness_port_only => "readiness-port-only",
    grace_period_too_short => "grace-period-too-short",
    prestop_sleep_only => "prestop-sleep-only",
}

#[test]
fn every_covered_rule_has_a_test() {
    let tested: BTreeSet<&str> = TESTED.iter().copied().collect();
    let covered: BTreeSet<&str> = covered().into_iter().collect();
    assert_eq!(
        tested, covered,
        "rule_tests! in cel_fixtures.rs lists exactly the rules policies::vap::coverage() covers"
    );
}

/// Under `--mode enforce`, an object is denied only where the linter
/// denies it (by a covered finding), and wherever it denies it by one the
/// export carries at a severity it settles; a good fixture is never denied
/// by its own rule (it may be by another's: `probe-invalid`'s good
/// fixtures leave an undeclared port name to `probe-port-unknown`); and
/// each rule the deny policy carries denies its bad fixtures.
#[test]
fn under_enforce_an_object_is_denied_only_where_the_linter_denies_it() {
    let Some(judged) = evaluation() else { return };
    let policy = Policy::pack("default").expect("the default pack");
    let (mut denied, mut named, mut expected, mut differences) = (0, BTreeSet::new(), BTreeSet::new(), Vec::new());
    for j in judged {
        let refused = !j.denied.is_empty();
        denied += usize::from(refused);
        let (may, must) = denies(&j.object, &policy);
        if refused && !may || must && !refused {
            differences.push(format!("{}: denied {:?}, the linter denies it: {may}", j.label(), j.denied));
        }
        let own = j.denied.iter().any(|(rule, _)| rule == j.rule);
        let good = Path::new(&j.file).file_name().is_some_and(|n| n.to_string_lossy().starts_with("good"));
        if good && own {
            differences.push(format!("{}: a good fixture denied by its rule: {:?}", j.label(), j.denied));
        } else if good && refused {
            eprintln!(
                "{}: a good fixture of {} denied by another rule, as the linter denies it: {:?}",
                j.label(),
                j.rule,
                j.denied
            );
        }
        if good {
            continue;
        }
        named.extend(own.then_some(j.rule));
        let report = lint_object(&j.object, &Batch::default(), &policy).ok().flatten();
        let by_own = report
            .iter()
            .flat_map(|r| &r.findings)
            .any(|f| f.rule == j.rule && policy.denies(f.severity) && carried(f, &j.object, &policy));
        expected.extend((by_own && must).then_some(j.rule));
    }
    eprintln!("enforce: {} objects, {denied} denied; bad fixtures denied by their rule: {named:?}", judged.len());
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    let unnamed: Vec<_> = expected.difference(&named).collect();
    assert!(unnamed.is_empty(), "rules whose bad fixtures the linter denies, which deny none: {unnamed:?}");
    assert!(named.len() >= 5, "bad fixtures denied by their own rule: {named:?}");
}
