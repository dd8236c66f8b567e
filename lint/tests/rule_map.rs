//! A rule is one folder, `policies/src/rules/<rule>/` (its name in snake
//! case): `mod.rs` (its doc, check, fix and unit tests), `cel.rs` when the
//! exports carry it, `fixtures/` (`bad*.yaml`, `good*.yaml`, `fix.yaml`
//! when it has a fix) and `snapshots/` (the fixtures' findings, the fix's
//! diff). The `Tests:` paragraph of `mod.rs`'s module doc names them and
//! the tests elsewhere that read them. This keeps that map true: a rule
//! without the paragraph, a path in it that does not exist, a place of the
//! rule's that it leaves out, or a file in the folder that is none of these
//! fails here.

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

/// A rule's folder, from the repository's root.
fn folder(rule: &str) -> String {
    format!("policies/src/rules/{}", rule.replace('-', "_"))
}

/// The paths a rule's `Tests:` paragraph must name, from where the tests
/// look for them (lint/tests/rule_fixtures.rs, lint/tests/fix_cli.rs).
fn expected(rule: &str, fixable: bool, root: &Path) -> Vec<String> {
    let folder = folder(rule);
    let mut paths = vec![format!("{folder}/fixtures/"), format!("{folder}/snapshots/rule_fixtures__{rule}.snap")];
    if fixable {
        paths.push(format!("{folder}/fixtures/fix.yaml"));
        paths.push(format!("{folder}/snapshots/fix_cli__{rule}.snap"));
    }
    let cel = format!("{folder}/cel.rs");
    if root.join(&cel).is_file() {
        paths.push(cel);
        paths.push("tests/tests/cel_fixtures.rs".to_owned());
        paths.push("tests/tests/cluster_vap/".to_owned());
    }
    paths
}

/// Whether `name` is a file a rule's folder may hold: its code (`mod.rs`,
/// `cel.rs`, and the modules `mod.rs` declares), its fixtures, its snapshots.
fn belongs(name: &str, source: &str) -> bool {
    let module = name.strip_suffix(".rs").map(|m| format!("mod {m};"));
    matches!(name, "mod.rs" | "fixtures" | "snapshots") || module.is_some_and(|m| source.contains(&m))
}

#[test]
fn every_rule_file_names_its_tests_and_every_path_it_names_exists() {
    let root = repo_root();
    let mut problems = Vec::new();
    for rule in RULES {
        let file = format!("{}/mod.rs", folder(rule.name));
        let source = std::fs::read_to_string(root.join(&file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        for entry in std::fs::read_dir(root.join(folder(rule.name))).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !belongs(&name, &source) {
                problems.push(format!("{}/{name}: neither the rule's code, fixtures nor snapshots", folder(rule.name)));
            }
        }
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
