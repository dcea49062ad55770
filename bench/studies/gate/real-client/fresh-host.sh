#!/usr/bin/env bash
# Runs its arguments on a runner of its own: a UTS namespace with a new host name, which pytest-monitor reads into the
# execution context (a new context of the same machine class), as an ephemeral CI runner is. real-client.ts puts it
# before pytest in `monitor-admin gate -- …`, so that every run and re-run of a build lands on a fresh runner.
#
# A fresh runner brings its own load: the k-th run of a build (counted in $FRESH_RUN_INDEX) has ${FRESH_LOADS[k]} busy
# processes beside it (3: two busy and one writer syncing to disk, $FRESH_WRITER's code), started here and stopped
# when the run ends.
set -euo pipefail
host="runner-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
read -r -a loads <<<"${FRESH_LOADS:-0}"
index=0
if [[ -n "${FRESH_RUN_INDEX:-}" ]]; then
  index=$(cat "$FRESH_RUN_INDEX" 2>/dev/null || echo 0)
  echo $((index + 1)) >"$FRESH_RUN_INDEX"
fi
load=${loads[$index]:-0}
busy=()
trap '((${#busy[@]} == 0)) || kill -9 "${busy[@]}" 2>/dev/null || true' EXIT
for ((k = 0; k < load && k < 2; k += 1)); do
  "$FRESH_PYTHON" -c 'while True: pass' &
  busy+=($!)
done
if ((load >= 3)); then
  "$FRESH_PYTHON" -c "$FRESH_WRITER" "$FRESH_RUN_INDEX.writer.bin" &
  busy+=($!)
fi
status=0
# shellcheck disable=SC2016 # "$1" and "$@" are the inner shell's, expanded there.
unshare --uts sh -c 'hostname "$1" && shift && exec "$@"' sh "$host" "$@" || status=$?
exit "$status"
