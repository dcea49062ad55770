import unittest

from tests.support import load_script

original_server_versions = load_script("original-server-versions")


class VersionsLineTest(unittest.TestCase):
    def test_line(self):
        versions = {
            "monitor-server-api": "1.1.0",
            "flask": "1.1.4",
            "werkzeug": "1.0.1",
            "flask-restx": "0.5.1",
            "sqlalchemy": "1.4.54",
            "gunicorn": "23.0.0",
        }
        self.assertEqual(
            original_server_versions.versions_line(versions.__getitem__, "3.12.3", "gunicorn"),
            "python 3.12.3, monitor-server-api 1.1.0, flask 1.1.4, werkzeug 1.0.1, flask-restx 0.5.1, "
            "sqlalchemy 1.4.54, gunicorn 23.0.0 (4 workers)",
        )


if __name__ == "__main__":
    unittest.main()
