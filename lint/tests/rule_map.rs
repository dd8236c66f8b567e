//! Each rule's file points at its tests: the `Tests:` paragraph of its
//! module doc names its fixture folder, their snapshot, its fix fixture and
//! snapshot when it has a fix, and its CEL when it has one. This keeps that
//! map true: a rule without the paragraph, a path in it that does not
//! exist, or a place of the rule's that it leaves out fails here.

use std::path::Path;

use lifeguard_e2e::repo_root;
use policies::rules::{FixAvailability, RULES};

/// The backticked words of the `Tests:` paragraph of a module doc (its
/// `//!` lines from `//! Tests:` to the next blank one), or `None`.
fn tests_paragraph(source: &str) -> Option<Vec<String>> {
    let doc: Vec<&str> = source.lines().map_while(|l| l.strip_prefix("//!")).map(str::trim).collect();
    let start = doc.iter().position(|l| l.starts_with("Tests:"))?;
    let text = doc[start..].iter().take_while(|l| !l.is_empty()).copied().collect::<Vec<_>>().join(" ");
    Some(text.split('`').skip(1).step_by(2).map(str::to_owned).collect())
}

/// The paths a rule's `Tests:` paragraph must name, from where the tests
/// look for them (lint/tests/rule_fixtures.rs, lint/tests/fix_cli.rs).
fn expected(rule: &str, fixable: bool, root: &Path) -> Vec<String> {
    let mut paths =
        vec![format!("lint/tests/fixtures/rules/{rule}/"), format!("lint/tests/snapshots/rule_fixtures__{rule}.snap")];
    if fixable {
        paths.push(format!("lint/tests/fix_fixtures/{rule}.yaml"));
        paths.push(format!("lint/tests/snapshots/fix_cli__{rule}.snap"));
    }
    let cel = format!("policies/src/vap/{}.rs", rule.replace('-', "_"));
    if root.join(&cel).is_file() {
        paths.push(cel);
    }
    paths
}

#[test]
fn every_rule_file_names_its_tests_and_every_path_it_names_exists() {
    let root = repo_root();
    let mut problems = Vec::new();
    for rule in RULES {
        let file = format!("policies/src/rules/{}.rs", rule.name.replace('-', "_"));
        let source = std::fs::read_to_string(root.join(&file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let Some(named) = tests_paragraph(&source) else {
            problems.push(format!("{file}: no `Tests:` paragraph in its module doc"));
            continue;
        };
        for path in named.iter().filter(|p| p.contains('/')) {
            if !root.join(path).exists() {
                problems.push(format!("{file}: `Tests:` names {path}, which does not exist"));
            }
        }
        let fixable = matches!(rule.fix, FixAvailability::Fix(_));
        for path in expected(rule.name, fixable, &root) {
            if !named.contains(&path) {
                problems.push(format!("{file}: `Tests:` leaves out {path}"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_paragraph_is_read_from_the_module_doc_alone() {
    let source = "//! `r`: what.\n//!\n//! Tests: `a/b`,\n//! `c/d`.\n//!\n//! `not/this`\nuse x;\n//! Tests: `e/f`\n";
    assert_eq!(tests_paragraph(source), Some(vec!["a/b".to_owned(), "c/d".to_owned()]));
    assert_eq!(tests_paragraph("//! `r`: what.\nuse x;\n//! Tests: `a/b`\n"), None);
}
