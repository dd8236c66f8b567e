//! `lifeguard export vap` through the real binary: the objects for each
//! built-in pack (snapshots: the export is deterministic), `--explain`
//! naming every rule, and usage errors. That the API server accepts and
//! enforces them is `tests/tests/cluster_vap/`.

mod support;

use std::path::Path;

fn export(args: &[&str]) -> support::Run {
    let mut all = vec!["export", "vap"];
    all.extend(args);
    let r = support::lifeguard(Path::new(env!("CARGO_MANIFEST_DIR")), &all, None, &[("LIFEGUARD_POLICY", None)]);
    r.assert_no_panic();
    r
}

#[test]
fn each_pack_exports_the_same_objects_every_time() {
    for pack in ["default", "strict", "gpu-serving"] {
        let first = export(&["--policy", pack, "--mode", "enforce"]);
        assert_eq!(first.code, 0, "{}", first.stderr);
        assert_eq!(export(&["--policy", pack, "--mode", "enforce"]).stdout, first.stdout, "deterministic");
        insta::assert_snapshot!(format!("export_vap_{pack}"), first.stdout);
    }
}

#[test]
fn modes_choose_the_actions() {
    let warn = export(&["--policy", "default", "--mode", "warn"]).stdout;
    assert_eq!(warn.matches("kind: ValidatingAdmissionPolicy\n").count(), 1);
    assert!(warn.contains("validationActions:\n    - Warn"), "{warn}");
    let audit = export(&["--policy", "default", "--mode", "audit", "--name", "probes"]).stdout;
    assert!(audit.contains("name: probes\n") && audit.contains("- Audit"), "{audit}");
    let enforce = export(&["--policy", "default"]).stdout;
    assert!(enforce.contains("name: lifeguard-deny") && enforce.contains("name: lifeguard-warn"), "{enforce}");
}

#[test]
fn explain_lists_every_rule_and_why() {
    let r = export(&["--explain"]);
    assert_eq!(r.code, 0);
    for rule in policies::rules::RULES {
        assert!(r.stdout.lines().any(|l| l.starts_with(&format!("{}: ", rule.name))), "{}: {}", rule.name, r.stdout);
    }
    assert!(r.stdout.contains("probe-port-unknown: covered"), "{}", r.stdout);
    assert!(r.stdout.contains("readiness-probe-missing: not covered: needs the Services"), "{}", r.stdout);
    assert!(
        r.stdout.contains("probe-invalid: partly covered: only an exec command whose program is empty"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_bad_name_or_policy_is_a_usage_error() {
    let r = export(&["--name", "Not_A_Name"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--name \"Not_A_Name\""), "{}", r.stderr);
    let r = export(&["--policy", "no-such-pack-or-file"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}
