#!/usr/bin/env bash
# scripts/elasticsearch.sh — a real single-node Elasticsearch on loopback for the test suite.
#
#   scripts/elasticsearch.sh fetch    download (Maven Central, via mvn) and unpack once into .cache/
#   scripts/elasticsearch.sh start    fetch if needed, start a node, return when the cluster is yellow
#   scripts/elasticsearch.sh stop     stop the node started for this URL's port, delete its data
#   scripts/elasticsearch.sh pause    stop the node but keep its data: the next start resumes it (fault tests)
#   scripts/elasticsearch.sh status   exit 0 when a node answers at the URL
#   scripts/elasticsearch.sh url      print the node's base URL
#
# Environment:
#   ES_VERSION         distribution version (default below)
#   ELASTICSEARCH_URL  where the node listens (default http://127.0.0.1:9200); loopback only
#   ES_HEAP            JVM heap, used for -Xms and -Xmx (default 1g)
#   ES_JAVA_HOME       JDK to run it with (default: detected, see pick_jdk)
#   ES_START_TIMEOUT   seconds to wait for yellow health (default 120)
#   ES_RUN_AS          user to run the node as when invoked as root (default nobody);
#                      Elasticsearch refuses to run as root
#
# The distribution is org.elasticsearch.distribution.integ-test-zip:elasticsearch:<version>:zip,
# the minimal build Elastic publishes to Maven Central. It ships only the modules
# apm, transport-netty4, x-pack-core and x-pack-security: no rest-root (GET / and HEAD / answer 405),
# no reindex (_reindex, _update_by_query, _delete_by_query), no painless, no ingest processors,
# no data streams, no mapper-extras (scaled_float, match_only_text, ...), no wildcard field type.
# Core search (term/wildcard/prefix queries with case_insensitive, composite aggregations,
# search_after, point in time, index templates, aliases, bulk) works.
set -euo pipefail
umask 022

# 9.3.2 is the newest 9.x Maven Central serves for this artifact (9.3.0/9.3.1/9.3.3+ and 9.4.x are
# absent there). 9.x needs Java 21+ (here: the Temurin 25 JDK). 8.19.21 also runs here, on Java 17,
# but rejects the "compatible-with=9" headers of the @elastic/elasticsearch 9.x client.
ES_VERSION="${ES_VERSION:-9.3.2}"
ES_ARTIFACT="org.elasticsearch.distribution.integ-test-zip:elasticsearch"
ES_URL="${ELASTICSEARCH_URL:-http://127.0.0.1:9200}"
ES_HEAP="${ES_HEAP:-1g}"
ES_START_TIMEOUT="${ES_START_TIMEOUT:-120}"
ES_RUN_AS="${ES_RUN_AS:-nobody}"
STOP_TIMEOUT=30

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
CACHE_DIR="$REPO_ROOT/.cache/elasticsearch"
ES_HOME="$CACHE_DIR/$ES_VERSION"

log() { printf '[elasticsearch] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
have() { command -v "$1" >/dev/null 2>&1; }

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# ---------------------------------------------------------------------------
# URL: scheme http, loopback host, port
# ---------------------------------------------------------------------------
HOST="" BIND="" PORT="" BASE_URL=""
parse_url() {
  local rest="$ES_URL"
  case "$rest" in
    http://*) rest="${rest#http://}" ;;
    https://*) die "ELASTICSEARCH_URL=$ES_URL: https is not supported (the test node runs without security); use http://" ;;
    *) die "ELASTICSEARCH_URL=$ES_URL: expected http://HOST:PORT" ;;
  esac
  rest="${rest%%/*}"  # drop any path
  rest="${rest##*@}"  # drop any credentials
  if [[ "$rest" =~ ^\[([0-9a-fA-F:]+)\](:([0-9]+))?$ ]]; then
    HOST="${BASH_REMATCH[1]}" PORT="${BASH_REMATCH[3]}"
  elif [[ "$rest" =~ ^([^:]+)(:([0-9]+))?$ ]]; then
    HOST="${BASH_REMATCH[1]}" PORT="${BASH_REMATCH[3]}"
  else
    die "ELASTICSEARCH_URL=$ES_URL: cannot parse host and port"
  fi
  PORT="${PORT:-9200}"
  ((PORT >= 1 && PORT <= 65535)) || die "ELASTICSEARCH_URL=$ES_URL: bad port $PORT"
  case "$HOST" in
    localhost) BIND="127.0.0.1" ;;
    127.*) BIND="$HOST" ;;
    ::1) BIND="::1" ;;
    *) die "ELASTICSEARCH_URL=$ES_URL: the test node binds only to loopback (127.0.0.0/8, localhost, [::1])" ;;
  esac
  if [[ "$HOST" == *:* ]]; then BASE_URL="http://[$HOST]:$PORT"; else BASE_URL="http://$HOST:$PORT"; fi
  RUN_DIR="$CACHE_DIR/run-$PORT"
  PID_FILE="$RUN_DIR/elasticsearch.pid"
  NODE_FILE="$RUN_DIR/node-dir"
  LOCK_FILE="$CACHE_DIR/locks/run-$PORT.lock"
}

# curl against the local node, never through a proxy.
es_curl() { curl --noproxy '*' -sS "$@"; }

# Exit 0 when the node answers with at least yellow health.
answers() {
  local wait="${1:-1}"
  es_curl -f -o /dev/null --max-time "$((wait + 3))" \
    "$BASE_URL/_cluster/health?wait_for_status=yellow&timeout=${wait}s" 2>/dev/null
}

node_version() {
  es_curl --max-time 5 "$BASE_URL/_nodes/_local?filter_path=nodes.*.version" 2>/dev/null |
    sed -n 's/.*"version":"\([^"]*\)".*/\1/p'
}

port_open() {
  # bash's /dev/tcp; a refused connection fails at once.
  # shellcheck disable=SC2016  # $1/$2 are expanded by the inner bash
  timeout 3 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ "$BIND" "$PORT" 2>/dev/null
}

# Serialise operations on one port (fd 8) and fetches of one version (fd 9) across processes.
# The node itself must not inherit these descriptors (see cmd_start).
with_lock() { # fd file
  local fd="$1" file="$2"
  mkdir -p "${file%/*}"
  have flock || return 0
  case "$fd" in
    8) exec 8>"$file" ;;
    9) exec 9>"$file" ;;
  esac
  flock -w 600 "$fd" || die "timed out waiting for lock $file"
}

# ---------------------------------------------------------------------------
# fetch
# ---------------------------------------------------------------------------
check_version_string() {
  [[ "$ES_VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[A-Za-z0-9.]+)?$ ]] ||
    die "ES_VERSION=$ES_VERSION does not look like a version (e.g. 9.3.2)"
}

is_unpacked() { [[ -f "$ES_HOME/.unpacked" && -x "$ES_HOME/bin/elasticsearch" ]]; }

unpack_zip() { # zip dest
  if have unzip; then
    unzip -q "$1" -d "$2"
  elif have python3; then
    python3 -m zipfile -e "$1" "$2"
  elif have jar; then
    (cd "$2" && jar xf "$1")
  else
    die "need unzip (apt-get install -y unzip), python3 or jar to unpack the distribution"
  fi
}

cmd_fetch() {
  check_version_string
  is_unpacked && return 0
  with_lock 9 "$CACHE_DIR/locks/fetch-$ES_VERSION.lock"
  is_unpacked && return 0
  have mvn || die "mvn not found: the distribution comes from Maven Central through Maven (apt-get install -y maven)"

  local t0 tmp zip top
  t0="$(now)"
  log "fetching $ES_VERSION from Maven Central ($ES_ARTIFACT:$ES_VERSION:zip)..."
  tmp="$(mktemp -d "$CACHE_DIR/.fetch-$ES_VERSION.XXXXXX")"
  # shellcheck disable=SC2064  # expand now: the trap must remove this very folder
  trap "rm -rf '$tmp'" EXIT
  # Run from an empty folder so that no pom.xml of the caller's cwd is picked up.
  if ! (cd "$tmp" && mvn -B -q -Dstyle.color=never dependency:copy \
    -Dartifact="$ES_ARTIFACT:$ES_VERSION:zip" -DoutputDirectory="$tmp/download" >"$tmp/mvn.log" 2>&1); then
    grep -E 'ERROR|Could not' "$tmp/mvn.log" | head -n 5 >&2 || true
    die "mvn could not fetch $ES_ARTIFACT:$ES_VERSION:zip; check that the version exists with:
  mvn dependency:get -Dtransitive=false -Dartifact=$ES_ARTIFACT:$ES_VERSION:zip"
  fi
  zip="$tmp/download/elasticsearch-$ES_VERSION.zip"
  [[ -s "$zip" ]] || die "mvn reported success but $zip is missing"
  log "downloaded $(du -h "$zip" | cut -f1) in $(elapsed "$t0")s; unpacking into ${ES_HOME#"$REPO_ROOT"/}/"
  mkdir -p "$tmp/unpacked"
  unpack_zip "$zip" "$tmp/unpacked"
  top="$tmp/unpacked/elasticsearch-$ES_VERSION"
  [[ -x "$top/bin/elasticsearch" ]] || chmod a+x "$top"/bin/* 2>/dev/null || true
  [[ -f "$top/bin/elasticsearch" ]] || die "unexpected zip layout: no elasticsearch-$ES_VERSION/bin/elasticsearch"
  chmod -R a+rX "$top"
  chmod a+x "$top"/bin/*
  touch "$top/.unpacked"
  rm -rf "${ES_HOME:?}"
  mv "$top" "$ES_HOME"
  rm -rf "$tmp"
  trap - EXIT
  log "fetched $ES_VERSION in $(elapsed "$t0")s (modules: $(modules_list))"
}

modules_list() {
  local m names=()
  for m in "$ES_HOME"/modules/*/; do
    m="${m%/}"
    names+=("${m##*/}")
  done
  (IFS=,; printf '%s\n' "${names[*]}")
}

# ---------------------------------------------------------------------------
# JDK
# ---------------------------------------------------------------------------
jdk_feature() { # java-home -> feature version (17, 21, 25, ...)
  local home="$1" v=""
  [[ -x "$home/bin/java" ]] || return 1
  if [[ -r "$home/release" ]]; then
    v="$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$home/release")"
  fi
  if [[ -z "$v" ]]; then
    v="$("$home/bin/java" -XshowSettings:properties -version 2>&1 |
      sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p')"
  fi
  [[ "$v" =~ ^[0-9]+$ ]] || return 1
  printf '%s\n' "$v"
}

# Which JDKs a version runs on: 9.x needs 21+; 8.x runs on 17 (the tested pair); 7.17 on 11..17+.
jdk_range() {
  case "${ES_VERSION%%.*}" in
    7) echo "11 21" ;;
    8) echo "17 24" ;;
    *) echo "21 999" ;;
  esac
}

pick_jdk() {
  local min max range
  range="$(jdk_range)"
  min="${range% *}" max="${range#* }"
  if [[ -n "${ES_JAVA_HOME:-}" ]]; then
    local f
    f="$(jdk_feature "$ES_JAVA_HOME")" || die "ES_JAVA_HOME=$ES_JAVA_HOME is not a JDK (no bin/java)"
    ((f >= min)) || die "ES_JAVA_HOME=$ES_JAVA_HOME is Java $f; Elasticsearch $ES_VERSION needs Java $min or newer"
    JDK_HOME="$ES_JAVA_HOME" JDK_FEATURE="$f"
    return 0
  fi
  local candidates=() c real best="" best_f=0 f seen=" "
  [[ -n "${JAVA_HOME:-}" ]] && candidates+=("$JAVA_HOME")
  for c in /usr/lib/jvm/* /opt/java/* /usr/local/lib/jvm/*; do [[ -d "$c" ]] && candidates+=("$c"); done
  if have java; then
    real="$(readlink -f "$(command -v java)")"
    candidates+=("${real%/bin/java}")
  fi
  for c in "${candidates[@]}"; do
    real="$(readlink -f "$c")" || continue
    [[ "$seen" == *" $real "* ]] && continue
    seen+="$real "
    f="$(jdk_feature "$real")" || continue
    if ((f >= min && f <= max && f > best_f)); then best="$real" best_f="$f"; fi
  done
  [[ -n "$best" ]] || die "no JDK for Elasticsearch $ES_VERSION (it needs Java $min..$max; looked in \$JAVA_HOME, /usr/lib/jvm, /opt/java).
  Set ES_JAVA_HOME to one, or pick a version that runs on what is here (ES_VERSION=8.19.21 runs on Java 17)."
  JDK_HOME="$best" JDK_FEATURE="$best_f"
}

# ---------------------------------------------------------------------------
# processes
# ---------------------------------------------------------------------------
# The pid from the pidfile, when that process is alive and is the node this script started.
our_pid() {
  [[ -f "$PID_FILE" ]] || return 1
  local pid node
  pid="$(cat "$PID_FILE" 2>/dev/null)" || return 1
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  node="$(cat "$NODE_FILE" 2>/dev/null || true)"
  if [[ -r "/proc/$pid/cmdline" && -n "$node" ]]; then
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$node" || return 1
  fi
  printf '%s\n' "$pid"
}

run_dir_cleanup() {
  [[ -n "${RUN_DIR:-}" && -d "$RUN_DIR" ]] || return 0
  rm -rf "${RUN_DIR:?}"
}

kill_and_wait() { # pid timeout
  local pid="$1" timeout="$2" i
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < timeout * 5; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.2
  done
  log "pid $pid still alive after ${timeout}s; sending KILL"
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.2
  done
  die "pid $pid survived KILL"
}

log_tail() { # node-dir
  local node="$1" f shown=0
  for f in "$node/console.log" "$node/logs/$CLUSTER_NAME.log"; do
    [[ -s "$f" ]] || continue
    log "---- last lines of ${f#"$REPO_ROOT"/} ----"
    tail -n 60 "$f" >&2
    shown=1
  done
  ((shown)) || log "(the node wrote no log yet)"
}

# ---------------------------------------------------------------------------
# start / stop / status
# ---------------------------------------------------------------------------
yaml_quote() { printf "'%s'" "${1//\'/\'\'}"; }

write_config() { # node-dir
  local node="$1"
  mkdir -p "$node/config" "$node/data" "$node/logs" "$node/tmp"
  cp -R "$ES_HOME/config/." "$node/config/"
  mkdir -p "$node/config/jvm.options.d"
  printf -- '-Xms%s\n-Xmx%s\n' "$ES_HEAP" "$ES_HEAP" >"$node/config/jvm.options.d/heap.options"
  {
    echo "# written by scripts/elasticsearch.sh"
    echo "cluster.name: $CLUSTER_NAME"
    echo "node.name: test-node"
    echo "network.host: $(yaml_quote "$BIND")"
    echo "http.port: $PORT"
    echo "transport.port: 0"
    echo "discovery.type: single-node"
    echo "path.data: $(yaml_quote "$node/data")"
    echo "path.logs: $(yaml_quote "$node/logs")"
    # Never flip indices to read-only because the disk is full-ish.
    echo "cluster.routing.allocation.disk.threshold_enabled: false"
    echo "action.destructive_requires_name: false"
    # Only settings some module registers: unknown settings stop the node at boot.
    if [[ -d "$ES_HOME/modules/x-pack-security" ]]; then
      echo "xpack.security.enabled: false"
    fi
  } >"$node/config/elasticsearch.yml"
}

cmd_start() {
  parse_url
  [[ "$ES_HEAP" =~ ^[0-9]+[kKmMgG]?$ ]] || die "ES_HEAP=$ES_HEAP: expected e.g. 512m or 1g"
  [[ "$ES_START_TIMEOUT" =~ ^[0-9]+$ ]] || die "ES_START_TIMEOUT=$ES_START_TIMEOUT: expected seconds"
  have curl || die "curl not found (apt-get install -y curl)"
  CLUSTER_NAME="test-es-$PORT"

  with_lock 8 "$LOCK_FILE"
  local pid
  if pid="$(our_pid)"; then
    if answers 5; then
      log "already running at $BASE_URL (pid $pid, $(node_version))"
      return 0
    fi
    log "pid $pid is ours but does not answer yet; waiting up to ${ES_START_TIMEOUT}s"
    if answers "$ES_START_TIMEOUT"; then
      log "running at $BASE_URL (pid $pid, $(node_version))"
      return 0
    fi
    die "the node started earlier (pid $pid) does not answer at $BASE_URL; run '$0 stop' and start again"
  fi
  # A paused node resumes on its data; any other state left from a node that died (or a reboot) is dropped.
  local resume_node=""
  if [[ -f "$RUN_DIR/paused" && -s "$NODE_FILE" && -d "$(cat "$NODE_FILE")" ]]; then
    resume_node="$(cat "$NODE_FILE")"
    rm -f "$RUN_DIR/paused" "$PID_FILE" "$resume_node/elasticsearch.pid"
  else
    run_dir_cleanup
  fi
  if port_open; then
    die "something not started by this script already listens on $BIND:$PORT; stop it or choose another port with ELASTICSEARCH_URL"
  fi

  cmd_fetch
  pick_jdk

  local user_cmd=() t0 node launcher rc=0 deadline
  if ((EUID == 0)); then
    id "$ES_RUN_AS" >/dev/null 2>&1 || die "running as root, and user ES_RUN_AS=$ES_RUN_AS does not exist (Elasticsearch refuses to run as root)"
    if have setpriv; then
      user_cmd=(setpriv --reuid="$ES_RUN_AS" --regid="$(id -g "$ES_RUN_AS")" --clear-groups)
    elif have runuser; then
      user_cmd=(runuser -u "$ES_RUN_AS" --)
    else
      die "running as root and neither setpriv nor runuser is available to drop to $ES_RUN_AS"
    fi
    "${user_cmd[@]}" test -r "$ES_HOME/bin/elasticsearch" -a -x "$JDK_HOME/bin/java" ||
      die "user $ES_RUN_AS cannot read $ES_HOME or run $JDK_HOME/bin/java (every folder above them must be world-readable)"
  fi

  t0="$(now)"
  mkdir -p "$RUN_DIR"
  if [[ -n "$resume_node" ]]; then
    node="$resume_node"
  else
    node="$(mktemp -d "$RUN_DIR/node.XXXXXX")"
    printf '%s\n' "$node" >"$NODE_FILE"
    write_config "$node"
  fi
  chmod 755 "$node"
  if ((EUID == 0)); then chown -R "$ES_RUN_AS:$(id -g "$ES_RUN_AS")" "$node"; fi

  log "starting $ES_VERSION on Java $JDK_FEATURE ($JDK_HOME) at $BASE_URL, heap $ES_HEAP, data in ${node#"$REPO_ROOT"/}"
  local detach=()
  if have setsid; then detach=(setsid -w); fi
  (
    exec 8>&- 9>&-
    cd "$node"
    exec "${detach[@]}" "${user_cmd[@]}" env -u JAVA_HOME \
      HOME="$node" ES_HOME="$ES_HOME" ES_PATH_CONF="$node/config" ES_TMPDIR="$node/tmp" \
      ES_JAVA_HOME="$JDK_HOME" ES_JAVA_OPTS="${ES_JAVA_OPTS:-}" \
      "$ES_HOME/bin/elasticsearch" -d -p "$node/elasticsearch.pid"
  ) </dev/null >"$node/console.log" 2>&1 &
  launcher=$!

  # The launcher (-d) returns once the node is up, or fails; the node answers soon after.
  deadline=$(($(date +%s) + ES_START_TIMEOUT))
  local launcher_done=0
  while :; do
    if ((!launcher_done)) && ! kill -0 "$launcher" 2>/dev/null; then
      launcher_done=1
      wait "$launcher" || rc=$?
      if ((rc != 0)); then
        log "the launcher exited with status $rc"
        break
      fi
    fi
    if [[ -s "$node/elasticsearch.pid" ]] && ! [[ -s "$PID_FILE" ]]; then
      cp "$node/elasticsearch.pid" "$PID_FILE"
    fi
    if ((launcher_done)) && [[ -s "$PID_FILE" ]] && ! kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
      log "the node exited right after starting"
      rc=1
      break
    fi
    if ((launcher_done)) && answers 1; then
      [[ -s "$node/elasticsearch.pid" ]] && cp "$node/elasticsearch.pid" "$PID_FILE"
      pid="$(cat "$PID_FILE" 2>/dev/null || echo '?')"
      log "started $(node_version) (pid $pid) at $BASE_URL in $(elapsed "$t0")s"
      return 0
    fi
    if (($(date +%s) >= deadline)); then
      log "no yellow health at $BASE_URL after ${ES_START_TIMEOUT}s"
      rc=1
      break
    fi
    sleep 0.5
  done

  # Failed: show why, then leave nothing behind.
  log_tail "$node"
  if ((!launcher_done)); then
    # With setsid the launcher leads its own process group: end it with its children.
    if ((${#detach[@]})); then kill -TERM -- "-$launcher" 2>/dev/null || true; fi
    kill -TERM "$launcher" 2>/dev/null || true
  fi
  if [[ -s "$node/elasticsearch.pid" ]]; then
    kill_and_wait "$(cat "$node/elasticsearch.pid")" 10 || true
  fi
  run_dir_cleanup
  die "Elasticsearch $ES_VERSION did not start"
}

cmd_stop() {
  parse_url
  with_lock 8 "$LOCK_FILE"
  local pid t0
  if pid="$(our_pid)"; then
    t0="$(now)"
    log "stopping pid $pid at $BASE_URL..."
    kill_and_wait "$pid" "$STOP_TIMEOUT"
    log "stopped in $(elapsed "$t0")s"
  elif [[ -d "$RUN_DIR" ]]; then
    log "no node of ours is running at $BASE_URL; removing stale ${RUN_DIR#"$REPO_ROOT"/}"
  else
    log "no node of ours is running at $BASE_URL"
  fi
  run_dir_cleanup
}

cmd_pause() {
  parse_url
  with_lock 8 "$LOCK_FILE"
  local pid
  pid="$(our_pid)" || die "no node of ours is running at $BASE_URL"
  log "pausing pid $pid at $BASE_URL (data kept for the next start)..."
  kill_and_wait "$pid" "$STOP_TIMEOUT"
  rm -f "$PID_FILE"
  touch "$RUN_DIR/paused"
}

cmd_status() {
  parse_url
  if answers 1; then
    local pid=""
    pid="$(our_pid || true)"
    log "up: $(node_version) at $BASE_URL${pid:+ (pid $pid, started by this script)}"
    return 0
  fi
  log "not answering at $BASE_URL"
  return 1
}

cmd_url() {
  parse_url
  printf '%s\n' "$BASE_URL"
}

usage() {
  sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit "${1:-2}"
}

main() {
  case "${1:-}" in
    fetch) cmd_fetch ;;
    start) cmd_start ;;
    stop) cmd_stop ;;
    pause) cmd_pause ;;
    status) cmd_status ;;
    url) cmd_url ;;
    -h | --help | help) usage 0 ;;
    *) usage 2 ;;
  esac
}

# Sourced (scripts/elasticsearch-cluster.sh reuses these functions): define only.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then main "$@"; fi
