"""Deletes what a run of scripts/schemathesis.sh made in Elasticsearch under its index prefix: the indices (their
aliases go with them) and the index templates.

  es-delete-prefix.py ELASTICSEARCH_URL PREFIX

Credentials as the service reads them: ELASTICSEARCH_API_KEY, else ELASTICSEARCH_USERNAME and ELASTICSEARCH_PASSWORD.
Deletes by name, never by wildcard: a cluster may refuse wildcard deletes (action.destructive_requires_name). Says
what it deleted on stderr; exits non-zero on any error.
"""

import base64
import json
import os
import sys
import urllib.error
import urllib.request


def auth_headers(env):
    """The Authorization header (a dict, empty without credentials) that the environment ENV asks for."""
    if env.get("ELASTICSEARCH_API_KEY"):
        return {"Authorization": "ApiKey " + env["ELASTICSEARCH_API_KEY"]}
    if env.get("ELASTICSEARCH_USERNAME"):
        token = f"{env['ELASTICSEARCH_USERNAME']}:{env.get('ELASTICSEARCH_PASSWORD', '')}"
        return {"Authorization": "Basic " + base64.b64encode(token.encode()).decode()}
    return {}


def delete_prefix(url, prefix, headers):
    """Deletes the indices and index templates named PREFIX-*; (indices, templates) deleted."""
    url = url.rstrip("/")

    def call(method, path):
        request = urllib.request.Request(url + path, method=method, headers=headers)
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.load(response)

    indices = [row["index"] for row in call("GET", f"/_cat/indices/{prefix}-*?format=json&expand_wildcards=all")]
    for index in indices:
        call("DELETE", f"/{index}")
    try:
        templates = [t["name"] for t in call("GET", f"/_index_template/{prefix}-*")["index_templates"]]
    except urllib.error.HTTPError as error:
        if error.code != 404:
            raise
        templates = []
    for template in templates:
        call("DELETE", f"/_index_template/{template}")
    return indices, templates


def main(argv):
    url, prefix = argv[1], argv[2]
    indices, templates = delete_prefix(url, prefix, auth_headers(os.environ))
    print(f"deleted {len(indices)} indices and {len(templates)} templates of prefix {prefix}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv)
