import unittest

from tests.support import load_script

schemathesis_seed = load_script("schemathesis-seed")

CONTEXT = {"h": "0123456789abcdef", "cpu_vendor": "GenuineIntel", "machine_node": "ci-runner-1"}
SESSION = {"session_h": "abcd1234", "run_date": "2026-11-22", "scm_ref": "main", "description": {"tag": "x"}}
METRIC = {"session_h": "abcd1234", "context_h": "0123456789abcdef", "component": "core", "item": "test_one"}


def document():
    def create(example):
        return {"post": {"requestBody": {"content": {"application/json": {"example": example}}}}}

    return {
        "paths": {
            "/api/v1/contexts": create(CONTEXT),
            "/api/v1/sessions": create(SESSION),
            "/api/v1/metrics": create(METRIC),
        }
    }


class SeedRecordsTest(unittest.TestCase):
    def setUp(self):
        self.batches = schemathesis_seed.seed_records(document())
        self.by_path = dict(self.batches)

    def test_order_and_counts(self):
        self.assertEqual(
            [(path, len(records)) for path, records in self.batches],
            [("/api/v1/contexts", 2), ("/api/v1/sessions", 3), ("/api/v1/metrics", 5)],
        )

    def test_the_examples_come_first_unchanged(self):
        self.assertEqual(self.by_path["/api/v1/contexts"][0], CONTEXT)
        self.assertEqual(self.by_path["/api/v1/sessions"][0], SESSION)
        self.assertEqual(self.by_path["/api/v1/metrics"][0], METRIC)

    def test_keys_are_distinct(self):
        contexts, sessions = self.by_path["/api/v1/contexts"], self.by_path["/api/v1/sessions"]
        self.assertEqual(contexts[1]["h"], "f00dfeed89abcdef")
        self.assertEqual([s["session_h"] for s in sessions], ["abcd1234", "5e551234", "0ddba11"])
        self.assertEqual(
            sessions[1]["description"], {"tag": "x", "pipeline_build_no": "4243", "__ci__": "gitlabci", "attempt": 2}
        )

    def test_metrics_refer_to_seeded_records(self):
        contexts = {c["h"] for c in self.by_path["/api/v1/contexts"]}
        sessions = {s["session_h"] for s in self.by_path["/api/v1/sessions"]}
        for metric in self.by_path["/api/v1/metrics"]:
            self.assertIn(metric["context_h"], contexts)
            self.assertIn(metric["session_h"], sessions)
        self.assertEqual(
            [m["component"] for m in self.by_path["/api/v1/metrics"]], ["core", "core", "", "network", None]
        )

    def test_the_document_is_not_changed(self):
        doc = document()
        schemathesis_seed.seed_records(doc)
        self.assertEqual(doc, document())


if __name__ == "__main__":
    unittest.main()
