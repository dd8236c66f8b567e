//! Who serves a Service port that no container of the pod declares: one
//! answer for every rule that follows Service traffic into the pod
//! (`readiness-probe-missing`, `prestop-bridge-missing`), so they never
//! attribute the same port to different containers.

use super::knowledge::Knowledge;
use super::model_server::is_model_server;
use super::workload::ContainerView;

/// Flags whose value is the port or address a server listens on
/// (`--port 8000`, `--bind=0.0.0.0:8000`), lower case, `_` read as `-`.
/// Flags that name another process's port (`--upstream`, `--backend-port`)
/// are not among them: a proxy's command line names the port it forwards to.
const LISTEN_FLAGS: &[&str] = &[
    "port",
    "http-port",
    "https-port",
    "grpc-port",
    "listen-port",
    "server-port",
    "serve-port",
    "api-port",
    "web-port",
    "bind",
    "bind-address",
    "listen",
    "listen-address",
    "secure-listen-address",
    "http-address",
    "grpc-address",
    "address",
    "addr",
    "listen-addr",
    "http-addr",
];

/// The containers that listen on `port`, a Service's numeric target port
/// that no container of the pod declares, as indices into `containers` (the
/// pod's containers in [`super::Workload::containers`] order, sidecars
/// included):
/// 1. the containers whose command line names the port as the one they
///    listen on (`--port 8000`, `--port=8000`, `--bind 0.0.0.0:8000`,
///    `-b :8000`), a sidecar among them;
/// 2. else the regular containers that serve a model (a GPU, a
///    `slowBootImages` image);
/// 3. else the regular containers that declare no ports (the port is theirs
///    to leave undeclared);
/// 4. else the first regular container.
///
/// The pod's only container is always the answer when no sidecar names the
/// port.
pub fn undeclared_port_listeners(containers: &[ContainerView<'_>], port: i32, policy: &dyn Knowledge) -> Vec<usize> {
    let named: Vec<usize> = indices(containers, |c| names_listen_port(c, port));
    if !named.is_empty() {
        return named;
    }
    let models = indices(containers, |c| !c.sidecar && is_model_server(c, policy));
    if !models.is_empty() {
        return models;
    }
    let portless = indices(containers, |c| !c.sidecar && !c.declares_ports());
    if !portless.is_empty() {
        return portless;
    }
    indices(containers, |c| !c.sidecar).into_iter().take(1).collect()
}

fn indices(containers: &[ContainerView<'_>], keep: impl Fn(&ContainerView<'_>) -> bool) -> Vec<usize> {
    containers.iter().enumerate().filter(|(_, c)| keep(c)).map(|(i, _)| i).collect()
}

/// Whether the container's command and args (a `sh -c` script read word by
/// word) give `port` to a flag that says where it listens.
fn names_listen_port(c: &ContainerView<'_>, port: i32) -> bool {
    let words: Vec<&str> = c
        .container
        .command
        .iter()
        .flatten()
        .chain(c.container.args.iter().flatten())
        .flat_map(|a| a.split_whitespace())
        .map(|w| w.trim_matches(|q| q == '"' || q == '\''))
        .collect();
    let port = port.to_string();
    words.iter().enumerate().any(|(i, word)| match word.split_once('=') {
        Some((flag, value)) => listen_flag(flag) && is_port(value, &port),
        None => listen_flag(word) && words.get(i + 1).is_some_and(|v| is_port(v, &port)),
    })
}

/// `--port`, `-port`, `--http_port`, `-b` (gunicorn's bind).
fn listen_flag(word: &str) -> bool {
    if word == "-b" {
        return true;
    }
    let Some(name) = word.strip_prefix("--").or_else(|| word.strip_prefix('-')) else { return false };
    let name = name.to_ascii_lowercase().replace('_', "-");
    LISTEN_FLAGS.contains(&name.as_str())
}

/// `8000`, `:8000`, `0.0.0.0:8000`, `[::]:8000`; not a URL (`http://...`),
/// which names where to connect.
fn is_port(value: &str, port: &str) -> bool {
    let value = value.trim_matches(|q| q == '"' || q == '\'');
    value == port || value.rsplit_once(':').is_some_and(|(host, p)| p == port && !host.contains('/'))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::undeclared_port_listeners;
    use crate::model::Workload;
    use crate::policy::Policy;

    /// The names of the containers that listen on `port`.
    fn listeners(containers: Value, init: Value, port: i32) -> Vec<String> {
        let obj = json!({"kind": "Pod", "metadata": {"name": "p"},
                         "spec": {"containers": containers, "initContainers": init}});
        let w = Workload::from_object(&obj).expect("reads").expect("a pod");
        let views: Vec<_> = w.containers().collect();
        let found = undeclared_port_listeners(&views, port, &Policy::default());
        found.into_iter().map(|i| views[i].name().to_owned()).collect()
    }

    #[test]
    fn the_command_line_names_the_listener() {
        for args in [
            json!(["serve", "--port", "8000"]),
            json!(["serve", "--port=8000"]),
            json!(["serve", "--http_port='8000'"]),
            json!(["gunicorn", "-b", "0.0.0.0:8000", "app:app"]),
            json!(["--bind=[::]:8000"]),
            json!(["sh", "-c", "exec python -m server --host 0.0.0.0 --port 8000"]),
        ] {
            let containers = json!([
                {"name": "runtime", "ports": [{"containerPort": 8080}], "args": ["--port", "8080"]},
                {"name": "server", "args": args.clone()}
            ]);
            assert_eq!(listeners(containers, json!([]), 8000), ["server"], "{args}");
        }
        // A proxy names where it forwards to, not where it listens.
        let containers = json!([
            {"name": "proxy", "ports": [{"containerPort": 8443}],
             "args": ["--secure-listen-address=0.0.0.0:8443", "--upstream=http://127.0.0.1:8000/", "--backend-port", "8000"]},
            {"name": "app"}
        ]);
        assert_eq!(listeners(containers, json!([]), 8000), ["app"]);
        // A sidecar that says it listens there takes the port.
        let sidecar = json!([{"name": "mesh", "restartPolicy": "Always", "args": ["--listen-address=:8000"]}]);
        assert_eq!(listeners(json!([{"name": "app"}]), sidecar, 8000), ["mesh"]);
    }

    #[test]
    fn else_the_model_server_the_portless_containers_or_the_first() {
        let gpu = json!({"limits": {"nvidia.com/gpu": "4"}});
        let containers = json!([
            {"name": "runtime", "ports": [{"containerPort": 8080}]},
            {"name": "video", "resources": gpu}
        ]);
        assert_eq!(listeners(containers, json!([]), 8000), ["video"]);
        let containers = json!([{"name": "a", "ports": [{"containerPort": 8080}]}, {"name": "b"}, {"name": "c"}]);
        assert_eq!(listeners(containers, json!([]), 8000), ["b", "c"]);
        let containers = json!([{"name": "a", "ports": [{"containerPort": 8080}]}, {"name": "b", "ports": [{"containerPort": 9090}]}]);
        assert_eq!(listeners(containers, json!([]), 8000), ["a"]);
        // The only container, ports or not; sidecars are never guessed.
        let proxy = json!([{"name": "proxy", "restartPolicy": "Always"}]);
        assert_eq!(listeners(json!([{"name": "app", "ports": [{"containerPort": 9090}]}]), proxy, 8000), ["app"]);
    }
}
