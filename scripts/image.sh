#!/usr/bin/env bash
# The container image, built from the Dockerfile as it stands (no registry needed) and run as Kubernetes runs it.
#
#   scripts/image.sh engine   # a Docker engine: installs docker.io if missing (apt), starts dockerd if none answers
#   scripts/image.sh base     # + the Dockerfile's base image, made locally if missing (scripts/image-base.sh)
#   scripts/image.sh build    # + docker build -t monitor-server:<chart appVersion> (the tag the chart renders)
#   scripts/image.sh run      # + runs it hardened on 127.0.0.1:$MONITOR_IMAGE_PORT, SQLite on volume monitor-data
#   scripts/image.sh test     # + the container suite (test/container/), prints "image: N passed, M failed"
#
# Offline-friendly: no registry is needed. The classic builder builds (BuildKit would look the `# syntax=` frontend up
# in a registry), with --network host, as every container here runs: dockerd is started without its default bridge
# (--bridge=none, no iptables), so nothing ever gets a private-range address; services listen on 127.0.0.1.
# The engine this script starts logs to .cache/image/dockerd.log; `test` stops it again at the end unless
# IMAGE_KEEP_ENGINE=1 (images and build cache stay in its data root, /var/lib/docker, for the next run).
# Environment: MONITOR_IMAGE_PORT (8290; the ES run uses the next port), MONITOR_TEST_STORES (sqlite,elasticsearch),
# ELASTICSEARCH_URL (http://127.0.0.1:9290; a node is started there by scripts/elasticsearch.sh when none answers),
# IMAGE_GIT_REF (build from that commit, e.g. HEAD, instead of the working tree and its uncommitted changes).
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE=.cache/image
mkdir -p "$CACHE"
log() { printf 'image: %s\n' "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}
declare -a timings=()
phase_started=$SECONDS
phase_done() { # phase_done <name>: records how long the phase took
  timings+=("$1 $((SECONDS - phase_started)) s")
  log "$1 done in $((SECONDS - phase_started)) s"
  phase_started=$SECONDS
}

# The tag the chart renders by default (values.yaml image.repository, Chart.yaml appVersion) and the version the image
# is labelled with (package.json): each read from where it is declared.
chart_value() { sed -n "s/^$1: *\"\{0,1\}\([^\" ]*\)\"\{0,1\} *$/\1/p" "$2" | head -n 1; }
APP_VERSION="$(chart_value appVersion charts/monitor-server/Chart.yaml)"
REPOSITORY="$(sed -n '/^image:/,/^[^ ]/s/^  repository: *\([^ ]*\) *$/\1/p' charts/monitor-server/values.yaml)"
VERSION="$(node -p 'require("./package.json").version')"
IMAGE="$REPOSITORY:$APP_VERSION"
[[ -n "$APP_VERSION" && -n "$REPOSITORY" ]] || die "no appVersion / image.repository in charts/monitor-server"

engine_started=false
engine() {
  if docker info >/dev/null 2>&1; then
    log "engine: $(docker version -f 'dockerd {{.Server.Version}}') already running"
    return 0
  fi
  if ! command -v dockerd >/dev/null; then
    [[ $EUID -eq 0 ]] || die "no Docker engine answers and dockerd is not installed: run as root to install docker.io"
    log "engine: installing docker.io (apt-get)"
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
      docker.io >"$CACHE/apt.log" 2>&1 || die "apt-get install docker.io failed: $(tail -n 20 "$CACHE/apt.log")"
  fi
  [[ $EUID -eq 0 ]] || die "no Docker engine answers: start dockerd (as root), or run this script as root"
  log "engine: starting dockerd --bridge=none --iptables=false (log: $CACHE/dockerd.log)"
  # Its own session, stdin/stdout/stderr away from ours: a caller piping this script's output is not held open.
  setsid dockerd --bridge=none --iptables=false --ip6tables=false </dev/null >"$CACHE/dockerd.log" 2>&1 &
  echo $! >"$CACHE/dockerd.pid"
  engine_started=true
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && return 0
    kill -0 "$(cat "$CACHE/dockerd.pid")" 2>/dev/null || die "dockerd exited: $(tail -n 20 "$CACHE/dockerd.log")"
    sleep 1
  done
  die "dockerd did not answer within 60 s: $(tail -n 20 "$CACHE/dockerd.log")"
}

stop_engine() {
  [[ "$engine_started" == true && -z "${IMAGE_KEEP_ENGINE:-}" ]] || return 0
  local pid
  pid="$(cat "$CACHE/dockerd.pid")"
  log "engine: stopping the dockerd this script started (pid $pid)"
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 30); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 1
  done
  log "warning: dockerd (pid $pid) still running after 30 s"
}

build() {
  local context=.
  if [[ -n "${IMAGE_GIT_REF:-}" ]]; then
    context="$(mktemp -d)"
    git archive "$IMAGE_GIT_REF" | tar -x -C "$context"
  fi
  log "build: $IMAGE from ${IMAGE_GIT_REF:-the working tree} (VERSION=$VERSION; log: $CACHE/build.log)"
  # Progress: the builder's step lines. The full output goes to the log.
  if ! DOCKER_BUILDKIT=0 docker build --network host --build-arg "VERSION=$VERSION" -t "$IMAGE" "$context" 2>&1 |
    tee "$CACHE/build.log" | grep --line-buffered -E '^Step [0-9]+/' | sed -u 's/^/image: build: /' >&2; then
    die "docker build failed: $(tail -n 30 "$CACHE/build.log")"
  fi
  grep -q '^Successfully tagged' "$CACHE/build.log" || die "docker build failed: $(tail -n 30 "$CACHE/build.log")"
  [[ "$context" == . ]] || rm -rf "$context"
  local size modules
  size="$(docker image inspect -f '{{.Size}}' "$IMAGE" | awk '{ printf "%.0f MB", $1 / 1e6 }')"
  modules="$(docker history --no-trunc --format '{{.Size}} {{.CreatedBy}}' "$IMAGE" |
    awk '/COPY .*node_modules/ { print $1; exit }')"
  log "build: $IMAGE is $size (production node_modules layer: ${modules:-?})"
}

run() {
  local port="${MONITOR_IMAGE_PORT:-8290}"
  docker rm --force monitor-server >/dev/null 2>&1 || true
  docker run --detach --name monitor-server --network host --user 10001:10001 --read-only \
    --tmpfs /tmp:rw,nosuid,nodev,noexec,size=64m --cap-drop ALL --security-opt no-new-privileges \
    --volume monitor-data:/data --env HOST=127.0.0.1 --env "PORT=$port" "$IMAGE" >/dev/null
  log "run: container monitor-server on http://127.0.0.1:$port (docker logs -f monitor-server; docker rm -f monitor-server)"
}

run_tests() {
  export MONITOR_IMAGE="$IMAGE" MONITOR_IMAGE_PORT="${MONITOR_IMAGE_PORT:-8290}"
  export MONITOR_TEST_STORES="${MONITOR_TEST_STORES:-sqlite,elasticsearch}"
  export ELASTICSEARCH_URL="${ELASTICSEARCH_URL:-http://127.0.0.1:9290}"
  local started_node=false status=0
  if [[ ",$MONITOR_TEST_STORES," == *",elasticsearch,"* ]] && ! bash scripts/elasticsearch.sh status >/dev/null 2>&1; then
    log "test: starting Elasticsearch at $ELASTICSEARCH_URL"
    bash scripts/elasticsearch.sh start >&2
    started_node=true
  fi
  npx mocha --timeout 60000 test/container/*.container.ts 2>&1 | tee "$CACHE/test.log" || status=$?
  if [[ "$started_node" == true ]]; then bash scripts/elasticsearch.sh stop >&2 || true; fi
  return "$status"
}

# The summary line scripts/test.sh counts: mocha's own counts, or one failure when a phase before the suite failed.
summary() {
  local status=$? passed=0 failed=0
  if [[ "${tests_ran:-}" == true ]]; then
    passed="$(grep -Eo '^ *[0-9]+ passing' "$CACHE/test.log" | tail -n 1 | grep -Eo '[0-9]+' || echo 0)"
    failed="$(grep -Eo '^ *[0-9]+ failing' "$CACHE/test.log" | tail -n 1 | grep -Eo '[0-9]+' || echo 0)"
  fi
  if ((status != 0 && failed == 0)); then failed=1; fi
  stop_engine
  log "timings: ${timings[*]/%/,} total $((SECONDS)) s"
  echo "image: $passed passed, $failed failed"
}

command="${1:-}"
case "$command" in
  engine | base | build | run | test) ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
[[ "$command" == test ]] && trap summary EXIT

engine
phase_done engine
[[ "$command" == engine ]] && exit 0
bash scripts/image-base.sh
phase_done base
[[ "$command" == base ]] && exit 0
build
phase_done build
case "$command" in
  run) run ;;
  test)
    tests_ran=true
    test_status=0
    run_tests || test_status=$?
    phase_done tests
    exit "$test_status"
    ;;
esac
