{{/*
Chart name, truncated to 63 characters (the DNS label limit of Kubernetes names).
*/}}
{{- define "monitor-server.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified app name: <release>-<chart>, or <release> alone when it already contains the chart name.
*/}}
{{- define "monitor-server.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Namespace of every namespaced object.
*/}}
{{- define "monitor-server.namespace" -}}
{{- default .Release.Namespace .Values.namespaceOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Chart label value: <chart>-<version>.
*/}}
{{- define "monitor-server.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Selector labels: stable for the life of a release (a Deployment's selector is immutable).
*/}}
{{- define "monitor-server.selectorLabels" -}}
app.kubernetes.io/name: {{ include "monitor-server.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Labels of the `helm test` pod. Deliberately not the selector labels: the Deployment's ReplicaSet would adopt it and
the Service would send it traffic.
*/}}
{{- define "monitor-server.testSelectorLabels" -}}
app.kubernetes.io/name: {{ printf "%s-test" (include "monitor-server.name" .) | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: test
{{- end }}

{{/*
Labels of the retention CronJob, its Jobs and pods: not the selector labels either (the Service would send the purge
pod traffic).
*/}}
{{- define "monitor-server.retentionLabels" -}}
helm.sh/chart: {{ include "monitor-server.chart" . }}
app.kubernetes.io/name: {{ printf "%s-retention" (include "monitor-server.name" .) | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ (include "monitor-server.imageTag" .) | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/component: retention
app.kubernetes.io/part-of: monitor-server
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
Common labels of every object.
*/}}
{{- define "monitor-server.labels" -}}
helm.sh/chart: {{ include "monitor-server.chart" . }}
{{ include "monitor-server.selectorLabels" . }}
app.kubernetes.io/version: {{ (include "monitor-server.imageTag" .) | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/component: server
app.kubernetes.io/part-of: monitor-server
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
Common annotations, as a full `annotations:` block merged with the object's own ones (pass a dict: context, extra).
*/}}
{{- define "monitor-server.annotations" -}}
{{- $all := merge (dict) (.extra | default dict) (.context.Values.commonAnnotations | default dict) }}
{{- with $all -}}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
Name of the ServiceAccount.
*/}}
{{- define "monitor-server.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "monitor-server.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
Image tag: image.tag, else the chart's appVersion.
*/}}
{{- define "monitor-server.imageTag" -}}
{{- .Values.image.tag | default .Chart.AppVersion | toString }}
{{- end }}

{{/*
Full image reference: [registry/]repository(:tag|@digest).
*/}}
{{- define "monitor-server.image" -}}
{{- $repository := .Values.image.repository }}
{{- if .Values.image.registry }}
{{- $repository = printf "%s/%s" (trimSuffix "/" .Values.image.registry) .Values.image.repository }}
{{- end }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" $repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" $repository (include "monitor-server.imageTag" .) }}
{{- end }}
{{- end }}

{{/*
Name of the Secret holding the Elasticsearch credentials (the user's existingSecret, or the chart's).
*/}}
{{- define "monitor-server.elasticsearchSecretName" -}}
{{- .Values.config.elasticsearch.auth.existingSecret | default (printf "%s-elasticsearch" (include "monitor-server.fullname" .)) }}
{{- end }}

{{/*
True ("true") when the chart itself must create the Elasticsearch credentials Secret.
*/}}
{{- define "monitor-server.createElasticsearchSecret" -}}
{{- $auth := .Values.config.elasticsearch.auth }}
{{- if and (eq .Values.config.store "elasticsearch") (ne $auth.method "none") (not $auth.existingSecret) }}true{{- end }}
{{- end }}

{{/*
Name of the PVC of the SQLite file.
*/}}
{{- define "monitor-server.claimName" -}}
{{- .Values.persistence.existingClaim | default (printf "%s-data" (include "monitor-server.fullname" .)) }}
{{- end }}

{{/*
Mount path of the Elasticsearch CA bundle and the file path handed to ELASTICSEARCH_CA_FILE.
*/}}
{{- define "monitor-server.caDir" -}}/etc/monitor-server/elasticsearch-ca{{- end }}
{{- define "monitor-server.caFile" -}}
{{- printf "%s/%s" (include "monitor-server.caDir" .) .Values.config.elasticsearch.tls.ca.key }}
{{- end }}
{{- define "monitor-server.hasCA" -}}
{{- $ca := .Values.config.elasticsearch.tls.ca }}
{{- if and (eq .Values.config.store "elasticsearch") (or $ca.secretName $ca.configMapName) }}true{{- end }}
{{- end }}

{{/*
The Elasticsearch credentials as env entries (a YAML list; empty for sqlite or auth.method=none), and the CA bundle's
volume and mount: shared by the Deployment and the retention CronJob, which open the same store.
*/}}
{{- define "monitor-server.elasticsearchEnv" -}}
{{- $auth := .Values.config.elasticsearch.auth }}
{{- if eq .Values.config.store "elasticsearch" }}
{{- if eq $auth.method "basic" }}
{{- if and $auth.existingSecret $auth.existingSecretKeys.username }}
- name: ELASTICSEARCH_USERNAME
  valueFrom:
    secretKeyRef:
      name: {{ include "monitor-server.elasticsearchSecretName" . }}
      key: {{ $auth.existingSecretKeys.username }}
{{- else }}
- name: ELASTICSEARCH_USERNAME
  value: {{ $auth.username | quote }}
{{- end }}
- name: ELASTICSEARCH_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "monitor-server.elasticsearchSecretName" . }}
      key: {{ $auth.existingSecretKeys.password }}
{{- else if eq $auth.method "apiKey" }}
- name: ELASTICSEARCH_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "monitor-server.elasticsearchSecretName" . }}
      key: {{ $auth.existingSecretKeys.apiKey }}
{{- end }}
{{- end }}
{{- end }}
{{- define "monitor-server.elasticsearchCAMount" -}}
{{- if include "monitor-server.hasCA" . }}
- name: elasticsearch-ca
  mountPath: {{ include "monitor-server.caDir" . }}
  readOnly: true
{{- end }}
{{- end }}
{{- define "monitor-server.elasticsearchCAVolume" -}}
{{- if include "monitor-server.hasCA" . }}
{{- $ca := .Values.config.elasticsearch.tls.ca }}
- name: elasticsearch-ca
  {{- if $ca.secretName }}
  secret:
    secretName: {{ $ca.secretName }}
    defaultMode: 0444
    items:
      - key: {{ $ca.key }}
        path: {{ $ca.key }}
  {{- else }}
  configMap:
    name: {{ $ca.configMapName }}
    defaultMode: 0444
    items:
      - key: {{ $ca.key }}
        path: {{ $ca.key }}
  {{- end }}
{{- end }}
{{- end }}

{{/*
Access control. The tokens file is mounted from a Secret (the user's auth.existingSecret, or the chart's) as a
directory, so that kubelet's atomic update of a rotated Secret reaches the file the service re-reads.
*/}}
{{- define "monitor-server.authSecretName" -}}
{{- .Values.auth.existingSecret | default (printf "%s-auth" (include "monitor-server.fullname" .)) }}
{{- end }}
{{- define "monitor-server.createAuthSecret" -}}
{{- if and .Values.auth.enabled (not .Values.auth.existingSecret) }}true{{- end }}
{{- end }}
{{- define "monitor-server.authDir" -}}/etc/monitor-server/auth{{- end }}
{{- define "monitor-server.tokensFile" -}}{{ include "monitor-server.authDir" . }}/tokens{{- end }}

{{/*
The Secret and key of the bearer token the ServiceMonitor sends when auth.metrics is on ("" when none is needed).
*/}}
{{- define "monitor-server.metricsTokenSecretName" -}}
{{- if and .Values.auth.enabled .Values.auth.metrics }}
{{- .Values.serviceMonitor.tokenSecret.name | default (include "monitor-server.authSecretName" .) }}
{{- end }}
{{- end }}

{{/*
terminationGracePeriodSeconds: explicit, or preStop sleep + SHUTDOWN_GRACE_MS (rounded up) + 5 s of margin.
*/}}
{{- define "monitor-server.terminationGracePeriodSeconds" -}}
{{- if not (kindIs "string" .Values.terminationGracePeriodSeconds) }}
{{- .Values.terminationGracePeriodSeconds | int }}
{{- else }}
{{- $graceSeconds := div (add (int .Values.config.shutdownGraceMs) 999) 1000 }}
{{- add (int .Values.preStopSleepSeconds) $graceSeconds 5 }}
{{- end }}
{{- end }}

{{/*
Deployment strategy: explicit, or Recreate for sqlite and a zero-downtime RollingUpdate for elasticsearch.
*/}}
{{- define "monitor-server.updateStrategy" -}}
{{- if .Values.updateStrategy }}
{{- toYaml .Values.updateStrategy }}
{{- else if eq .Values.config.store "sqlite" }}
type: Recreate
{{- else }}
type: RollingUpdate
rollingUpdate:
  maxSurge: 25%
  maxUnavailable: 0
{{- end }}
{{- end }}

{{/*
Combinations of values that cannot work. Rendered (as nothing) by the Deployment, so every `helm template`,
`helm install` and `helm upgrade` stops on them with a message that says what to change.
*/}}
{{- define "monitor-server.validateValues" -}}
{{- $store := .Values.config.store }}
{{- if eq $store "sqlite" }}
{{- if .Values.autoscaling.enabled }}
{{- fail "\n\nautoscaling.enabled=true needs config.store=elasticsearch: the sqlite store is one SQLite file with a single writer and must run as exactly one replica. Either set config.store=elasticsearch (with config.elasticsearch.url) or set autoscaling.enabled=false." }}
{{- end }}
{{- if gt (int .Values.replicaCount) 1 }}
{{- fail (printf "\n\nreplicaCount=%d needs config.store=elasticsearch: the sqlite store is one SQLite file with a single writer and must run as exactly one replica. Either set config.store=elasticsearch (with config.elasticsearch.url) or set replicaCount=1." (int .Values.replicaCount)) }}
{{- end }}
{{- if and .Values.persistence.enabled (not .Values.persistence.existingClaim) (not (has "ReadWriteOnce" .Values.persistence.accessModes)) (not (has "ReadWriteOncePod" .Values.persistence.accessModes)) }}
{{- fail "\n\npersistence.accessModes must contain ReadWriteOnce or ReadWriteOncePod: the SQLite file must have a single writer." }}
{{- end }}
{{- end }}
{{- if and .Values.retention.enabled (eq $store "sqlite") }}
{{- fail (printf "\n\nretention.enabled=true needs config.store=elasticsearch: the SQLite file is on the Deployment's ReadWriteOnce volume, which a CronJob pod cannot share safely (it may run on another node, and SQLite locks do not hold across pods on network storage). With sqlite, set retention.enabled=false and purge inside the running pod: kubectl exec -n %s deploy/%s -- node dist/src/cli/main.js purge --older-than %dd --yes" (include "monitor-server.namespace" .) (include "monitor-server.fullname" .) (int .Values.retention.days)) }}
{{- end }}
{{- if eq $store "elasticsearch" }}
{{- if not .Values.config.elasticsearch.url }}
{{- fail "\n\nconfig.store=elasticsearch needs config.elasticsearch.url (e.g. https://quickstart-es-http.elastic-system.svc:9200). This chart does not deploy Elasticsearch." }}
{{- end }}
{{- $auth := .Values.config.elasticsearch.auth }}
{{- if and (eq $auth.method "basic") (not $auth.existingSecret) (not $auth.password) }}
{{- fail "\n\nconfig.elasticsearch.auth.method=basic needs config.elasticsearch.auth.existingSecret (preferred) or config.elasticsearch.auth.password." }}
{{- end }}
{{- if and (eq $auth.method "basic") (not $auth.username) (or (not $auth.existingSecret) (not $auth.existingSecretKeys.username)) }}
{{- fail "\n\nconfig.elasticsearch.auth.method=basic needs config.elasticsearch.auth.username (ECK: elastic), or existingSecret with existingSecretKeys.username." }}
{{- end }}
{{- if and (eq $auth.method "apiKey") (not $auth.existingSecret) (not $auth.apiKey) }}
{{- fail "\n\nconfig.elasticsearch.auth.method=apiKey needs config.elasticsearch.auth.existingSecret (preferred) or config.elasticsearch.auth.apiKey." }}
{{- end }}
{{- end }}
{{- if .Values.autoscaling.enabled }}
{{- if gt (int .Values.autoscaling.minReplicas) (int .Values.autoscaling.maxReplicas) }}
{{- fail (printf "\n\nautoscaling.minReplicas (%d) must not exceed autoscaling.maxReplicas (%d)." (int .Values.autoscaling.minReplicas) (int .Values.autoscaling.maxReplicas)) }}
{{- end }}
{{- if and (kindIs "string" .Values.autoscaling.targetCPUUtilizationPercentage) (kindIs "string" .Values.autoscaling.targetMemoryUtilizationPercentage) }}
{{- fail "\n\nautoscaling.enabled=true needs autoscaling.targetCPUUtilizationPercentage and/or autoscaling.targetMemoryUtilizationPercentage." }}
{{- end }}
{{- end }}
{{- if .Values.podDisruptionBudget.enabled }}
{{- $pdb := .Values.podDisruptionBudget }}
{{- if and (ne (toString $pdb.minAvailable) "") (ne (toString $pdb.maxUnavailable) "") }}
{{- fail "\n\npodDisruptionBudget: set either minAvailable or maxUnavailable, not both (set the other to \"\")." }}
{{- end }}
{{- if and (eq (toString $pdb.minAvailable) "") (eq (toString $pdb.maxUnavailable) "") }}
{{- fail "\n\npodDisruptionBudget.enabled=true needs minAvailable or maxUnavailable." }}
{{- end }}
{{- end }}
{{- $http := .Values.config.http }}
{{- if gt (int $http.headersTimeoutMs) (int $http.requestTimeoutMs) }}
{{- fail (printf "\n\nconfig.http.headersTimeoutMs (%d) must not exceed config.http.requestTimeoutMs (%d): Node's HTTP server refuses to start otherwise." (int $http.headersTimeoutMs) (int $http.requestTimeoutMs)) }}
{{- end }}
{{- if .Values.auth.enabled }}
{{- /* the names of the tokens the chart generates (templates/auth-secret.yaml) */}}
{{- $reserved := list "helm-generated" "helm-test" "helm-metrics" }}
{{- $seen := dict }}
{{- range .Values.auth.tokens }}
{{- if has .name $reserved }}
{{- fail (printf "\n\nauth.tokens: the name %q is reserved for a token the chart generates (%s); choose another." .name (join ", " $reserved)) }}
{{- end }}
{{- if hasKey $seen .name }}
{{- fail (printf "\n\nauth.tokens: the name %q is used twice; the service refuses a tokens file with a duplicate name." .name) }}
{{- end }}
{{- $_ := set $seen .name true }}
{{- end }}
{{- if and .Values.auth.existingSecret .Values.auth.tokens }}
{{- fail "\n\nauth.tokens is ignored when auth.existingSecret is set: put the tokens file lines in that Secret (key tokens), or leave auth.existingSecret empty." }}
{{- end }}
{{- if and .Values.auth.metrics .Values.serviceMonitor.enabled (not .Values.serviceMonitor.tokenSecret.name) .Values.serviceMonitor.namespace (ne .Values.serviceMonitor.namespace (include "monitor-server.namespace" .)) }}
{{- fail (printf "\n\nauth.metrics=true with serviceMonitor.namespace=%s: Prometheus reads the bearer token from a Secret in the ServiceMonitor's namespace, and the tokens Secret is in %s. Create a Secret with a token in %s and set serviceMonitor.tokenSecret.name (and .key)." .Values.serviceMonitor.namespace (include "monitor-server.namespace" .) .Values.serviceMonitor.namespace) }}
{{- end }}
{{- end }}
{{- if not (kindIs "string" .Values.terminationGracePeriodSeconds) }}
{{- $needed := add (int .Values.preStopSleepSeconds) (div (add (int .Values.config.shutdownGraceMs) 999) 1000) }}
{{- if le (int .Values.terminationGracePeriodSeconds) (int $needed) }}
{{- fail (printf "\n\nterminationGracePeriodSeconds=%d must exceed preStopSleepSeconds + config.shutdownGraceMs/1000 = %d s, or in-flight requests are killed before the graceful shutdown ends. Raise it, or leave it empty to derive it." (int .Values.terminationGracePeriodSeconds) (int $needed)) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The V8 heap the service may grow to, in MiB: 40 % of the container's memory limit (a whole number of Mi or Gi, or of
bytes), so that Node collects garbage before the kernel kills the pod. Without it Node sizes its heap from the node's
memory, not the pod's: under a `/bulk` load the service grew to 893 MB (bench/results/2026-11-26-scale.md). Empty when
there is no limit, or one written otherwise (e.g. "1.5Gi"): Node's own default then.
*/}}
{{- define "monitor-server.heapMebibytes" -}}
{{- with .Values.resources.limits.memory -}}
{{- $q := toString . -}}
{{- $mi := 0 -}}
{{- if regexMatch "^[0-9]+Gi$" $q -}}{{- $mi = mul (trimSuffix "Gi" $q | atoi) 1024 -}}
{{- else if regexMatch "^[0-9]+Mi$" $q -}}{{- $mi = trimSuffix "Mi" $q | atoi -}}
{{- else if regexMatch "^[0-9]+$" $q -}}{{- $mi = div ($q | atoi) 1048576 -}}
{{- end -}}
{{- if gt (int $mi) 0 -}}{{- div (mul $mi 40) 100 -}}{{- end -}}
{{- end -}}
{{- end }}
