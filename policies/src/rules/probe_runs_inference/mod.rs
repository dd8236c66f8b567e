//! `probe-runs-inference`: a readiness or liveness probe asks the model for a
//! real inference on every period.
//!
//! Tests: `policies/src/rules/probe_runs_inference/fixtures/`,
//! `policies/src/rules/probe_runs_inference/snapshots/rule_fixtures__probe-runs-inference.snap`.

use std::sync::LazyLock;

use regex::Regex;

use crate::finding::{Finding, Severity};
use crate::model::command::simple_commands;
use crate::model::{ProbeKind, Workload};
use crate::rules::{Ctx, FixAvailability, Harm, HarmShown, MapExport, Related, Rule, VapExport};
use crate::simulate::Verdict;

pub(crate) static RULE: Rule = Rule {
    name: "probe-runs-inference",
    severity: Severity::Warning,
    summary: "a readiness or liveness probe runs a real inference (a generation, a completion, a prediction) on every period",
    doc: DOC,
    fix: FixAvailability::NoFix("the cheap health endpoint depends on the server; the help names where to look"),
    check,
    vap: VapExport::READS_SCRIPTS,
    map: MapExport::NoFix,
    related: Related::Nothing,
    harm: HarmShown::In(&[Harm { scenario: "pause:5s", verdicts: &[Verdict::RestartStorm, Verdict::Restarts] }]),
};

const DOC: &str = r#"## What it does
Flags a readiness or liveness probe whose `httpGet` path, or the URL an
`exec` probe's `curl` or `wget` fetches, is an endpoint that runs the model:
- SGLang's `/health_generate` (it generates a token to answer);
- OpenAI-style `/v1/completions`, `/v1/chat/completions`, `/v1/embeddings`;
- TGI's and vLLM's `/generate` and `/generate_stream`, TEI's `/embed`;
- Triton / KServe v2 `/v2/models/NAME/infer` and `/generate`, TensorFlow
  Serving / KServe v1 `/v1/models/NAME:predict`, TorchServe
  `/predictions/NAME`, `/invocations` (SageMaker, MLflow), Ollama's
  `/api/generate`, `/api/chat`, `/api/embed`.

## Why is this bad?
Readiness and liveness run on every `periodSeconds` for the life of the
container. The GPU model-server design source says to avoid a heavyweight
inference on every probe interval: each probe takes a batch slot and GPU
time from real traffic, and under load the probe's own inference is the
first to miss its `timeoutSeconds`, so a busy replica is marked unready (or,
for liveness, restarted) exactly when it is needed. The design source
recommends a cached internal state plus a periodic self-test inside the
server, with a freshness limit, instead of a probe-driven workload.

## Not a finding
- A startup probe: it runs only until it first succeeds, during boot, so one
  real inference there is cheap and proves the model answers before
  liveness and readiness take over.
- Health and readiness endpoints: `/health`, `/v2/health/ready`,
  `/v2/models/NAME/ready`, `/v1/models/NAME` (model status), `/ping`.
- An `exec` probe that runs a script file lifeguard cannot see into.

## Example
```yaml
readinessProbe:
  httpGet: {path: /health_generate, port: 30000}
  periodSeconds: 5
```

## Use instead
```yaml
startupProbe:                      # one inference, during boot only
  httpGet: {path: /health_generate, port: 30000}
  periodSeconds: 10
  failureThreshold: 60
readinessProbe:
  httpGet: {path: /health, port: 30000}
  periodSeconds: 5
```

## Fix
No automatic fix: the cheap endpoint depends on the server (`/health` for
vLLM, SGLang and TGI, `/v2/health/ready` or `/v2/models/NAME/ready` for
Triton and KServe).
"#;

/// Paths whose handler runs the model.
static INFERENCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(",
        r"/health_generate",
        r"|(/openai)?/v1/(chat/)?completions|(/openai)?/v1/embeddings",
        r"|/generate(_stream)?|/embed",
        r"|/v2/models/[^/]+(/versions/[^/]+)?/(infer|generate(_stream)?)",
        r"|/v1/models/[^/:]+(/versions/[^/:]+)?:(predict|classify|regress)",
        r"|/predictions/[^/]+(/[^/]+)?",
        r"|/invocations",
        r"|/api/(generate|chat|embed|embeddings)",
        r")/?$"
    ))
    .expect("a valid regex")
});

/// The path of an HTTP URL as curl or wget takes it (`http://localhost:8000/x?y`, `localhost/x`).
fn url_path(arg: &str) -> Option<&str> {
    let rest = arg.split_once("://").map_or(arg, |(_, r)| r);
    let looks_like_url = arg.contains("://") || rest.starts_with("localhost") || rest.starts_with("127.0.0.1");
    if !looks_like_url {
        return None;
    }
    let path = &rest[rest.find('/')?..];
    Some(path.split(['?', '#']).next().unwrap_or(path))
}

fn runs_inference(path: &str) -> bool {
    INFERENCE.is_match(path.split(['?', '#']).next().unwrap_or(path))
}

fn check(w: &Workload, _ctx: &Ctx<'_>, out: &mut Vec<Finding>) {
    w.for_each_container(|c| {
        for kind in [ProbeKind::Readiness, ProbeKind::Liveness] {
            let Some(p) = kind.of(c.container) else { continue };
            let (at, path) = if let Some(path) = p.http_get.as_ref().and_then(|h| h.path.as_deref()) {
                (c.at(&[kind.field(), "httpGet", "path"]), path.to_owned())
            } else if let Some(argv) = p.exec.as_ref().and_then(|e| e.command.as_deref()) {
                let fetched = simple_commands(argv).into_iter().find_map(|cmd| {
                    matches!(cmd.program.as_str(), "curl" | "wget")
                        .then(|| cmd.args.iter().filter_map(|a| url_path(a)).find(|p| runs_inference(p)).map(str::to_owned))
                        .flatten()
                });
                let Some(path) = fetched else { continue };
                (c.at(&[kind.field(), "exec", "command"]), path)
            } else {
                continue;
            };
            if !runs_inference(&path) {
                continue;
            }
            let name = c.name();
            let period = p.period_seconds.filter(|s| *s > 0).unwrap_or(10);
            let what = if kind == ProbeKind::Liveness {
                "a busy replica whose probe inference misses its timeout is restarted"
            } else {
                "a busy replica whose probe inference misses its timeout leaves the Service"
            };
            out.push(RULE.finding(
                Severity::Warning,
                at,
                Some(name),
                format!(
                    "{} probe runs an inference ({path}) every {period}s, taking GPU time from traffic; {what}",
                    kind.word()
                ),
                format!("{} probe runs an inference every {period}s; use a health path", kind.word()),
                "probe a cheap health endpoint (vLLM, SGLang, TGI: /health; Triton, KServe: /v2/health/ready or /v2/models/NAME/ready) and keep the real inference for the startup probe or an in-server self-test",
            ));
        }
    });
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{RULE, runs_inference, url_path};
    use crate::finding::Severity;
    use crate::rules::testing::{check, one_container};

    #[test]
    fn inference_paths() {
        for p in [
            "/health_generate",
            "/v1/completions",
            "/v1/chat/completions",
            "/openai/v1/chat/completions",
            "/generate",
            "/v2/models/llama/infer",
            "/v2/models/llama/versions/1/generate",
            "/v1/models/resnet:predict",
            "/predictions/bert",
            "/invocations",
            "/api/generate",
            "/v1/embeddings?x=1",
        ] {
            assert!(runs_inference(p), "{p}");
        }
        for p in ["/health", "/v2/health/ready", "/v2/models/llama/ready", "/v1/models/resnet", "/ping", "/generated"] {
            assert!(!runs_inference(p), "{p}");
        }
        assert_eq!(url_path("http://localhost:8000/v1/completions?x"), Some("/v1/completions"));
        assert_eq!(url_path("localhost:8000/generate"), Some("/generate"));
        assert_eq!(url_path("{\"prompt\": \"/generate\"}"), None);
    }

    #[test]
    fn readiness_and_liveness_inference_are_warnings() {
        let obj = one_container(json!({
            "readinessProbe": {"httpGet": {"path": "/health_generate", "port": 30000}, "periodSeconds": 5},
            "livenessProbe": {"exec": {"command": ["sh", "-c", "curl -sf -X POST http://127.0.0.1:8000/v1/completions -d '{\"prompt\":\"hi\",\"max_tokens\":1}'"]}}
        }));
        let f = check(&RULE, &obj);
        assert_eq!(f.len(), 2, "{f:?}");
        assert!(f.iter().all(|f| f.severity == Severity::Warning));
        assert_eq!(f[0].pointer, "/spec/template/spec/containers/0/readinessProbe/httpGet/path");
        assert_eq!(
            f[0].message,
            "readiness probe runs an inference (/health_generate) every 5s, taking GPU time from traffic; a busy replica whose probe inference misses its timeout leaves the Service"
        );
        assert_eq!(f[1].pointer, "/spec/template/spec/containers/0/livenessProbe/exec/command");
        assert!(f[1].message.contains("(/v1/completions) every 10s"), "{}", f[1].message);
    }

    #[test]
    fn startup_probes_and_health_endpoints_are_fine() {
        let obj = one_container(json!({
            "startupProbe": {"httpGet": {"path": "/health_generate", "port": 30000}},
            "readinessProbe": {"httpGet": {"path": "/health", "port": 30000}},
            "livenessProbe": {"exec": {"command": ["curl", "-sf", "http://localhost:8000/v2/health/live"]}}
        }));
        assert!(check(&RULE, &obj).is_empty());
    }
}
