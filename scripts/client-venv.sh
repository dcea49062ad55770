#!/usr/bin/env bash
# Creates (once) the Python virtualenv holding the REAL pytest-monitor client, as released on PyPI, for the
# end-to-end tests (test/e2e/). Prints the venv's python path on stdout; everything else goes to stderr.
#
#   scripts/client-venv.sh            # → /path/to/repo/.cache/client-venv/bin/python
#   PYTHON=python3.12 scripts/client-venv.sh
#
# Idempotent and quick when the venv is already there: a stamp file records the interpreter and the pinned
# versions, and the venv is rebuilt only when that record changes or the venv no longer imports the plugins.
set -euo pipefail

# The pins. pytest-monitor 1.6.6 is the last release on PyPI (what it sends: docs/api.md, "Using it from
# pytest-monitor"). pytest stays below 9.2: pytest 9.2.0 dropped the private
# `Node._nodeid` that pytest-monitor 1.6.6 reads for module metrics (`--restrict-scope-to module`), which then ERRORs
# every module's last test. Changing a pin rebuilds the venv on the next run.
PINS=(
  "pytest==9.1.1"
  "pytest-monitor==1.6.6"
  "pytest-xdist==3.8.0"
)

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo/.cache/client-venv"
stamp="$venv/.stamp"
python="${PYTHON:-python3}"

log() { printf 'client-venv: %s\n' "$*" >&2; }

command -v "$python" >/dev/null 2>&1 || { log "\"$python\" not found: install Python 3.10+ or set PYTHON"; exit 1; }
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || { log "$python is older than 3.10 (pytest 9 needs 3.10+): set PYTHON"; exit 1; }
python_id="$("$python" -c 'import sys; print(sys.implementation.name, ".".join(map(str, sys.version_info[:3])), sys.base_prefix)')"
wanted="$(printf '%s\n' "python: $python_id" "${PINS[@]}")"

venv_is_ready() {
  [[ -x "$venv/bin/python" && -f "$stamp" ]] || return 1
  [[ "$(cat "$stamp")" == "$wanted" ]] || return 1
  "$venv/bin/python" -c 'import pytest, pytest_monitor, xdist' >/dev/null 2>&1
}

mkdir -p "$repo/.cache"
# Two runs at once (two mocha processes, a developer and an editor plugin) must not build the venv together.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$repo/.cache/client-venv.lock"
  flock 9
fi

if ! venv_is_ready; then
  log "creating $venv with ${PINS[*]} (python: $python_id)"
  started=$SECONDS
  rm -rf "$venv"
  "$python" -m venv "$venv"
  PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/python" -m pip install --quiet --no-input "${PINS[@]}" >&2
  "$venv/bin/python" -c 'import pytest, pytest_monitor, xdist' >&2
  # Written last: a venv whose install was interrupted has no stamp and is rebuilt next time.
  printf '%s\n' "$wanted" >"$stamp"
  log "ready in $((SECONDS - started)) s"
fi

printf '%s\n' "$venv/bin/python"
