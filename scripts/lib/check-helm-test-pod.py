"""Runs what a cluster would run against the service, without a cluster.

  check-helm-test-pod.py RENDERING ROOT

The service is started from ROOT's source (node --import tsx src/server.ts; needs ROOT/node_modules) with the
rendering's ConfigMap settings and its tokens Secret (key tokens, as a file), on a free loopback port with a temporary
SQLite file; then
  - the `helm test` Pod's script must pass, and fail with a wrong token when it sends one;
  - the ServiceMonitor's bearer token (when the chart's Secret holds it) must be let into /metrics, and no token not;
  - the write token the chart generated (generated-token) must be let through to a write (refused by validation only).
Exit 1 on any failure.
"""

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from deploy_checks import Outcomes, load_documents, secret_data


def status(url, method="GET", token=None, body=None):
    """The HTTP status of one request."""
    request = urllib.request.Request(url, method=method, data=body)
    if token:
        request.add_header("Authorization", "Bearer " + token)
    if body is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pod_environment(container, secrets, url, path):
    """The environment of the helm test Pod's container: its values, and its secretKeyRefs read from the rendering's
    Secrets (name -> decoded data; a missing one reads as ""). MONITOR_URL is the local service, not the in-cluster
    Service address."""
    env = {"PATH": path, "MONITOR_URL": url}
    for e in container.get("env", []):
        if e["name"] == "MONITOR_URL":
            continue
        if "value" in e:
            env[e["name"]] = e["value"]
        else:
            ref = e["valueFrom"]["secretKeyRef"]
            env[e["name"]] = secrets.get(ref["name"], {}).get(ref["key"], "")
    return env


def monitor_token(monitor, secrets):
    """The bearer token the ServiceMonitor sends, when the rendering's Secrets hold it; else None."""
    authorization = (monitor or {}).get("spec", {}).get("endpoints", [{}])[0].get("authorization")
    if authorization and authorization["credentials"]["name"] in secrets:
        return secrets[authorization["credentials"]["name"]][authorization["credentials"]["key"]]
    return None


def wait_until_healthy(server, url):
    for _ in range(300):
        try:
            if status(url + "/healthz") == 200:
                return
        except OSError:
            pass
        if server.poll() is not None:
            sys.exit(f"the service exited with status {server.returncode}")
        time.sleep(0.2)


def main(path, root):
    docs = load_documents(path)
    configmap = next(d for d in docs if d["kind"] == "ConfigMap")
    pod = next(d for d in docs if d["kind"] == "Pod")
    monitor = next((d for d in docs if d["kind"] == "ServiceMonitor"), None)
    secrets = {d["metadata"]["name"]: secret_data(d) for d in docs if d["kind"] == "Secret"}
    container = pod["spec"]["containers"][0]
    outcomes = Outcomes()

    def expect(what, got, wanted):
        outcomes.record(got in wanted, f"{what}: {got}")

    def helm_test_script(env):
        return subprocess.run(["node", "-e", container["command"][2]], env=env).returncode

    with tempfile.TemporaryDirectory() as work:
        port = free_port()
        env = dict(os.environ, **(configmap.get("data") or {}))
        env.update(
            HOST="127.0.0.1", PORT=str(port), MONITOR_SQLITE_PATH=os.path.join(work, "monitor.sqlite"), LOG_LEVEL="warn"
        )
        tokens_secret = {}
        if "MONITOR_AUTH_TOKENS_FILE" in env:
            deployment = next(d for d in docs if d["kind"] == "Deployment")
            volume = next(v for v in deployment["spec"]["template"]["spec"]["volumes"] if v["name"] == "auth-tokens")
            tokens_secret = secrets[volume["secret"]["secretName"]]
            env["MONITOR_AUTH_TOKENS_FILE"] = os.path.join(work, "tokens")
            with open(env["MONITOR_AUTH_TOKENS_FILE"], "w") as f:
                f.write(tokens_secret["tokens"])
        server = subprocess.Popen(["node", "--import", "tsx", "src/server.ts"], cwd=root, env=env)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_until_healthy(server, url)
            pod_env = pod_environment(container, secrets, url, os.environ["PATH"])
            print(f"helm test script (env {', '.join(sorted(k for k in pod_env if k != 'PATH'))}):")
            expect("helm test script exit status", helm_test_script(pod_env), {0})
            if pod_env.get("MONITOR_TOKEN"):
                wrong = dict(pod_env, MONITOR_TOKEN="x" + pod_env["MONITOR_TOKEN"])
                print("helm test script with a wrong token:")
                expect("helm test script exit status, wrong token", helm_test_script(wrong), {1})
            token = monitor_token(monitor, secrets)
            if token is not None:
                expect("GET /metrics with the ServiceMonitor's token", status(url + "/metrics", token=token), {200})
                expect("GET /metrics without a token", status(url + "/metrics"), {401})
            if "generated-token" in tokens_secret:
                expect(
                    "POST /api/v1/sessions/ {} with the generated write token (let in, refused by validation)",
                    status(url + "/api/v1/sessions/", "POST", tokens_secret["generated-token"], b"{}"),
                    {400, 422},
                )
        finally:
            server.terminate()
            server.wait(15)
    return outcomes.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
