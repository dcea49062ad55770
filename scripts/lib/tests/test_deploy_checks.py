import os
import tempfile
import unittest

import deploy_checks
from tests.support import b64, quietly


class LoadDocumentsTest(unittest.TestCase):
    def test_empty_documents_are_left_out(self):
        with tempfile.TemporaryDirectory() as work:
            path = os.path.join(work, "rendering.yaml")
            with open(path, "w") as f:
                f.write("---\n# Source: chart/templates/none.yaml\n---\nkind: ConfigMap\n---\n\n---\nkind: Secret\n")
            self.assertEqual(deploy_checks.load_documents(path), [{"kind": "ConfigMap"}, {"kind": "Secret"}])


class ObjectNameTest(unittest.TestCase):
    def test_kind_and_name(self):
        self.assertEqual(deploy_checks.object_name({"kind": "Pod", "metadata": {"name": "p"}}), "Pod/p")

    def test_missing_parts_read_none(self):
        self.assertEqual(deploy_checks.object_name({"kind": "Pod"}), "Pod/None")
        self.assertEqual(deploy_checks.object_name({}), "None/None")


class SecretDataTest(unittest.TestCase):
    def test_decodes_every_key(self):
        secret = {"data": {"tokens": b64("a:read:x\n"), "test-token": b64("t")}}
        self.assertEqual(deploy_checks.secret_data(secret), {"tokens": "a:read:x\n", "test-token": "t"})

    def test_no_data(self):
        self.assertEqual(deploy_checks.secret_data({}), {})
        self.assertEqual(deploy_checks.secret_data({"data": None}), {})


class ChecklistTest(unittest.TestCase):
    def test_all_passed(self):
        checks = deploy_checks.Checklist()
        checks.check(True, "one")
        checks.check(1, "two")
        status, out = quietly(checks.report, "file.yaml")
        self.assertEqual(status, 0)
        self.assertEqual(out, "file.yaml: 2 checks, 0 failed\n")

    def test_failures_listed_then_counted(self):
        checks = deploy_checks.Checklist()
        checks.check(False, "one")
        checks.check(True, "two")
        checks.check([], "three")
        status, out = quietly(checks.report, "file.yaml")
        self.assertEqual(status, 1)
        self.assertEqual(out, "FAILED: one\nFAILED: three\nfile.yaml: 3 checks, 2 failed\n")

    def test_no_check_at_all_fails(self):
        status, out = quietly(deploy_checks.Checklist().report, "file.yaml")
        self.assertEqual(status, 1)
        self.assertEqual(out, "file.yaml: 0 checks, 0 failed\n")


class OutcomesTest(unittest.TestCase):
    def test_printed_as_they_come_then_counted(self):
        outcomes = deploy_checks.Outcomes()

        def run():
            self.assertTrue(outcomes.record(True, "first"))
            self.assertFalse(outcomes.record(False, "second: 500"))
            return outcomes.finish()

        status, out = quietly(run)
        self.assertEqual(status, 1)
        self.assertEqual(out, "ok   first\nFAIL second: 500\n1 failure(s)\n")

    def test_none_failed(self):
        status, out = quietly(deploy_checks.Outcomes().finish)
        self.assertEqual((status, out), (0, "0 failure(s)\n"))


if __name__ == "__main__":
    unittest.main()
