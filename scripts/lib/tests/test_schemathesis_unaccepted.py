import unittest

from tests.support import load_script

schemathesis_unaccepted = load_script("schemathesis-unaccepted")

DOCUMENT = {
    "paths": {
        "/api/v1/sessions/{h}": {"get": {}, "post": {}, "parameters": []},
        "/api/v1/sessions/count": {"get": {}},
        "/api/v1/sessions": {"get": {}, "post": {}, "summary": "x"},
    }
}
BASE = "http://127.0.0.1:1234"


def entry(method, path, status):
    return {"request": {"method": method, "url": BASE + path + "?a=1"}, "response": {"status": status}}


def unaccepted(entries):
    return schemathesis_unaccepted.unaccepted(schemathesis_unaccepted.operations_of(DOCUMENT), entries)


class OperationsOfTest(unittest.TestCase):
    def test_methods_only_fewer_parameters_first(self):
        operations = schemathesis_unaccepted.operations_of(DOCUMENT)
        self.assertEqual(
            [(m, p) for m, p, _ in operations],
            [
                ("GET", "/api/v1/sessions/count"),
                ("GET", "/api/v1/sessions"),
                ("POST", "/api/v1/sessions"),
                ("GET", "/api/v1/sessions/{h}"),
                ("POST", "/api/v1/sessions/{h}"),
            ],
        )

    def test_a_template_matches_one_segment(self):
        rx = dict(((m, p), r) for m, p, r in schemathesis_unaccepted.operations_of(DOCUMENT))[
            ("GET", "/api/v1/sessions/{h}")
        ]
        self.assertTrue(rx.match("/api/v1/sessions/abc"))
        self.assertFalse(rx.match("/api/v1/sessions/abc/def"))
        self.assertFalse(rx.match("/api/v1/sessions/"))


class UnacceptedTest(unittest.TestCase):
    def test_all_accepted(self):
        self.assertEqual(unaccepted([entry("GET", "/api/v1/sessions", 200), entry("GET", "/api/v1/sessions", 400)]), [])

    def test_never_accepted(self):
        entries = [
            entry("POST", "/api/v1/sessions/abc", 400),
            entry("POST", "/api/v1/sessions/def", 422),
            entry("GET", "/api/v1/sessions/count", 400),
            entry("GET", "/api/v1/sessions/count", 204),
            entry("GET", "/api/v1/sessions", 500),
            entry("GET", "/api/v1/sessions", 300),
        ]
        self.assertEqual(unaccepted(entries), [("GET /api/v1/sessions", 2), ("POST /api/v1/sessions/{h}", 2)])

    def test_count_is_not_a_key(self):
        # /sessions/count answering 200 accepts GET /sessions/count, not GET /sessions/{h}.
        entries = [entry("GET", "/api/v1/sessions/count", 200), entry("GET", "/api/v1/sessions/abc", 404)]
        self.assertEqual(unaccepted(entries), [("GET /api/v1/sessions/{h}", 1)])

    def test_uncalled_and_unknown_are_ignored(self):
        self.assertEqual(unaccepted([entry("DELETE", "/api/v1/sessions", 405), entry("GET", "/other", 404)]), [])


if __name__ == "__main__":
    unittest.main()
