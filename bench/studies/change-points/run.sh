#!/usr/bin/env bash
# The change-point benchmark in one command: two peers from PyPI at their defaults — Apache Otava and MongoDB's
# E-Divisive (signal-processing-algorithms) — and our detector (bench/studies/change-points/ours.ts, when it is there)
# on the same series, scored side by side (score.ts):
#
#   1. the peers' virtualenvs (peers.sh; once);
#   2. the generated series (generate.ts: CP_SERIES × CP_BUILDS, seed CP_SEED);
#   3. each detector on them and on the recorded real series (real-series.json, made by record-real.py with the real
#      pytest-monitor client): the two peers at once, one core each, then ours;
#   4. the report: printed and written to CP_OUT (bench/results/<YYYY-MM-DD>-change-points.md), with the command, the
#      machine's load at start and end, the peers' versions and the generator's parameters.
#
#   bash bench/studies/change-points/run.sh                 # about a minute on 2 cores (+ the venvs the first time)
#   CP_SERIES=500 CP_OUT=/tmp/cp.md bash bench/studies/change-points/run.sh
#
# Settings (environment): CP_SERIES (2000), CP_BUILDS (60), CP_SEED (1), CP_DELAY_SAMPLE (0: the delay of every change
# point the peers find; N: of N drawn at random), CP_REAL (bench/studies/change-points/real-series.json), CP_OUT,
# CP_STEP_TIMEOUT (900 s per detector run). Work files go to bench/tmp/change-points/ (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/../../.."

SERIES="${CP_SERIES:-2000}"
BUILDS="${CP_BUILDS:-60}"
SEED="${CP_SEED:-1}"
DELAY_SAMPLE="${CP_DELAY_SAMPLE:-0}"
REAL="${CP_REAL:-bench/studies/change-points/real-series.json}"
OUT="${CP_OUT:-bench/results/$(date +%F)-change-points.md}"
STEP_TIMEOUT="${CP_STEP_TIMEOUT:-900}"
WORK=bench/tmp/change-points
HERE=bench/studies/change-points
LOAD_START="$(cut -d' ' -f1-3 /proc/loadavg | sed 's/ /, /g')"
overrides="$(env | grep -E '^CP_[A-Z_]+=' | sort | tr '\n' ' ' || true)"
COMMAND="${overrides}bash bench/studies/change-points/run.sh"

log() { printf '[change-points] %s\n' "$*" >&2; }

children=()
cleanup() {
  local status=$? pid
  trap - EXIT INT TERM
  for pid in "${children[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null || true; fi
  done
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$WORK" "$(dirname "$OUT")"

# 1. The peers' venvs: "<name> <python>" lines.
declare -A PY
while read -r name python; do PY[$name]="$python"; done < <(bash "$HERE/peers.sh")

# 2. The generated series.
node --import tsx "$HERE/generate.ts" --series "$SERIES" --builds "$BUILDS" --seed "$SEED" --out "$WORK/series.json"

# 3. The detectors on each data set. One thread each (numpy's pools), so that the two peers share the 2 cores fairly.
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
ours_note=""
detect() { # detect SET SERIES_FILE: writes $WORK/<SET>-<detector>.json
  local set=$1 file=$2 pid
  children=()
  for peer in otava edivisive; do
    log "$peer on $set"
    timeout "$STEP_TIMEOUT" "${PY[$peer]}" "$HERE/peers/${peer}_run.py" --delay-sample "$DELAY_SAMPLE" \
      "$file" "$WORK/$set-$peer.json" &
    children+=("$!")
  done
  for pid in "${children[@]}"; do wait "$pid"; done
  rm -f "$WORK/$set-ours.json"
  if [[ -f "$HERE/ours.ts" ]]; then
    log "ours on $set"
    if ! timeout "$STEP_TIMEOUT" node --import tsx "$HERE/ours.ts" "$file" "$WORK/$set-ours.json"; then
      rm -f "$WORK/$set-ours.json"
      ours_note="bench/studies/change-points/ours.ts failed (see the run's output): no row for ours."
    fi
  else
    ours_note="bench/studies/change-points/ours.ts is not there yet: no row for ours."
  fi
}
detect generated "$WORK/series.json"
detect real "$REAL"

# 4. The report.
score() { # score SET SERIES_FILE TITLE
  local set=$1 file=$2 title=$3 detections=("$WORK/$1-edivisive.json" "$WORK/$1-otava.json")
  if [[ -f "$WORK/$set-ours.json" ]]; then detections+=("$WORK/$set-ours.json"); else detections+=(--missing ours); fi
  node --import tsx "$HERE/score.ts" --series "$file" --title "$title" --out "$WORK/$set.md" "${detections[@]}" \
    >/dev/null
}
score generated "$WORK/series.json" "Generated series ($SERIES × $BUILDS builds, seed $SEED)"
score real "$REAL" "Real pytest-monitor series with planted changes ($REAL)"

{
  printf '# Change points: ours beside Apache Otava and MongoDB E-Divisive\n\n'
  printf "Reproduce: \`%s\` (commit %s%s).\n\n" "$COMMAND" "$(git rev-parse --short HEAD)" \
    "$(if [[ -n "$(git status --porcelain -- src "$HERE")" ]]; then
      echo ', with uncommitted changes in src/ or bench/studies/change-points/'
    fi)"
  printf -- '- Machine: %s cores, %s MB of memory, load average %s at the start, %s at the end; Node %s, %s.\n' \
    "$(getconf _NPROCESSORS_ONLN)" "$(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo)" "$LOAD_START" \
    "$(cut -d' ' -f1-3 /proc/loadavg | sed 's/ /, /g')" "$(node --version)" "$("${PY[otava]}" --version)"
  printf -- '- Peers (each series run alone, at the defaults of their entry points; versions pinned in %s):\n' \
    "bench/studies/change-points/peers.sh"
  for peer in otava edivisive; do
    # shellcheck disable=SC2016 # JavaScript's template literal, not the shell's
    node -e 'const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      console.log(`  - ${d.detector}: ${d.version}, parameters ${JSON.stringify(d.parameters)}`);' \
      "$WORK/generated-$peer.json"
  done
  printf -- '- Generator (%s): %s\n' "$HERE/generate.ts" \
    "$(node -e 'console.log(JSON.stringify(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).parameters))' \
      "$WORK/series.json")"
  printf -- '- Real series (%s, %s): %s\n' "$REAL" "$HERE/record-real.py" \
    "$(node -e 'const p = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).parameters;
      const { load_average: _, ...rest } = p; console.log(JSON.stringify(rest));' "$REAL")"
  printf -- '- Delays of the peers (offline: they see a whole series) come from re-running them on growing prefixes of '
  printf 'the series, from the step on: the first prefix on which they find a change point within 2 builds of the '
  printf 'one found on the whole series. That CPU time is not in the CPU column.\n'
  printf -- '- Precision counts change points on drifts (inside a drift, ±2 builds) as neither true nor false.\n'
  printf -- '- In the real series, other work on the machine during a build slows every test of it at once, a change '
  printf 'no plan put there: false change points of many tests at one build (the last column) are such bursts. '
  printf 'real-series.json has one at builds 36-38 (its load_average rose to 1.6-1.7 there).\n'
  if [[ -n "$ours_note" ]]; then printf -- '- %s\n' "$ours_note"; fi
  printf '\n'
  cat "$WORK/generated.md"
  printf '\n'
  cat "$WORK/real.md"
} >"$OUT"
cat "$OUT"
log "written to $OUT"
