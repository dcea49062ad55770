import pytest
from work import changed, hold

# Allocations of 1 to 200 MB held for 0.05 to 2 s; memory_profiler samples every 0.1 s, so holds under that are
# seen or missed from run to run.
HOLDS = [
    (1, 0.3),
    (2, 0.3),
    (5, 0.3),
    (10, 0.05),
    (10, 0.3),
    (20, 0.05),
    (20, 0.3),
    (30, 0.2),
    (50, 0.3),
    (50, 0.5),
    (80, 0.3),
    (100, 0.5),
    (150, 0.3),
    (200, 0.5),
    (200, 2.0),
    (5, 0.5),
    (40, 0.5),
    (3, 0.15),
    (60, 0.15),
    (120, 0.1),
]


@pytest.mark.parametrize("megabytes,seconds", HOLDS, ids=[f"hold_{m:03d}mb_{s}s" for m, s in HOLDS])
def test_hold(megabytes, seconds):
    extra = 40 * (changed("hold40", 2.0) - 1) if (megabytes, seconds) == (20, 0.3) else 0
    assert hold(megabytes + extra, seconds) > 0
