import json
import unittest
import urllib.error
import urllib.request

from tests.support import load_script

lookup = load_script("check-token-lookup")


class ApiAnswerTest(unittest.TestCase):
    def test_discovery(self):
        self.assertEqual(lookup.api_answer("/version", {})[1]["gitVersion"], "v1.37.0")
        self.assertEqual(lookup.api_answer("/api?timeout=32s", {})[1]["versions"], ["v1"])
        self.assertEqual(lookup.api_answer("/apis", {})[1]["groups"], [])
        code, body = lookup.api_answer("/api/v1", {})
        self.assertEqual((code, [r["name"] for r in body["resources"]]), (200, ["secrets"]))

    def test_a_live_secret(self):
        live = {"monitor/auth": {"tokens": "dA=="}}
        code, body = lookup.api_answer("/api/v1/namespaces/monitor/secrets/auth", live)
        self.assertEqual(code, 200)
        self.assertEqual(body["data"], {"tokens": "dA=="})
        self.assertEqual(body["metadata"], {"name": "auth", "namespace": "monitor"})

    def test_anything_else_is_not_found(self):
        live = {"monitor/auth": {}}
        for path in ("/api/v1/namespaces/other/secrets/auth", "/api/v1/namespaces/monitor/configmaps/auth", "/healthz"):
            code, body = lookup.api_answer(path, live)
            self.assertEqual((code, body["reason"]), (404, "NotFound"), path)


class FakeServerTest(unittest.TestCase):
    def test_answers_over_http_and_sees_later_secrets(self):
        live = {}
        server = lookup.fake_api_server(live)
        try:
            url = f"http://127.0.0.1:{server.server_port}/api/v1/namespaces/monitor/secrets/auth"
            with self.assertRaises(urllib.error.HTTPError) as missing:
                urllib.request.urlopen(url, timeout=5)
            self.assertEqual(missing.exception.code, 404)
            live["monitor/auth"] = {"tokens": "dA=="}
            with urllib.request.urlopen(url, timeout=5) as response:
                self.assertEqual(response.headers["Content-Type"], "application/json")
                self.assertEqual(json.loads(response.read())["data"], {"tokens": "dA=="})
        finally:
            server.shutdown()
            server.server_close()


class KubeconfigTest(unittest.TestCase):
    def test_points_at_the_fake_server(self):
        config = lookup.kubeconfig(6443)
        self.assertEqual(config["current-context"], "fake")
        self.assertEqual(config["clusters"][0]["cluster"]["server"], "http://127.0.0.1:6443")
        self.assertEqual(config["contexts"][0]["context"], {"cluster": "fake", "user": "fake"})


if __name__ == "__main__":
    unittest.main()
