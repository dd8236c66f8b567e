//! The typical Deployment AdmissionReview the webhook's benches send: what
//! `kubectl apply` of a Helm chart's Deployment puts on the wire.

use k8s_openapi::api::authentication::v1::UserInfo;
use serde_json::{Value, json};

use super::review::Review;

/// The Deployment a typical review carries: what `kubectl apply` of a Helm
/// chart's Deployment sends (labels, annotations including the
/// last-applied configuration, managedFields, two containers with ports,
/// env, resources and probes). The app container's liveness and readiness
/// probes share one endpoint, so the review has findings, as real ones do.
pub fn deployment() -> Value {
    let app = json!({
        "name": "orders",
        "image": "registry.example.com/shop/orders:1.14.2",
        "imagePullPolicy": "IfNotPresent",
        "args": ["--port=8080", "--metrics-port=9090", "--log-level=info"],
        "ports": [
            {"name": "http", "containerPort": 8080, "protocol": "TCP"},
            {"name": "metrics", "containerPort": 9090, "protocol": "TCP"}
        ],
        "env": [
            {"name": "SPRING_PROFILES_ACTIVE", "value": "production"},
            {"name": "SERVER_SHUTDOWN", "value": "graceful"},
            {"name": "DB_HOST", "value": "orders-db.shop.svc.cluster.local"},
            {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "orders-db", "key": "password"}}},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "JAVA_TOOL_OPTIONS", "value": "-XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError"}
        ],
        "resources": {"requests": {"cpu": "500m", "memory": "768Mi"}, "limits": {"memory": "1Gi"}},
        "livenessProbe": {
            "httpGet": {"path": "/actuator/health", "port": "http", "scheme": "HTTP"},
            "initialDelaySeconds": 30, "periodSeconds": 10, "timeoutSeconds": 2,
            "successThreshold": 1, "failureThreshold": 3
        },
        "readinessProbe": {
            "httpGet": {"path": "/actuator/health", "port": "http", "scheme": "HTTP"},
            "periodSeconds": 5, "timeoutSeconds": 2, "successThreshold": 1, "failureThreshold": 3
        },
        "lifecycle": {"preStop": {"sleep": {"seconds": 10}}},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/orders", "readOnly": true}],
        "securityContext": {"runAsNonRoot": true, "readOnlyRootFilesystem": true, "allowPrivilegeEscalation": false},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File"
    });
    let sidecar = json!({
        "name": "envoy",
        "image": "envoyproxy/envoy:v1.31.2",
        "imagePullPolicy": "IfNotPresent",
        "args": ["-c", "/etc/envoy/envoy.yaml", "--drain-time-s", "15"],
        "ports": [{"name": "admin", "containerPort": 9901, "protocol": "TCP"}],
        "env": [{"name": "ENVOY_UID", "value": "0"}],
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
        "livenessProbe": {
            "httpGet": {"path": "/server_info", "port": "admin"},
            "periodSeconds": 10, "timeoutSeconds": 2, "failureThreshold": 3
        },
        "readinessProbe": {"httpGet": {"path": "/ready", "port": "admin"}, "periodSeconds": 5, "timeoutSeconds": 2},
        "volumeMounts": [{"name": "envoy", "mountPath": "/etc/envoy", "readOnly": true}],
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File"
    });
    let labels = json!({
        "app.kubernetes.io/name": "orders",
        "app.kubernetes.io/instance": "orders",
        "app.kubernetes.io/version": "1.14.2",
        "app.kubernetes.io/part-of": "shop",
        "app.kubernetes.io/managed-by": "Helm",
        "helm.sh/chart": "orders-3.2.0"
    });
    let selector = json!({"app.kubernetes.io/name": "orders", "app.kubernetes.io/instance": "orders"});
    let spec = json!({
        "replicas": 3,
        "revisionHistoryLimit": 10,
        "progressDeadlineSeconds": 600,
        "selector": {"matchLabels": selector},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
        "template": {
            "metadata": {
                "labels": selector,
                "annotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090"}
            },
            "spec": {
                "serviceAccountName": "orders",
                "terminationGracePeriodSeconds": 45,
                "dnsPolicy": "ClusterFirst",
                "restartPolicy": "Always",
                "schedulerName": "default-scheduler",
                "securityContext": {"fsGroup": 1000},
                "containers": [app, sidecar],
                "volumes": [
                    {"name": "config", "configMap": {"name": "orders", "defaultMode": 420}},
                    {"name": "envoy", "configMap": {"name": "orders-envoy", "defaultMode": 420}}
                ]
            }
        }
    });
    let last_applied = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "orders", "namespace": "shop", "labels": labels},
        "spec": spec
    });
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "orders",
            "namespace": "shop",
            "uid": "7f6c2a55-7a43-4c38-9d1e-3b0f6e2f8a11",
            "generation": 1,
            "creationTimestamp": "2026-11-30T09:12:44Z",
            "labels": labels,
            "annotations": {
                "meta.helm.sh/release-name": "orders",
                "meta.helm.sh/release-namespace": "shop",
                "kubectl.kubernetes.io/last-applied-configuration": last_applied.to_string()
            },
            "managedFields": [{
                "manager": "kubectl-client-side-apply",
                "operation": "Update",
                "apiVersion": "apps/v1",
                "time": "2026-11-30T09:12:44Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}, "f:labels": {".": {}}}, "f:spec": {"f:replicas": {}, "f:selector": {}, "f:template": {"f:spec": {"f:containers": {}}}}}
            }]
        },
        "spec": spec
    })
}

/// A CREATE AdmissionReview for [`deployment`], as the API server sends
/// it for Argo CD's application controller.
pub fn review() -> Value {
    let user = UserInfo {
        username: Some("system:serviceaccount:argocd:argocd-application-controller".to_owned()),
        uid: Some("2b9d1c4e-5f6a-4b7c-8d9e-0a1b2c3d4e5f".to_owned()),
        groups: Some(
            ["system:serviceaccounts", "system:serviceaccounts:argocd", "system:authenticated"]
                .map(str::to_owned)
                .to_vec(),
        ),
        ..UserInfo::default()
    };
    Review::new("0f3e5c1a-9b2d-4e61-8a77-52c0d4b1e9f3", "CREATE", Some(&deployment()), None)
        .user(user)
        .field_manager("argocd-controller")
        .body()
}
