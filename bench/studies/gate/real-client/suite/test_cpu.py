import pytest
from work import changed, loop

# CPU loops of 0.05 to 2 s on a core: most short, as in a real suite.
SECONDS = [0.05, 0.06, 0.07, 0.08, 0.09, 0.1, 0.12, 0.14, 0.16, 0.18, 0.2, 0.22, 0.25, 0.3, 0.4, 0.6, 2.0]
PLANTED = {0.3: changed("cpu30", 1.3), 0.6: changed("kept", 1.5)}


@pytest.mark.parametrize("seconds", SECONDS, ids=lambda s: f"loop_{s:.2f}s")
def test_loop(seconds):
    assert loop(seconds * PLANTED.get(seconds, 1.0)) >= 0
