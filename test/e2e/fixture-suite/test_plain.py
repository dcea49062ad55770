import pytest


def test_one():
    assert 1 + 1 == 2


def test_two():
    assert "monitor".upper() == "MONITOR"


# pytest ids "1-2" and "2-3": pytest-monitor sends the variants "test_param[1, 2]" and "test_param[2, 3]".
@pytest.mark.parametrize("a, b", [(1, 2), (2, 3)])
def test_param(a, b):
    assert a + 1 == b
