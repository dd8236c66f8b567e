//! Pods of the test workload on the node, and what a test reads of them:
//! the objects (the workload's image, the node's network on a port of the
//! pod's own or an address of its own on the node's pod network, an
//! `emptyDir` that outlives container restarts, a Service), the pod's
//! status as the kubelet reports it, and the workload's own log of every
//! probe request and signal it received.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::image::WORKLOAD_IMAGE;
use super::node::{Node, conditions};

/// Where the workload keeps what outlives a container restart.
const STATE_DIR: &str = "/state";

/// The workload's container: `name`, listening on `port` (host network),
/// with `env` (`BOOT_SECONDS`, `PAUSE`, ...) and the probes and lifecycle
/// the test adds.
pub fn workload_container(name: &str, port: u16, env: &[(&str, String)]) -> Value {
    let mut vars =
        vec![json!({"name": "PORT", "value": port.to_string()}), json!({"name": "STATE_DIR", "value": STATE_DIR})];
    vars.extend(env.iter().map(|(k, v)| json!({"name": k, "value": v})));
    json!({
        "name": name,
        "image": WORKLOAD_IMAGE,
        "imagePullPolicy": "Never",
        "ports": [{"name": "http", "containerPort": port}],
        "env": vars,
        "volumeMounts": [{"name": "state", "mountPath": STATE_DIR}],
    })
}

/// A pod spec around `container`: the host's network, no service-account
/// token (nothing here calls the API), the state volume.
pub fn workload_pod_spec(container: Value) -> Value {
    json!({
        "hostNetwork": true,
        "automountServiceAccountToken": false,
        "enableServiceLinks": false,
        "containers": [container],
        "volumes": [{"name": "state", "emptyDir": {}}],
    })
}

/// `spec` with an address of its own on the node's pod network instead of
/// the node's: for pods behind a Service (EndpointSlices refuse loopback
/// addresses) or replicas that share a port.
pub fn with_own_address(mut spec: Value) -> Value {
    spec["hostNetwork"] = json!(false);
    spec
}

/// A Service `name` selecting `app: NAME`, port `port` to the pods' `http`.
pub fn service(name: &str, port: u16) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"selector": {"app": name}, "ports": [{"name": "http", "port": port, "targetPort": "http"}]},
    })
}

/// What the kubelet reported of one container at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// The pod's name.
    pub pod: String,
    /// The pod's `Ready` condition is `True`.
    pub ready: bool,
    /// The container's `restartCount`.
    pub restarts: u64,
    /// The container's waiting reason (`CrashLoopBackOff`, ...), if waiting.
    pub waiting: Option<String>,
    /// The pod is being deleted (it has a `deletionTimestamp`).
    pub deleting: bool,
}

impl Seen {
    /// Reads the first container of `pod` (a Pod object).
    pub fn of(pod: &Value) -> Seen {
        let status = &pod["status"]["containerStatuses"][0];
        Seen {
            pod: pod["metadata"]["name"].as_str().unwrap_or_default().to_owned(),
            ready: conditions(&pod["status"]).get("Ready").is_some_and(|s| s == "True"),
            restarts: status["restartCount"].as_u64().unwrap_or(0),
            waiting: status["state"]["waiting"]["reason"].as_str().map(str::to_owned),
            deleting: pod["metadata"]["deletionTimestamp"].is_string(),
        }
    }
}

/// What the kubelet reports of the pods of one namespace, as it changes:
/// `kubectl get pods --watch -o json` in the background, each change kept
/// with the wall-clock time it arrived (milliseconds since the Unix epoch,
/// the clock the workload's log uses). Stopped when dropped.
pub struct PodWatch {
    child: std::process::Child,
    seen: std::sync::Arc<std::sync::Mutex<Vec<(u64, Seen)>>>,
}

impl PodWatch {
    /// Starts watching `namespace`.
    pub fn start(node: &Node, namespace: &str) -> PodWatch {
        let mut child = node
            .plane
            .kubectl
            .command(&["get", "pods", "-n", namespace, "--watch", "-o", "json"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start kubectl get --watch");
        let stdout = child.stdout.take().expect("stdout");
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let shared = std::sync::Arc::clone(&seen);
        std::thread::spawn(move || {
            let mut last: BTreeMap<String, Seen> = BTreeMap::new();
            for pod in serde_json::Deserializer::from_reader(stdout).into_iter::<Value>().flatten() {
                let now = now_ms();
                let seen = Seen::of(&pod);
                if last.get(&seen.pod) != Some(&seen) {
                    last.insert(seen.pod.clone(), seen.clone());
                    shared.lock().expect("seen").push((now, seen));
                }
            }
        });
        PodWatch { child, seen }
    }

    /// Every change so far of the pod named `pod`.
    pub fn of(&self, pod: &str) -> Vec<(u64, Seen)> {
        self.seen.lock().expect("seen").iter().filter(|(_, s)| s.pod == pod).cloned().collect()
    }

    /// Waits (polling every 100 ms, at most `limit`) until `done` holds for
    /// the changes of `pod` so far, and returns them; the changes so far
    /// when it does not.
    pub fn until(&self, pod: &str, limit: Duration, mut done: impl FnMut(&[(u64, Seen)]) -> bool) -> Vec<(u64, Seen)> {
        let start = Instant::now();
        loop {
            let seen = self.of(pod);
            if done(&seen) || start.elapsed() >= limit {
                return seen;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for PodWatch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// One line of the workload's log: `{"t_ms": .., "event": .., ...}`.
#[derive(Debug, Clone)]
pub struct Event {
    /// Milliseconds since the Unix epoch, on the workload's clock (the
    /// machine's).
    pub t_ms: u64,
    /// `start`, `request`, `signal`, `exit`, ...
    pub event: String,
    /// The whole line.
    pub line: Value,
    /// The container's incarnation (the kubelet's log file number:
    /// restarts before it).
    pub incarnation: u32,
}

/// Gives the pod's workload a log that outlives its containers and the pod
/// itself: a host directory of the node's own (`LOG_DIR/NAME`) mounted at
/// `/log`, where the workload appends every line to a file named after its
/// pod (`LOG_FILE=/log/POD.jsonl`, so the replicas of a Deployment keep one
/// each). Read it with [`kept_log`] or [`kept_pod_log`]. In a pod of
/// several containers, the first regular container keeps that file and
/// each other container (init containers too) one of its own,
/// `POD-CONTAINER.jsonl`, so each log's incarnations are one container's.
pub fn keep_log(spec: &mut Value, node: &Node, name: &str) {
    let dir = node.dir.join("workload-logs").join(name);
    if let Some(volumes) = spec["volumes"].as_array_mut() {
        volumes.push(json!({"name": "log", "hostPath": {"path": dir, "type": "DirectoryOrCreate"}}));
    }
    let Some(spec) = spec.as_object_mut() else { return };
    let mut containers: Vec<(bool, &mut Value)> = Vec::new();
    for (key, list) in spec.iter_mut() {
        let first_of = match key.as_str() {
            "containers" => Some(0),
            "initContainers" => None,
            _ => continue,
        };
        let listed = list.as_array_mut().into_iter().flatten().enumerate();
        containers.extend(listed.map(|(i, c)| (first_of == Some(i), c)));
    }
    for (first, container) in containers {
        let file = if first {
            "/log/$(POD_NAME).jsonl".to_owned()
        } else {
            format!("/log/$(POD_NAME)-{}.jsonl", container["name"].as_str().unwrap_or("container"))
        };
        if let Some(mounts) = container["volumeMounts"].as_array_mut() {
            mounts.push(json!({"name": "log", "mountPath": "/log"}));
        }
        if let Some(env) = container["env"].as_array_mut() {
            env.push(json!({"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}));
            env.push(json!({"name": "LOG_FILE", "value": file}));
        }
    }
}

/// The log [`keep_log`] kept for the bare pod `name`.
pub fn kept_log(node: &Node, name: &str) -> Vec<Event> {
    kept_pod_log(node, name, name)
}

/// The log [`keep_log`] kept under `name` for pod `pod`, in time order; a
/// line's incarnation counts the `start` lines before it.
pub fn kept_pod_log(node: &Node, name: &str, pod: &str) -> Vec<Event> {
    let path = node.dir.join("workload-logs").join(name).join(format!("{pod}.jsonl"));
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut starts = 0_u32;
    let mut out = Vec::new();
    for line in text.lines() {
        let Ok(value) = serde_json::from_str::<Value>(line) else { continue };
        let (Some(t_ms), Some(event)) = (value["t_ms"].as_u64(), value["event"].as_str()) else { continue };
        if event == "start" {
            starts += 1;
        }
        out.push(Event { t_ms, event: event.to_owned(), line: value.clone(), incarnation: starts.saturating_sub(1) });
    }
    out.sort_by_key(|e| e.t_ms);
    out
}

/// The pods labelled `app=APP` in `namespace`, by name.
pub fn pod_names(node: &Node, namespace: &str, app: &str) -> Vec<String> {
    let run = node.plane.kubectl.run(&["get", "pods", "-n", namespace, "-l", &format!("app={app}"), "-o", "json"]);
    run.json()["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["metadata"]["name"].as_str().map(str::to_owned))
        .collect()
}

/// A bare Pod of `spec` named `name`, bound to the node (no scheduler in
/// between, so the pod's timeline starts when the kubelet sees it).
pub fn bare_pod(name: &str, spec: Value) -> Value {
    let mut spec = spec;
    spec["nodeName"] = json!(super::node::NODE_NAME);
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": name}}, "spec": spec})
}

/// What the kubelet said of pod `pod`: its events (reason and message, in
/// order), and the kubelet's own log lines that name it (at most `lines`,
/// the last), to attach to a failure that is not the test's to explain.
pub fn kubelet_account(node: &Node, namespace: &str, pod: &str, lines: usize) -> String {
    let selector = format!("involvedObject.name={pod}");
    let run = node.plane.kubectl.run(&["get", "events", "-n", namespace, "--field-selector", &selector, "-o", "json"]);
    let events: Vec<String> = if run.code == 0 {
        // Core events carry firstTimestamp; events.k8s.io ones eventTime.
        let when = |e: &Value| e["firstTimestamp"].as_str().or(e["eventTime"].as_str()).unwrap_or("?").to_owned();
        let mut items: Vec<Value> = run.json()["items"].as_array().cloned().unwrap_or_default();
        items.sort_by_key(when);
        items
            .iter()
            .map(|e| {
                format!(
                    "  {} {} (x{}): {}",
                    when(e),
                    e["reason"].as_str().unwrap_or("?"),
                    e["count"].as_u64().unwrap_or(1),
                    e["message"].as_str().unwrap_or_default()
                )
            })
            .collect()
    } else {
        vec![format!("  (no events: {})", run.stderr.trim())]
    };
    // The kubelet names a pod `namespace/name` in its structured log lines.
    let needle = format!("{namespace}/{pod}\"");
    let log = std::fs::read_to_string(node.dir.join("kubelet.log")).unwrap_or_default();
    let named: Vec<&str> = log.lines().filter(|l| l.contains(&needle)).collect();
    let named = &named[named.len().saturating_sub(lines)..];
    format!(
        "the kubelet's events for pod {namespace}/{pod}:\n{}\nthe kubelet's last {} log lines naming it:\n{}",
        events.join("\n"),
        named.len(),
        named.join("\n")
    )
}
