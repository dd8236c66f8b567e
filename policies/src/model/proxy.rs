//! Proxies that run beside an app in its pod and carry its traffic (a
//! service mesh's data plane, a database connector), recognised by image
//! and by the fixed names their injectors give them, and how long each
//! keeps serving after it is told to stop, from its own settings.

use super::duration::parse_seconds;
use super::image::image_repository;
use super::prestop::{SleepSeconds, prestop_sleep};
use super::workload::{ContainerView, Workload};

/// The annotation Istio reads a pod's proxy settings from.
pub const ISTIO_PROXY_CONFIG: &str = "proxy.istio.io/config";
/// The annotation Linkerd's injector turns into the proxy's preStop sleep.
pub const LINKERD_WAIT_BEFORE_EXIT: &str = "config.alpha.linkerd.io/proxy-wait-before-exit-seconds";

/// Which proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProxyKind {
    /// Istio's `istio-proxy` (Envoy under pilot-agent).
    Istio,
    /// Linkerd's `linkerd-proxy`.
    Linkerd,
    /// The Cloud SQL Auth Proxy (v2 `cloud-sql-proxy`, v1 `gce-proxy`).
    CloudSql,
}

impl ProxyKind {
    /// Its name in a message.
    pub fn word(self) -> &'static str {
        match self {
            ProxyKind::Istio => "the Istio proxy",
            ProxyKind::Linkerd => "the Linkerd proxy",
            ProxyKind::CloudSql => "the Cloud SQL Auth Proxy",
        }
    }
}

/// The proxy a container runs, if it is one lifeguard knows: by its
/// image's repository name (`istio/proxyv2`, `linkerd/proxy`,
/// `cloud-sql-proxy`, `cloudsql-proxy`, `gce-proxy`), or by the name an
/// injector gives it (`istio-proxy`, `linkerd-proxy`, `cloud-sql-proxy`,
/// `cloudsql-proxy`).
pub fn proxy_kind(c: &ContainerView<'_>) -> Option<ProxyKind> {
    let (path, repo) = image_repository(c.image());
    let by_image = match repo {
        "proxyv2" => Some(ProxyKind::Istio),
        "proxy" if path.ends_with("linkerd/proxy") => Some(ProxyKind::Linkerd),
        "cloud-sql-proxy" | "cloudsql-proxy" | "gce-proxy" => Some(ProxyKind::CloudSql),
        _ => None,
    };
    by_image.or(match c.name() {
        "istio-proxy" => Some(ProxyKind::Istio),
        "linkerd-proxy" => Some(ProxyKind::Linkerd),
        "cloud-sql-proxy" | "cloudsql-proxy" => Some(ProxyKind::CloudSql),
        _ => None,
    })
}

/// How long a proxy keeps serving from the pod's deletion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProxyStop {
    /// It exits this many seconds after the deletion (its preStop sleep,
    /// then its own drain after SIGTERM); what says so.
    After(i64, String),
    /// It waits for its connections to end, as long as the grace period
    /// allows (Istio's `EXIT_ON_ZERO_ACTIVE_CONNECTIONS`): what says so.
    Connections(String),
    /// Its preStop hook is not a sleep lifeguard can read.
    Unknown,
}

/// When a proxy container stops serving after the pod's deletion, from its
/// own settings: its preStop sleep (for Linkerd, the injector's
/// `proxy-wait-before-exit-seconds` when the container has none), then
/// after SIGTERM Istio's `terminationDrainDuration` (5 s by default) or
/// `EXIT_ON_ZERO_ACTIVE_CONNECTIONS`, the Cloud SQL Auth Proxy's
/// `--max-sigterm-delay` (v1: `-term_timeout`, 0 by default), Linkerd's
/// nothing (it stops accepting at SIGTERM).
pub fn proxy_stop(w: &Workload, c: &ContainerView<'_>, kind: ProxyKind) -> ProxyStop {
    let annotation = |key: &str| w.annotations.get(key).map(String::as_str);
    let hook = c.container.lifecycle.as_ref().and_then(|l| l.pre_stop.as_ref());
    let (mut seconds, mut said) = match (hook.is_some(), prestop_sleep(c.container).map(|p| p.seconds)) {
        (_, Some(SleepSeconds::Finite(s))) => (s, vec![format!("preStop sleep {s}s")]),
        (true, _) => return ProxyStop::Unknown,
        (false, _) => (0, Vec::new()),
    };
    match kind {
        ProxyKind::Istio => {
            let config = annotation(ISTIO_PROXY_CONFIG).unwrap_or("");
            let env =
                |name: &str| c.container.env.iter().flatten().find(|e| e.name == name).and_then(|e| e.value.clone());
            let zero = env("EXIT_ON_ZERO_ACTIVE_CONNECTIONS").is_some_and(|v| v.trim() == "true")
                || setting(config, "EXIT_ON_ZERO_ACTIVE_CONNECTIONS").is_some_and(|v| v == "true");
            if zero {
                return ProxyStop::Connections("EXIT_ON_ZERO_ACTIVE_CONNECTIONS".to_owned());
            }
            let drain = env("TERMINATION_DRAIN_DURATION_SECONDS")
                .and_then(|v| parse_seconds(&v))
                .map(|s| (s, format!("TERMINATION_DRAIN_DURATION_SECONDS {s}")))
                .or_else(|| {
                    let s = parse_seconds(&setting(config, "terminationDrainDuration")?)?;
                    Some((s, format!("terminationDrainDuration {s}s")))
                })
                .unwrap_or((5, "terminationDrainDuration 5s, the default".to_owned()));
            seconds += drain.0;
            said.push(drain.1);
        }
        ProxyKind::Linkerd => {
            if hook.is_none() {
                if let Some(s) = annotation(LINKERD_WAIT_BEFORE_EXIT).and_then(parse_seconds) {
                    seconds += s;
                    said.push(format!("{LINKERD_WAIT_BEFORE_EXIT} {s}"));
                }
            }
            if said.is_empty() {
                said.push("it stops accepting at SIGTERM".to_owned());
            }
        }
        ProxyKind::CloudSql => {
            let args: Vec<&str> = c
                .container
                .command
                .iter()
                .flatten()
                .chain(c.container.args.iter().flatten())
                .map(String::as_str)
                .collect();
            let flag = ["--max-sigterm-delay", "-max-sigterm-delay", "-term_timeout", "--term_timeout"]
                .iter()
                .find_map(|f| Some((*f, flag_value(&args, f)?)));
            match flag {
                Some((f, raw)) => {
                    let Some(s) = parse_seconds(&raw) else { return ProxyStop::Unknown };
                    seconds += s;
                    said.push(format!("{f}={raw}"));
                }
                None => said.push("no --max-sigterm-delay: it exits at SIGTERM".to_owned()),
            }
        }
    }
    ProxyStop::After(seconds, said.join(" + "))
}

/// A flag's value, `--flag=v` or `--flag v`.
fn flag_value(args: &[&str], flag: &str) -> Option<String> {
    args.iter().enumerate().find_map(|(i, a)| match a.strip_prefix(flag) {
        Some(rest) if rest.starts_with('=') => Some(rest[1..].to_owned()),
        Some("") => args.get(i + 1).map(|v| (*v).to_owned()),
        _ => None,
    })
}

/// A setting's value in Istio's proxy config annotation, YAML or JSON
/// (`terminationDrainDuration: 30s`, `"terminationDrainDuration": "30s"`),
/// unquoted.
fn setting(config: &str, key: &str) -> Option<String> {
    let at = config.find(key)?;
    let rest = config[at + key.len()..].trim_start_matches(['"', '\'']).trim_start();
    let value = rest.strip_prefix(':')?.trim_start();
    let value: String = value
        .trim_start_matches(['"', '\''])
        .chars()
        .take_while(|ch| !matches!(ch, '"' | '\'' | ',' | '}' | '\n' | ' '))
        .collect();
    (!value.is_empty()).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::{flag_value, setting};

    #[test]
    fn reads_istio_settings_in_yaml_and_json() {
        assert_eq!(setting("terminationDrainDuration: 30s\n", "terminationDrainDuration"), Some("30s".into()));
        assert_eq!(setting("{\"terminationDrainDuration\": \"45s\"}", "terminationDrainDuration"), Some("45s".into()));
        let meta = "proxyMetadata:\n  EXIT_ON_ZERO_ACTIVE_CONNECTIONS: 'true'\n";
        assert_eq!(setting(meta, "EXIT_ON_ZERO_ACTIVE_CONNECTIONS"), Some("true".into()));
        assert_eq!(setting("holdApplicationUntilProxyStarts: true", "terminationDrainDuration"), None);
    }

    #[test]
    fn reads_a_flag_either_way() {
        assert_eq!(flag_value(&["--max-sigterm-delay=30s"], "--max-sigterm-delay"), Some("30s".into()));
        assert_eq!(flag_value(&["-term_timeout", "20s"], "-term_timeout"), Some("20s".into()));
        assert_eq!(flag_value(&["--max-sigterm-delayx=1"], "--max-sigterm-delay"), None);
    }
}
