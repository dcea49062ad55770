import pytest
from work import changed, loop, wait

# Waits of 0.05 to 1 s (a call to a slow service, a timeout), some with a little CPU work beside.
SECONDS = [0.05, 0.06, 0.07, 0.08, 0.1, 0.12, 0.15, 0.2, 0.3, 0.4, 0.7]
PLANTED = {0.4: changed("sleep50", 1.5)}


@pytest.mark.parametrize("seconds", SECONDS, ids=lambda s: f"wait_{s:.2f}s")
def test_wait(seconds):
    wait(seconds * PLANTED.get(seconds, 1.0))


@pytest.mark.parametrize("seconds", [0.1, 0.2, 0.4], ids=lambda s: f"half_{s:.2f}s")
def test_wait_and_work(seconds):
    # Half a wait, half CPU: it follows the runner's load half way.
    wait(seconds / 2)
    assert loop(seconds / 2) >= 0
