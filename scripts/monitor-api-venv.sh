#!/usr/bin/env bash
# Creates (once) the Python virtualenv holding the ORIGINAL server's own Python client, `monitor_api.Monitor` from
# monitor-server-api 1.1.0 on PyPI, for test/e2e/monitor-api-client.test.ts. Prints the venv's python path on stdout;
# everything else goes to stderr.
#
#   scripts/monitor-api-venv.sh            # → /path/to/repo/.cache/monitor-api-venv/bin/python
#   PYTHON=python3.12 scripts/monitor-api-venv.sh
#
# Idempotent and quick when the venv is already there (scripts/lib/python-venv.sh).
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

# shellcheck source-path=SCRIPTDIR source=lib/python-venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/python-venv.sh"
ensure_venv monitor-api-venv "$CHECK" "${RUNTIME_PINS[*]}" "--no-deps $CLIENT_PIN"
printf '%s\n' "$VENV_PYTHON"
