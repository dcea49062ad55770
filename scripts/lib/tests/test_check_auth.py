import unittest

from tests.support import AUTH_EXPECTATIONS, SECRET, b64, by_kind, load_script, rendering

check_auth = load_script("check-auth")


def failed(docs, **expectations):
    """The failed checks of docs against AUTH_EXPECTATIONS updated with expectations (None removes one)."""
    want = dict(AUTH_EXPECTATIONS, **expectations)
    return check_auth.check_rendering(docs, {k: v for k, v in want.items() if v is not None}).errors


class ParseTest(unittest.TestCase):
    def test_key_value_arguments(self):
        self.assertEqual(
            check_auth.parse_expectations(["auth=on", "http=1,2,3,4", "users=a=b"]),
            {"auth": "on", "http": "1,2,3,4", "users": "a=b"},
        )


class ContainerEnvTest(unittest.TestCase):
    def test_env_wins_over_env_from(self):
        container = {
            "envFrom": [{"configMapRef": {"name": "a"}}, {"configMapRef": {"name": "missing"}}, {"secretRef": {}}],
            "env": [{"name": "X", "value": "env"}, {"name": "S", "valueFrom": {"secretKeyRef": {}}}],
        }
        env = check_auth.container_env(container, {"a": {"X": "configmap", "Y": "configmap"}})
        self.assertEqual(env, {"X": "env", "Y": "configmap", "S": None})


class CheckRenderingTest(unittest.TestCase):
    def test_the_rendering_passes(self):
        checks = check_auth.check_rendering(rendering(), AUTH_EXPECTATIONS)
        self.assertEqual(checks.errors, [])
        self.assertGreater(len(checks.checked), 20)

    def test_http_settings(self):
        self.assertEqual(
            failed(rendering(), http="20000,60000,5000,10000"),
            ["the HTTP settings are 20000,60000,5000,10000 (got 10000,60000,5000,10000)"],
        )

    def test_reads_setting(self):
        docs = rendering()
        by_kind(docs, "ConfigMap")["data"]["MONITOR_AUTH_READS"] = "false"
        self.assertEqual(failed(docs), ["MONITOR_AUTH_READS is true"])

    def test_env_overrides_the_configmap(self):
        docs = rendering()
        container = by_kind(docs, "Deployment")["spec"]["template"]["spec"]["containers"][0]
        container["env"].append({"name": "MONITOR_AUTH_METRICS", "value": "false"})
        self.assertEqual(failed(docs), ["MONITOR_AUTH_METRICS is true"])

    def test_mount(self):
        docs = rendering()
        pod = by_kind(docs, "Deployment")["spec"]["template"]["spec"]
        mount = pod["containers"][0]["volumeMounts"][-1]
        mount["readOnly"] = False
        mount["subPath"] = "tokens"
        pod["volumes"][-1]["secret"]["items"].append({"key": "test-token", "path": "test-token"})
        self.assertEqual(
            failed(docs),
            [
                "the tokens mount is read-only",
                "the tokens mount is a directory, not a subPath (rotation)",
                "only the key tokens is mounted, as tokens",
            ],
        )

    def test_mount_read_only_said_explicitly(self):
        docs = rendering()
        by_kind(docs, "Deployment")["spec"]["template"]["spec"]["containers"][0]["volumeMounts"][-1].pop("readOnly")
        self.assertEqual(failed(docs), ["the tokens mount is read-only"])

    def test_other_secret(self):
        self.assertEqual(
            failed(rendering(), secret="other"),
            [
                "the tokens volume is Secret other",
                "the chart renders Secret other",
                "the test pod reads with test-token of other",
                "the ServiceMonitor sends the bearer token {'name': 'other', 'key': 'metrics-token'}",
            ],
        )

    def test_auth_off_expected(self):
        errors = failed(rendering(), auth="off", created=None, reads=None, metrics=None)
        self.assertEqual(
            errors,
            [
                "no MONITOR_AUTH_* setting "
                "(got ['MONITOR_AUTH_METRICS', 'MONITOR_AUTH_READS', 'MONITOR_AUTH_TOKENS_FILE'])",
                "no tokens mount",
                "no tokens Secret",
                "the test pod knows whether auth is on",
                "the test pod sends no token",
                "the ServiceMonitor sends no token",
            ],
        )

    def test_secret_not_created(self):
        self.assertEqual(failed(rendering(), created="no"), [f"no Secret {SECRET} rendered (it must exist beforehand)"])

    def test_tokens_file_lines(self):
        docs = rendering()
        data = by_kind(docs, "Secret")["data"]
        data["tokens"] = b64("# comment\n\nci:write:sha256:" + "ab" * 32 + "\nci:read:sha256:XYZ\n")
        errors = failed(docs)
        self.assertIn("every tokens line is <name>:<role>:sha256:<64 hex>", errors[0])
        self.assertIn("the token names are unique", errors)
        self.assertIn("the tokens file lists helm-test as read with the SHA-256 of test-token", errors)

    def test_generated_tokens(self):
        docs = rendering()
        data = by_kind(docs, "Secret")["data"]
        data["test-token"] = b64("short")
        data["extra"] = b64("x")
        errors = failed(docs)
        self.assertEqual(
            errors,
            [
                "the Secret holds the plain tokens ['test-token', 'metrics-token'] "
                "(got ['extra', 'metrics-token', 'test-token'])",
                "test-token is a long random token",
                "the tokens file lists helm-test as read with the SHA-256 of test-token",
            ],
        )

    def test_users(self):
        self.assertEqual(failed(rendering(), users="ci,grafana"), ["the tokens file lists auth.tokens entry grafana"])

    def test_test_pod_without_protected_reads(self):
        # Reads not protected: the pod must send no token, and this one does.
        docs = rendering()
        by_kind(docs, "ConfigMap")["data"]["MONITOR_AUTH_READS"] = "false"
        self.assertEqual(failed(docs, reads="false"), ["the test pod sends no token"])

    def test_service_monitor_token(self):
        docs = rendering()
        by_kind(docs, "ServiceMonitor")["spec"]["endpoints"][0].pop("authorization")
        self.assertEqual(
            failed(docs),
            ["the ServiceMonitor sends the bearer token {'name': 'monitor-server-auth', 'key': 'metrics-token'}"],
        )
        self.assertEqual(
            failed(rendering(), monitor_secret="scrape"),
            ["the ServiceMonitor sends the bearer token {'name': 'scrape', 'key': 'metrics-token'}"],
        )


if __name__ == "__main__":
    unittest.main()
