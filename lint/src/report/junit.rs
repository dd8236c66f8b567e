//! `--format junit`: JUnit XML for CI systems that render test reports. One
//! test suite per file (the Helm template for `helm template` output), one
//! test case per object and rule the policy runs: it fails when the object
//! has a finding of that rule at or above `--fail-on`, so the report agrees
//! with the exit code; findings below it are kept in the passing case's
//! `system-out`.

use std::collections::{BTreeMap, HashMap};

use policies::rules::RULES;
use policies::{Policy, Severity};
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};

use crate::outcome::{InputError, Located, Outcome};

/// The rules a policy runs, in registry order, then its custom rules: one
/// test case each per object.
pub fn rules_run(policy: &Policy) -> Vec<String> {
    RULES
        .iter()
        .map(|r| r.name)
        .chain(policy.custom_rule_names())
        .filter(|name| policy.is_enabled(name))
        .map(str::to_owned)
        .collect()
}

/// Renders the outcome as a JUnit XML report, with a trailing newline.
/// `rules` are the rules that ran ([`rules_run`]); a finding of any other
/// rule still gets its case. `fail_on` gives the failing severity of a
/// finding's file (its policy's `denySeverity`, or `--fail-on`).
pub fn render(out: &Outcome, rules: &[String], fail_on: &dyn Fn(&str) -> Option<Severity>) -> String {
    let mut rules: Vec<&str> = rules.iter().map(String::as_str).collect();
    for l in &out.findings {
        if !rules.contains(&l.finding.rule.as_str()) {
            rules.push(&l.finding.rule);
        }
    }
    // A cluster's objects have no position: their label tells them apart.
    let mut by_object: HashMap<(&str, u32, u32, String), Vec<&Located>> = HashMap::new();
    for l in &out.findings {
        by_object.entry((&*l.file, l.object_at.line, l.object_at.column, l.object())).or_default().push(l);
    }
    let mut suites = Suites::default();
    for object in &out.linted {
        let key = (&*object.file, object.at.line, object.at.column, object.object());
        let findings = by_object.remove(&key).unwrap_or_default();
        let file = object.template.as_ref().map_or(&*object.file, |t| t.path.as_str());
        suites.get(file).add_test_cases(cases(&object.object(), &rules, &findings, fail_on));
    }
    // Findings of objects not in `linted` (none are expected) still get a case.
    let mut rest: Vec<&Located> = by_object.into_values().flatten().collect();
    rest.sort_by_key(|l| (l.file.clone(), l.line, l.column));
    for l in rest {
        let cases = cases(&l.object(), &[l.finding.rule.as_str()], &[l], fail_on);
        suites.get(l.shown_at().0).add_test_cases(cases);
    }
    if !out.errors.is_empty() {
        let mut errors = TestSuite::new("lifeguard input errors");
        errors.add_test_cases(out.errors.iter().map(input_error));
        suites.list.push(errors);
    }
    let mut report = Report::new("lifeguard");
    report.add_test_suites(suites.list);
    let mut xml = report.to_string().unwrap_or_default();
    if !xml.ends_with('\n') {
        xml.push('\n');
    }
    xml
}

/// Test suites in the order their files first appear.
#[derive(Default)]
struct Suites {
    list: Vec<TestSuite>,
    index: HashMap<String, usize>,
}

impl Suites {
    fn get(&mut self, file: &str) -> &mut TestSuite {
        let i = match self.index.get(file) {
            Some(&i) => i,
            None => {
                self.list.push(TestSuite::new(file));
                self.index.insert(file.to_owned(), self.list.len() - 1);
                self.list.len() - 1
            }
        };
        &mut self.list[i]
    }
}

/// One case per rule for an object.
fn cases(
    object: &str,
    rules: &[&str],
    findings: &[&Located],
    fail_on: &dyn Fn(&str) -> Option<Severity>,
) -> Vec<TestCase> {
    let mut by_rule: BTreeMap<&str, Vec<&Located>> = BTreeMap::new();
    for l in findings {
        by_rule.entry(l.finding.rule.as_str()).or_default().push(l);
    }
    rules
        .iter()
        .map(|&rule| {
            let found = by_rule.get(rule).map(Vec::as_slice).unwrap_or_default();
            let failing: Vec<&&Located> =
                found.iter().filter(|l| fail_on(&l.file).is_some_and(|min| l.finding.severity >= min)).collect();
            let details: String = found.iter().map(|l| plain(l)).collect();
            let status = match failing.first() {
                Some(first) => {
                    let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    let message = if failing.len() == 1 {
                        first.finding.located_message().into_owned()
                    } else {
                        format!("{} findings; first: {}", failing.len(), first.finding.located_message())
                    };
                    status
                        .set_message(message)
                        .set_type(first.finding.severity.as_str())
                        .set_description(details.clone());
                    status
                }
                None => TestCaseStatus::success(),
            };
            let mut case = TestCase::new(rule, status);
            case.set_classname(object);
            if failing.is_empty() && !details.is_empty() {
                case.set_system_out(details);
            }
            case
        })
        .collect()
}

/// A finding as plain text: where, what, and the hint.
fn plain(l: &Located) -> String {
    let f = &l.finding;
    let (file, line) = l.shown_at();
    let mut s =
        format!("{file}:{line}:{} {}[{}] {}\n  {}\n", l.column, f.severity, f.rule, l.object(), f.located_message());
    if !f.help.is_empty() {
        s.push_str(&format!("  help: {}\n", f.help));
    }
    if let Some(fix) = f.automatic_fix() {
        s.push_str(&format!("  fix (`lifeguard fix`): {}\n", fix.description));
    }
    if let Some((label, note)) = crate::report::text::helm_note(l) {
        s.push_str(&format!("  {label}: {note}\n"));
    }
    s
}

fn input_error(e: &InputError) -> TestCase {
    let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
    status.set_message(e.message.clone()).set_type("input error").set_description(e.to_string());
    let mut case = TestCase::new(e.file.clone(), status);
    case.set_classname("input");
    case
}
