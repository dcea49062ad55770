import base64
import unittest

from tests.support import load_script

es_delete_prefix = load_script("es-delete-prefix")


class AuthHeadersTest(unittest.TestCase):
    def test_none(self):
        self.assertEqual(es_delete_prefix.auth_headers({}), {})
        self.assertEqual(es_delete_prefix.auth_headers({"ELASTICSEARCH_API_KEY": "", "ELASTICSEARCH_USERNAME": ""}), {})

    def test_api_key_wins(self):
        env = {"ELASTICSEARCH_API_KEY": "k3y", "ELASTICSEARCH_USERNAME": "elastic", "ELASTICSEARCH_PASSWORD": "pw"}
        self.assertEqual(es_delete_prefix.auth_headers(env), {"Authorization": "ApiKey k3y"})

    def test_basic(self):
        headers = es_delete_prefix.auth_headers({"ELASTICSEARCH_USERNAME": "elastic", "ELASTICSEARCH_PASSWORD": "p:w"})
        self.assertEqual(headers, {"Authorization": "Basic " + base64.b64encode(b"elastic:p:w").decode()})

    def test_basic_without_password(self):
        headers = es_delete_prefix.auth_headers({"ELASTICSEARCH_USERNAME": "elastic"})
        self.assertEqual(headers, {"Authorization": "Basic " + base64.b64encode(b"elastic:").decode()})


if __name__ == "__main__":
    unittest.main()
