#!/usr/bin/env bash
# Creates (once) the Python virtualenv holding the ORIGINAL server's own Python client, `monitor_api.Monitor` from
# monitor-server-api 1.1.0 on PyPI, for test/e2e/monitor-api-client.test.ts. Prints the venv's python path on stdout;
# everything else goes to stderr.
#
#   scripts/monitor-api-venv.sh            # → /path/to/repo/.cache/monitor-api-venv/bin/python
#   PYTHON=python3.12 scripts/monitor-api-venv.sh
#
# Idempotent and quick when the venv is already there: a stamp file records the interpreter and the pinned
# versions, and the venv is rebuilt only when that record changes or the venv no longer imports the client.
set -euo pipefail

# The distribution also holds the original server (Flask < 2, Werkzeug < 2, uWSGI, SQLAlchemy, ...), none of which
# the client imports: it is installed with --no-deps. What `monitor_api/` imports at run time is pandas
# (core/collections.py), PyYAML (core/collections.py) and requests (dialects/remote.py); the rest is the standard
# library. Those three are pinned here; pip picks their own dependencies (numpy, urllib3, ...) for the interpreter.
# Changing a pin rebuilds the venv on the next run.
CLIENT_PIN="monitor-server-api==1.1.0"
RUNTIME_PINS=(
  "pandas==2.3.3"
  "requests==2.32.5"
  "PyYAML==6.0.3"
)
CHECK='import monitor_api, pandas, requests, yaml; from monitor_api import Monitor'

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo/.cache/monitor-api-venv"
stamp="$venv/.stamp"
python="${PYTHON:-python3}"

log() { printf 'monitor-api-venv: %s\n' "$*" >&2; }

command -v "$python" >/dev/null 2>&1 || { log "\"$python\" not found: install Python 3.10+ or set PYTHON"; exit 1; }
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || { log "$python is older than 3.10: set PYTHON"; exit 1; }
python_id="$("$python" -c 'import sys; print(sys.implementation.name, ".".join(map(str, sys.version_info[:3])), sys.base_prefix)')"
wanted="$(printf '%s\n' "python: $python_id" "$CLIENT_PIN --no-deps" "${RUNTIME_PINS[@]}")"

venv_is_ready() {
  [[ -x "$venv/bin/python" && -f "$stamp" ]] || return 1
  [[ "$(cat "$stamp")" == "$wanted" ]] || return 1
  "$venv/bin/python" -c "$CHECK" >/dev/null 2>&1
}

mkdir -p "$repo/.cache"
# Two runs at once (two mocha processes, a developer and an editor plugin) must not build the venv together.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$repo/.cache/monitor-api-venv.lock"
  flock 9
fi

if ! venv_is_ready; then
  log "creating $venv with $CLIENT_PIN (no deps) ${RUNTIME_PINS[*]} (python: $python_id)"
  started=$SECONDS
  rm -rf "$venv"
  "$python" -m venv "$venv"
  export PIP_DISABLE_PIP_VERSION_CHECK=1
  "$venv/bin/python" -m pip install --quiet --no-input "${RUNTIME_PINS[@]}" >&2
  "$venv/bin/python" -m pip install --quiet --no-input --no-deps "$CLIENT_PIN" >&2
  "$venv/bin/python" -c "$CHECK" >&2
  # Written last: a venv whose install was interrupted has no stamp and is rebuilt next time.
  printf '%s\n' "$wanted" >"$stamp"
  log "ready in $((SECONDS - started)) s"
fi

printf '%s\n' "$venv/bin/python"
