//! The generated stream the throughput bench reads and the tests that hold
//! the parallel path to the single-threaded one use: realistic Deployments
//! as `helm template` writes them.

/// One Deployment, varied by `i` so rules see a realistic mix of findings.
pub fn deployment(i: usize) -> String {
    let gpu = if i % 10 == 0 { "\n            nvidia.com/gpu: \"1\"" } else { "" };
    let image = if i % 10 == 0 { "vllm/vllm-openai:v0.6.0" } else { "registry.example.com/team/api:1.4.2" };
    let ready_path = if i % 3 == 0 { "/healthz" } else { "/readyz" };
    format!(
        r#"---
# Source: app/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: api-{i}
  namespace: team-{ns}
  labels:
    app.kubernetes.io/name: api-{i}
    app.kubernetes.io/part-of: shop
spec:
  replicas: 3
  selector:
    matchLabels:
      app.kubernetes.io/name: api-{i}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: api-{i}
      annotations:
        prometheus.io/scrape: "true"
    spec:
      terminationGracePeriodSeconds: 30
      containers:
      - name: api
        image: {image}
        args: ["--port=8080", "--log-level=info"]
        ports:
        - name: http
          containerPort: 8080
        - name: metrics
          containerPort: 9090
        env:
        - name: APP_DRAIN_SECONDS
          value: "15"
        - name: APP_SHUTDOWN_TIMEOUT_SECONDS
          value: "{shutdown}"
        resources:
          requests:
            cpu: 250m
            memory: 256Mi
          limits:
            memory: 512Mi{gpu}
        livenessProbe:
          httpGet:
            path: /healthz
            port: http
          initialDelaySeconds: {delay}
          periodSeconds: 10
          failureThreshold: 3
        readinessProbe:
          httpGet:
            path: {ready_path}
            port: 8080
          periodSeconds: 5
        lifecycle:
          preStop:
            exec:
              command: ["sh", "-c", "sleep 10"]
"#,
        ns = i % 7,
        shutdown = 5 + i % 20,
        delay = if i % 4 == 0 { 45 } else { 5 },
    )
}
