//! The rule table of docs/rules.md is generated from the registry, which is
//! also what `lifeguard rules` prints; this test keeps the three in step.

use std::path::PathBuf;

use policies::rules::{FixAvailability, RULES};

fn table() -> String {
    let mut t = String::from(
        "<!-- rules-table: checked by `cargo test -p lifeguard --test readme` -->\n\
         | rule | default severity | fix | what it finds |\n|---|---|---|---|\n",
    );
    for r in RULES {
        let fix = if matches!(r.fix, FixAvailability::Fix(_)) { "yes" } else { "no" };
        // The anchor is where `lifeguard lsp`'s diagnostics link each rule.
        t.push_str(&format!("| <a id=\"{0}\"></a>`{0}` | {1} | {fix} | {2} |\n", r.name, r.severity, r.summary));
    }
    t.push_str("<!-- /rules-table -->");
    t
}

#[test]
fn readme_rule_table_matches_the_registry() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/rules.md");
    let readme = std::fs::read_to_string(&path).expect("docs/rules.md");
    let start = readme.find("<!-- rules-table").expect("docs/rules.md has a rules-table block");
    let end_marker = "<!-- /rules-table -->";
    let end = readme.find(end_marker).expect("docs/rules.md closes the rules-table block") + end_marker.len();
    let expected = table();
    if std::env::var_os("LIFEGUARD_BLESS").is_some() {
        std::fs::write(&path, format!("{}{expected}{}", &readme[..start], &readme[end..]))
            .expect("write docs/rules.md");
        return;
    }
    assert_eq!(&readme[start..end], expected, "docs/rules.md rule table is stale: rerun with LIFEGUARD_BLESS=1");
}

#[test]
fn rules_command_lists_every_registered_rule() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lifeguard")).arg("rules").output().expect("run lifeguard");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), RULES.len());
    for r in RULES {
        assert!(
            text.lines().any(|l| l.starts_with(r.name) && l.contains(r.severity.as_str()) && l.contains(r.summary)),
            "{} missing from `lifeguard rules`",
            r.name
        );
    }
}
