"""The tokens the chart generates must survive `helm upgrade`: it reads the live Secret back with `lookup`.

  check-token-lookup.py HELM CHART RELEASE NAMESPACE

A render with --dry-run=server asks the API server as an upgrade does; here a minimal fake API server (discovery, and
GET of one Secret), on a free loopback port, stands in for the cluster, so this runs offline. Exit 1 on any failure.
"""

import base64
import json
import os
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml

from deploy_checks import Outcomes

NOT_FOUND = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404}
SECRETS_RESOURCE = {"name": "secrets", "singularName": "secret", "namespaced": True, "kind": "Secret", "verbs": ["get"]}


def api_answer(path, live):
    """(status, JSON body) of the fake API server for GET PATH; live: "namespace/name" -> data of the Secrets the
    fake cluster holds."""
    parts = path.split("?")[0].strip("/").split("/")
    if parts == ["version"]:
        return 200, {"major": "1", "minor": "37", "gitVersion": "v1.37.0"}
    if parts == ["api"]:
        return 200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []}
    if parts == ["apis"]:
        return 200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": []}
    if parts == ["api", "v1"]:
        return 200, {"kind": "APIResourceList", "groupVersion": "v1", "resources": [SECRETS_RESOURCE]}
    if len(parts) == 6 and parts[:3] == ["api", "v1", "namespaces"] and parts[4] == "secrets":
        data = live.get(parts[3] + "/" + parts[5])
        if data is not None:
            metadata = {"name": parts[5], "namespace": parts[3]}
            return 200, {"apiVersion": "v1", "kind": "Secret", "data": data, "metadata": metadata}
    return 404, NOT_FOUND


def fake_api_server(live):
    """A started ThreadingHTTPServer on a free loopback port answering api_answer(); shutdown() stops it."""

    class API(BaseHTTPRequestHandler):
        def do_GET(self):
            code, body = api_answer(self.path, live)
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), API)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def kubeconfig(port):
    """A kubeconfig whose only cluster is the fake API server."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "fake",
        "clusters": [{"name": "fake", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
        "users": [{"name": "fake", "user": {}}],
        "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake"}}],
    }


def main(helm, chart, release, namespace):
    live = {}  # "namespace/name" -> data of the Secret the fake cluster holds
    server = fake_api_server(live)
    outcomes = Outcomes()
    check = outcomes.record

    with tempfile.TemporaryDirectory() as work:
        config = os.path.join(work, "kubeconfig")
        with open(config, "w") as f:
            yaml.safe_dump(kubeconfig(server.server_port), f)
        env = dict(os.environ, KUBECONFIG=config, HELM_CONFIG_HOME=work, HELM_CACHE_HOME=work, HELM_DATA_HOME=work)

        def secret(*args, server_side=True):
            command = [helm, "template", release, chart, "--namespace", namespace]
            command += ["--show-only", "templates/auth-secret.yaml"]
            command += (["--dry-run=server"] if server_side else []) + list(args)
            run = subprocess.run(command, env=env, capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit("helm template failed: " + run.stderr)
            o = yaml.safe_load(run.stdout)
            return o["metadata"]["name"], o["data"]

        protected = ["--set", "auth.reads=true", "--set", "auth.metrics=true"]
        name, first = secret(*protected, server_side=False)  # helm install: nothing to look up
        check(
            sorted(first) == ["generated-token", "metrics-token", "test-token", "tokens"],
            "install generates generated-token, test-token and metrics-token",
        )
        _, fresh = secret(*protected)
        check(
            fresh["generated-token"] != first["generated-token"], "without a live Secret, each render draws new tokens"
        )
        live[f"{namespace}/{name}"] = first  # the release is installed
        _, again = secret(*protected)
        check(again == first, "upgrade keeps every token and the tokens file as they are")
        digest = "ab" * 32
        users = ["--set-json", f'auth.tokens=[{{"name":"ci","role":"write","sha256":"{digest}"}}]']
        _, listed = secret(*(protected + users))
        check(
            "generated-token" not in listed
            and listed.get("test-token") == first["test-token"]
            and listed.get("metrics-token") == first["metrics-token"],
            "upgrade with auth.tokens drops generated-token and keeps test-token and metrics-token",
        )
        tokens = base64.b64decode(listed["tokens"]).decode()
        check(
            f"\nci:write:sha256:{digest}\n" in tokens
            and "\nhelm-test:read:" in tokens
            and "\nhelm-metrics:read:" in tokens
            and "helm-generated" not in tokens,
            "... and the tokens file lists ci, helm-test and helm-metrics, not helm-generated",
        )
    server.shutdown()
    return outcomes.finish()


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:5]))
