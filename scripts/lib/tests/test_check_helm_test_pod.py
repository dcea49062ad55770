import unittest

from deploy_checks import secret_data
from tests.support import METRICS_TOKEN, SECRET, TEST_TOKEN, by_kind, load_script, rendering

helm_test_pod = load_script("check-helm-test-pod")


def secrets(docs):
    return {d["metadata"]["name"]: secret_data(d) for d in docs if d["kind"] == "Secret"}


class PodEnvironmentTest(unittest.TestCase):
    def test_values_and_secret_refs_with_the_local_url(self):
        docs = rendering()
        container = by_kind(docs, "Pod")["spec"]["containers"][0]
        env = helm_test_pod.pod_environment(container, secrets(docs), "http://127.0.0.1:1234", "/usr/bin")
        self.assertEqual(
            env,
            {
                "PATH": "/usr/bin",
                "MONITOR_URL": "http://127.0.0.1:1234",
                "MONITOR_AUTH": "true",
                "MONITOR_TOKEN": TEST_TOKEN,
            },
        )

    def test_a_missing_secret_reads_empty(self):
        docs = rendering()
        container = by_kind(docs, "Pod")["spec"]["containers"][0]
        env = helm_test_pod.pod_environment(container, {}, "http://127.0.0.1:1234", "/usr/bin")
        self.assertEqual(env["MONITOR_TOKEN"], "")


class MonitorTokenTest(unittest.TestCase):
    def test_the_token_of_the_rendered_secret(self):
        docs = rendering()
        self.assertEqual(helm_test_pod.monitor_token(by_kind(docs, "ServiceMonitor"), secrets(docs)), METRICS_TOKEN)

    def test_none_without_authorization_secret_or_monitor(self):
        docs = rendering()
        monitor = by_kind(docs, "ServiceMonitor")
        self.assertIsNone(helm_test_pod.monitor_token(monitor, {}))
        self.assertIsNone(helm_test_pod.monitor_token(None, secrets(docs)))
        monitor["spec"]["endpoints"][0].pop("authorization")
        self.assertIsNone(helm_test_pod.monitor_token(monitor, secrets(docs)))
        self.assertIn(SECRET, secrets(docs))


class FreePortTest(unittest.TestCase):
    def test_a_port(self):
        self.assertTrue(0 < helm_test_pod.free_port() < 65536)


if __name__ == "__main__":
    unittest.main()
