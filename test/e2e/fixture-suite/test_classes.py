class TestGroup:
    """Methods of a class: the class name appears nowhere in what pytest-monitor sends."""

    def test_method_a(self):
        assert [1, 2][::-1] == [2, 1]

    def test_method_b(self):
        assert {"a": 1}.get("a") == 1
