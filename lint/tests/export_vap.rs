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

/// The longest line an export may have, to be reviewed in a diff.
const LINE: usize = 200;

#[test]
fn every_pack_s_export_is_laid_out_in_lines_a_diff_shows_whole() {
    for pack in ["default", "strict", "gpu-serving"] {
        for ratchet in ["--ratchet=true", "--ratchet=false"] {
            let out = export(&["--policy", pack, ratchet]);
            assert_eq!(out.code, 0, "{}", out.stderr);
            let long: Vec<&str> = out.stdout.lines().filter(|l| l.chars().count() > LINE).collect();
            assert!(long.is_empty(), "{pack} {ratchet}: {long:#?}");
            // The CEL itself is on many lines, each validation's message naming its rule and its docs.
            assert!(out.stdout.lines().count() > 10_000, "{pack}");
            let messages = out.stdout.matches("messageExpression: |-\n        'probe-port-unknown: '\n").count();
            assert_eq!(messages, 4, "{pack}: one per template slot's NAME-deny");
            assert_eq!(
                out.stdout
                    .matches(
                        "' (https://github.com/lifeguard-dev/lifeguard/blob/main/docs/rules.md#probe-port-unknown)'"
                    )
                    .count(),
                4,
                "{pack}"
            );
        }
    }
}

#[test]
fn the_ratchet_is_on_by_default_and_ratchet_false_judges_the_whole_object() {
    let on = export(&["--policy", "default"]);
    assert_eq!(export(&["--policy", "default", "--ratchet"]).stdout, on.stdout);
    assert!(
        on.stdout.contains(
            "    - expression: \"variables.probePortUnknown[0].all(n, n in variables.oldProbePortUnknown)\"\n"
        )
    );
    assert!(
        on.stdout
            .contains("# Ratcheted: on UPDATE, lifeguard-deny judges only the findings the old object did not have")
    );
    let off = export(&["--policy", "default", "--ratchet=false"]);
    assert_eq!(off.code, 0, "{}", off.stderr);
    assert!(off.stdout.contains("    - expression: \"size(variables.probePortUnknown[0]) == 0\"\n"));
    assert!(
        !off.stdout.contains("[object, oldObject]") && !off.stdout.contains("variables.old"),
        "no check reads the old object"
    );
    assert!(
        off.stdout.contains("# Not ratcheted (--ratchet=false): on UPDATE, lifeguard-deny judges the whole object.")
    );
    // NAME-warn is the same either way: it never denies, and warns of every finding.
    let warn = |out: &str| out.split("\n---\n").nth(3).map(str::to_owned);
    assert_eq!(warn(&on.stdout), warn(&off.stdout));
    assert!(
        warn(&on.stdout).is_some_and(|w| w.contains("name: lifeguard-warn\n") && !w.contains("[object, oldObject]"))
    );
    let r = export(&["--ratchet=maybe"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

#[test]
fn stderr_says_what_each_binding_does_and_where() {
    let out = export(&["--policy", "default", "--mode", "enforce"]);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", out.stderr);
    assert!(
        lines[0].starts_with(
            "lifeguard: binds lifeguard-deny, lifeguard-deny-2, lifeguard-deny-3, lifeguard-deny-4: Deny (ratcheted: \
             on UPDATE only a finding the old object did not have) in the namespaces where \
             kubernetes.io/metadata.name NotIn [kube-system]: probe-invalid, probe-port-unknown, "
        ),
        "{}",
        out.stderr
    );
    assert!(lines[1].starts_with("lifeguard: binds lifeguard-warn, lifeguard-warn-2, lifeguard-warn-3, lifeguard-warn-4: Warn in the namespaces where kubernetes.io/metadata.name NotIn [kube-system]: "), "{}", out.stderr);
    assert!(lines[1].contains("liveness-too-aggressive") && !lines[1].contains("probe-port-unknown"), "{}", out.stderr);
    let audit = export(&["--policy", "default", "--mode", "audit", "--ratchet=false"]);
    assert!(audit.stderr.contains("lifeguard-deny-4: Audit in the namespaces"), "{}", audit.stderr);
    assert!(audit.stderr.contains("lifeguard-warn-4: Audit in the namespaces"), "{}", audit.stderr);
    // The objects go to stdout alone.
    assert!(!out.stdout.contains("lifeguard: binds"));
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
        assert!(out.starts_with(&format!("# Generated by `lifeguard export vap` from pack default (mode {mode},")));
        // The header's lines are filled: compared from the objects on.
        let objects =
            |text: &str| text.split_once("\n---\n").map(|(_, objects)| objects.to_owned()).unwrap_or_default();
        let as_enforce = actions_as_enforce(
            &objects(&out).replace(&format!("lifeguard.dev/mode: {mode}"), "lifeguard.dev/mode: enforce"),
        );
        assert_eq!(as_enforce, objects(&enforce), "{mode}");
    }
    let audit = export(&["--policy", "default", "--mode", "audit", "--name", "probes"]).stdout;
    for name in ["probes-deny", "probes-warn", "probes-deny-2", "probes-warn-4"] {
        assert_eq!(audit.matches(&format!("  name: {name}\n")).count(), 2, "{audit}");
    }
    assert_eq!(audit.matches("    lifeguard.dev/export: probes\n").count(), 4 * PAIRS, "{audit}");
    assert!(audit.contains("kubectl delete validatingadmissionpolicybindings,validatingadmissionpolicies -l lifeguard.dev/export=probes\n"), "{audit}");
    // Which custom kinds' templates are judged, by which objects, and which
    // are not, and why (each a comment, its lines filled).
    let audit = audit.replace("\n#   ", " ");
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

/// What `kubectl apply` keeps of an object in its
/// `last-applied-configuration` annotation is the whole object, and the API
/// server refuses annotations over 256 KiB in all: each exported object
/// stays under this, leaving room for a policy's own exemptions.
const APPLIED: usize = 230 * 1024;

#[test]
fn every_object_fits_what_kubectl_apply_keeps_of_it() {
    for pack in ["default", "strict", "gpu-serving"] {
        for ratchet in ["--ratchet=true", "--ratchet=false"] {
            let out = export(&["--policy", pack, ratchet]);
            assert_eq!(out.code, 0, "{}", out.stderr);
            let (docs, errors) = lifeguard::input::parse_stream(&out.stdout, &lifeguard::input::Limits::default());
            assert!(errors.is_none(), "{errors:?}");
            assert!(docs.len() >= 8, "{pack}: {} objects", docs.len());
            for doc in &docs {
                let size = doc.value.to_string().len();
                let name = doc.value.pointer("/metadata/name").and_then(|n| n.as_str()).unwrap_or_default();
                assert!(size < APPLIED, "{pack} {ratchet}: {name} is {size} bytes of JSON");
            }
        }
    }
}
