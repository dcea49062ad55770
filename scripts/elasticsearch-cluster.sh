#!/usr/bin/env bash
# scripts/elasticsearch-cluster.sh — a real 3-node Elasticsearch cluster on loopback for the cluster suites
# (test/cluster/). Each node is a JVM of the same distribution scripts/elasticsearch.sh runs, started and stopped by
# that script's functions, with its own http and transport port and its own data under
# .cache/elasticsearch/run-<http port>/.
#
#   scripts/elasticsearch-cluster.sh start          start every node not running (all at once); return when all joined and green
#   scripts/elasticsearch-cluster.sh stop           stop every node and delete its data
#   scripts/elasticsearch-cluster.sh kill N         kill -9 node N (1..3); its data stays for start-node N
#   scripts/elasticsearch-cluster.sh stop-node N    stop node N gracefully (SIGTERM); its data stays for start-node N
#   scripts/elasticsearch-cluster.sh start-node N   start node N on its data; return when every node is in the cluster
#   scripts/elasticsearch-cluster.sh status         each node's pid, and the cluster's health; exit 0 when green
#   scripts/elasticsearch-cluster.sh urls           the nodes' base URLs, comma-separated (an ELASTICSEARCH_URL)
#
# Environment:
#   ES_CLUSTER_PORTS   the nodes' http ports (default "9301 9302 9303"); node N's transport port is its http port + 10
#                      (9311..9313). Single nodes of scripts/elasticsearch.sh take an ephemeral transport port
#                      (transport.port: 0, 32768 and up), so both can run side by side.
#   ES_HEAP            each node's JVM heap (default 512m here: three nodes on a small machine)
#   ES_VERSION, ES_JAVA_HOME, ES_START_TIMEOUT, ES_RUN_AS   as for scripts/elasticsearch.sh
set -euo pipefail

ES_HEAP="${ES_HEAP:-512m}"
ES_CLUSTER_PORTS="${ES_CLUSTER_PORTS:-9301 9302 9303}"
# shellcheck source=scripts/elasticsearch.sh disable=SC1091 # followed with shellcheck -x
source "$(dirname "${BASH_SOURCE[0]}")/elasticsearch.sh"

read -r -a CLUSTER_PORTS <<<"$ES_CLUSTER_PORTS"
((${#CLUSTER_PORTS[@]} >= 3)) || die "ES_CLUSTER_PORTS=$ES_CLUSTER_PORTS: a cluster that survives the loss of a node needs 3 nodes or more"
for p in "${CLUSTER_PORTS[@]}"; do
  if ! [[ "$p" =~ ^[0-9]+$ ]] || ((p < 1 || p + 10 > 65535)); then die "ES_CLUSTER_PORTS: bad port $p"; fi
done
ES_CLUSTER_NAME="test-es-cluster-${CLUSTER_PORTS[0]}"

node_count() { echo "${#CLUSTER_PORTS[@]}"; }
transport_port() { echo "$((${CLUSTER_PORTS[$1 - 1]} + 10))"; }

# Points the single-node functions at node N: its URL, run folder, pid and lock files.
select_node() { # N
  local n="$1"
  if ! [[ "$n" =~ ^[0-9]+$ ]] || ((n < 1 || n > ${#CLUSTER_PORTS[@]})); then
    die "no node '$n': nodes are numbered 1..${#CLUSTER_PORTS[@]}"
  fi
  NODE_INDEX="$n"
  # shellcheck disable=SC2034 # read by parse_url (elasticsearch.sh)
  ES_URL="http://127.0.0.1:${CLUSTER_PORTS[$n - 1]}"
  parse_url
}

yaml_list() { # items... -> ["a", "b"]
  local out="" item
  for item in "$@"; do out+="${out:+, }$(yaml_quote "$item")"; done
  printf '[%s]' "$out"
}

# Replaces the single-node configuration of scripts/elasticsearch.sh: a node of the cluster, found by its peers
# through their transport ports; the first start of all three bootstraps the cluster (initial_master_nodes), later
# starts resume on the data and ignore that setting.
write_config() { # node-dir
  local node="$1" seeds=() names=() i
  for ((i = 1; i <= ${#CLUSTER_PORTS[@]}; i++)); do
    seeds+=("127.0.0.1:$(transport_port "$i")")
    names+=("node-$i")
  done
  mkdir -p "$node/config" "$node/data" "$node/logs" "$node/tmp"
  cp -R "$ES_HOME/config/." "$node/config/"
  mkdir -p "$node/config/jvm.options.d"
  printf -- '-Xms%s\n-Xmx%s\n' "$ES_HEAP" "$ES_HEAP" >"$node/config/jvm.options.d/heap.options"
  # Test nodes restart often and live briefly: the quick compiler only starts them sooner on a busy machine.
  printf -- '-XX:TieredStopAtLevel=1\n' >"$node/config/jvm.options.d/startup.options"
  {
    echo "# written by scripts/elasticsearch-cluster.sh"
    echo "cluster.name: $ES_CLUSTER_NAME"
    echo "node.name: node-$NODE_INDEX"
    echo "network.host: $(yaml_quote "$BIND")"
    echo "http.port: $PORT"
    echo "transport.port: $(transport_port "$NODE_INDEX")"
    echo "discovery.seed_hosts: $(yaml_list "${seeds[@]}")"
    echo "cluster.initial_master_nodes: $(yaml_list "${names[@]}")"
    # Three JVMs share a small machine: size each one's thread pools for one processor.
    echo "node.processors: 1"
    echo "path.data: $(yaml_quote "$node/data")"
    echo "path.logs: $(yaml_quote "$node/logs")"
    echo "cluster.routing.allocation.disk.threshold_enabled: false"
    echo "action.destructive_requires_name: false"
    if [[ -d "$ES_HOME/modules/x-pack-security" ]]; then
      echo "xpack.security.enabled: false"
    fi
  } >"$node/config/elasticsearch.yml"
}

# Replaces the single node's "yellow health" probe: a node of a cluster that is still forming has no health to
# report, so a node counts as started once it answers for itself (nodes info of the local node needs no master).
answers() {
  local wait="${1:-1}" deadline
  deadline=$(($(date +%s) + wait))
  while :; do
    es_curl -f -o /dev/null --max-time 3 "$BASE_URL/_nodes/_local?filter_path=nodes.*.name" 2>/dev/null && return 0
    (($(date +%s) < deadline)) || return 1
    sleep 0.5
  done
}

log_tail() { # node-dir
  local node="$1" f
  for f in "$node/console.log" "$node/logs/$ES_CLUSTER_NAME.log"; do
    [[ -s "$f" ]] || continue
    log "---- last lines of ${f#"$REPO_ROOT"/} ----"
    tail -n 60 "$f" >&2
  done
}

# Waits for the cluster (asked through any node that answers) to have every node and the given health.
wait_cluster() { # status timeout-seconds
  local status="$1" timeout="$2" deadline p
  deadline=$(($(date +%s) + timeout))
  while (($(date +%s) < deadline)); do
    for p in "${CLUSTER_PORTS[@]}"; do
      if es_curl -f -o /dev/null --max-time 8 \
        "http://127.0.0.1:$p/_cluster/health?wait_for_status=$status&wait_for_nodes=${#CLUSTER_PORTS[@]}&timeout=5s" \
        2>/dev/null; then
        return 0
      fi
    done
    sleep 1
  done
  return 1
}

cmd_cluster_start() {
  local t0 i pids=() failed=0
  t0="$(now)"
  cmd_fetch # once, before the nodes start in parallel
  log "starting $ES_CLUSTER_NAME: ${#CLUSTER_PORTS[@]} nodes at $(cmd_urls), heap $ES_HEAP each"
  for ((i = 1; i <= ${#CLUSTER_PORTS[@]}; i++)); do
    (select_node "$i" && cmd_start) &
    pids+=("$!")
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { log "node $((i + 1)) did not start"; failed=1; }
  done
  ((failed == 0)) || die "the cluster did not start (see above); '$0 stop' removes what started"
  wait_cluster green "$ES_START_TIMEOUT" || die "the cluster did not turn green with ${#CLUSTER_PORTS[@]} nodes in ${ES_START_TIMEOUT}s"
  log "cluster green with ${#CLUSTER_PORTS[@]} nodes in $(elapsed "$t0")s"
}

cmd_cluster_stop() {
  local i pids=()
  for ((i = 1; i <= ${#CLUSTER_PORTS[@]}; i++)); do
    (select_node "$i" && cmd_stop) &
    pids+=("$!")
  done
  for i in "${pids[@]}"; do wait "$i" || true; done
}

cmd_kill() { # N
  select_node "$1"
  with_lock 8 "$LOCK_FILE"
  local pid i
  pid="$(our_pid)" || die "node $1 is not running (no live pid of ours for $BASE_URL)"
  kill -KILL "$pid"
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$pid" 2>/dev/null && die "pid $pid survived KILL"
  rm -f "$PID_FILE"
  touch "$RUN_DIR/paused"
  log "killed node $1 (pid $pid, kill -9) at $BASE_URL; its data stays for 'start-node $1'"
}

cmd_start_node() { # N
  local t0
  t0="$(now)"
  select_node "$1"
  cmd_start
  wait_cluster yellow "$ES_START_TIMEOUT" || die "node $1 started but the cluster has not all ${#CLUSTER_PORTS[@]} nodes after ${ES_START_TIMEOUT}s"
  log "node $1 back in the cluster in $(elapsed "$t0")s"
}

cmd_cluster_status() {
  local i pid health=""
  for ((i = 1; i <= ${#CLUSTER_PORTS[@]}; i++)); do
    select_node "$i"
    if pid="$(our_pid)"; then log "node $i: pid $pid at $BASE_URL"; else log "node $i: not running ($BASE_URL)"; fi
  done
  for i in "${CLUSTER_PORTS[@]}"; do
    health="$(es_curl --max-time 5 "http://127.0.0.1:$i/_cluster/health?filter_path=status,number_of_nodes" 2>/dev/null)" && break
  done
  log "health: ${health:-no node answers}"
  [[ "$health" == *'"green"'* ]]
}

cmd_urls() {
  local p urls=()
  for p in "${CLUSTER_PORTS[@]}"; do urls+=("http://127.0.0.1:$p"); done
  (IFS=,; printf '%s\n' "${urls[*]}")
}

cluster_usage() {
  sed -n '6,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit "${1:-2}"
}

need_node() { [[ -n "${1:-}" ]] || die "which node? e.g. '$0 ${2} 1'"; }

case "${1:-}" in
  start) cmd_cluster_start ;;
  stop) cmd_cluster_stop ;;
  kill) need_node "${2:-}" kill && cmd_kill "$2" ;;
  stop-node) need_node "${2:-}" stop-node && select_node "$2" && cmd_pause ;;
  start-node) need_node "${2:-}" start-node && cmd_start_node "$2" ;;
  status) cmd_cluster_status ;;
  urls) cmd_urls ;;
  -h | --help | help) cluster_usage 0 ;;
  *) cluster_usage 2 ;;
esac
