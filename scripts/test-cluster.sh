#!/usr/bin/env bash
# scripts/test-cluster.sh — the cluster step of `make test` (scripts/test.sh): starts a 3-node Elasticsearch cluster
# on loopback (scripts/elasticsearch-cluster.sh), runs the store contract suite on it with every index in 3 shards
# with 1 replica, then the cluster suites (test/cluster/*.cluster.ts: the layout, kill -9 of a node under load, a
# rolling restart under load), and stops the cluster whatever happens. The last line is
# "cluster: N passed, M failed"; timings are printed before it.
#
# Environment: ES_CLUSTER_PORTS (default "9301 9302 9303"; transport ports +10), ES_HEAP (default 512m per node).
set -euo pipefail
cd "$(dirname "$0")/.."

export ES_CLUSTER_PORTS="${ES_CLUSTER_PORTS:-9301 9302 9303}"
log="$(mktemp)"
started=false
cleanup() {
  if [[ "$started" == true ]]; then bash scripts/elasticsearch-cluster.sh stop || true; fi
  rm -f "$log"
}
trap cleanup EXIT

t0=$SECONDS
started=true
if ! bash scripts/elasticsearch-cluster.sh start; then
  echo "cluster: 0 passed, 1 failed (the cluster did not start)"
  exit 1
fi
t_start=$((SECONDS - t0))

t1=$SECONDS
status=0
ELASTICSEARCH_URL="$(bash scripts/elasticsearch-cluster.sh urls)" ELASTICSEARCH_SHARDS=3 ELASTICSEARCH_REPLICAS=1 \
  MONITOR_TEST_STORES=elasticsearch npx mocha test/contract/stores.test.ts 'test/cluster/*.cluster.ts' 2>&1 |
  tee "$log" || status=$?
t_suites=$((SECONDS - t1))

t2=$SECONDS
bash scripts/elasticsearch-cluster.sh stop
started=false
t_stop=$((SECONDS - t2))

passed="$(grep -Eo '^ *[0-9]+ passing' "$log" | tail -n 1 | grep -Eo '[0-9]+' || echo 0)"
failed="$(grep -Eo '^ *[0-9]+ failing' "$log" | tail -n 1 | grep -Eo '[0-9]+' || echo 0)"
if ((status != 0 && failed == 0)); then failed=1; fi
echo "cluster timings: start ${t_start}s, suites ${t_suites}s, stop ${t_stop}s, total $((SECONDS - t0))s"
echo "cluster: $passed passed, $failed failed"
((failed == 0))
