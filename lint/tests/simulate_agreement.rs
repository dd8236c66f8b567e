//! `lifeguard simulate` agreeing with `lint` and with itself: a probe port
//! `probe-port-unknown` reports is one the kubelet cannot send (as its
//! prober does: the check errors and the result is discarded); the figures
//! a verdict's line states are those the lines under it show; a model
//! server's shared health endpoint is its own engine's, not a dependency;
//! and no line speaks of zero endpoints when no Service of the input
//! selects the pod.
//!
//! Runs happen in `tests/fixtures/simulate` with relative paths.

mod support;

use serde_json::Value;
use support::simulate::{lifeguard, simulate_json as entries};

const POSTGRES: &str = "../../../examples/postgres.yaml";
const WEB_API: &str = "../../../examples/web-api.yaml";

fn text(args: &[&str]) -> String {
    let mut all = vec!["simulate"];
    all.extend_from_slice(args);
    lifeguard(&all).stdout
}

fn message(e: &Value) -> &str {
    e["message"].as_str().unwrap_or_default()
}

#[test]
fn a_probe_port_lint_reports_unknown_is_one_the_kubelet_never_sends() {
    // lint: probe-port-unknown on the readiness probe's tcpSocket port.
    let lint = lifeguard(&["lint", "--format", "json", POSTGRES]);
    assert!(lint.stdout.contains("\"probe-port-unknown\""), "{}", lint.stdout);
    // simulate: every check errors, the result is discarded, the pod is never ready.
    let (items, code) = entries(&["--scenario", "boot", POSTGRES]);
    let boot = &items[0];
    assert_eq!(boot["verdict"], "out-of-service", "{boot}");
    assert!(
        message(boot).starts_with("never ready: readiness's tcpSocket port \"postgres\" is not declared"),
        "{boot}"
    );
    let errored: Vec<&Value> =
        boot["events"].as_array().into_iter().flatten().filter(|e| e["event"] == "probe-errored").collect();
    assert!(errored.len() > 10, "{boot}");
    assert!(errored.iter().all(|e| e["probe"] == "readiness"), "{boot}");
    assert!(!boot["events"].as_array().into_iter().flatten().any(|e| e["event"] == "in-endpoints"), "{boot}");
    assert_eq!(code, 0, "out-of-service is a warning, below the default --fail-on");
    insta::assert_snapshot!("postgres_boot", text(&["--scenario", "boot", POSTGRES]));
}

#[test]
fn a_liveness_or_startup_port_that_does_not_resolve_restarts_nothing() {
    let (items, _) = entries(&["--scenario", "boot", "--scenario", "wedge", "probe-port-unknown.yaml"]);
    let verdicts: Vec<(&str, &str, &str)> = items
        .iter()
        .map(|e| {
            let name = e["name"].as_str().unwrap_or_default();
            (name, e["scenario"].as_str().unwrap_or_default(), e["verdict"].as_str().unwrap_or_default())
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            // Liveness keeps its first value, success: the boot is fine, a wedge stays.
            ("search", "boot", "ok"),
            ("search", "wedge", "wedge-undetected"),
            // Startup keeps its first value, unknown: never started, never ready, never killed.
            ("catalog", "boot", "out-of-service"),
            ("catalog", "wedge", "wedge-undetected"),
        ]
    );
    assert!(items.iter().all(|e| e["restarts"] == 0), "{items:#?}");
    insta::assert_snapshot!(
        "probe_port_unknown",
        text(&["--scenario", "boot", "--scenario", "wedge", "probe-port-unknown.yaml"])
    );
}

/// The times in seconds a text states (`13.5-15 s` gives 13.5 and 15).
fn figures(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.split(' ').filter(|w| w.starts_with(|c: char| c.is_ascii_digit())) {
        out.extend(word.trim_end_matches([',', ')', ';']).split('-').map(str::to_owned));
    }
    out
}

#[test]
fn the_zero_endpoints_of_a_verdicts_line_are_figures_its_detail_lines_show() {
    // Before: "the Service has zero endpoints for 13.5 s" over two lines
    // that both said "15 s out of endpoints", a figure shown nowhere.
    for scenario in ["stall:3s", "stall:10s", "stall:2m"] {
        let out = text(&["--scenario", scenario, WEB_API]);
        let mut lines = out.lines().skip_while(|l| !l.contains("[restart-storm]"));
        let verdict = lines.next().unwrap_or_else(|| panic!("no restart storm in {scenario}: {out}"));
        let zero = verdict.split("has zero endpoints ").nth(1).unwrap_or_else(|| panic!("{verdict}"));
        // The assumptions' line comes first; the figures follow it.
        let details: Vec<&str> = lines.filter(|l| !l.trim_start().starts_with("assumes:")).take(3).collect();
        assert!(details[2].starts_with("      every offset at once: "), "{out}");
        let shown: Vec<String> =
            details.iter().flat_map(|l| l.split(", ").last()).flat_map(|l| figures(l.trim())).collect();
        for figure in figures(zero) {
            assert!(shown.contains(&figure), "{scenario}: {figure} s of {verdict:?} is not in {details:#?}");
        }
    }
}

#[test]
fn a_model_servers_shared_health_endpoint_is_not_read_as_a_dependency() {
    // vLLM's /health reports its own engine: a stall of nothing restarts nothing.
    let (items, code) = entries(&["--scenario", "stall:2m", "vllm-shared-health.yaml"]);
    assert_eq!(items[0]["verdict"], "ok", "{}", items[0]);
    assert_eq!(code, 0);
    // Stated otherwise, the storm is the restarts alone: no Service selects it.
    let stated = ["--scenario", "stall:2m", "--probe-checks", "liveness=dependency,readiness=dependency"];
    let (items, code) = entries(&[&stated[..], &["vllm-shared-health.yaml"]].concat());
    let storm = &items[0];
    assert_eq!(storm["verdict"], "restart-storm", "{storm}");
    assert!(!message(storm).contains("zero endpoints") && !message(storm).contains("the Service"), "{storm}");
    assert!(message(storm).ends_with("(no Service in the input selects the pod)"), "{storm}");
    assert_eq!(code, 1);
    // The same shared handler on any other server is still taken to check a dependency.
    let (items, _) = entries(&["--scenario", "stall:2s", "stall-shared-handler.yaml"]);
    assert_eq!(items[0]["verdict"], "restart-storm");
    assert!(message(&items[0]).contains("Service/orders has zero endpoints"), "{}", items[0]);
}
