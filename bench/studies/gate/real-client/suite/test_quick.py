"""Tests of a few milliseconds, as most of a real suite is: below what pytest-monitor resolves (a 10 ms CPU tick,
0.1 s memory samples)."""

import json

import pytest

CASES = [{"id": i, "name": f"case_{i:02d}", "values": list(range(i * 5))} for i in range(76)]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case["name"])
def test_round_trip(case):
    assert json.loads(json.dumps(case)) == case
