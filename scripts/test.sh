#!/usr/bin/env bash
# Everything `make test` runs, in order: a real Elasticsearch node for the store suites, the client virtualenv for
# the end-to-end suite, every mocha suite against both stores, then the deployment checks. The node is stopped
# whatever happens. Assumes `make build` ran (the Makefile does it first).
set -euo pipefail
cd "$(dirname "$0")/.."

export ELASTICSEARCH_URL="${TEST_ELASTICSEARCH_URL:-http://127.0.0.1:9250}"
export MONITOR_TEST_STORES="${MONITOR_TEST_STORES:-sqlite,elasticsearch}"

started_node=false
cleanup() {
  if [[ "$started_node" == true ]]; then bash scripts/elasticsearch.sh stop || true; fi
}
trap cleanup EXIT

if [[ ",$MONITOR_TEST_STORES," == *",elasticsearch,"* ]]; then
  echo "== starting Elasticsearch at $ELASTICSEARCH_URL"
  bash scripts/elasticsearch.sh start
  started_node=true
fi

echo "== preparing the pytest-monitor client virtualenv"
bash scripts/client-venv.sh >/dev/null

echo "== mocha suites on: $MONITOR_TEST_STORES"
npx mocha 'test/**/*.test.ts'

if [[ -f scripts/check-deploy.sh ]]; then
  echo "== deployment checks (Dockerfile, Helm chart, k8s manifests)"
  bash scripts/check-deploy.sh
fi
