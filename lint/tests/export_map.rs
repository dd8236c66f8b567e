//! `lifeguard export map` through the real binary: the objects for each
//! built-in pack (snapshots: the export is deterministic), `--explain`
//! naming every rule, the API version by `--kube-version` and `--map-api`,
//! and usage errors. That the API server accepts them and stores what
//! `lifeguard fix` makes is `tests/tests/cluster_map/`.

mod support;

use std::path::Path;

fn export(args: &[&str]) -> support::Run {
    let mut all = vec!["export", "map"];
    all.extend(args);
    let r = support::lifeguard(Path::new(env!("CARGO_MANIFEST_DIR")), &all, None, &[("LIFEGUARD_POLICY", None)]);
    r.assert_no_panic();
    r
}

#[test]
fn each_pack_exports_the_same_objects_every_time() {
    for pack in ["default", "strict", "gpu-serving"] {
        let first = export(&["--policy", pack, "--kube-version", "1.36"]);
        assert_eq!(first.code, 0, "{}", first.stderr);
        assert_eq!(export(&["--policy", pack, "--kube-version", "1.36"]).stdout, first.stdout, "deterministic");
        insta::assert_snapshot!(format!("export_map_{pack}"), first.stdout);
    }
}

#[test]
fn before_1_36_the_beta_api_must_be_asked_for() {
    // The default release, 1.34, serves only v1beta1, behind switches.
    let r = export(&["--policy", "default"]);
    assert_eq!(r.code, 2);
    assert_eq!(r.stdout, "");
    for part in [
        "Kubernetes 1.34 serves MutatingAdmissionPolicy only as admissionregistration.k8s.io/v1beta1",
        "MutatingAdmissionPolicy=true",
        "--runtime-config=admissionregistration.k8s.io/v1beta1=true",
        "--map-api v1beta1",
    ] {
        assert!(r.stderr.contains(part), "{part}: {}", r.stderr);
    }
    let r = export(&["--policy", "default", "--kube-version", "1.35", "--map-api", "v1"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("served from Kubernetes 1.36, not by 1.35"), "{}", r.stderr);
    let beta = export(&["--policy", "default", "--map-api", "v1beta1"]);
    assert_eq!(beta.code, 0, "{}", beta.stderr);
    // NAME-fix and NAME-fix-2 (a LeaderWorkerSet's workers), each with its binding.
    assert_eq!(beta.stdout.matches("apiVersion: admissionregistration.k8s.io/v1beta1\n").count(), 4, "{}", beta.stdout);
    // The same objects but for the API version and the header.
    let v1 = export(&["--policy", "default", "--kube-version", "1.36"]).stdout;
    let body = |text: &str| text.split_once("\n---\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    assert_eq!(body(&beta.stdout).replace("/v1beta1\n", "/v1\n"), body(&v1));
}

#[test]
fn explain_lists_every_rule_and_why() {
    let r = export(&["--explain"]);
    assert_eq!(r.code, 0);
    for rule in policies::rules::RULES {
        assert!(r.stdout.lines().any(|l| l.starts_with(&format!("{}: ", rule.name))), "{}: {}", rule.name, r.stdout);
    }
    assert!(r.stdout.contains("liveness-too-aggressive: carried: "), "{}", r.stdout);
    assert!(r.stdout.contains("startup-probe-missing: partly carried: "), "{}", r.stdout);
    assert!(
        r.stdout.contains("probe-port-unknown: not carried: no automatic fix (lifeguard cannot tell"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("prestop-bridge-missing: not carried: its fix depends on the Services"), "{}", r.stdout);
}

#[test]
fn a_policy_with_a_rule_disabled_says_it_is_left_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("policy.yaml");
    std::fs::write(
        &file,
        "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\nrules:\n  liveness-too-aggressive: {enabled: false}\n",
    )
    .expect("write");
    let r = export(&["--policy", &file.display().to_string(), "--kube-version", "1.37"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("# Left out: liveness-too-aggressive (disabled by the policy).\n"), "{}", r.stdout);
    assert!(!r.stdout.contains("variables.fixLivenessTooAggressive"), "{}", r.stdout);
}

#[test]
fn a_bad_name_version_or_policy_is_a_usage_error() {
    let r = export(&["--name", "Not_A_Name", "--kube-version", "1.37"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--name \"Not_A_Name\""), "{}", r.stderr);
    let named = export(&["--name", "probes", "--kube-version", "1.37"]);
    assert_eq!(named.stdout.matches("  name: probes-fix\n").count(), 2, "{}", named.stdout);
    assert_eq!(named.stdout.matches("  name: probes-fix-2\n").count(), 2, "{}", named.stdout);
    // Which custom kinds' templates it fixes, and which not, and why.
    assert!(
        named.stdout.contains(
            "# Fixed: LeaderWorkerSet (leaderworkerset.x-k8s.io) /spec/leaderWorkerTemplate/workerTemplate (by probes-fix-2).\n"
        ),
        "{}",
        named.stdout
    );
    assert!(
        named.stdout.contains(
            "# Not fixed: InferenceService (serving.kserve.io) /spec/predictor (export map fixes a custom kind only once"
        ),
        "{}",
        named.stdout
    );
    assert!(named.stdout.contains("policyName: probes-fix\n"), "{}", named.stdout);
    assert!(
        named.stdout.contains(
            "kubectl delete mutatingadmissionpolicybindings,mutatingadmissionpolicies -l lifeguard.dev/export=probes\n"
        ),
        "{}",
        named.stdout
    );
    let r = export(&["--kube-version", "1.30"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("Kubernetes 1.30 is older than 1.34"), "{}", r.stderr);
    let r = export(&["--policy", "no-such-pack-or-file", "--kube-version", "1.37"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

/// Every pack's export is laid out as `export vap`'s is, to be reviewed in
/// a diff: no line over 200 characters, the CEL broken by nesting.
#[test]
fn every_pack_s_export_is_laid_out_in_lines_a_diff_shows_whole() {
    for pack in ["default", "strict", "gpu-serving"] {
        let out = export(&["--policy", pack, "--kube-version", "1.37"]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let long: Vec<&str> = out.stdout.lines().filter(|l| l.chars().count() > 200).collect();
        assert!(long.is_empty(), "{pack}: {long:#?}");
        assert!(out.stdout.lines().count() > 3_000, "{pack}");
        // A patch's fields, each on its line, the value beside its key.
        assert!(out.stdout.contains(
            "\n              op: 'add',\n              path: '/metadata/annotations',\n              value: {\n"
        ));
    }
}

#[test]
fn every_object_fits_what_kubectl_apply_keeps_of_it() {
    for pack in ["default", "strict", "gpu-serving"] {
        for version in ["1.34", "1.36", "1.37"] {
            let mut args = vec!["--policy", pack, "--kube-version", version];
            if version == "1.34" {
                args.extend(["--map-api", "v1beta1"]);
            }
            let out = export(&args);
            assert_eq!(out.code, 0, "{}", out.stderr);
            assert!(!out.stderr.contains("warning"), "{}", out.stderr);
            let (docs, errors) = lifeguard::input::parse_stream(&out.stdout, &lifeguard::input::Limits::default());
            assert!(errors.is_none(), "{errors:?}");
            for doc in &docs {
                let size = lifeguard::commands::export::client_side_apply_annotations(&doc.value);
                let name = doc.value.pointer("/metadata/name").and_then(|n| n.as_str()).unwrap_or_default();
                // Three quarters of the limit: the rest is room for a
                // policy's own exemptions, which every fix's CEL repeats.
                let room = lifeguard::commands::export::ANNOTATIONS_LIMIT / 4 * 3;
                assert!(size < room, "{pack} {version}: {name}: {size} bytes");
            }
        }
    }
}

/// A policy whose exemptions take its CEL past what a client-side apply
/// stores is exported with a warning saying how to install it.
#[test]
fn an_object_too_large_for_client_side_apply_is_warned_of() {
    let dir = tempfile::tempdir().expect("temp dir");
    let names: Vec<String> =
        (0..400).map(|i| format!("    - legacy-batch-worker-{i:04}-of-the-old-platform\n")).collect();
    let policy = format!(
        "apiVersion: lifeguard.dev/v1alpha1\nkind: Policy\nexemptions:\n- reason: the old platform's workers, replaced in Q3\n  names:\n{}",
        names.concat()
    );
    let file = dir.path().join("policy.yaml");
    std::fs::write(&file, policy).expect("write");
    let r = export(&["--policy", &file.display().to_string(), "--kube-version", "1.37"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("lifeguard: warning: lifeguard-fix is too large for a client-side `kubectl apply`"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("install it with `kubectl apply --server-side`"), "{}", r.stderr);
}
