#!/usr/bin/env bash
# Creates (once) the Python virtualenv holding the REAL pytest-monitor client, as released on PyPI, for the
# end-to-end tests (test/e2e/). Prints the venv's python path on stdout; everything else goes to stderr.
#
#   scripts/client-venv.sh            # → /path/to/repo/.cache/client-venv/bin/python
#   PYTHON=python3.12 scripts/client-venv.sh
#
# Idempotent and quick when the venv is already there (scripts/lib/python-venv.sh).
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

# shellcheck source-path=SCRIPTDIR source=lib/python-venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/python-venv.sh"
ensure_venv client-venv 'import pytest, pytest_monitor, xdist' "${PINS[*]}"
printf '%s\n' "$VENV_PYTHON"
