#!/usr/bin/env bash
# Checks that the running service conforms to the OpenAPI document it publishes (GET /api/v1/openapi.json), with
# schemathesis (property-based API testing, from PyPI) against the REAL service: for each store of
# MONITOR_TEST_STORES (default sqlite), start the service on a free loopback port over a fresh store, seed a little
# data, run `schemathesis run http://127.0.0.1:PORT/api/v1/openapi.json`, stop the service whatever happens.
#
#   scripts/schemathesis.sh                                   # SQLite only
#   MONITOR_TEST_STORES=sqlite,elasticsearch ELASTICSEARCH_URL=http://127.0.0.1:9250 scripts/schemathesis.sh
#   SCHEMATHESIS_MAX_EXAMPLES=500 SCHEMATHESIS_SEED=7 scripts/schemathesis.sh   # a longer run, another seed
#   SCHEMATHESIS_OPERATIONS=findBuildRegressions,findSessionRegressions scripts/schemathesis.sh   # two operations only
#
# Prints schemathesis' own report per store, then `schemathesis: N passed, N failed` (counted by scripts/test.sh);
# exits 1 on any failure. Reports (JUnit XML, and a HAR file of every exchange) land in .cache/test-logs/schemathesis/.
# Needs node_modules (make install) and Python 3.10+ (PYTHON); the virtualenv is made in .cache/schemathesis-venv.
set -euo pipefail

# The pin (the newest release when last checked: `pip index versions schemathesis`). Changing it rebuilds the venv
# on the next run.
PINS=("schemathesis==4.32.5")
# The checks: every one schemathesis has, as its defaults run them — for 4.32, the 14 that `--checks` lists
# (max_response_time needs a limit and is off unless given one): the response checks (no 5xx, every status, content
# type, header and body as documented), negative_data_rejection (a request the document forbids is refused with a
# 4xx), positive_data_acceptance (a request the document allows is accepted: every rule the service enforces is in
# the document), missing_required_header, unsupported_method and allow_header_conformance (any other method: 405 with
# an `Allow` listing exactly the path's methods), use_after_free and ensure_resource_availability (nothing is ever
# deleted through the API: nothing for them to follow), and ignored_auth / object_level_authorization, which look only
# at operations the document secures: with access control off here (no MONITOR_AUTH_TOKENS_FILE) it secures none, so
# they have nothing to check — test/api/access-control.test.ts covers access control. SCHEMATHESIS_CHECKS=a,b runs only
# those (--checks), to focus on one while fixing it.
CHECKS="${SCHEMATHESIS_CHECKS:-}"
# SCHEMATHESIS_OPERATIONS=id,id tests only those operations (by operationId: --include-operation-id each), the same way.
IFS=',' read -r -a OPERATIONS <<<"${SCHEMATHESIS_OPERATIONS:-}"
# The settings: schemathesis' defaults — its four phases (examples, coverage, fuzzing, stateful), 100 test cases per
# operation in each (SCHEMATHESIS_MAX_EXAMPLES=N changes it, --max-examples N) — with two departures:
#   - the seed is fixed, so that a run is reproducible (schemathesis draws one); SCHEMATHESIS_SEED explores others;
#   - scripts/schemathesis.toml allows, on two operations only, the status of a rule no JSON Schema keyword can state
#     (a metric's session and context must exist: 422; POST /sessions/{h}: a key in the body must equal the path's:
#     400). Every other rule the service enforces is in the document, where schemathesis reads it.
# About 9,200 test cases per store; Elasticsearch takes about three times SQLite's time, most of it fuzzing, as each
# write waits for the index's refresh. `--workers` is not used: it was no faster on Elasticsearch, and schemathesis
# 4.32's coverage phase fails under threads.
MAX_EXAMPLES="${SCHEMATHESIS_MAX_EXAMPLES:-}"
SEED="${SCHEMATHESIS_SEED:-20261123}"
# A hard cap per store, should schemathesis or the service hang, with room for Elasticsearch's run on a loaded machine.
STORE_TIMEOUT="${SCHEMATHESIS_STORE_TIMEOUT:-900}"

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
reports="$repo/.cache/test-logs/schemathesis"

log() { printf 'schemathesis.sh: %s\n' "$*" >&2; }

# shellcheck source-path=SCRIPTDIR source=lib/python-venv.sh
source "$repo/scripts/lib/python-venv.sh"
ensure_venv schemathesis-venv 'import schemathesis' "${PINS[*]}"
py="$VENV_PYTHON"
venv="$(dirname "$(dirname "$py")")"

# ---------------------------------------------------------------------------------------------------------------------
# The service, one store at a time
# ---------------------------------------------------------------------------------------------------------------------
work="$(mktemp -d "${TMPDIR:-/tmp}/monitor-schemathesis.XXXXXX")"
service_pid=""
es_prefix=""

stop_service() {
  if [[ -n "$service_pid" ]]; then
    kill -TERM "$service_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$service_pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$service_pid" 2>/dev/null || true
    wait "$service_pid" 2>/dev/null || true
    service_pid=""
  fi
}

# Deletes what the service made under the run's index prefix: its indices (their aliases go with them) and templates.
delete_es_prefix() {
  [[ -n "$es_prefix" ]] || return 0
  "$py" "$repo/scripts/lib/es-delete-prefix.py" "$ELASTICSEARCH_URL" "$es_prefix" ||
    log "could not delete the indices of prefix $es_prefix"
  es_prefix=""
}

cleanup() {
  stop_service
  delete_es_prefix
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Starts the service (through tsx: the source as it is, no build needed) with the given extra environment, and waits
# for the line it logs once listening, which holds its URL (PORT=0: the kernel picks a free port). Sets $base_url.
start_service() {
  local log_file="$1"
  shift
  (
    cd "$repo"
    exec env PORT=0 HOST=127.0.0.1 LOG_LEVEL=info "$@" node --import tsx src/server.ts
  ) >"$log_file" 2>&1 &
  service_pid=$!
  base_url=""
  for _ in $(seq 1 600); do
    base_url="$(grep -m 1 -o '"url":"http://127\.0\.0\.1:[0-9]*"' "$log_file" | grep -o 'http://[^"]*' || true)"
    # Listening is not ready: a store that was unreachable at boot is set up later; /readyz says when.
    if [[ -n "$base_url" ]] && "$py" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=5)' "$base_url/readyz" 2>/dev/null; then
      return 0
    fi
    kill -0 "$service_pid" 2>/dev/null || { log "the service exited:"; cat "$log_file" >&2; return 1; }
    sleep 0.1
  done
  log "the service was not ready within 60 s (log: $log_file)"
  return 1
}

# A little data, so that reads answer with records, not only empty pages: the document's own create examples (the
# examples phase then reads the very keys they hold), plus records that differ from them — another context and
# session, sessions of other builds and without tags, metrics of another scope, without component, of another item.
seed() {
  "$py" "$repo/scripts/lib/schemathesis-seed.py" "$1"
}

# Runs schemathesis against the service at $base_url; its report (JUnit) goes to $reports/<store>.xml.
run_schemathesis() {
  local store="$1"
  local started=$SECONDS status=0 operation
  local operation_args=()
  for operation in "${OPERATIONS[@]}"; do operation_args+=(--include-operation-id "$operation"); done
  # From the temporary folder: schemathesis keeps a cache (.schemathesis/) in its working directory.
  # The hooks give schemathesis a serializer for the NDJSON body of POST /api/v1/bulk (it has none of its own).
  (cd "$work" && SCHEMATHESIS_HOOKS="$repo/scripts/lib/schemathesis_ndjson.py" exec timeout --kill-after=10 "$STORE_TIMEOUT" "$venv/bin/schemathesis" --config-file "$repo/scripts/schemathesis.toml" run "$base_url/api/v1/openapi.json" \
    ${CHECKS:+--checks "$CHECKS"} \
    "${operation_args[@]}" \
    ${MAX_EXAMPLES:+--max-examples "$MAX_EXAMPLES"} \
    --seed "$SEED" \
    --generation-database none \
    --request-timeout 30 \
    --no-color \
    --report junit,har \
    --report-junit-path "$reports/$store.xml" \
    --report-har-path "$reports/$store.har") || status=$?
  log "$store: schemathesis exited $status after $((SECONDS - started)) s"
  return "$status"
}

# Counts the operations of a JUnit report: each operation (a <testcase>, plus one for the stateful scenarios) passes
# when no check failed on it and no error stopped it.
count_report() {
  "$py" "$repo/scripts/lib/schemathesis-junit-count.py" "$1"
}

# Every operation schemathesis called must have accepted at least one of its requests (a 2xx): its checks only say that
# each answer conformed, so an operation whose every request was turned away (a body the client could not encode, a
# schema nobody can satisfy) would pass them without ever being exercised. Reads the HAR report; prints the operations
# that never answered 2xx and their number on the last line (0 when all did).
count_unaccepted() {
  "$py" "$repo/scripts/lib/schemathesis-unaccepted.py" "$1" "$2"
}

# ---------------------------------------------------------------------------------------------------------------------
# Every selected store
# ---------------------------------------------------------------------------------------------------------------------
rm -rf "$reports"
mkdir -p "$reports"
passed=0
failed=0
IFS=',' read -r -a stores <<<"${MONITOR_TEST_STORES:-sqlite}"
for store in "${stores[@]}"; do
  store="${store// /}"
  [[ -n "$store" ]] || continue
  echo "== schemathesis on $store (checks: ${CHECKS:-all}; ${MAX_EXAMPLES:-100 (the default)} examples per operation and phase; seed $SEED)"
  case "$store" in
    sqlite) env_of_store=(MONITOR_STORE=sqlite "MONITOR_SQLITE_PATH=$work/$store/monitor.sqlite" MONITOR_SQLITE_SYNCHRONOUS=NORMAL) ;;
    elasticsearch)
      : "${ELASTICSEARCH_URL:?ELASTICSEARCH_URL must name the cluster (make test starts one)}"
      es_prefix="schemathesis-$(date +%s)-$$"
      env_of_store=(MONITOR_STORE=elasticsearch "ELASTICSEARCH_URL=$ELASTICSEARCH_URL" "ELASTICSEARCH_INDEX_PREFIX=$es_prefix")
      ;;
    *) log "unknown store \"$store\" in MONITOR_TEST_STORES"; failed=$((failed + 1)); continue ;;
  esac
  started=$SECONDS
  store_passed=0
  store_failed=0
  status=0
  if start_service "$reports/$store-service.log" "${env_of_store[@]}" && seed "$base_url"; then
    run_schemathesis "$store" || status=$?
    if [[ -s "$reports/$store.xml" ]]; then
      read -r store_passed store_failed < <(count_report "$reports/$store.xml" || echo 0 1) || true
    fi
    unaccepted=1
    if [[ -s "$reports/$store.har" ]]; then unaccepted="$(count_unaccepted "$reports/$store.har" "$base_url" || echo 1)"; fi
    echo "$store: operations that never accepted a request: $unaccepted"
    store_passed=$((store_passed - unaccepted < 0 ? 0 : store_passed - unaccepted))
    store_failed=$((store_failed + unaccepted))
  else
    status=1
  fi
  # A run that failed without a failing operation in its report (a crash, a timeout) still fails.
  if ((status != 0 && store_failed == 0)); then store_failed=1; fi
  stop_service
  delete_es_prefix
  echo "$store: $store_passed operations passed, $store_failed failed in $((SECONDS - started)) s"
  passed=$((passed + store_passed))
  failed=$((failed + store_failed))
done

# N counts operations: each operation of the document (and the stateful scenarios as one more) on each store, passed
# when every check held on every test case schemathesis made for it.
echo "schemathesis: $passed passed, $failed failed"
((failed == 0))
