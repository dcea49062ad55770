#!/usr/bin/env bash
# bench/studies/single-create/single-create-ab.sh — serial single creates on SQLite, build A against build B, alternated
# on this machine (issue 40: at least as fast as e9cfbbc, before run summaries). What it does:
# bench/studies/single-create/single-create-ab.ts.
#
#   bash bench/studies/single-create/single-create-ab.sh [revA] [revB]     defaults: e9cfbbc HEAD
#
# A revision is a commit of this repository (built in a temporary worktree, removed after) or the path of a checkout
# (used as it is, uncommitted edits included; built there unless BENCH_AB_BUILD=0). Settings: BENCH_AB_ROUNDS (3),
# BENCH_AB_METRICS (3000), BENCH_AB_WARMUP (300), BENCH_AB_SECONDS (20, per run), BENCH_AB_SYNCHRONOUS (FULL or
# NORMAL; unset: each build's default), BENCH_AB_OUT. Under 3 minutes at the defaults, the two builds included.
set -euo pipefail
args=()
for arg in "$@"; do
  # A checkout named relative to the caller's folder, made absolute before leaving it.
  if [[ -f "$arg/package.json" ]]; then args+=("$(cd "$arg" && pwd)"); else args+=("$arg"); fi
done
cd "$(dirname "$0")/../../.."
exec node --import tsx bench/studies/single-create/single-create-ab.ts "${args[@]}"
