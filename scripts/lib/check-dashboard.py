"""The chart's Grafana dashboard (charts/monitor-server/dashboards/monitor-server.json), checked offline.

  check-dashboard.py check DASHBOARD        every rule below; exit 1 listing what is wrong
  check-dashboard.py queries DASHBOARD NAMESPACE JOB RATE_INTERVAL
                                            the panels' queries with the variables filled in, as JSON
                                            [{"panel", "refId", "expr"}] (for a real Prometheus to answer)
  check-dashboard.py metrics DASHBOARD      the metric names the queries select, one a line
  check-dashboard.py rendered RENDERING DASHBOARD KEY=VALUE|absent
                                            a chart rendering holds one ConfigMap labelled KEY=VALUE (the Grafana
                                            sidecar's label) carrying DASHBOARD unchanged, or none with `absent`

Rules: valid JSON with uid/title; the variables `datasource` (Prometheus), `namespace` and `job`; every panel and
query reads from ${datasource}; every query is PromQL once Grafana's variables are replaced (promql-parser); every
series selector has namespace="$namespace" and job="$job", so the dashboard shows one release only.
"""

import json
import re
import sys

VARIABLES = ("datasource", "namespace", "job")
# Grafana's built-in interval variables, replaced by a duration before parsing.
BUILTIN_INTERVALS = ("$__rate_interval", "$__interval", "$__range")


def load(path):
    with open(path) as f:
        return json.load(f)


def panels(dashboard):
    for panel in dashboard.get("panels", []):
        yield panel
        yield from panel.get("panels", [])  # a collapsed row holds its panels


def targets(dashboard):
    for panel in panels(dashboard):
        for target in panel.get("targets", []):
            yield panel, target


def substitute(expr, namespace, job, interval):
    for name in BUILTIN_INTERVALS:
        expr = expr.replace(name, interval)
    for name, value in (("namespace", namespace), ("job", job)):
        expr = expr.replace(f"${{{name}}}", value).replace("$" + name, value)
    return expr


def walk(node):
    """Every node of a promql-parser expression tree."""
    yield node
    for attribute in ("expr", "lhs", "rhs", "param", "vector_selector"):
        child = getattr(node, attribute, None)
        if child is not None and not isinstance(child, (str, int, float)):
            yield from walk(child)
    for child in getattr(node, "args", None) or []:
        yield from walk(child)


def selectors(expr):
    import promql_parser

    return [n for n in walk(promql_parser.parse(expr)) if type(n).__name__ == "VectorSelector"]


def matchers(selector):
    found = getattr(selector, "matchers", None)
    found = getattr(found, "matchers", found) or []
    return {(m.name, str(m.op).rsplit(".", 1)[-1], m.value) for m in found}


def check(path):
    errors = []
    try:
        dashboard = load(path)
    except (OSError, ValueError) as e:
        return [f"{path}: not valid JSON: {e}"]
    for key in ("uid", "title", "schemaVersion"):
        if not dashboard.get(key):
            errors.append(f"the dashboard needs a {key}")
    variables = {v.get("name"): v for v in (dashboard.get("templating") or {}).get("list", [])}
    for name in VARIABLES:
        if name not in variables:
            errors.append(f"no variable ${name}")
    datasource = variables.get("datasource") or {}
    if datasource.get("type") != "datasource" or datasource.get("query") != "prometheus":
        errors.append("$datasource must be a datasource variable of type prometheus")
    ids = [p.get("id") for p in panels(dashboard)]
    if len(ids) != len(set(ids)):
        errors.append(f"panel ids repeat: {ids}")
    count = 0
    for panel, target in targets(dashboard):
        where = f"panel {panel.get('title')!r} query {target.get('refId')}"
        for owner in (panel, target):
            if (owner.get("datasource") or {}).get("uid") != "${datasource}":
                errors.append(f"{where}: must read from ${{datasource}}")
        expr = target.get("expr") or ""
        leftover = re.findall(r"\$\{?\w+", substitute(expr, "NS", "JOB", "5m"))
        if leftover:
            errors.append(f"{where}: unknown variables {leftover}")
            continue
        try:
            found = selectors(substitute(expr, "NS", "JOB", "5m"))
        except Exception as e:  # promql-parser raises ValueError with the position
            errors.append(f"{where}: PromQL: {e}: {expr}")
            continue
        count += 1
        for selector in found:
            have = matchers(selector)
            for label, value in (("namespace", "NS"), ("job", "JOB")):
                if (label, "Equal", value) not in have and (label, "=", value) not in have:
                    errors.append(f'{where}: {selector.name} must select {label}="${label}" (got {sorted(have)})')
    if count == 0:
        errors.append("no query at all")
    for e in errors:
        print("ERROR " + e)
    name = path.rsplit("/", 1)[-1]
    print(f"{name}: {len(ids)} panels, {count} queries parsed, {len(errors)} error(s)")
    return errors


def rendered(rendering, path, label):
    import yaml

    with open(rendering) as f:
        configmaps = [d for d in yaml.safe_load_all(f) if d and d.get("kind") == "ConfigMap"]
    dashboards = [c for c in configmaps if any(k.endswith(".json") for k in (c.get("data") or {}))]
    if label == "absent":
        ok = not dashboards
        names = [c["metadata"]["name"] for c in dashboards]
        print("no dashboard ConfigMap" if ok else f"FAILED: unexpected dashboard ConfigMap(s): {names}")
        return 0 if ok else 1
    key, value = label.split("=", 1)
    errors = []
    if len(dashboards) != 1:
        errors.append(f"expected one dashboard ConfigMap, got {len(dashboards)}")
    for c in dashboards:
        labels = c["metadata"].get("labels") or {}
        if labels.get(key) != value:
            errors.append(f"{c['metadata']['name']}: label {key}={value!r} expected (got {labels.get(key)!r})")
        data = c["data"]
        if list(data) != ["monitor-server.json"] or json.loads(data["monitor-server.json"]) != load(path):
            errors.append(f"{c['metadata']['name']}: data must be monitor-server.json, the chart's dashboard unchanged")
    for e in errors:
        print("FAILED: " + e)
    print(f"{rendering.rsplit('/', 1)[-1]}: dashboard ConfigMap, {len(errors)} error(s)")
    return 1 if errors else 0


def main():
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "rendered":
        return rendered(sys.argv[2], sys.argv[3], sys.argv[4])
    if mode == "check":
        return 1 if check(path) else 0
    dashboard = load(path)
    if mode == "queries":
        namespace, job, interval = sys.argv[3:6]
        print(
            json.dumps(
                [
                    {
                        "panel": p.get("title"),
                        "refId": t.get("refId"),
                        "expr": substitute(t["expr"], namespace, job, interval),
                    }
                    for p, t in targets(dashboard)
                ]
            )
        )
        return 0
    if mode == "metrics":
        names = {s.name for _, t in targets(dashboard) for s in selectors(substitute(t["expr"], "NS", "JOB", "5m"))}
        print("\n".join(sorted(n for n in names if n)))
        return 0
    print(f"unknown mode {mode!r} (check, queries, metrics)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
