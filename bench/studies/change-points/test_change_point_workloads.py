"""The suite record-real.py runs 40 times with the real pytest-monitor client: 10 sleeps and 10 CPU loops of varied
sizes. Each test scales its work by the factors record-real.py sets for the build in CP_FACTORS (JSON: test id → factor,
"*" for every test): the planted steps, spike and slow runner; without it, every factor is 1.
"""

import json
import os
import time

import pytest

SLEEPS_MS = [10, 20, 30, 50, 70, 100, 120, 150, 200, 250]
LOOPS_K = [150, 300, 450, 600, 900, 1200, 1500, 2100, 2700, 3600]


def factor(test_id: str) -> float:
    factors = json.loads(os.environ.get("CP_FACTORS", "{}"))
    return float(factors.get("*", 1.0)) * float(factors.get(test_id, 1.0))


@pytest.mark.parametrize("milliseconds", SLEEPS_MS, ids=[f"{ms}ms" for ms in SLEEPS_MS])
def test_sleep(milliseconds):
    time.sleep(milliseconds / 1000 * factor(f"test_sleep[{milliseconds}ms]"))


@pytest.mark.parametrize("thousands", LOOPS_K, ids=[f"{k}k" for k in LOOPS_K])
def test_cpu_loop(thousands):
    total = 0
    for i in range(round(thousands * 1000 * factor(f"test_cpu_loop[{thousands}k]"))):
        total += i * i % 7
    assert total >= 0
