#!/usr/bin/env bash
# Runs its arguments on a runner of its own: a UTS namespace with a new host name, which pytest-monitor reads into the
# execution context (a new context of the same machine class), as an ephemeral CI runner is. real-client.ts puts it
# before pytest in `monitor-admin gate -- …`, so that every run and re-run of a build lands on a fresh runner.
set -euo pipefail
host="runner-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
# shellcheck disable=SC2016 # "$1" and "$@" are the inner shell's, expanded there.
exec unshare --uts sh -c 'hostname "$1" && shift && exec "$@"' sh "$host" "$@"
