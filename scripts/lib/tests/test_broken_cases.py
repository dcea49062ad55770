"""Each broken case must differ from its source, leave the source alone, and (where the checker runs without helm,
node or kubernetes-validate) be noticed by the checker that check-deploy.sh feeds it to."""

import contextlib
import io
import json
import os
import tempfile
import unittest

from tests.support import AUTH_EXPECTATIONS, BIN, RETENTION_MODE, by_kind, dashboard, load_script, quietly, rendering

cases = load_script("broken-cases")
check_auth = load_script("check-auth")
check_retention = load_script("check-retention")
check_dashboard = load_script("check-dashboard")
validate = load_script("validate-manifests")


class ValidatorCasesTest(unittest.TestCase):
    def test_each_case_breaks_one_object(self):
        docs = rendering()
        made = cases.validator_cases(docs)
        self.assertEqual(docs, rendering(), "the source is left alone")
        self.assertEqual(
            sorted(made),
            [
                "cronjob-root-container",
                "prometheusrule-promql",
                "root-container",
                "servicemonitor-interval",
                "servicemonitor-no-selector",
                "short-grace",
                "unknown-field",
                "unknown-kind",
                "wrong-type",
            ],
        )
        sources = {
            "wrong-type": "Deployment",
            "unknown-field": "Deployment",
            "root-container": "Deployment",
            "short-grace": "Deployment",
            "cronjob-root-container": "CronJob",
            "servicemonitor-interval": "ServiceMonitor",
            "servicemonitor-no-selector": "ServiceMonitor",
            "prometheusrule-promql": "PrometheusRule",
            "unknown-kind": "Service",
        }
        for name, objects in made.items():
            source = by_kind(docs, sources[name])
            self.assertNotEqual(objects[-1], source, name)
            self.assertEqual(objects[-1]["metadata"], source["metadata"], name)
            # A Deployment comes with the ConfigMap its grace period is read from.
            self.assertEqual(objects[:-1], [by_kind(docs, "ConfigMap")] if sources[name] == "Deployment" else [], name)

    def test_the_policy_and_promql_cases_are_noticed(self):
        made = cases.validator_cases(rendering())
        for name in ("root-container", "cronjob-root-container", "short-grace"):
            objects = made[name]
            configmaps = {o["metadata"]["name"]: o["data"] for o in objects if o["kind"] == "ConfigMap"}
            self.assertNotEqual(validate.policy(objects[-1], configmaps), [], name)
        self.assertNotEqual(validate.validate_promql(made["prometheusrule-promql"][-1]), [])


class AuthCasesTest(unittest.TestCase):
    def test_each_case_is_noticed_by_check_auth(self):
        docs = rendering()
        made = cases.auth_cases(docs)
        self.assertEqual(docs, rendering(), "the source is left alone")
        self.assertEqual(len(made), 7)
        for name, broken in made.items():
            self.assertNotEqual(check_auth.check_rendering(broken, AUTH_EXPECTATIONS).errors, [], name)


class RetentionCasesTest(unittest.TestCase):
    def test_each_case_is_noticed_by_check_retention(self):
        docs = rendering()
        made = cases.retention_cases(docs)
        self.assertEqual(docs, rendering(), "the source is left alone")
        self.assertEqual(len(made), 6)
        for name, broken in made.items():
            self.assertNotEqual(check_retention.check_cronjobs(broken, BIN, RETENTION_MODE).errors, [], name)


class DashboardCasesTest(unittest.TestCase):
    def test_each_case_is_noticed_by_check_dashboard(self):
        board = dashboard()
        made = cases.dashboard_cases(board)
        self.assertEqual(board, dashboard(), "the source is left alone")
        self.assertEqual(len(made), 5)
        with tempfile.TemporaryDirectory() as work:
            for name, broken in made.items():
                path = os.path.join(work, name + ".json")
                with open(path, "w") as f:
                    json.dump(broken, f)
                errors, _ = quietly(check_dashboard.check, path)
                self.assertNotEqual(errors, [], name)


class MainTest(unittest.TestCase):
    def test_writes_one_file_per_case(self):
        with tempfile.TemporaryDirectory() as work:
            board = os.path.join(work, "board.json")
            with open(board, "w") as f:
                json.dump(dashboard(), f)
            out = os.path.join(work, "cases")
            os.mkdir(out)
            self.assertEqual(cases.main("dashboard", board, out), 0)
            self.assertEqual(len(os.listdir(out)), 5)
            self.assertTrue(all(name.endswith(".json") for name in os.listdir(out)))

    def test_unknown_suite(self):
        with contextlib.redirect_stderr(io.StringIO()) as err:
            self.assertEqual(cases.main("nope", "x", "y"), 2)
        self.assertIn("unknown suite 'nope'", err.getvalue())


if __name__ == "__main__":
    unittest.main()
