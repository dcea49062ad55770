#!/usr/bin/env bash
# Creates (once) the two virtualenvs of the change-point peers that bench/studies/change-points/run.sh compares with
# ours, one each because their numpy pins conflict (Apache Otava 0.8.0 wants numpy 2.2.0; MongoDB's
# signal-processing-algorithms 2.1.6 wants numpy < 2 and Python 3.11 exactly). Prints "<name> <python>" per venv on
# stdout; the rest on stderr.
#
#   bash bench/studies/change-points/peers.sh        # → otava /…/.cache/change-points-otava/bin/python
#                                            #   edivisive /…/.cache/change-points-edivisive/bin/python
#   PYTHON=python3.11 bash bench/studies/change-points/peers.sh
#
# Idempotent and quick when the venvs are there (scripts/lib/python-venv.sh); changing a pin rebuilds that venv.
# signal-processing-algorithms is an sdist with an optional C extension (e_divisive.c): pip compiles it with the
# machine's C compiler; without one the package falls back to its numpy code (slower, same answers), and
# edivisive_run.py reports which one ran.
set -euo pipefail

# The peers at the newest release on PyPI, with numpy and scipy pinned inside each one's own range.
OTAVA_PINS=(
  "apache-otava==0.8.0"
  "numpy==2.2.0"
  "scipy==1.16.3"
)
EDIVISIVE_PINS=(
  "signal-processing-algorithms==2.1.6"
  "numpy==1.26.4"
  "scipy==1.15.3"
)

# shellcheck source-path=SCRIPTDIR source=../../../scripts/lib/python-venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../../scripts/lib/python-venv.sh"
ensure_venv change-points-otava 'import otava.analysis' "${OTAVA_PINS[*]}"
printf 'otava %s\n' "$VENV_PYTHON"
ensure_venv change-points-edivisive 'import signal_processing_algorithms.energy_statistics.energy_statistics' \
  "${EDIVISIVE_PINS[*]}"
printf 'edivisive %s\n' "$VENV_PYTHON"
