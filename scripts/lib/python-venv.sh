# shellcheck shell=bash
# Sourced by the scripts that need a pinned Python virtualenv (client-venv.sh, monitor-api-venv.sh,
# schemathesis.sh): one way to make, check and reuse one.
#
#   ensure_venv NAME CHECK INSTALL...   makes .cache/NAME (once) and sets VENV_PYTHON to its python
#
# Each INSTALL is the arguments of one `pip install` (pins, and options such as --no-deps), run in order. CHECK is
# Python code that must run in the venv (its imports). A stamp file records the interpreter and the installs; the venv
# is rebuilt only when that record changes or CHECK fails. A lock keeps two runs at once from building it together.
# Messages go to stderr, prefixed with NAME.

venv_log() { printf '%s: %s\n' "$VENV_NAME" "$*" >&2; }

ensure_venv() {
  VENV_NAME="$1"
  local check="$2"
  shift 2
  local repo python python_id venv stamp wanted started install
  repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  python="${PYTHON:-python3}"
  venv="$repo/.cache/$VENV_NAME"
  stamp="$venv/.stamp"
  command -v "$python" >/dev/null 2>&1 || { venv_log "\"$python\" not found: install Python 3.10+ or set PYTHON"; return 1; }
  "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || { venv_log "$python is older than 3.10: set PYTHON"; return 1; }
  python_id="$("$python" -c 'import sys; print(sys.implementation.name, ".".join(map(str, sys.version_info[:3])), sys.base_prefix)')"
  wanted="$(printf '%s\n' "python: $python_id" "$@")"
  mkdir -p "$repo/.cache"
  (
    if command -v flock >/dev/null 2>&1; then flock 9; fi
    if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$wanted" ]] &&
      "$venv/bin/python" -c "$check" >/dev/null 2>&1; then
      exit 0
    fi
    venv_log "creating $venv with $* (python: $python_id)"
    started=$SECONDS
    rm -rf "$venv"
    "$python" -m venv "$venv"
    for install in "$@"; do
      # shellcheck disable=SC2086 # each install is a list of pip arguments
      PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/python" -m pip install --quiet --no-input $install >&2
    done
    "$venv/bin/python" -c "$check" >&2
    # Written last: a venv whose install was interrupted has no stamp and is rebuilt next time.
    printf '%s\n' "$wanted" >"$stamp"
    venv_log "ready in $((SECONDS - started)) s"
  ) 9>"$repo/.cache/$VENV_NAME.lock"
  # shellcheck disable=SC2034 # read by the sourcing script
  VENV_PYTHON="$venv/bin/python"
}
