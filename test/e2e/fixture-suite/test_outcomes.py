import pytest


def test_passes():
    assert True


def test_fails():
    # On purpose: pytest-monitor sends no metric for a test whose body raises, and pytest exits with 1.
    assert 1 == 2, "this failure is expected by the e2e test"


@pytest.mark.skip(reason="skipped on purpose: pytest-monitor sends nothing for it")
def test_skipped():
    raise AssertionError("never runs")
