#!/usr/bin/env bash
# Everything `make test` runs, in order: a real Elasticsearch node for the store suites, the client virtualenv for
# the end-to-end suite, every mocha suite against both stores, a 3-node cluster for the cluster suites
# (scripts/test-cluster.sh), the service against its OpenAPI document on both stores
# (scripts/schemathesis.sh), the lint checks (scripts/lint.sh), npm audit of the
# production dependencies (scripts/audit.sh), then the deployment checks and the container image (scripts/image.sh:
# built, then run as the chart runs it). The node is stopped whatever happens.
# Assumes `make build` ran (the Makefile does it first). The last line sums everything up.
set -euo pipefail
cd "$(dirname "$0")/.."

export ELASTICSEARCH_URL="${TEST_ELASTICSEARCH_URL:-http://127.0.0.1:9250}"
export MONITOR_TEST_STORES="${MONITOR_TEST_STORES:-sqlite,elasticsearch}"
log_dir=.cache/test-logs
mkdir -p "$log_dir"
: >"$log_dir/step-times.tsv"
step_started=$SECONDS
# Each step's time, printed at the end so that the slowest is visible: `timed <step>` closes the step begun before it.
timed() {
  printf '%s\t%d\n' "$1" $((SECONDS - step_started)) >>"$log_dir/step-times.tsv"
  step_started=$SECONDS
}

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
timed elasticsearch

echo "== preparing the pytest-monitor client virtualenv"
bash scripts/client-venv.sh >/dev/null
bash scripts/monitor-api-venv.sh >/dev/null

echo "== Chromium for the browser suites (test/browser/)"
CHROMIUM_PATH="$(bash scripts/chromium.sh)"
export CHROMIUM_PATH
timed setup

# The mocha files, in two runs. Most wait on the services they start (Elasticsearch, pytest, Chromium, the CLI), so
# MOCHA_JOBS of them run at once. The files of EXCLUSIVE_FILES then run one after another, alone: one stops the shared
# Elasticsearch node, and the end-to-end ones judge real timings of real pytest runs, which other work on the same
# two cores would change. Each file's wall time goes to mocha-files.tsv (test/support/file-times-reporter.cts).
MOCHA_JOBS="${MOCHA_JOBS:-2}"
EXCLUSIVE_FILES=(test/store/elasticsearch-outage.test.ts test/e2e/*.test.ts)
mapfile -t shared_files < <(find test -name '*.test.ts' | sort | grep -vxF -f <(printf '%s\n' "${EXCLUSIVE_FILES[@]}"))
echo "== mocha suites on: $MONITOR_TEST_STORES (${#shared_files[@]} files $MOCHA_JOBS at a time, then ${#EXCLUSIVE_FILES[@]} alone)"
export MOCHA_FILE_TIMES="$log_dir/mocha-files.tsv"
: >"$MOCHA_FILE_TIMES"
mocha_status=0
npx mocha --parallel --jobs "$MOCHA_JOBS" --reporter ./test/support/file-times-reporter.cts "${shared_files[@]}" 2>&1 |
  tee "$log_dir/mocha.log" || mocha_status=$?
npx mocha --reporter ./test/support/file-times-reporter.cts "${EXCLUSIVE_FILES[@]}" 2>&1 |
  tee -a "$log_dir/mocha.log" || mocha_status=$?
timed mocha

echo "== Elasticsearch cluster: contract suite on 3 nodes (3 shards, 1 replica), kill -9 of a node and a rolling restart under load"
cluster_status=0
if [[ ",$MONITOR_TEST_STORES," == *",elasticsearch,"* ]]; then
  bash scripts/test-cluster.sh 2>&1 | tee "$log_dir/cluster.log" || cluster_status=$?
else
  echo "cluster: 0 passed, 0 failed (Elasticsearch is not among MONITOR_TEST_STORES)" | tee "$log_dir/cluster.log"
fi
timed cluster

echo "== schemathesis: the running service against its OpenAPI document, on: $MONITOR_TEST_STORES"
schemathesis_status=0
bash scripts/schemathesis.sh 2>&1 | tee "$log_dir/schemathesis.log" || schemathesis_status=$?
timed schemathesis

echo "== lint (ESLint, Prettier, knip; ruff, ShellCheck, the unit tests of scripts/lib)"
lint_status=0
bash scripts/lint.sh 2>&1 | tee "$log_dir/lint.log" || lint_status=$?
timed lint

echo "== npm audit of the production dependencies"
audit_status=0
bash scripts/audit.sh 2>&1 | tee "$log_dir/audit.log" || audit_status=$?
timed audit

echo "== deployment checks (Dockerfile, Helm chart, k8s manifests)"
deploy_status=0
bash scripts/check-deploy.sh 2>&1 | tee "$log_dir/check-deploy.log" || deploy_status=$?
timed deploy

echo "== container image: built and run as Kubernetes runs it, on: $MONITOR_TEST_STORES (scripts/image.sh test)"
image_status=0
bash scripts/image.sh test 2>&1 | tee "$log_dir/image.log" || image_status=$?
timed image

# Stop the node now, so that the summary below is the very last line.
cleanup
started_node=false

# Mocha's "N passing" / "N failing" lines, summed over its runs.
count() { grep -Eo "^ *[0-9]+ $1" "$2" | awk '{ n += $1 } END { print n + 0 }'; }
# The last "N passed" / "N failed" of a step that prints its own summary line.
tally() { grep -Eo "[0-9]+ $1" "$2" | tail -n 1 | grep -Eo '[0-9]+' || echo 0; }
passed=$(($(count passing "$log_dir/mocha.log") + $(tally passed "$log_dir/cluster.log") + $(tally passed "$log_dir/check-deploy.log") + $(tally passed "$log_dir/lint.log") + $(tally passed "$log_dir/audit.log") + $(tally passed "$log_dir/schemathesis.log") + $(tally passed "$log_dir/image.log")))
failed=$(($(count failing "$log_dir/mocha.log") + $(tally failed "$log_dir/cluster.log") + $(tally failed "$log_dir/check-deploy.log") + $(tally failed "$log_dir/lint.log") + $(tally failed "$log_dir/audit.log") + $(tally failed "$log_dir/schemathesis.log") + $(tally failed "$log_dir/image.log")))
if ((mocha_status != 0 || cluster_status != 0 || deploy_status != 0 || lint_status != 0 || audit_status != 0 || schemathesis_status != 0 || image_status != 0)) && ((failed == 0)); then failed=1; fi
echo "== time per step (seconds), then the ten slowest mocha files (all of them: $log_dir/mocha-files.tsv)"
sort -t$'\t' -k2,2nr "$log_dir/step-times.tsv" | awk -F'\t' '{ printf "  %-14s %5d s\n", $1, $2; total += $2 } END { printf "  %-14s %5d s\n", "total", total }'
head -n 10 "$log_dir/mocha-files.tsv" | awk -F'\t' '{ printf "  %7.1f s  %s\n", $1, $2 }'
# What failed, named, last: the last lines of a run (all a CI summary may keep) then tell which tests to look at: each
# mocha failure on one line (its titles, then its first error line), each other step's FAIL lines.
failures_of() {
  # A title is cut to 160 characters so that the error line after it, the part that tells what went wrong, survives.
  awk 'function flush() { if (title != "") print (length(title) > 160 ? substr(title, 1, 159) "…" : title) (error == "" ? "" : " › " substr(error, 1, 240)); title = ""; error = "" }
    /^ +[0-9]+ failing$/ { on = 1; next } /^  the slowest files/ { flush(); on = 0 }
    on && /^  [0-9]+\) / { flush(); intitle = 1 }
    on && intitle && NF { text = $0; gsub(/^ +| +$/, "", text);
      if (/(Error|error)[:(]/) { error = text; intitle = 0; flush() } else title = title (title == "" ? "" : " › ") text }
    END { flush() }' "$1"
}
if ((failed > 0)); then
  echo "== what failed (the logs: $log_dir)"
  failures_of "$log_dir/mocha.log"
  failures_of "$log_dir/cluster.log"
  grep -hE '^ *(\S+ )?FAIL\b|operations passed, [1-9]' "$log_dir/lint.log" "$log_dir/check-deploy.log" "$log_dir/image.log" \
    "$log_dir/schemathesis.log" 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-200 || true
fi
echo "tests: $passed passed, $failed failed"
((failed == 0))
