//! The peer bench's short version (`tests/benches/peers/`), for CI:
//! lifeguard, kube-score, the kyverno CLI and Checkov, as
//! `.ci/install-peers.sh` installs them, each run the bench's way on a few
//! files of the shared corpus. Nothing here is timed: every tool must run,
//! produce a report that reads, and report something; and the checks the
//! bench counts as equivalent to lifeguard's rules must fire where both
//! see the problem, so a peer's flags or a report's format that changed
//! fails here before it skews the bench's coverage table.

use std::collections::{BTreeMap, BTreeSet};

use lifeguard_e2e::corpus_dir;
use lifeguard_e2e::peers::coverage::by_rule;
use lifeguard_e2e::peers::{Flag, Input, Tool, Tools, read};

/// Files every tool reads, with no two objects of one name (kyverno takes
/// them in one run), holding liveness probes identical to the readiness
/// probes (kube-score's and kyverno's "identical probes" see them) and
/// containers a Service sends traffic to with no readiness probe.
const FILES: [&str; 3] = [
    "microservices-demo__microservices-demo__deploy__kubernetes__complete-demo.yaml",
    "GoogleCloudPlatform__kubernetes-engine-samples__quickstarts__whereami__k8s__deployment.yaml",
    "GoogleCloudPlatform__microservices-demo__release__kubernetes-manifests.yaml",
];

/// Every tool's flags on [`FILES`].
fn flags() -> Option<BTreeMap<Tool, BTreeSet<Flag>>> {
    let tools = Tools::installed()?;
    let corpus = corpus_dir()?;
    let dir = lifeguard_e2e::peers::work_dir();
    for file in FILES {
        std::fs::copy(corpus.join("files").join(file), dir.path().join(file))
            .unwrap_or_else(|e| panic!("copy {file}: {e}"));
    }
    let input = Input::dir(dir.path());
    let mut out = BTreeMap::new();
    for tool in Tool::ALL {
        let mut found = BTreeSet::new();
        for mut command in tools.commands(tool, &input) {
            let output = command.output().unwrap_or_else(|e| panic!("run {}: {e}", tool.name()));
            let stdout = String::from_utf8_lossy(&output.stdout);
            found.extend(read(tool, &stdout).unwrap_or_else(|e| {
                panic!("{} exited {:?}: {e}\n{}", tool.name(), output.status, String::from_utf8_lossy(&output.stderr))
            }));
        }
        out.insert(tool, found);
    }
    Some(out)
}

#[test]
fn every_tool_runs_and_the_equivalent_checks_fire_where_lifeguard_reports() {
    let Some(flags) = flags() else { return };
    for (tool, found) in &flags {
        assert!(!found.is_empty(), "{} reported nothing on {FILES:?}", tool.name());
    }
    assert_eq!(
        flags[&Tool::Lifeguard],
        flags[&Tool::LifeguardOneThread],
        "lifeguard reports the same on one thread and on all"
    );
    let coverage = by_rule(&["probe-endpoint-reused", "readiness-probe-missing"], &flags);
    for row in &coverage {
        assert!(row.objects > 0, "lifeguard reports {} on no object of {FILES:?}", row.rule);
        for (peer, found) in &row.peers {
            if let Some(found) = found {
                assert!(
                    *found > 0,
                    "{} reports its equivalent of {} on none of the {} objects lifeguard reports it on: {:?}",
                    peer.name(),
                    row.rule,
                    row.objects,
                    flags[peer]
                );
            }
        }
    }
}
