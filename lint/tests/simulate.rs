//! `lifeguard simulate` on the design sources' cases: golden timelines
//! (insta snapshots of the real binary's text output) and their verdicts
//! (asserted on the JSON output).
//!
//! Runs happen in `tests/fixtures/simulate` with relative paths, so file
//! names in the snapshots do not depend on where the repository is.
//!
//! Over 400 lines: 21 tests, one per design-source case or output (text, JSON,
//! SVG, diff), mostly a command and its snapshot or verdict; the SVG checks
//! bring a small element reader (about 75 lines) of their own.

mod support;

use std::path::PathBuf;

use serde_json::Value;
use support::simulate::{fixtures, lifeguard, one, simulate_json};

fn text(args: &[&str]) -> String {
    let mut all = vec!["simulate"];
    all.extend_from_slice(args);
    lifeguard(&all).stdout
}

#[test]
fn a_two_second_stall_restarts_every_replica_of_the_shared_handler() {
    let (e, code) = one(&["--scenario", "stall:2s", "stall-shared-handler.yaml"]);
    assert_eq!(e["verdict"], "restart-storm");
    assert_eq!(e["scenario"], "stall:2s");
    assert_eq!(e["best"]["restarts"].as_u64().map(|n| n > 0), Some(true), "every offset restarts: {e}");
    // Once each, at either offset: the check at 0 s (0.5 s) times out at 1 s
    // (1.5 s) and kills the container, which restarts at once (the first
    // restart); the kubelet first probes the new one a second after it
    // starts, at 2 s (2.5 s), when the stall is over.
    assert_eq!((e["worst"]["restarts"].as_u64(), e["best"]["restarts"].as_u64()), (Some(1), Some(1)), "{e}");
    assert_eq!(e["restart_at"], 1);
    assert!(e["message"].as_str().is_some_and(|m| m.contains("all 3 replicas restart")), "{e}");
    assert!(e["message"].as_str().is_some_and(|m| m.contains("zero endpoints")), "{e}");
    assert_eq!(code, 1, "a restart storm fails the run");
    insta::assert_snapshot!("stall_shared_handler", text(&["--scenario", "stall:2s", "stall-shared-handler.yaml"]));
}

#[test]
fn separating_liveness_from_readiness_survives_the_same_stall() {
    let (e, code) = one(&["--scenario", "stall:2s", "stall-separated.yaml"]);
    assert_eq!(e["restarts"], 0);
    assert_eq!(e["best"]["restarts"], 0);
    // At most the stall plus one period (1 s) out of endpoints.
    assert!(e["worst"]["unready_seconds"].as_f64().is_some_and(|s| s <= 3.0), "{e}");
    assert!(matches!(e["verdict"].as_str(), Some("ok" | "dependency-outage")), "{e}");
    assert_eq!(code, 0);
    insta::assert_snapshot!("stall_separated", text(&["--scenario", "stall:2s", "stall-separated.yaml"]));
}

#[test]
fn a_480_second_startup_window_boots_the_430_second_model_server() {
    let (e, code) = one(&["--scenario", "boot", "gpu-startup-480.yaml"]);
    assert_eq!(e["verdict"], "ok");
    assert_eq!(e["restarts"], 0);
    assert_eq!(e["restart_at"], Value::Null);
    assert_eq!(code, 0);
    insta::assert_snapshot!("gpu_startup_480", text(&["--scenario", "boot", "gpu-startup-480.yaml"]));
}

#[test]
fn a_300_second_startup_window_restarts_it_in_a_loop_each_container_outliving_the_back_off() {
    let (e, code) = one(&["--scenario", "boot", "gpu-startup-300.yaml"]);
    assert_eq!(e["verdict"], "boot-loop");
    // The 30th check fails at 291 s: the first comes 1 s after the start
    // (initialDelaySeconds 0, once the kubelet has seen the container), then 29 x 10.
    assert_eq!(e["restart_at"], 291);
    let events = e["events"].as_array().cloned().unwrap_or_default();
    assert!(!events.iter().any(|ev| ev["event"] == "startup-succeeded"), "never boots");
    // The probe's grid (1, 11, 21 .. s) is kept across restarts: a container
    // started at a kill, on a tick, is first checked at the next tick, 10 s
    // later (the kubelet sees it 1 s after its start), and killed at its
    // 30th check, 290 s after that: each exit comes 300 s after the one
    // before. The first two restarts are immediate, and 300 s is longer than
    // the delay (10, 20 s) the later ones are judged by, so the kubelet starts
    // each at once: no back-off (not even at the 300 s ceiling, `boot:1h` below).
    let started: Vec<&Value> = events.iter().filter(|ev| ev["event"] == "started").map(|ev| &ev["t"]).collect();
    assert_eq!(started, [0, 291, 591, 891, 1191], "{events:?}");
    assert!(!events.iter().any(|ev| ev["event"] == "back-off"), "{events:?}");
    assert_eq!(code, 1, "a boot loop fails the run");
    insta::assert_snapshot!("gpu_startup_300", text(&["--scenario", "boot", "gpu-startup-300.yaml"]));
}

#[test]
fn a_30_second_grace_period_sigkills_the_drain_and_45_does_not() {
    let (e, code) = one(&["--scenario", "delete", "drain-grace-30.yaml"]);
    assert_eq!(e["verdict"], "sigkill-in-flight");
    assert_eq!(e["sigkill"], true);
    assert!(e["message"].as_str().is_some_and(|m| m.contains("15 s before the drain ends")), "{e}");
    assert_eq!(code, 1);
    let (e, code) = one(&["--scenario", "delete", "drain-grace-45.yaml"]);
    assert_eq!(e["verdict"], "ok");
    assert_eq!(e["sigkill"], false);
    assert_eq!(code, 0);
    insta::assert_snapshot!("drain", text(&["--scenario", "delete", "drain-grace-30.yaml", "drain-grace-45.yaml"]));
}

#[test]
fn a_three_second_pause_restarts_the_aggressive_liveness_and_not_the_fixed_one() {
    let (e, _) = one(&["--scenario", "pause:3s", "--diff-fix", "pause-aggressive.yaml"]);
    assert_eq!(e["verdict"], "restarts");
    assert_eq!(e["restarts"], 1);
    assert_eq!(e["fixed"]["verdict"], "ok");
    assert_eq!(e["fixed"]["restarts"], 0);
    let fixes = e["fixed"]["fixes"].as_array().cloned().unwrap_or_default();
    assert!(fixes.iter().any(|f| f.as_str().is_some_and(|f| f.contains("failureThreshold 1 -> 3"))), "{fixes:?}");
    insta::assert_snapshot!("pause_diff_fix", text(&["--scenario", "pause:3s", "--diff-fix", "pause-aggressive.yaml"]));
}

/// The README's good example, from the fixtures' directory.
const GOOD_WEB: &str = "../../../examples/good-web.yaml";

#[test]
fn the_readmes_good_example_needs_no_attention_and_its_stall_is_the_outage_readiness_chose() {
    let (items, code) = simulate_json(&[GOOD_WEB]);
    let got: Vec<(&str, &str, Option<&str>)> = items
        .iter()
        .map(|e| (e["scenario"].as_str().unwrap_or(""), e["verdict"].as_str().unwrap_or(""), e["severity"].as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("boot", "ok", None),
            ("stall:2m", "dependency-outage", Some("info")),
            ("pause:5s", "ok", None),
            ("wedge", "wedge-detected", None),
            ("delete", "ok", None),
        ]
    );
    assert_eq!(code, 0);
    let stall = &items[1];
    assert_eq!(stall["restarts"], 0);
    assert_eq!(stall["unready_seconds"], 109);
    let message = stall["message"].as_str().unwrap_or("");
    assert!(
        message.starts_with("dependency outage, no restart: readiness follows the stalled dependency"),
        "{message}"
    );
    insta::assert_snapshot!("good_web_stall", text(&["--scenario", "stall:2m", GOOD_WEB]));
}

/// The `N/M` failure counts of a text timeline with N past M.
fn counts_past_threshold(text: &str) -> Vec<String> {
    let words = text.split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | ','));
    words
        .filter(|w| {
            let mut parts = w.split('/').map(str::parse::<u32>);
            matches!((parts.next(), parts.next(), parts.next()), (Some(Ok(n)), Some(Ok(m)), None) if n > m)
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn readiness_past_its_threshold_is_already_unready_once_not_an_ever_growing_count() {
    let out = text(&["--scenario", "stall:2m", "stall-separated.yaml"]);
    assert_eq!(counts_past_threshold(&out), Vec::<String>::new(), "{out}");
    let unready: Vec<&str> = out.lines().filter(|l| l.contains("already unready")).collect();
    // Unready at the third failure (checks at 0, 1, 2 s, each timed out a
    // second later); the checks at 3..118 s time out at 4..119 s, and the
    // one at 119 s is answered when the stall ends at 120 s, within its 1 s.
    assert_eq!(unready, ["            4-119s readiness timed out x116 (dependency; already unready)"], "{out}");
    insta::assert_snapshot!("stall_separated_2m", out);
    // The README's GPU example boots with a bare tcpSocket readiness that fails until liveness kills it.
    let out = text(&["--scenario", "boot", "../../../examples/gpu-model-server.yaml"]);
    assert_eq!(counts_past_threshold(&out), Vec::<String>::new(), "{out}");
}

#[test]
fn a_boot_loop_prints_the_cycles_that_differ_and_summarises_those_that_repeat_the_one_before() {
    let out = text(&["--scenario", "boot:1h", "gpu-startup-300.yaml"]);
    let restarts = out.lines().filter(|l| l.contains("startup   restart")).count();
    // Two cycles printed: the first container is first checked 1 s after its
    // start (checks at 1 .. 291 s), a restarted one 10 s after (the probe's
    // grid of 1, 11, 21 .. s is kept, and a kill is on a tick), so cycle 2
    // (291-591 s) differs from cycle 1 and cycles 3 on repeat cycle 2.
    assert_eq!(restarts, 2, "two cycles printed: {out}");
    // Kills at 291 + 300 k s up to the horizon (4533 s): 15, the last at
    // 4491 s. Each exit comes 300 s after the one before, never less than
    // the delay (10, 20 .. 160 s, then the 300 s ceiling: the kubelet waits
    // only when the previous exit was *less* than the delay ago), so every
    // restart is immediate and the summary names no back-off.
    assert!(out.contains("\n         591-4491s           cycles 3-15 the same\n"), "{out}");
    assert!(!out.contains("back-off"), "{out}");
    insta::assert_snapshot!("boot_loop_cycles", out);
    // The SVG labels the repeats the same way, once, instead of a label per cycle.
    let svg = lifeguard(&["simulate", "--format", "svg", "--scenario", "boot:1h", "gpu-startup-300.yaml"]).stdout;
    let elements = svg_elements(&svg);
    let labels: Vec<&str> = elements
        .iter()
        .filter(|e| e.name == "text" && (e.text.starts_with("back-off") || e.text.starts_with("cycle")))
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(labels, ["cycles 3-15 the same"]);
}

fn code(args: &[&str]) -> i32 {
    let mut all = vec!["simulate"];
    all.extend_from_slice(args);
    lifeguard(&all).code
}

#[test]
fn exit_codes_follow_the_verdicts_and_fail_on() {
    // A restart storm, a boot loop and SIGKILL of in-flight work fail by default; restarts do not.
    assert_eq!(code(&["--scenario", "pause:3s", "pause-aggressive.yaml"]), 0);
    assert_eq!(code(&["--scenario", "pause:3s", "--fail-on", "restarts", "pause-aggressive.yaml"]), 1);
    assert_eq!(code(&["--scenario", "stall:2s", "--fail-on", "never", "stall-shared-handler.yaml"]), 0);
    assert_eq!(
        code(&["--scenario", "stall:2s", "--fail-on", "boot-loop,sigkill-in-flight", "stall-shared-handler.yaml"]),
        0
    );
    assert_eq!(code(&["--scenario", "delete", "--fail-on", "sigkill-in-flight", "drain-grace-30.yaml"]), 1);
    // --fail-on judges the manifests as written, not as fixed.
    assert_eq!(code(&["--scenario", "delete", "--diff-fix", "drain-grace-30.yaml"]), 1);
}

#[test]
fn usage_errors_exit_2_and_name_what_is_wrong() {
    let r = lifeguard(&["simulate", "--scenario", "stall", "stall-separated.yaml"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("scenario \"stall\": needs a duration"), "{}", r.stderr);
    let r = lifeguard(&["simulate", "--fail-on", "restart", "stall-separated.yaml"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("unknown verdict \"restart\""), "{}", r.stderr);
    let r = lifeguard(&["simulate", "--probe-checks", "liveness=remote", "stall-separated.yaml"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("the value must be local or dependency"), "{}", r.stderr);
}

#[test]
fn a_bad_input_is_an_error_at_its_line_and_the_other_files_are_still_simulated() {
    let r = lifeguard(&["simulate", "--scenario", "wedge", "bad/probe-checks-invalid.yaml", "pause-aggressive.yaml"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("bad/probe-checks-invalid.yaml:12:")
            && r.stderr.contains(
                "annotation lifeguard.dev/probe-checks: \"liveness=remote\": the value must be local or dependency"
            ),
        "{}",
        r.stderr
    );
    assert!(r.stdout.contains("pause-aggressive.yaml:"), "{}", r.stdout);
    let broken = "kind: Deployment\nmetadata: {name: x\n";
    let r = support::lifeguard(&fixtures(), &["simulate", "-"], Some(broken), &[("NO_COLOR", Some("1"))]);
    r.assert_no_panic();
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("<stdin>:"), "{}", r.stderr);
}

#[test]
fn the_standard_set_runs_without_a_scenario_and_explain_states_the_model() {
    let (items, _) = simulate_json(&["stall-separated.yaml"]);
    let scenarios: Vec<&str> = items.iter().filter_map(|e| e["scenario"].as_str()).collect();
    assert_eq!(scenarios, policies::simulate::STANDARD);
    for e in &items {
        for field in [
            "file",
            "line",
            "kind",
            "namespace",
            "name",
            "container",
            "scenario",
            "verdict",
            "severity",
            "restarts",
            "restart_at",
            "unready_seconds",
            "sigkill",
            "best",
            "worst",
            "events",
        ] {
            assert!(e.get(field).is_some(), "{field} missing: {e}");
        }
    }
    let r = lifeguard(&["explain", "simulate"]);
    assert_eq!(r.code, 0);
    assert_eq!(r.stdout, policies::simulate::MODEL);
    for assumption in
        ["CrashLoopBackOff", "initialDelaySeconds", "counted from deletion", "Phase offsets", "successThreshold"]
    {
        assert!(r.stdout.contains(assumption), "explain simulate states {assumption:?}");
    }
}

/// An element of an SVG document: its name, attributes and direct text.
struct Element {
    name: String,
    attrs: Vec<(String, String)>,
    text: String,
}

/// The elements of an SVG document in order; panics unless it is
/// well-formed XML (end tags match, attributes and entities are valid).
fn svg_elements(svg: &str) -> Vec<Element> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(svg);
    let mut out: Vec<Element> = Vec::new();
    let (mut open, mut depth) = (Vec::new(), 0usize);
    loop {
        let event =
            reader.read_event().unwrap_or_else(|e| panic!("not well-formed at {}: {e}", reader.buffer_position()));
        match &event {
            Event::Start(e) | Event::Empty(e) => {
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                let attrs = e
                    .attributes()
                    .map(|a| {
                        let a = a.expect("a well-formed attribute");
                        let value = a
                            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                            .expect("valid entities")
                            .into_owned();
                        (String::from_utf8_lossy(a.key.as_ref()).into_owned(), value)
                    })
                    .collect();
                out.push(Element { name, attrs, text: String::new() });
                if matches!(event, Event::Start(_)) {
                    open.push(out.len() - 1);
                    depth += 1;
                }
            }
            Event::Text(t) => {
                let text = t.decode().expect("UTF-8 text");
                let text = quick_xml::escape::unescape(&text).expect("valid entities").into_owned();
                if let Some(&i) = open.last() {
                    out[i].text.push_str(&text);
                }
            }
            // quick-xml reports `&quot;` and the like apart from the text around them.
            Event::GeneralRef(r) => {
                let name = r.decode().expect("UTF-8 entity name");
                let c = match name.as_ref() {
                    "amp" => '&',
                    "lt" => '<',
                    "gt" => '>',
                    "quot" => '"',
                    "apos" => '\'',
                    other => r.resolve_char_ref().ok().flatten().unwrap_or_else(|| panic!("unknown entity &{other};")),
                };
                if let Some(&i) = open.last() {
                    out[i].text.push(c);
                }
            }
            Event::End(_) => {
                open.pop();
                depth -= 1;
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(depth, 0, "every element is closed");
    out
}

fn attr<'e>(e: &'e Element, name: &str) -> Option<&'e str> {
    e.attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// The README's picture: the shared handler and the separated probes in a 2 s stall.
const PICTURE: &str = "lint/docs/simulate-stall.svg";

#[test]
fn svg_is_well_formed_with_a_lane_per_probe_and_the_readme_picture_is_current() {
    let args =
        ["simulate", "--format", "svg", "--scenario", "stall:2s", "stall-shared-handler.yaml", "stall-separated.yaml"];
    let r = lifeguard(&args);
    assert_eq!(r.code, 1, "the storm fails the run: {}", r.stderr);
    let elements = svg_elements(&r.stdout);
    assert_eq!(elements.first().map(|e| e.name.as_str()), Some("svg"));
    assert_eq!(elements.first().and_then(|e| attr(e, "xmlns")), Some("http://www.w3.org/2000/svg"));
    let panels = elements.iter().filter(|e| e.name == "g" && attr(e, "class") == Some("panel")).count();
    assert_eq!(panels, 2, "one picture per object, container and scenario");
    let texts: Vec<&str> = elements.iter().filter(|e| e.name == "text").map(|e| e.text.as_str()).collect();
    for lane in ["startup", "liveness", "readiness", "running", "in endpoints", "terminating"] {
        assert_eq!(texts.iter().filter(|t| **t == lane).count(), 2, "lane {lane:?} in each picture: {texts:?}");
    }
    assert!(texts.iter().any(|t| t.starts_with("restart-storm: restart storm: all 3 replicas restart")), "{texts:?}");
    assert!(texts.iter().any(|t| t.contains("stall-shared-handler.yaml: Deployment/shop/orders, container \"api\"")));
    assert!(texts.iter().any(|t| t.starts_with("ok: ")), "{texts:?}");
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(PICTURE);
    if std::env::var_os("LIFEGUARD_BLESS").is_some() {
        std::fs::write(&path, &r.stdout).expect("write the README's picture");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(committed, r.stdout, "{PICTURE} is stale: rerun with LIFEGUARD_BLESS=1");
}

/// The right edge of a `<text>`, estimated as the renderer does (0.6 em a
/// glyph, 0.66 bold), from its own font size or the document's 12 px.
fn right_edge(e: &Element) -> f64 {
    let x: f64 = attr(e, "x").and_then(|x| x.parse().ok()).unwrap_or(0.0);
    let size: f64 = attr(e, "font-size").and_then(|s| s.parse().ok()).unwrap_or(12.0);
    let em = if attr(e, "font-weight") == Some("bold") { 0.66 } else { 0.6 };
    let width = e.text.chars().count() as f64 * size * em;
    if attr(e, "text-anchor") == Some("middle") { x + width / 2.0 } else { x + width }
}

#[test]
fn svg_wraps_a_very_long_verdict_and_title_inside_the_canvas() {
    // Long names everywhere a line takes them: the object, the container,
    // and Services the verdict names (the first three, of 63 characters each).
    let name = format!("orders-{}", "x".repeat(180));
    let container = format!("api-{}", "y".repeat(59));
    let mut manifest = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: shop}}\nspec:\n  replicas: 3\n  \
         selector: {{matchLabels: {{app: orders}}}}\n  template:\n    metadata: {{labels: {{app: orders}}, annotations: \
         {{lifeguard.dev/probe-checks: readiness=dependency}}}}\n    spec:\n      \
         containers:\n        - name: {container}\n          image: registry.example.com/shop/orders:1.4.2\n          \
         ports: [{{name: http, containerPort: 8080}}]\n"
    );
    for probe in ["livenessProbe", "readinessProbe"] {
        manifest.push_str(&format!(
            "          {probe}: {{httpGet: {{path: /health, port: http}}, periodSeconds: 1, failureThreshold: 1}}\n"
        ));
    }
    for i in 0..5 {
        manifest.push_str(&format!(
            "---\napiVersion: v1\nkind: Service\nmetadata: {{name: orders-service-with-a-name-as-long-as-a-dns-label-allows-{i}, namespace: shop}}\n\
             spec: {{selector: {{app: orders}}, ports: [{{port: 80, targetPort: http}}]}}\n"
        ));
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("long-names.yaml");
    std::fs::write(&file, manifest).expect("write the manifest");
    let file = file.to_string_lossy().into_owned();
    let (entry, _) = one(&["--scenario", "stall:10s", &file]);
    let message = entry["message"].as_str().unwrap_or_default();
    assert!(message.contains("Service/orders-service-with-a-name-as-long-as-a-dns-label-allows-2"), "{entry}");
    let verdict = format!("{}: {message}", entry["verdict"].as_str().unwrap_or_default());
    assert!(verdict.chars().count() > 300, "not a very long verdict: {verdict}");

    let svg = lifeguard(&["simulate", "--format", "svg", "--scenario", "stall:10s", &file]).stdout;
    let elements = svg_elements(&svg);
    let width: f64 = elements.first().and_then(|e| attr(e, "width")).and_then(|w| w.parse().ok()).expect("a width");
    let texts: Vec<&Element> = elements.iter().filter(|e| e.name == "text").collect();
    for e in &texts {
        assert!(right_edge(e) <= width, "{:?} ends at {} of {width} px", e.text, right_edge(e));
    }
    // Wrapped at spaces into lines that say the whole verdict, one under the other.
    let lines: Vec<&Element> =
        texts.iter().copied().filter(|e| attr(e, "x") == Some("12") && attr(e, "fill").is_some()).collect();
    let said: Vec<&str> = lines.iter().map(|e| e.text.as_str()).collect();
    assert!(said.len() >= 3, "{said:?}");
    assert_eq!(said.join(" "), verdict);
    let ys: Vec<i64> = lines.iter().filter_map(|e| attr(e, "y")?.parse().ok()).collect();
    assert!(ys.windows(2).all(|w| w[1] > w[0]), "{ys:?}");
    // The title too, and the lanes start below the last line.
    let title: Vec<&str> =
        texts.iter().filter(|e| attr(e, "font-weight") == Some("bold")).map(|e| e.text.as_str()).collect();
    assert!(title.len() >= 2, "{title:?}");
    assert!(title.join(" ").ends_with(&format!("container \"{container}\" · stall:10s")), "{title:?}");
    let lane_y: i64 = texts
        .iter()
        .find(|e| e.text == "liveness")
        .and_then(|e| attr(e, "y")?.parse().ok())
        .expect("the liveness lane");
    assert!(ys.iter().all(|y| *y < lane_y - 11), "{ys:?} overlap the lanes at {lane_y}");
}

#[test]
fn diff_fix_shows_both_sides_even_when_no_fix_applies() {
    let (e, _) = one(&["--scenario", "delete", "--diff-fix", "drain-grace-45.yaml"]);
    assert_eq!(e["fixed"]["fixes"], serde_json::json!([]));
    assert_eq!(e["fixed"]["verdict"], e["verdict"]);
    let out = text(&["--scenario", "delete", "--diff-fix", "drain-grace-45.yaml"]);
    assert!(out.contains("as `lifeguard fix` leaves it (right): no fix applies"), "{out}");
    assert!(out.lines().any(|l| l.contains("delete [ok]") && l.contains(" | delete [ok]")), "{out}");
}

#[test]
fn diff_fix_keeps_the_right_column_in_line_however_long_the_left_line() {
    // Verdicts, figures and events longer than a column: each is wrapped
    // in its own column rather than pushing the other one to the right.
    for file in ["pause-aggressive.yaml", "drain-grace-30.yaml", "stall-shared-handler.yaml"] {
        let out = text(&["--diff-fix", file]);
        let rows: Vec<&str> = out.lines().filter(|l| l.contains(" | ")).collect();
        assert!(!rows.is_empty(), "{file}: no side-by-side rows\n{out}");
        let column = |row: &str| row.find(" | ").map(|i| row[..i].chars().count());
        let first = column(rows[0]);
        for row in &rows {
            assert_eq!(column(row), first, "{file}: the right column moves on\n{row}\n{out}");
            assert!(row.chars().count() <= 4 + 58 + 3 + 58, "{file}: a row wider than two columns\n{row}");
        }
    }
}

#[test]
fn json_output_of_the_drain_case() {
    let r = lifeguard(&["simulate", "--format", "json", "--scenario", "delete", "drain-grace-30.yaml"]);
    assert_eq!(r.code, 1);
    let value: Value = serde_json::from_str(&r.stdout).expect("JSON");
    insta::assert_json_snapshot!("drain_json", value);
}

#[test]
fn each_file_is_simulated_with_its_own_policy_as_lint_finds_it() {
    // The nearest .lifeguard.yaml says a GPU boot takes 240 s: the 300 s window boots it.
    let (e, _) = one(&["--scenario", "boot", "own-policy/gpu-undeclared.yaml"]);
    assert_eq!(e["verdict"], "ok", "{e}");
    assert!(e["message"].as_str().is_some_and(|m| m.contains("boots in 240 s")), "{e}");
    // The default pack assumes 600 s: a boot loop.
    let (e, _) = one(&["--scenario", "boot", "--policy", "default", "own-policy/gpu-undeclared.yaml"]);
    assert_eq!(e["verdict"], "boot-loop", "{e}");
}

#[test]
fn a_prestop_script_runs_for_its_stated_length_before_sigterm() {
    let times = |e: &Value, name: &str| -> Vec<f64> {
        e["events"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|x| x["event"] == name)
            .filter_map(|x| x["t"].as_f64())
            .collect()
    };
    // The annotation states 20 s: SIGTERM at 20 s, inside the 30 s grace period.
    let (e, _) = one(&["--scenario", "delete", "drain-script-prestop.yaml"]);
    assert_eq!(times(&e, "sigterm"), [20.0], "{e}");
    let prestop = e["events"].as_array().and_then(|v| v.iter().find(|x| x["event"] == "prestop")).cloned();
    assert_eq!(prestop.map(|p| p["detail"].clone()), Some("exec, 20s as stated".into()));
    assert_eq!(e["verdict"], "ok");
    // The flag wins: a 40 s script uses the 30 s grace period; the kubelet
    // still sends SIGTERM then, and SIGKILL 2 s later.
    let (e, _) = one(&["--scenario", "delete", "--prestop-seconds", "40", "drain-script-prestop.yaml"]);
    assert_eq!(times(&e, "sigterm"), [30.0], "{e}");
    // Nothing declared of its stop: the app is taken to need the 5 s lint
    // leaves it (prestopMinRemainingSeconds), which SIGKILL cuts at 32 s.
    assert_eq!(times(&e, "sigkill"), [32.0], "{e}");
    assert_eq!(e["verdict"], "sigkill-in-flight", "{e}");
    let sigterm = e["events"].as_array().and_then(|v| v.iter().find(|x| x["event"] == "sigterm")).cloned();
    assert_eq!(sigterm.map(|x| x["detail"].clone()), Some("the preStop hook used the grace period; 2s left".into()));
}

#[test]
fn an_unstated_prestop_script_is_taken_as_zero_and_said_so() {
    let stated = text(&["--scenario", "delete", "--prestop-seconds", "0", "drain-script-prestop.yaml"]);
    assert!(stated.contains("exec, 0s as stated"), "{stated}");
    // Without the annotation nor the flag: 0 s, and the line says how to state it.
    let dir = tempfile::tempdir().expect("a directory");
    let source = std::fs::read_to_string(fixtures().join("drain-script-prestop.yaml")).expect("the fixture");
    let unstated = source.replace("      annotations:\n        lifeguard.dev/prestop-seconds: \"20\"\n", "");
    let file = dir.path().join("unstated.yaml");
    std::fs::write(&file, unstated).expect("write");
    let path = file.display().to_string();
    let out = text(&["--scenario", "delete", &path]);
    assert!(
        out.contains("exec of unknown length, taken as 0s (state it with --prestop-seconds or the lifeguard.dev/prestop-seconds annotation)"),
        "{out}"
    );
}
