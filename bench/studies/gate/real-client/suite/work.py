"""The workloads of the real-client suite, and the changes planted in it (real-client.ts's schedule).

A build's code is the suite plus the changes of its commit, named in the environment variable CORPUS_CHANGES
(comma-separated; see CHANGES). Every amount is fixed, so that two runs of one commit do the same work: what differs
between them is the machine's (scheduler, page cache, allocator, the busy processes beside the run).
"""

import os
import time

CHANGES = {
    "hold40": "test_memory.py::test_hold[hold_020mb_0.3s] holds 40 MB more",
    "cpu30": "test_cpu.py::test_loop[loop_0.30s] loops 30 % longer",
    "sleep50": "test_sleep.py::test_wait[wait_0.40s] waits 50 % longer",
    "dep10": "the package loaded/ imports heavy_dependency at collection: every test's memory +10 MB",
    "slow20": "every test's work (loops, waits, holds) 20 % longer",
    "kept": "test_cpu.py::test_loop[loop_0.60s] loops 50 % longer (left in place)",
}
ACTIVE = {name for name in os.environ.get("CORPUS_CHANGES", "").split(",") if name}
unknown = ACTIVE - set(CHANGES)
if unknown:
    raise SystemExit(f"CORPUS_CHANGES: unknown changes {sorted(unknown)}; known: {sorted(CHANGES)}")

# Loop iterations a second of this suite's loop takes on an x86_64 core of 2026 (about 18 M): only a scale, the
# durations named below are what the loop takes on such a core.
LOOPS_PER_SECOND = 18_000_000
SCALE = 1.2 if "slow20" in ACTIVE else 1.0


def changed(name, factor):
    """`factor` when the change `name` is planted in this build, else 1."""
    return factor if name in ACTIVE else 1.0


def loop(seconds):
    """CPU work of about `seconds` on a core (more on a busy runner)."""
    total = 0
    for i in range(int(seconds * SCALE * LOOPS_PER_SECOND)):
        total += i & 7
    return total


def wait(seconds):
    """A wait that needs no CPU: a sleep does not slow with the runner."""
    time.sleep(seconds * SCALE)


def touched(megabytes):
    """`megabytes` of memory, every page written: resident, so that memory_profiler's RSS samples see it."""
    block = bytearray(int(megabytes * 1024 * 1024))
    for offset in range(0, len(block), 4096):
        block[offset] = 1
    return block


def hold(megabytes, seconds):
    """Holds `megabytes` for `seconds`: memory_profiler samples every 0.1 s, so a shorter hold may be missed."""
    block = touched(megabytes)
    wait(seconds)
    return len(block)
