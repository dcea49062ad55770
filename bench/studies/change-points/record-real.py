"""Records real pytest-monitor series with planted changes for the change-point benchmark (run.sh scores them beside
the generated ones): runs test_change_point_workloads.py (10 sleeps, 10 CPU loops) BUILDS times with the real client,
each run as an ephemeral CI runner — its own UTS namespace and host name, runner-<k> — and writes the total time of
each test in each run, oldest first, as a series file in generate.ts's format (truth filled).

Planted, through the CP_FACTORS the tests read (at the default 40 builds):
- from build 25 on, a step: test_sleep[250ms] +50 % and test_cpu_loop[3600k] +100 %;
- build 12: a one-build spike, test_cpu_loop[2700k] ×2;
- build 18: a slow runner, every test ×1.5.
The factors scale a test's work, not the client's own time around it (about 15–20 ms per test here), so a measured
change is a little smaller than planted: the parameters give the steps as measured (median after over median before).
Everything else is the machine's own noise.

    python=$(bash scripts/client-venv.sh) && "$python" bench/studies/change-points/record-real.py [builds, 40] [output]

Output: bench/studies/change-points/real-series.json by default. Runs as root (unshare --uts). About 3 s per run. Before
each run it waits (at most a minute) until the rest of the machine uses less than a quarter of a core, measured over a
second from /proc/stat, and records that use (busy_cores) and the load average: a burst of other work during the
recording shows in every test at once, as a change the plan did not put there. The database is kept in a temporary
directory and removed afterwards.
"""

import importlib.util
import json
import os
import platform
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from importlib.metadata import version

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.join(HERE, "test_change_point_workloads.py")
# What pytest-monitor reads of the machine, fixed so that every run is of one machine class (as record-suite.py does).
RUNNER_ENV = {"PYTEST_MONITOR_FORCE_CPU_FREQ": "1", "PYTEST_MONITOR_CPU_FREQ": "2599.998"}
STEP_AT = 25
STEPS = {"test_sleep[250ms]": 50, "test_cpu_loop[3600k]": 100}
SPIKE_AT, SPIKE_TEST = 12, "test_cpu_loop[2700k]"
SLOW_AT, SLOW_FACTOR = 18, 1.5


def shared_pytest_run():
    """record.py's pytest command (bench/studies/model-accuracy/real-series/record.py: one command for every
    recording)."""
    record = os.path.join(HERE, "..", "model-accuracy", "real-series", "record.py")
    spec = importlib.util.spec_from_file_location("record", record)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.pytest_run


def factors(build):
    planted = {}
    if build >= STEP_AT:
        planted.update({test: 1 + size / 100 for test, size in STEPS.items()})
    if build == SPIKE_AT:
        planted[SPIKE_TEST] = 2.0
    if build == SLOW_AT:
        planted["*"] = SLOW_FACTOR
    return planted


def measured_pct(values, at):
    """The change of a series at `at`, as measured: the median after over the median before, in %."""
    return round(100 * (statistics.median(values[at:]) / statistics.median(values[:at]) - 1), 1)


def cpu_times():
    with open("/proc/stat") as handle:
        fields = [int(field) for field in handle.readline().split()[1:]]
    return sum(fields), fields[3] + fields[4]  # all, idle + iowait


def wait_for_idle(max_busy, seconds):
    """Waits (at most `seconds`) until the machine's busy cores, over one second, are fewer than `max_busy`."""
    deadline = time.monotonic() + seconds
    while True:
        total, idle = cpu_times()
        time.sleep(1)
        total_after, idle_after = cpu_times()
        busy = (1 - (idle_after - idle) / max(1, total_after - total)) * (os.cpu_count() or 1)
        if busy < max_busy or time.monotonic() >= deadline:
            return round(busy, 2)


def stop_on_term(signum, frame):
    # A SIGTERM unwinds like an error: the temporary directory is removed.
    raise SystemExit(f"stopped by signal {signum}")


def main():
    signal.signal(signal.SIGTERM, stop_on_term)
    builds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    output = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "real-series.json")
    if builds <= STEP_AT:
        raise SystemExit(f"builds must be more than {STEP_AT}")
    pytest_run = shared_pytest_run()
    load_averages = []
    busy_cores = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as directory:
        database = os.path.join(directory, "runs.pymon")
        for build in range(builds):
            busy_cores.append(wait_for_idle(0.25, 60))
            load_averages.append(round(os.getloadavg()[0], 2))
            began = time.monotonic()
            subprocess.run(
                ["unshare", "--uts", "sh", "-c", 'hostname "$1" && shift && exec "$@"', "sh", f"runner-{build}"]
                + pytest_run(database, SUITE),
                check=True,
                stdout=subprocess.DEVNULL,
                cwd=directory,
                env={**os.environ, **RUNNER_ENV, "CP_FACTORS": json.dumps(factors(build))},
            )
            print(
                f"build {build + 1}/{builds}: {time.monotonic() - began:.1f} s (busy cores before: {busy_cores[-1]})",
                file=sys.stderr,
            )
        connection = sqlite3.connect(database)
        hosts = connection.execute("SELECT COUNT(DISTINCT MACHINE_NODE) FROM EXECUTION_CONTEXTS").fetchone()[0]
        rows = connection.execute(
            "SELECT m.ITEM_VARIANT, m.TOTAL_TIME FROM TEST_METRICS m JOIN TEST_SESSIONS s ON s.SESSION_H = m.SESSION_H "
            "WHERE m.KIND = 'function' ORDER BY s.RUN_DATE, m.ITEM_START_TIME"
        ).fetchall()
    values = {}
    for item, total in rows:
        values.setdefault(item, []).append(float(f"{total:.4g}"))
    incomplete = [item for item, measured in values.items() if len(measured) != builds]
    if incomplete:
        raise SystemExit(f"tests without a value in every build: {incomplete[:5]}")
    series = []
    for item in sorted(values):
        step = {"at": STEP_AT, "size_pct": STEPS[item], "direction": "up"} if item in STEPS else None
        spikes = [SPIKE_AT] if item == SPIKE_TEST else []
        series.append({"id": item, "values": values[item], "truth": {"step": step, "drift": None, "spikes": spikes}})
    recording = {
        "builds": builds,
        "runner": [SLOW_FACTOR if build == SLOW_AT else 1.0 for build in range(builds)],
        "slow_builds": [SLOW_AT],
        "parameters": {
            "recorded": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
            "client": f"pytest-monitor {version('pytest-monitor')}, pytest {pytest.__version__}, "
            f"Python {platform.python_version()}",
            "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "hosts": hosts,
            "measure": "TOTAL_TIME (s)",
            "steps": {
                "at": STEP_AT,
                "planted_pct": STEPS,
                "measured_pct": {t: measured_pct(values[t], STEP_AT) for t in STEPS},
            },
            "spike": {
                "at": SPIKE_AT,
                "test": SPIKE_TEST,
                "factor": 2,
                "measured": round(values[SPIKE_TEST][SPIKE_AT] / statistics.median(values[SPIKE_TEST]), 2),
            },
            "slow_runner": {"at": SLOW_AT, "factor": SLOW_FACTOR},
            "busy_cores": busy_cores,
            "load_average": load_averages,
        },
        "series": series,
    }
    with open(output, "w") as handle:
        json.dump(recording, handle, separators=(",", ":"))
        handle.write("\n")
    print(
        f"{output}: {len(series)} tests × {builds} builds on {hosts} hosts, {time.monotonic() - started:.0f} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
