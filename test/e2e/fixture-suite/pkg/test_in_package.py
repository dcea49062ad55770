# In a package: pytest-monitor sends item_path "pkg.test_in_package" (the module metric: "pkg").


def test_in_package():
    assert __name__ == "pkg.test_in_package"
