#!/usr/bin/env bash
# bench/suite/run.sh — every benchmark in one command (`make bench` runs it after `make build`).
#
#   1. ingest as pytest-monitor posts: ours on SQLite, ours on Elasticsearch, the original (uWSGI, SQLite)
#   2. the ceiling: the same documents straight to Elasticsearch _bulk
#   3. queries at scale (BENCH_METRICS, default 1,000,000) on both our stores and the original
#   4. insight at scale: regressions of a 10,000-test build and a variant's history over 500 builds, both our stores
#   5. the report: printed and written to bench/results/<YYYY-MM-DD>[-scaled].md
#
# Loopback only. It starts its own Elasticsearch node (127.0.0.1:$BENCH_ES_PORT, default 9270) unless one already
# answers there, and our service and the original on ports from $BENCH_PORT (default 18180); it stops all it started.
# Settings (environment): see bench/README.md — BENCH_SECONDS, BENCH_METRICS, BENCH_STEPS, BENCH_REUSE, ...
set -euo pipefail
cd "$(dirname "$0")/../.."

export BENCH_ES_PORT="${BENCH_ES_PORT:-9270}"
export ELASTICSEARCH_URL="http://127.0.0.1:${BENCH_ES_PORT}"
export ES_HEAP="${ES_HEAP:-1g}"
export BENCH_RUN_DIR="${BENCH_RUN_DIR:-$PWD/bench/tmp/run-$(date +%Y%m%d-%H%M%S)}"
export BENCH_LOADAVG_START
BENCH_LOADAVG_START="$(cut -d' ' -f1-3 /proc/loadavg | sed 's/ /, /g')"
STEPS="${BENCH_STEPS:-ingest,ceiling,queries,insight,patterns}"
STEP_TIMEOUT="${BENCH_STEP_TIMEOUT:-10800}"

# The exact command, with the settings that changed it.
overrides="$(env | grep -E '^(BENCH_[A-Z_]+|ES_HEAP)=' | grep -vE '^BENCH_(RUN_DIR|LOADAVG_START|COMMAND|GIT_START|DIST_START)=' | sort | tr '\n' ' ' || true)"
export BENCH_COMMAND="${overrides}make bench"

log() { printf '[bench] %s\n' "$*" >&2; }

[[ -f dist/src/server.js ]] || { log "dist/src/server.js is missing: run 'make build' first (make bench does)"; exit 1; }
# What was measured: the report compares these with the same facts at the end (a rebuild during the run shows).
export BENCH_GIT_START BENCH_DIST_START
BENCH_GIT_START="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
BENCH_DIST_START="$(date -u -r dist/src/server.js "+%Y-%m-%d %H:%M")"
mkdir -p "$BENCH_RUN_DIR"

started_es=false
child=""
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if [[ -n "$child" ]] && kill -0 "$child" 2>/dev/null; then
    kill -TERM "$child" 2>/dev/null || true
    wait "$child" 2>/dev/null || true
  fi
  if [[ "$started_es" == true ]]; then
    if [[ "${BENCH_REUSE:-}" == 1 ]]; then
      bash scripts/elasticsearch.sh pause || true # keeps the loaded indices for the next BENCH_REUSE=1 run
    else
      bash scripts/elasticsearch.sh stop || true
    fi
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# One step: a TypeScript file run by Node with the tsx loader (one process, so a signal reaches it), bounded in time.
step() {
  log "== $*"
  timeout -k 30 "$STEP_TIMEOUT" node --import tsx "$@" &
  child=$!
  wait "$child"
  child=""
}

log "results and logs of this run: ${BENCH_RUN_DIR#"$PWD"/}"
if [[ ",$STEPS," == *",ingest,"* || ",$STEPS," == *",queries,"* || ",$STEPS," == *",bulk,"* ]]; then
  log "== the original server's virtualenv (built once into .cache/)"
  bash bench/suite/original-server.sh setup
fi
if ! bash scripts/elasticsearch.sh status 2>/dev/null; then
  bash scripts/elasticsearch.sh start
  started_es=true
fi

[[ ",$STEPS," == *",ingest,"* ]] && step bench/suite/ingest.ts "${BENCH_INGEST_TARGETS:-sqlite,sqlite-normal,elasticsearch,original}"
[[ ",$STEPS," == *",ceiling,"* ]] && step bench/suite/bulk-ceiling.ts
[[ ",$STEPS," == *",bulk,"* ]] && step bench/suite/bulk.ts "${BENCH_BULK_TARGETS:-sqlite,sqlite-normal,elasticsearch,original,push}"
[[ ",$STEPS," == *",ceiling,"* ]] && step bench/suite/bulk-one.ts
[[ ",$STEPS," == *",queries,"* ]] && step bench/suite/queries.ts "${BENCH_QUERY_TARGETS:-sqlite,elasticsearch,original}"
[[ ",$STEPS," == *",insight,"* ]] && step bench/suite/insight.ts "${BENCH_INSIGHT_TARGETS:-sqlite,elasticsearch}"
[[ ",$STEPS," == *",patterns,"* ]] && step bench/suite/patterns.ts
step bench/suite/report.ts
