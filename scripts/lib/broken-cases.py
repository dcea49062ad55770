"""The deliberately broken inputs of check-deploy.sh's self-tests: each case breaks one thing that a checker must
notice, so that a green run of that checker means something.

  broken-cases.py validators RENDERING DIR   DIR/CASE.yaml for validate-manifests.py (RENDERING: chart-all-on)
  broken-cases.py auth RENDERING DIR         DIR/CASE.yaml for check-auth.py (RENDERING: chart-auth-reads-metrics)
  broken-cases.py dashboard DASHBOARD DIR    DIR/CASE.json for check-dashboard.py check (the chart's dashboard)
  broken-cases.py retention RENDERING DIR    DIR/CASE.yaml for check-retention.py (RENDERING: chart-all-on)

The inputs are never changed: each case is a broken deep copy.
"""

import base64
import copy
import json
import os
import re
import sys

import yaml

from deploy_checks import load_documents


def validator_cases(docs):
    """CASE -> the objects of one file: the broken object, after a copy of the ConfigMap when it is a Deployment (whose
    grace period the policy reads from it). A kind stands for the last object of that kind in docs."""
    by_kind = {d["kind"]: d for d in docs}

    def container(o):
        return o["spec"]["template"]["spec"]["containers"][0]

    mutations = [
        ("wrong-type", "Deployment", lambda o: o["spec"].update(replicas="two")),
        ("unknown-field", "Deployment", lambda o: container(o).update(imagePolicy="Always")),
        ("root-container", "Deployment", lambda o: container(o)["securityContext"].update(runAsNonRoot=False)),
        (
            "cronjob-root-container",
            "CronJob",
            lambda o: container(o["spec"]["jobTemplate"])["securityContext"].update(readOnlyRootFilesystem=False),
        ),
        ("short-grace", "Deployment", lambda o: o["spec"]["template"]["spec"].update(terminationGracePeriodSeconds=5)),
        ("servicemonitor-interval", "ServiceMonitor", lambda o: o["spec"]["endpoints"][0].update(interval="soon")),
        ("servicemonitor-no-selector", "ServiceMonitor", lambda o: o["spec"].pop("selector")),
        (
            "prometheusrule-promql",
            "PrometheusRule",
            lambda o: o["spec"]["groups"][0]["rules"][0].update(expr="sum(rate(x[5m])"),
        ),
        ("unknown-kind", "Service", lambda o: o.update(apiVersion="example.com/v1", kind="Widget")),
    ]
    cases = {}
    for name, kind, mutate in mutations:
        o = copy.deepcopy(by_kind[kind])
        mutate(o)
        configmap = [copy.deepcopy(by_kind["ConfigMap"])] if kind == "Deployment" else []
        cases[name] = configmap + [o]
    return cases


def auth_cases(docs):
    """CASE -> every object of the rendering, one thing broken. A kind stands for the last object of that kind."""

    def tokens(k, edit):
        data = k["Secret"]["data"]
        data["tokens"] = base64.b64encode(edit(base64.b64decode(data["tokens"]).decode()).encode()).decode()

    def wrong_digest(text):
        return re.sub(r"(?m)^(helm-test:read:sha256:)[0-9a-f]{64}$", r"\g<1>" + "0" * 64, text)

    def without_user_ci(text):
        return "\n".join(line for line in text.splitlines() if not line.startswith("ci:")) + "\n"

    mutations = [
        ("subpath-mount", lambda k, p: p["containers"][0]["volumeMounts"][-1].update(subPath="tokens")),
        (
            "plain-tokens-mounted",
            lambda k, p: p["volumes"][-1]["secret"]["items"].append({"key": "test-token", "path": "test-token"}),
        ),
        ("reads-setting-missing", lambda k, p: k["ConfigMap"]["data"].pop("MONITOR_AUTH_READS")),
        ("wrong-digest", lambda k, p: tokens(k, wrong_digest)),
        ("user-token-dropped", lambda k, p: tokens(k, without_user_ci)),
        ("test-pod-without-token", lambda k, p: k["Pod"]["spec"]["containers"][0]["env"].pop()),
        ("servicemonitor-without-token", lambda k, p: k["ServiceMonitor"]["spec"]["endpoints"][0].pop("authorization")),
    ]
    cases = {}
    for name, mutate in mutations:
        copies = copy.deepcopy(docs)
        by_kind = {d["kind"]: d for d in copies}
        mutate(by_kind, by_kind["Deployment"]["spec"]["template"]["spec"])
        cases[name] = copies
    return cases


def dashboard_cases(dashboard):
    """CASE -> the dashboard with one thing broken, mostly in the first query."""
    mutations = [
        ("promql", lambda d, t: t.update(expr="sum(rate(" + t["expr"])),
        ("no-job-matcher", lambda d, t: t.update(expr=t["expr"].replace(', job="$job"', ""))),
        ("unknown-variable", lambda d, t: t.update(expr=t["expr"].replace("$namespace", "$cluster"))),
        ("no-datasource-variable", lambda d, t: d["templating"]["list"].pop(0)),
        ("fixed-datasource", lambda d, t: t.update(datasource={"type": "prometheus", "uid": "prom-1"})),
    ]
    cases = {}
    for name, mutate in mutations:
        d = copy.deepcopy(dashboard)
        target = next(t for p in d["panels"] for t in p.get("targets", []))
        mutate(d, target)
        cases[name] = d
    return cases


def retention_cases(docs):
    """CASE -> every object of the rendering, the (first) CronJob broken."""

    def container(t):
        return t["spec"]["containers"][0]

    mutations = [
        ("concurrent-runs", lambda s, t: s.update(concurrencyPolicy="Allow")),
        ("other-age", lambda s, t: container(t)["args"].__setitem__(2, "90d")),
        ("other-image", lambda s, t: container(t).update(image="monitor-server:latest")),
        ("no-store-settings", lambda s, t: container(t).pop("envFrom")),
        ("no-credentials", lambda s, t: container(t).pop("env")),
        ("service-selector-labels", lambda s, t: t["metadata"]["labels"].update({"app.kubernetes.io/name": "monitor"})),
    ]
    cases = {}
    for name, mutate in mutations:
        copies = copy.deepcopy(docs)
        cronjob = next(d for d in copies if d["kind"] == "CronJob")
        mutate(cronjob["spec"], cronjob["spec"]["jobTemplate"]["spec"]["template"])
        cases[name] = copies
    return cases


SUITES = {"validators": validator_cases, "auth": auth_cases, "retention": retention_cases}


def main(suite, source, directory):
    if suite == "dashboard":
        with open(source) as f:
            cases = dashboard_cases(json.load(f))
        for name, dashboard in cases.items():
            with open(os.path.join(directory, name + ".json"), "w") as f:
                json.dump(dashboard, f)
        return 0
    if suite not in SUITES:
        print(f"unknown suite {suite!r} (validators, auth, dashboard, retention)", file=sys.stderr)
        return 2
    for name, objects in SUITES[suite](load_documents(source)).items():
        with open(os.path.join(directory, name + ".yaml"), "w") as f:
            yaml.safe_dump_all(objects, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
