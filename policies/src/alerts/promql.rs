//! The PromQL that finds a workload's pods running and not Ready, on
//! kube-state-metrics' stable pod series (`docs/metrics/workload/
//! pod-metrics.md`; `internal/store/pod.go`):
//! - `kube_pod_status_ready{condition="false"}` is 1 while the pod's Ready
//!   condition is False;
//! - `kube_pod_status_phase{phase="Running"}` is 1 while it runs (live: a
//!   pod still Pending is the scheduler's or the image pull's, not the
//!   boot's);
//! - `kube_pod_owner{owner_kind, owner_name}` names its controller.

/// The characters of a pod-template hash: a Deployment's ReplicaSet is
/// named `DEPLOYMENT-HASH` (`pkg/controller/deployment/sync.go`,
/// `getNewReplicaSet`), its hash written with apimachinery's
/// `rand.SafeEncodeString` alphabet, which has no `-`: so the regex below
/// matches no other Deployment's ReplicaSets.
const HASH_ALPHABET: &str = "bcdfghjklmnpqrstvwxz2456789";

/// How the pods of one workload are told apart from the others'.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pods {
    /// By their controlling owner: its kind and a name (exact, or a
    /// regex for a Deployment's ReplicaSets).
    Owner { kind: &'static str, name: OwnerName },
    /// A bare Pod, by its own name.
    Named(String),
}

/// An owner's name in `kube_pod_owner`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OwnerName {
    /// Exactly this.
    Exact(String),
    /// Any ReplicaSet of this Deployment.
    ReplicaSetsOf(String),
    /// A LeaderWorkerSet's worker groups: the StatefulSets `NAME-0`,
    /// `NAME-1`, ... its controller creates for each leader pod, named
    /// after it (`pod_controller.go`, `constructWorkerStatefulSetApplyConfiguration`).
    GroupsOf(String),
    /// A LeaderWorkerSet without a leader template: its leaders' StatefulSet
    /// `NAME` and its groups', all from the one template.
    LeadersAndGroupsOf(String),
}

/// The expression: 1 for each pod of the workload that is running and
/// not Ready, with the pod's `namespace` and `pod` labels.
pub fn unready_pods(pods: &Pods, namespace: Option<&str>) -> String {
    let ns = namespace.map(|n| format!("namespace=\"{}\", ", quoted(n))).unwrap_or_default();
    let pod = match pods {
        Pods::Named(name) => format!("pod=\"{}\", ", quoted(name)),
        Pods::Owner { .. } => String::new(),
    };
    let mut expr = format!(
        "kube_pod_status_ready{{{ns}{pod}condition=\"false\"}} == 1\n\
         and on (namespace, pod) kube_pod_status_phase{{{ns}{pod}phase=\"Running\"}} == 1"
    );
    if let Pods::Owner { kind, name } = pods {
        let owner = match name {
            OwnerName::Exact(name) => format!("owner_name=\"{}\"", quoted(name)),
            OwnerName::ReplicaSetsOf(deployment) => {
                format!("owner_name=~\"{}-[{HASH_ALPHABET}]+\"", quoted(&regex_literal(deployment)))
            }
            OwnerName::GroupsOf(set) => format!("owner_name=~\"{}-[0-9]+\"", quoted(&regex_literal(set))),
            OwnerName::LeadersAndGroupsOf(set) => {
                format!("owner_name=~\"{}(-[0-9]+)?\"", quoted(&regex_literal(set)))
            }
        };
        expr.push_str(&format!("\nand on (namespace, pod) kube_pod_owner{{{ns}owner_kind=\"{kind}\", {owner}}}"));
    }
    expr
}

/// `text` inside a PromQL double-quoted string.
fn quoted(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// `text` matched literally by a RE2 regex (a name's `.`).
fn regex_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Seconds as a Prometheus duration (`11m`, `1h30s`), which the
/// PrometheusRule CRD's `for` pattern and Prometheus accept.
pub fn duration(seconds: i64) -> String {
    let seconds = seconds.max(0);
    let (h, m, s) = (seconds / 3600, seconds % 3600 / 60, seconds % 60);
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if m > 0 {
        out.push_str(&format!("{m}m"));
    }
    if s > 0 || out.is_empty() {
        out.push_str(&format!("{s}s"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{OwnerName, Pods, duration, unready_pods};

    #[test]
    fn durations() {
        assert_eq!(duration(0), "0s");
        assert_eq!(duration(300), "5m");
        assert_eq!(duration(661), "11m1s");
        assert_eq!(duration(3630), "1h30s");
    }

    #[test]
    fn a_deployment_is_found_by_its_replica_sets_and_a_dot_is_literal() {
        let pods = Pods::Owner { kind: "ReplicaSet", name: OwnerName::ReplicaSetsOf("web.v2".into()) };
        let expr = unready_pods(&pods, Some("shop"));
        assert!(expr.contains(r#"owner_name=~"web\\.v2-[bcdfghjklmnpqrstvwxz2456789]+""#), "{expr}");
        assert!(expr.starts_with(r#"kube_pod_status_ready{namespace="shop", condition="false"} == 1"#), "{expr}");
    }

    #[test]
    fn a_bare_pod_is_found_by_name_without_an_owner() {
        let expr = unready_pods(&Pods::Named("debug".into()), None);
        assert!(!expr.contains("kube_pod_owner"), "{expr}");
        assert!(expr.contains(r#"kube_pod_status_phase{pod="debug", phase="Running"}"#), "{expr}");
    }
}
