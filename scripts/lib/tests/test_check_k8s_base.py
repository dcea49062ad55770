import copy
import unittest

from tests.support import load_script

k8s_base = load_script("check-k8s-base")


def chart_object():
    return {
        "kind": "Deployment",
        "metadata": {
            "name": "monitor-server",
            "namespace": "monitor",
            "labels": {
                "app": "monitor",
                "helm.sh/chart": "monitor-server-0.3.0",
                "app.kubernetes.io/managed-by": "Helm",
            },
            "annotations": {"checksum/config": "abc"},
        },
        "spec": {
            "template": {
                "metadata": {"labels": {"helm.sh/chart": "x"}, "annotations": {"checksum/config": "abc", "keep": "1"}},
                "spec": {},
            }
        },
    }


class NormaliseTest(unittest.TestCase):
    def test_drops_what_only_helm_adds(self):
        self.assertEqual(
            k8s_base.normalise(chart_object()),
            {
                "kind": "Deployment",
                "metadata": {"name": "monitor-server", "labels": {"app": "monitor"}},
                "spec": {"template": {"metadata": {"annotations": {"keep": "1"}}, "spec": {}}},
            },
        )

    def test_template_without_metadata_gets_an_empty_one(self):
        o = {"kind": "Job", "metadata": {"name": "j"}, "spec": {"template": {"spec": {}}}}
        self.assertEqual(k8s_base.normalise(o)["spec"]["template"], {"spec": {}, "metadata": {}})


class ByKeyTest(unittest.TestCase):
    def test_hooks_left_out_on_request(self):
        hook = {"kind": "Pod", "metadata": {"name": "test", "annotations": {"helm.sh/hook": "test"}}}
        docs = [chart_object(), hook]
        self.assertEqual(sorted(k8s_base.by_key(copy.deepcopy(docs), True)), ["Deployment/monitor-server"])
        self.assertEqual(sorted(k8s_base.by_key(docs, False)), ["Deployment/monitor-server", "Pod/test"])


class CompareTest(unittest.TestCase):
    def test_same(self):
        chart = {"Deployment/a": {"x": 1}}
        self.assertEqual(k8s_base.compare(chart, {"Deployment/a": {"x": 1}}), (["same: Deployment/a"], False))

    def test_only_on_one_side(self):
        lines, failed = k8s_base.compare({"Service/a": {}}, {"Service/b": {}})
        self.assertEqual(lines, ["only in the chart: Service/a", "only in k8s/base: Service/b"])
        self.assertTrue(failed)

    def test_the_generated_tokens_secret_may_be_missing(self):
        lines, failed = k8s_base.compare({"Secret/monitor-server-auth": {}}, {})
        self.assertEqual(lines, ["only in the chart, as it should: Secret/monitor-server-auth"])
        self.assertFalse(failed)

    def test_difference_as_a_diff(self):
        lines, failed = k8s_base.compare({"Service/a": {"port": 80}}, {"Service/a": {"port": 8080}})
        self.assertTrue(failed)
        self.assertEqual(
            lines[0].splitlines(),
            ["--- chart Service/a", "+++ k8s/base Service/a", "@@ -1 +1 @@", "-port: 80", "+port: 8080"],
        )


if __name__ == "__main__":
    unittest.main()
