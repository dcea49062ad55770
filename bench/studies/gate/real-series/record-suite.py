"""Records the series bench/studies/gate/gate.ts scales up (--real): runs test_suite_workloads.py (about 200 tests) RUNS
times with the real pytest-monitor, each run as an ephemeral CI runner — its own UTS namespace with its own host name,
so that the client sees a new execution context of one machine class every run — beside a background load that varies
from run to run (0, 1 or 2 busy processes, and a few heavier runs: 2 busy processes and a writer syncing to disk), then
writes per test and measure the values of the runs in order, rounded, as suite.json.

    python=$(bash scripts/client-venv.sh)
    "$python" bench/studies/gate/real-series/record-suite.py [runs, 40] [output]

Runs as root (unshare --uts). Takes about 10 s per run on an idle 2-core machine (40 runs: about 8 minutes); waits up
to 10 minutes for the 1-minute load average to fall below 2 first, and records it before each run (load_average):
other work on the machine is load too. The database is kept in a temporary directory and removed afterwards; the
load processes are this script's own children, stopped after each run (and on SIGTERM).
"""

import importlib.util
import json
import os
import platform
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from importlib.metadata import version

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.join(HERE, "test_suite_workloads.py")
MEASURES = {
    "memory": "MEM_USAGE",
    "total_time": "TOTAL_TIME",
    "user_time": "USER_TIME",
    "kernel_time": "KERNEL_TIME",
}
# Runs per background load, in shares of the runs: busy processes beside the suite; 3 stands for 2 busy
# processes and a writer syncing to disk.
LOAD_SHARES = {0: 0.4, 1: 0.35, 2: 0.175, 3: 0.075}
# What pytest-monitor reads of the machine, fixed so that every run is of one machine class (as test/e2e does).
RUNNER_ENV = {"PYTEST_MONITOR_FORCE_CPU_FREQ": "1", "PYTEST_MONITOR_CPU_FREQ": "2599.998"}

BUSY = "while True: pass"
WRITER = """
import os, sys
path = sys.argv[1]
while True:
    with open(path, 'wb') as handle:
        handle.write(os.urandom(4 * 1024 * 1024))
        handle.flush()
        os.fsync(handle.fileno())
"""


def shared_pytest_run():
    """record.py's pytest command (bench/studies/model-accuracy/real-series/record.py: one command for every
    recording)."""
    record = os.path.join(HERE, "..", "..", "model-accuracy", "real-series", "record.py")
    spec = importlib.util.spec_from_file_location("record", record)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.pytest_run


def schedule(runs):
    """The load of each run: the shares above, shuffled with a fixed seed."""
    loads = []
    for load, share in LOAD_SHARES.items():
        loads += [load] * round(share * runs)
    loads = (loads + [0] * runs)[:runs]
    random.Random(7).shuffle(loads)
    return loads


def start_load(load, directory):
    processes = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(min(load, 2))]
    if load >= 3:
        processes.append(subprocess.Popen([sys.executable, "-c", WRITER, os.path.join(directory, "writer.bin")]))
    return processes


def stop_load(processes):
    for process in processes:
        process.send_signal(signal.SIGTERM)
    for process in processes:
        process.wait()


def significant(value, digits):
    return float(f"{value:.{digits}g}")


def stop_on_term(signum, frame):
    # A SIGTERM unwinds like an error: the finally blocks stop the load processes.
    raise SystemExit(f"stopped by signal {signum}")


def wait_for_quiet(limit, seconds):
    """Waits (at most `seconds`) until the 1-minute load average is below `limit`: other work skews the runs."""
    deadline = time.monotonic() + seconds
    while os.getloadavg()[0] >= limit and time.monotonic() < deadline:
        time.sleep(5)
    return os.getloadavg()[0]


def main():
    signal.signal(signal.SIGTERM, stop_on_term)
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    output = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "suite.json")
    loads = schedule(runs)
    pytest_run = shared_pytest_run()
    seconds = []
    load_averages = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as directory:
        database = os.path.join(directory, "runs.pymon")
        quiet = wait_for_quiet(2, 600)
        print(f"load average {quiet:.2f} at the start", file=sys.stderr)
        for run, load in enumerate(loads):
            host = f"runner-{run:03d}-{random.Random(run).getrandbits(32):08x}"
            load_averages.append(round(os.getloadavg()[0], 2))
            processes = start_load(load, directory)
            time.sleep(0.5)
            began = time.monotonic()
            try:
                subprocess.run(
                    [
                        "unshare",
                        "--uts",
                        "sh",
                        "-c",
                        'hostname "$1" && shift && exec "$@"',
                        "sh",
                        host,
                        *pytest_run(database, SUITE),
                    ],
                    check=True,
                    stdout=subprocess.DEVNULL,
                    cwd=directory,
                    env={**os.environ, **RUNNER_ENV},
                )
            finally:
                stop_load(processes)
            seconds.append(round(time.monotonic() - began, 1))
            print(
                f"run {run + 1}/{runs} on {host}, load {load}: {seconds[-1]} s "
                f"({time.monotonic() - started:.0f} s in all)",
                file=sys.stderr,
            )
        connection = sqlite3.connect(database)
        contexts = connection.execute(
            "SELECT COUNT(DISTINCT ENV_H) FROM TEST_SESSIONS s JOIN TEST_METRICS m ON s.SESSION_H = m.SESSION_H"
        ).fetchone()[0]
        hosts = connection.execute("SELECT COUNT(DISTINCT MACHINE_NODE) FROM EXECUTION_CONTEXTS").fetchone()[0]
        columns = ", ".join(MEASURES.values())
        rows = connection.execute(
            f"SELECT m.ITEM_VARIANT, {columns} FROM TEST_METRICS m JOIN TEST_SESSIONS s ON s.SESSION_H = m.SESSION_H "
            "WHERE m.KIND = 'function' ORDER BY s.RUN_DATE, m.ITEM_START_TIME"
        ).fetchall()
    series = {}
    for item, memory, total, user, kernel in rows:
        measures = series.setdefault(item, {name: [] for name in MEASURES})
        measures["memory"].append(round(memory, 3))
        measures["total_time"].append(significant(total, 4))
        measures["user_time"].append(round(user, 2))
        measures["kernel_time"].append(round(kernel, 2))
    incomplete = [item for item, measures in series.items() if len(measures["total_time"]) != runs]
    if incomplete:
        raise SystemExit(f"tests without a value in every run: {incomplete[:5]}")
    fixture = {
        "recorded": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "client": f"pytest-monitor {version('pytest-monitor')}, pytest {pytest.__version__}, "
        f"Python {platform.python_version()}",
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "runs": runs,
        "contexts": contexts,
        "hosts": hosts,
        "loads": loads,
        "seconds": seconds,
        "load_average": load_averages,
        "units": {"memory": "MB", "total_time": "s", "user_time": "s", "kernel_time": "s"},
        "tests": [{"test": item, **measures} for item, measures in sorted(series.items())],
    }
    with open(output, "w") as handle:
        json.dump(fixture, handle, separators=(",", ":"))
        handle.write("\n")
    print(
        f"{output}: {len(series)} tests × {runs} runs, {contexts} contexts, {time.monotonic() - started:.0f} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
