{{/* The release-scoped name of every object. */}}
{{- define "lifeguard.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "lifeguard.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "lifeguard.labels" -}}
{{ include "lifeguard.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The serving certificate's Secret. */}}
{{- define "lifeguard.tlsSecret" -}}
{{ include "lifeguard.fullname" . }}-tls
{{- end -}}

{{/* The grace period: preStop sleep + drain + shutdown budget + margin. */}}
{{- define "lifeguard.gracePeriod" -}}
{{- $s := .Values.shutdown -}}
{{- add $s.preStopSleepSeconds $s.drainSeconds $s.shutdownBudgetSeconds $s.marginSeconds -}}
{{- end -}}

{{/* Namespaces never sent to lifeguard. */}}
{{- define "lifeguard.excluded" -}}
{{- $ns := list "kube-system" .Release.Namespace -}}
{{- range .Values.webhook.excludeNamespaces }}{{ $ns = append $ns . }}{{ end -}}
{{- toJson (uniq $ns) -}}
{{- end -}}

{{/* The pod-bearing kinds lifeguard judges, as webhook rules. */}}
{{- define "lifeguard.rules" -}}
- operations: [CREATE, UPDATE]
  apiGroups: [""]
  apiVersions: [v1]
  resources: [pods, replicationcontrollers, podtemplates]
  scope: Namespaced
- operations: [CREATE, UPDATE]
  apiGroups: [apps]
  apiVersions: [v1]
  resources: [deployments, statefulsets, daemonsets, replicasets]
  scope: Namespaced
- operations: [CREATE, UPDATE]
  apiGroups: [batch]
  apiVersions: [v1]
  resources: [jobs, cronjobs]
  scope: Namespaced
{{- if .Values.webhook.customResources }}
{{- /* The engine's table of custom kinds (CUSTOM_POD_KINDS; tests/tests/deploy.rs holds them equal). */}}
- operations: [CREATE, UPDATE]
  apiGroups: [leaderworkerset.x-k8s.io]
  apiVersions: ["*"]
  resources: [leaderworkersets]
  scope: Namespaced
- operations: [CREATE, UPDATE]
  apiGroups: [ray.io]
  apiVersions: ["*"]
  resources: [rayclusters, rayservices, rayjobs]
  scope: Namespaced
- operations: [CREATE, UPDATE]
  apiGroups: [serving.kserve.io]
  apiVersions: ["*"]
  resources: [inferenceservices]
  scope: Namespaced
- operations: [CREATE, UPDATE]
  apiGroups: [kubeflow.org]
  apiVersions: ["*"]
  resources: [pytorchjobs, tfjobs, mpijobs]
  scope: Namespaced
- operations: [CREATE, UPDATE]
  apiGroups: [jobset.x-k8s.io]
  apiVersions: ["*"]
  resources: [jobsets]
  scope: Namespaced
- operations: [CREATE, UPDATE]
  apiGroups: [orchestration.aibrix.ai]
  apiVersions: ["*"]
  resources: [rayclusterfleets, stormservices]
  scope: Namespaced
{{- end }}
{{- range .Values.webhook.extraRules }}
- operations: [CREATE, UPDATE]
  apiGroups: {{ toJson .apiGroups }}
  apiVersions: {{ toJson .apiVersions }}
  resources: {{ toJson .resources }}
  scope: Namespaced
{{- end }}
{{- end -}}

{{/* What both webhook configurations share for one webhook entry. */}}
{{- define "lifeguard.webhookCommon" -}}
admissionReviewVersions: [v1]
sideEffects: None
timeoutSeconds: {{ .root.Values.webhook.timeoutSeconds }}
failurePolicy: {{ .root.Values.webhook.failurePolicy }}
matchPolicy: Equivalent
clientConfig:
  service:
    name: {{ include "lifeguard.fullname" .root }}
    namespace: {{ .root.Release.Namespace }}
    path: {{ .path }}
    port: 443
  {{- if not .root.Values.certManager.enabled }}
  caBundle: {{ .caBundle }}
  {{- end }}
rules:
{{ include "lifeguard.rules" .root }}
{{- end -}}

{{/*
The serving pair without cert-manager: reused from the Secret when it exists
(so `helm upgrade` keeps the CA the webhook configurations trust), else a new
CA and serving certificate. Returns a dict with ca, crt and key (PEM).
*/}}
{{- define "lifeguard.generatedPair" -}}
{{- $name := include "lifeguard.tlsSecret" . -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace $name -}}
{{- if and $existing (index $existing.data "ca.crt") -}}
{{- dict "ca" (index $existing.data "ca.crt" | b64dec) "crt" (index $existing.data "tls.crt" | b64dec) "key" (index $existing.data "tls.key" | b64dec) | toJson -}}
{{- else -}}
{{- $svc := include "lifeguard.fullname" . -}}
{{- $ns := .Release.Namespace -}}
{{- $dns := list $svc (printf "%s.%s" $svc $ns) (printf "%s.%s.svc" $svc $ns) (printf "%s.%s.svc.cluster.local" $svc $ns) -}}
{{- $ca := genCA (printf "%s-ca" $svc) 3650 -}}
{{- $cert := genSignedCert (printf "%s.%s.svc" $svc $ns) nil $dns 3650 $ca -}}
{{- dict "ca" $ca.Cert "crt" $cert.Cert "key" $cert.Key | toJson -}}
{{- end -}}
{{- end -}}
