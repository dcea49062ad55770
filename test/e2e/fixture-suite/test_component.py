# pytest-monitor reads this module variable: every metric of this module (the module metric too) carries it.
pytest_monitor_component = "storage"


def test_write():
    assert len(b"payload") == 7


def test_read():
    assert b"payload".decode() == "payload"
