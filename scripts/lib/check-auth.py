"""Access control in a rendering: the tokens file setting, its Secret mount, the Secret the chart writes, the helm
test pod's token and the ServiceMonitor's bearer token, against what the values asked for.

  check-auth.py FILE auth=on|off [secret=NAME] [created=yes|no] [reads=true|false] [metrics=true|false]
                [generated=KEY,...] [users=NAME,...] [monitor_secret=NAME] [http=H,R,K,C]

  auth             on: the MONITOR_AUTH_* settings and the tokens mount are there; off: none of them, no tokens Secret
  secret           the Secret whose key `tokens` is mounted (as a directory, read-only)
  created          yes: the chart renders that Secret (every line <name>:<role>:sha256:<hex>, its plain tokens
                   GENERATED matching their lines); no: it does not (it must exist beforehand)
  reads, metrics   the expected MONITOR_AUTH_READS / MONITOR_AUTH_METRICS (default false); the helm test pod reads with
                   test-token when reads are protected, the ServiceMonitor sends metrics-token (of monitor_secret,
                   default secret) when /metrics is
  users            auth.tokens entries the tokens file must list
  http             HTTP_HEADERS_TIMEOUT_MS,HTTP_REQUEST_TIMEOUT_MS,HTTP_KEEP_ALIVE_TIMEOUT_MS,MAX_CONNECTIONS
Exit 1, listing every mismatch, otherwise 0.
"""

import hashlib
import os
import re
import sys

from deploy_checks import Checklist, load_documents, secret_data

TOKENS_FILE = "/etc/monitor-server/auth/tokens"
LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.@-]{0,63}):(read|write):sha256:([0-9a-f]{64})$")
# The plain tokens the chart may generate: Secret key -> (name, role) of its line in the tokens file.
GENERATED = {
    "generated-token": ("helm-generated", "write"),
    "test-token": ("helm-test", "read"),
    "metrics-token": ("helm-metrics", "read"),
}
HTTP_SETTINGS = ("HTTP_HEADERS_TIMEOUT_MS", "HTTP_REQUEST_TIMEOUT_MS", "HTTP_KEEP_ALIVE_TIMEOUT_MS", "MAX_CONNECTIONS")


def parse_expectations(args):
    """KEY=VALUE arguments as a dict."""
    return dict(a.split("=", 1) for a in args)


def container_env(container, configmaps):
    """The settings a container gets: its envFrom ConfigMaps, then its env (which wins)."""
    env = {}
    for ref in container.get("envFrom", []):
        env.update(configmaps.get((ref.get("configMapRef") or {}).get("name"), {}))
    env.update({e["name"]: e.get("value") for e in container.get("env", [])})
    return env


def check_rendering(docs, want):
    """Every check of one rendering (its objects) against the expectations; a Checklist."""
    checks = Checklist()
    check = checks.check
    on = want["auth"] == "on"
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    configmaps = {d["metadata"]["name"]: d.get("data") or {} for d in docs if d["kind"] == "ConfigMap"}
    env = container_env(container, configmaps)
    auth_env = {k: v for k, v in env.items() if k.startswith("MONITOR_AUTH_")}
    mounts = [m for m in container.get("volumeMounts", []) if m["mountPath"] == os.path.dirname(TOKENS_FILE)]
    secrets = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Secret"}

    if "http" in want:
        got = ",".join(str(env.get(n)) for n in HTTP_SETTINGS)
        check(got == want["http"], f"the HTTP settings are {want['http']} (got {got})")

    if on:
        reads, metrics = want.get("reads", "false"), want.get("metrics", "false")
        check(env.get("MONITOR_AUTH_TOKENS_FILE") == TOKENS_FILE, "MONITOR_AUTH_TOKENS_FILE is " + TOKENS_FILE)
        check(env.get("MONITOR_AUTH_READS") == reads, "MONITOR_AUTH_READS is " + reads)
        check(env.get("MONITOR_AUTH_METRICS") == metrics, "MONITOR_AUTH_METRICS is " + metrics)
        check(len(mounts) == 1, "one volume mounted on " + os.path.dirname(TOKENS_FILE))
        for m in mounts:
            check(m.get("readOnly") is True, "the tokens mount is read-only")
            check(
                "subPath" not in m and "subPathExpr" not in m,
                "the tokens mount is a directory, not a subPath (rotation)",
            )
            volume = next((v for v in pod.get("volumes", []) if v["name"] == m["name"]), {})
            secret = volume.get("secret") or {}
            check(secret.get("secretName") == want["secret"], "the tokens volume is Secret " + want["secret"])
            check(
                secret.get("items") == [{"key": "tokens", "path": os.path.basename(TOKENS_FILE)}],
                "only the key tokens is mounted, as " + os.path.basename(TOKENS_FILE),
            )
    else:
        check(not auth_env, f"no MONITOR_AUTH_* setting (got {sorted(auth_env)})")
        check(not mounts, "no tokens mount")
        check(not any(n.endswith("-auth") for n in secrets), "no tokens Secret")

    if want.get("created") == "yes":
        secret = secrets.get(want["secret"])
        check(secret is not None, "the chart renders Secret " + want["secret"])
        if secret:
            check_generated_secret(check, secret_data(secret), want)
    elif want.get("created") == "no":
        check(want["secret"] not in secrets, f"no Secret {want['secret']} rendered (it must exist beforehand)")

    test = next((d for d in docs if d["kind"] == "Pod"), None)
    if test is not None:
        tenv = {e["name"]: e for e in test["spec"]["containers"][0].get("env", [])}
        auth_value = "true" if on else "false"
        check((tenv.get("MONITOR_AUTH") or {}).get("value") == auth_value, "the test pod knows whether auth is on")
        ref = ((tenv.get("MONITOR_TOKEN") or {}).get("valueFrom") or {}).get("secretKeyRef")
        if on and want.get("reads") == "true":
            check(
                ref == {"name": want["secret"], "key": "test-token", "optional": True},
                "the test pod reads with test-token of " + want["secret"],
            )
        else:
            check(ref is None, "the test pod sends no token")

    for monitor in (d for d in docs if d["kind"] == "ServiceMonitor"):
        authorization = monitor["spec"]["endpoints"][0].get("authorization")
        if on and want.get("metrics") == "true":
            credentials = {"name": want.get("monitor_secret", want["secret"]), "key": "metrics-token"}
            expected = {"type": "Bearer", "credentials": credentials}
            check(authorization == expected, f"the ServiceMonitor sends the bearer token {credentials}")
        else:
            check(authorization is None, "the ServiceMonitor sends no token")
    return checks


def check_generated_secret(check, data, want):
    """The Secret the chart writes: its tokens file, and each plain token it generated against its line there."""
    lines = [line for line in data.get("tokens", "").splitlines() if line.strip() and not line.startswith("#")]
    parsed = [LINE.match(line) for line in lines]
    check(lines and all(parsed), f"every tokens line is <name>:<role>:sha256:<64 hex>: {lines!r}")
    entries = {m.group(1): (m.group(2), m.group(3)) for m in parsed if m}
    check(len(entries) == len(lines), "the token names are unique")
    generated = [k for k in want.get("generated", "").split(",") if k]
    plain = sorted(k for k in data if k != "tokens")
    check(plain == sorted(generated), f"the Secret holds the plain tokens {generated} (got {plain})")
    for key in generated:
        name, role = GENERATED[key]
        token = data.get(key, "")
        check(len(token) >= 32, f"{key} is a long random token")
        check(
            entries.get(name) == (role, hashlib.sha256(token.encode()).hexdigest()),
            f"the tokens file lists {name} as {role} with the SHA-256 of {key}",
        )
    for user in want.get("users", "").split(","):
        if user:
            check(user in entries, "the tokens file lists auth.tokens entry " + user)


def main(path, args):
    checks = check_rendering(load_documents(path), parse_expectations(args))
    return checks.report(os.path.basename(path))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
