//! `lifeguard export vap` through the real binary: the objects for each
//! built-in pack (snapshots: the export is deterministic), the same in
//! every mode but for the bindings' actions, `--explain`
//! naming every rule, `--kube-version`, and usage errors. That the API
//! server accepts and enforces them is `tests/tests/cluster_vap/`.

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

/// The pairs an export writes: the built-in kinds' and a pair per further
/// pod template of the known custom kinds (KServe's four components).
const PAIRS: usize = 4;

/// `out` with each binding's action as enforce writes it: Deny for each
/// `-deny` one, Warn for each `-warn` one (they alternate).
fn actions_as_enforce(out: &str) -> String {
    let mut parts = out.split("validationActions:\n    - ");
    let mut text = parts.next().unwrap_or_default().to_owned();
    for (i, rest) in parts.enumerate() {
        let after = rest.split_once('\n').map_or("", |(_, after)| after);
        text.push_str(&format!("validationActions:\n    - {}\n{after}", if i % 2 == 0 { "Deny" } else { "Warn" }));
    }
    text
}

#[test]
fn modes_choose_the_bindings_actions_and_nothing_else() {
    // The same objects in every mode, so an apply of one replaces the
    // other's: only the header's mode, the bindings' actions and their
    // `lifeguard.dev/mode` differ from enforce's.
    let enforce = export(&["--policy", "default"]).stdout;
    assert_eq!(enforce.matches("kind: ValidatingAdmissionPolicy\n").count(), 2 * PAIRS, "{enforce}");
    for (mode, deny, warn) in [("enforce", "Deny", "Warn"), ("warn", "Warn", "Warn"), ("audit", "Audit", "Audit")] {
        let out = export(&["--policy", "default", "--mode", mode]).stdout;
        let actions: Vec<&str> =
            out.split("validationActions:\n    - ").skip(1).filter_map(|rest| rest.lines().next()).collect();
        assert_eq!(actions, [deny, warn].repeat(PAIRS), "{mode}");
        let as_enforce = actions_as_enforce(
            &out.replace(&format!("(mode {mode},"), "(mode enforce,")
                .replace(&format!("lifeguard.dev/mode: {mode}"), "lifeguard.dev/mode: enforce"),
        );
        assert_eq!(as_enforce, enforce, "{mode}");
    }
    let audit = export(&["--policy", "default", "--mode", "audit", "--name", "probes"]).stdout;
    for name in ["probes-deny", "probes-warn", "probes-deny-2", "probes-warn-4"] {
        assert_eq!(audit.matches(&format!("  name: {name}\n")).count(), 2, "{audit}");
    }
    assert_eq!(audit.matches("    lifeguard.dev/export: probes\n").count(), 4 * PAIRS, "{audit}");
    assert!(audit.contains("kubectl delete validatingadmissionpolicybindings,validatingadmissionpolicies -l lifeguard.dev/export=probes\n"), "{audit}");
    // Which custom kinds' templates are judged, by which objects, and which are not, and why.
    assert!(
        audit.contains(
            "# Judged: LeaderWorkerSet (leaderworkerset.x-k8s.io) /spec/leaderWorkerTemplate/workerTemplate (by probes-deny-2, probes-warn-2).\n"
        ),
        "{audit}"
    );
    assert!(
        audit.contains(
            "# Not judged: RayCluster (ray.io) /spec/workerGroupSpecs/*/template (behind a `*`: any number of pod specs"
        ),
        "{audit}"
    );
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
    // The name is a label's value too: 63 characters at most.
    assert_eq!(export(&["--name", &"a".repeat(63)]).code, 0);
    let r = export(&["--name", &"a".repeat(64)]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("must be 1 to 63 characters"), "{}", r.stderr);
    let r = export(&["--policy", "no-such-pack-or-file"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

#[test]
fn the_kube_version_is_1_34_or_later_and_changes_only_the_header_today() {
    let oldest = export(&["--policy", "default"]);
    assert!(oldest.stdout.contains("Kubernetes 1.34 or later"), "{}", oldest.stdout);
    assert_eq!(export(&["--policy", "default", "--kube-version", "1.34"]).stdout, oldest.stdout);
    // Every CEL function the export calls is admitted from 1.30 on: nothing
    // but the header differs up to the newest release.
    for version in ["1.35", "1.36", "v1.37.2"] {
        let out = export(&["--policy", "default", "--kube-version", version]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let minor = version.trim_start_matches('v').split('.').take(2).collect::<Vec<_>>().join(".");
        assert_eq!(
            out.stdout.replace(&format!("Kubernetes {minor} or later"), "Kubernetes 1.34 or later"),
            oldest.stdout
        );
    }
    let r = export(&["--kube-version", "1.33"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("Kubernetes 1.33 is older than 1.34, the oldest release"), "{}", r.stderr);
    let r = export(&["--kube-version", "latest"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("\"latest\" is not a Kubernetes version: write MAJOR.MINOR"), "{}", r.stderr);
}
