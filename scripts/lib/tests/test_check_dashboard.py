import json
import os
import tempfile
import unittest

import yaml

from tests.support import dashboard, load_script, quietly, rendering

check_dashboard = load_script("check-dashboard")


def errors_of(board):
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "monitor-server.json")
        with open(path, "w") as f:
            json.dump(board, f)
        errors, _ = quietly(check_dashboard.check, path)
    return errors


class SubstituteTest(unittest.TestCase):
    def test_variables_and_intervals(self):
        expr = 'rate(x{namespace="$namespace", job="${job}"}[$__rate_interval]) offset $__range'
        self.assertEqual(
            check_dashboard.substitute(expr, "NS", "JOB", "5m"), 'rate(x{namespace="NS", job="JOB"}[5m]) offset 5m'
        )


class PanelsTest(unittest.TestCase):
    def test_panels_of_collapsed_rows_too(self):
        board = {"panels": [{"id": 1}, {"id": 2, "panels": [{"id": 3}]}]}
        self.assertEqual([p["id"] for p in check_dashboard.panels(board)], [1, 2, 3])


class CheckTest(unittest.TestCase):
    def test_the_dashboard_passes(self):
        self.assertEqual(errors_of(dashboard()), [])

    def test_query_must_select_namespace_and_job(self):
        board = dashboard()
        target = board["panels"][0]["targets"][0]
        target["expr"] = "sum(up)"
        errors = errors_of(board)
        self.assertEqual(len(errors), 2)
        self.assertIn('up must select namespace="$namespace"', errors[0])
        self.assertIn('up must select job="$job"', errors[1])

    def test_no_query_at_all(self):
        board = dashboard()
        board["panels"] = []
        self.assertIn("no query at all", errors_of(board))

    def test_repeated_panel_ids(self):
        board = dashboard()
        board["panels"][1]["id"] = 1
        self.assertEqual(errors_of(board), ["panel ids repeat: [1, 1]"])


class RenderedTest(unittest.TestCase):
    def run_rendered(self, docs, board, label):
        with tempfile.TemporaryDirectory() as work:
            path, rendering_path = os.path.join(work, "board.json"), os.path.join(work, "rendering.yaml")
            with open(path, "w") as f:
                json.dump(board, f)
            with open(rendering_path, "w") as f:
                yaml.safe_dump_all(docs, f)
            return quietly(check_dashboard.rendered, rendering_path, path, label)

    def test_absent(self):
        self.assertEqual(self.run_rendered(rendering(), dashboard(), "absent"), (0, "no dashboard ConfigMap\n"))

    def test_one_labelled_configmap_carrying_the_dashboard(self):
        board = dashboard()
        configmap = {
            "kind": "ConfigMap",
            "metadata": {"name": "dash", "labels": {"grafana_dashboard": "1"}},
            "data": {"monitor-server.json": json.dumps(board)},
        }
        docs = rendering() + [configmap]
        self.assertEqual(self.run_rendered(docs, board, "grafana_dashboard=1")[0], 0)
        status, out = self.run_rendered(docs, board, "grafana_dashboard=2")
        self.assertEqual(status, 1)
        self.assertIn("FAILED: dash: label grafana_dashboard='2' expected (got '1')", out)
        status, out = self.run_rendered(docs, board, "absent")
        self.assertEqual((status, out), (1, "FAILED: unexpected dashboard ConfigMap(s): ['dash']\n"))


if __name__ == "__main__":
    unittest.main()
