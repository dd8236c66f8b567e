//! What a custom kind's pod templates get from `export vap`, template by
//! template: which pair of policies judges a template (`NAME-deny-K`,
//! `NAME-warn-K`), what that pair flagged in a run, and what the linter
//! finds in the template, compared.

use std::collections::BTreeSet;

use lifeguard_e2e::cluster::Run;
use policies::Policy;
use serde_json::Value;

use lifeguard_e2e::vap_parity::{Linted, carried, covered, in_template, workload_of};

use crate::support::flagged;

/// The suffix of the pair that judges a custom kind's template (`""`,
/// `-2`, ...: its place among its kind's templates not behind a `*`), or
/// `None` for one the export does not judge.
pub(crate) fn slot_suffix(object: &Value, template: &str) -> Option<String> {
    let kind = policies::model::custom_pod_kind(object["kind"].as_str()?, object["apiVersion"].as_str()?)?;
    let reached: Vec<&str> = kind.templates.iter().map(|t| t.template).filter(|t| !t.contains('*')).collect();
    let i = reached.iter().position(|t| *t == template)?;
    Some(if i == 0 { String::new() } else { format!("-{}", i + 1) })
}

/// Each judged template of `object` gets the linter's findings in it from
/// the pair that reads it, and none from another: what differs.
pub(crate) fn template_differences(run: &Run, object: &Value, policy: &Policy) -> Vec<String> {
    let mut out = Vec::new();
    for w in policies::model::Workload::all_from_object(object).unwrap_or_default() {
        let Some(suffix) = slot_suffix(object, &w.template_pointer) else { continue };
        let (cel, lint) = (flagged_by(run, &suffix), linted_in(object, policy, &w.template_pointer));
        if !lint.agrees(&cel) {
            out.push(format!(
                "{} {}: lifeguard-*{suffix} {cel:?}, lint {lint:?}",
                object["metadata"]["name"], w.template_pointer
            ));
        }
    }
    out
}

/// Asserts each `(pair's suffix, rule, container)` is flagged in the run.
pub(crate) fn assert_flagged(file: &str, run: &Run, expected: &[(&str, &str, &str)]) {
    let seen: Vec<(&str, String, String)> = crate::support::SLOT_SUFFIXES
        .iter()
        .flat_map(|suffix| flagged_by(run, suffix).into_iter().map(move |(r, c)| (*suffix, r, c)))
        .collect();
    for (suffix, rule, container) in expected {
        let hit = seen.iter().any(|(s, r, c)| s == suffix && r == rule && c == container);
        assert!(hit, "{file}: lifeguard-*{suffix} flags {rule} on {container:?}: {seen:?}");
    }
}

/// What the pair of `suffix` flagged in a run: its lines of the run alone.
pub(crate) fn flagged_by(run: &Run, suffix: &str) -> BTreeSet<(String, String)> {
    let mine = |l: &&str| {
        ["deny", "warn"].iter().any(|g| l.contains(&format!("ValidatingAdmissionPolicy 'lifeguard-{g}{suffix}'")))
    };
    let stderr: Vec<&str> = run.stderr.lines().filter(mine).collect();
    flagged(&Run { stderr: stderr.join("\n"), ..run.clone() })
}

/// What `lifeguard lint` finds in the template at `template`, of the covered rules.
pub(crate) fn linted_in(object: &Value, policy: &Policy, template: &str) -> Linted {
    let report = policies::lint_object(object, &policies::Batch::default(), policy).ok().flatten();
    let covered = covered();
    let mut out = Linted::default();
    for f in report.into_iter().flat_map(|r| r.findings).filter(|f| covered.contains(&f.rule.as_str())) {
        // A finding outside both templates (an annotation of the object) is each template's.
        let all = policies::model::Workload::all_from_object(object).unwrap_or_default();
        let outside = !all.iter().any(|w| in_template(&f.pointer, w));
        if !outside && workload_of(&f, object, policy).is_none_or(|w| w.template_pointer != template) {
            continue;
        }
        let key = (f.rule.clone(), f.container.clone().unwrap_or_default());
        if carried(&f, object, policy) {
            out.carried.insert(key.clone());
        }
        out.all.insert(key);
    }
    out
}
