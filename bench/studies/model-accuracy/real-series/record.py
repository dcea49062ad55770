"""Records real pytest-monitor series: runs test_workloads.py RUNS times with the real client writing its local
database, then writes, per test and measure, the values of the runs in order as a compact JSON fixture
(series.json) that bench/studies/model-accuracy/model-accuracy.ts reads.

    python=$(bash scripts/client-venv.sh)
    "$python" bench/studies/model-accuracy/real-series/record.py [runs] [output]

Takes about 3 s per run. The database is kept in a temporary directory and removed afterwards.
"""

import json
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from importlib.metadata import version

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
MEASURES = {
    "memory": "MEM_USAGE",
    "total_time": "TOTAL_TIME",
    "user_time": "USER_TIME",
    "kernel_time": "KERNEL_TIME",
    "cpu": "CPU_USAGE",
}


def pytest_run(database: str, suite: str) -> list[str]:
    """The command of one recorded run: the suite under pytest-monitor, its metrics added to `database`."""
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--db", database, suite]


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    output = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "series.json")
    with tempfile.TemporaryDirectory() as directory:
        database = os.path.join(directory, "runs.pymon")
        for run in range(runs):
            subprocess.run(
                pytest_run(database, os.path.join(HERE, "test_workloads.py")),
                check=True,
                stdout=subprocess.DEVNULL,
                cwd=directory,
            )
            print(f"run {run + 1}/{runs}", file=sys.stderr)
        connection = sqlite3.connect(database)
        columns = ", ".join(MEASURES.values())
        rows = connection.execute(
            f"SELECT m.ITEM, {columns} FROM TEST_METRICS m JOIN TEST_SESSIONS s ON s.SESSION_H = m.SESSION_H "
            "WHERE m.KIND = 'function' ORDER BY s.RUN_DATE, m.ITEM_START_TIME"
        ).fetchall()
    series: dict[str, dict[str, list[float]]] = {}
    for item, *values in rows:
        by_measure = series.setdefault(item, {name: [] for name in MEASURES})
        for name, value in zip(MEASURES, values, strict=True):
            by_measure[name].append(float(f"{value:.6g}"))
    fixture = {
        "recorded": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "client": f"pytest-monitor {version('pytest-monitor')}, pytest {pytest.__version__}, "
        f"Python {platform.python_version()}",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the end",
        "runs": runs,
        "units": {"memory": "MB", "total_time": "s", "user_time": "s", "kernel_time": "s", "cpu": "share of a core"},
        "series": [{"test": item, "measures": measures} for item, measures in sorted(series.items())],
    }
    with open(output, "w") as handle:
        json.dump(fixture, handle, separators=(",", ":"))
        handle.write("\n")
    print(f"{output}: {len(series)} tests × {len(MEASURES)} measures × {runs} runs", file=sys.stderr)


if __name__ == "__main__":
    main()
