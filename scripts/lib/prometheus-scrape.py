"""A real Prometheus scrapes a real monitor-server, as the chart's ServiceMonitor would make it do.

  prometheus-scrape.py ROOT WORKDIR RULES DASHBOARD   (Debian's `prometheus` on PATH; ROOT has node_modules)

The service runs from ROOT's source (node --import tsx src/server.ts) on 127.0.0.1:$PROMETHEUS_TEST_SERVICE_PORT
(8390) with a temporary SQLite file and access control on, /metrics protected; Prometheus runs on
127.0.0.1:$PROMETHEUS_TEST_PORT (9390) with its data in WORKDIR, scrapes every second with a read token (bearer,
like the ServiceMonitor with auth.metrics) under job "monitor-server" and namespace "monitor", and loads RULES (the
chart's PrometheusRule groups). After a few requests (creates, a rejected body, reads, a 404, one without a token) it
checks through Prometheus' HTTP API:
  - the target is up; the request histogram counts the routes and histogram_quantile answers for them; the ingest
    counter counts the created and rejected records; monitor_store_up is 1; the auth failure is counted;
  - every query of the Grafana dashboard (DASHBOARD) answers with data, and every metric it names has series;
  - every alerting rule evaluates without error.
Both processes are stopped at the end. Exit 1 on any failure.
"""

import hashlib
import json
import math
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

ROOT, WORK, RULES, DASHBOARD = sys.argv[1:5]
SERVICE = "127.0.0.1:" + os.environ.get("PROMETHEUS_TEST_SERVICE_PORT", "8390")
PROMETHEUS = "127.0.0.1:" + os.environ.get("PROMETHEUS_TEST_PORT", "9390")
JOB, NAMESPACE = "monitor-server", "monitor"
SELECTOR = f'job="{JOB}", namespace="{NAMESPACE}"'
WRITE_TOKEN, SCRAPE_TOKEN = "w" * 43, "s" * 43
failures = []


def http(url, method="GET", body=None, token=None):
    request = urllib.request.Request(url, method=method, data=None if body is None else json.dumps(body).encode())
    if body is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def wait_for(what, probe, seconds=60):
    deadline = time.monotonic() + seconds
    while True:
        try:
            if probe():
                return
        except (OSError, ValueError):
            pass
        if time.monotonic() > deadline:
            raise SystemExit(f"gave up waiting for {what} after {seconds}s")
        time.sleep(0.5)


def query(expr):
    status, body = http(f"http://{PROMETHEUS}/api/v1/query?{urllib.parse.urlencode({'query': expr})}")
    answer = json.loads(body)
    if status != 200 or answer.get("status") != "success":
        raise ValueError(f"{expr}: {answer.get('error', status)}")
    return answer["data"]["result"]


def expect(what, ok, detail=""):
    print(("ok  " if ok else "FAIL") + " " + what + ((": " + detail) if detail else ""))
    if not ok:
        failures.append(what)


def eventually(what, check, seconds=30):
    """Scrapes are asynchronous: retry CHECK (returning (ok, detail)) until it holds or time is up."""
    deadline = time.monotonic() + seconds
    while True:
        ok, detail = check()
        if ok or time.monotonic() > deadline:
            expect(what, ok, detail)
            return
        time.sleep(1)


def values(result):
    return {json.dumps(r["metric"], sort_keys=True): float(r["value"][1]) for r in result}


def start(name, command, env=None):
    log = open(os.path.join(WORK, name + ".log"), "w")
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def main():
    started = time.monotonic()
    tokens = os.path.join(WORK, "tokens")
    with open(tokens, "w") as f:
        f.write(f"ci:write:sha256:{hashlib.sha256(WRITE_TOKEN.encode()).hexdigest()}\n")
        f.write(f"prometheus:read:sha256:{hashlib.sha256(SCRAPE_TOKEN.encode()).hexdigest()}\n")
    with open(os.path.join(WORK, "scrape-token"), "w") as f:
        f.write(SCRAPE_TOKEN)
    env = dict(
        os.environ,
        HOST=SERVICE.split(":")[0],
        PORT=SERVICE.split(":")[1],
        LOG_LEVEL="warn",
        MONITOR_STORE="sqlite",
        MONITOR_SQLITE_PATH=os.path.join(WORK, "monitor.sqlite"),
        MONITOR_AUTH_TOKENS_FILE=tokens,
        MONITOR_AUTH_METRICS="true",
        MONITOR_AUTH_READS="false",
        # The session below is build 1 of pipeline "ci": the latest-build cost gauges (and their dashboard panel).
        MONITOR_COST_PIPELINES="ci",
    )
    config = os.path.join(WORK, "prometheus.yml")
    with open(config, "w") as f:
        json.dump(
            {  # JSON is YAML
                "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                "rule_files": [os.path.abspath(RULES)],
                "scrape_configs": [
                    {
                        "job_name": JOB,
                        "metrics_path": "/metrics",
                        "scrape_timeout": "1s",
                        "authorization": {"type": "Bearer", "credentials_file": os.path.join(WORK, "scrape-token")},
                        "static_configs": [{"targets": [SERVICE], "labels": {"namespace": NAMESPACE}}],
                    }
                ],
            },
            f,
            indent=1,
        )
    check = subprocess.run(["promtool", "check", "config", config], capture_output=True, text=True)
    print(check.stdout.strip() or check.stderr.strip())
    if check.returncode != 0:
        return 1

    for name, address, variable in (
        ("the service", SERVICE, "PROMETHEUS_TEST_SERVICE_PORT"),
        ("Prometheus", PROMETHEUS, "PROMETHEUS_TEST_PORT"),
    ):
        with socket.socket() as probe:
            if probe.connect_ex((address.split(":")[0], int(address.split(":")[1]))) == 0:
                print(f"port {address} for {name} is taken (another run?): free it or set {variable}")
                return 1
    processes = []
    try:
        processes.append(start("service", ["node", "--import", "tsx", "src/server.ts"], env))
        processes.append(
            start(
                "prometheus",
                [
                    "prometheus",
                    "--config.file=" + config,
                    "--storage.tsdb.path=" + os.path.join(WORK, "data"),
                    "--web.listen-address=" + PROMETHEUS,
                    "--log.level=warn",
                    "--web.enable-lifecycle",
                ],
            )
        )
        wait_for("the service on " + SERVICE, lambda: http(f"http://{SERVICE}/readyz")[0] == 200)
        wait_for("Prometheus on " + PROMETHEUS, lambda: http(f"http://{PROMETHEUS}/-/ready")[0] == 200)
        print(f"service and Prometheus ready in {time.monotonic() - started:.1f}s")

        api = f"http://{SERVICE}/api/v1"
        context = {
            "h": "ctx-1",
            "cpu_count": 2,
            "cpu_frequency": 2600,
            "cpu_type": "x86_64",
            "cpu_vendor": "Intel",
            "ram_total": 24105,
            "machine_node": "ci-1",
            "machine_type": "x86_64",
            "machine_arch": "64bit",
            "system_info": "Linux",
            "python_info": "3.11.2",
        }
        session = {
            "session_h": "sess-1",
            "run_date": "2026-11-22T05:10:45",
            "scm_ref": "abc",
            "description": {"pipeline_branch": "ci", "pipeline_build_no": "1"},
        }
        expect(
            "the context and session are created",
            [
                http(api + "/contexts/", "POST", context, WRITE_TOKEN)[0],
                http(api + "/sessions/", "POST", session, WRITE_TOKEN)[0],
            ]
            == [201, 201],
        )

        def traffic(wave):
            """5 metrics created, 1 rejected body, 3 counts, a 404, a write without a token."""
            sent = []
            for i in range(5):
                metric = {
                    "session_h": "sess-1",
                    "context_h": "ctx-1",
                    "item_start_time": "2026-11-22T05:10:46",
                    "item_path": "tests.test_toy",
                    "item": f"test_{wave}_{i}",
                    "item_variant": f"test_{i}",
                    "item_fs_loc": "tests/test_toy.py",
                    "kind": "function",
                    "component": "",
                    "total_time": 0.25,
                    "user_time": 0.01,
                    "kernel_time": 0.002,
                    "cpu_usage": 0.05,
                    "mem_usage": 0.5,
                }
                sent.append(http(api + "/metrics/", "POST", metric, WRITE_TOKEN)[0])
            sent.append(http(api + "/metrics/", "POST", {"item": 1}, WRITE_TOKEN)[0])
            sent += [http(api + "/metrics/count")[0] for _ in range(3)]
            sent.append(http(api + "/sessions/nope/metrics")[0])
            sent.append(http(api + "/metrics/", "POST", {}, None)[0])
            expect(
                f"wave {wave}: 5 creates (201), a rejected body (400), 3 counts (200), a 404, a 401",
                sent == [201] * 5 + [400] + [200] * 3 + [404, 401],
                json.dumps(sent),
            )

        # Two waves with a scrape between them: every series then grows between two samples, so rate() has
        # something to show.
        traffic(1)
        first_wave = f'http_request_duration_seconds_count{{{SELECTOR}, route="/api/v1/metrics", status_code="201"}}'
        eventually("a scrape saw the first wave", lambda: (bool(query(first_wave + " == 5")), ""))
        traffic(2)
        expect("/metrics refuses a scrape without a token", http(f"http://{SERVICE}/metrics")[0] == 401)

        eventually(
            "the target is up (scraped with the bearer token)",
            lambda: (lambda r: (values(r) and all(v == 1 for v in values(r).values()), json.dumps(values(r))))(
                query(f"up{{{SELECTOR}}}")
            ),
        )
        routes = f"sum by (route, method, status_code) (http_request_duration_seconds_count{{{SELECTOR}}})"
        want = {
            ("/api/v1/metrics", "POST", "201"): 10,
            ("/api/v1/metrics", "POST", "400"): 2,
            ("/api/v1/metrics/count", "GET", "200"): 6,
            ("/api/v1/sessions/:h/metrics", "GET", "404"): 2,
        }

        def counted():
            got = {
                (r["metric"].get("route"), r["metric"].get("method"), r["metric"].get("status_code")): float(
                    r["value"][1]
                )
                for r in query(routes)
            }
            return all(got.get(k) == v for k, v in want.items()), json.dumps({" ".join(k): v for k, v in got.items()})

        eventually("http_request_duration_seconds_count counts requests by route, method and status code", counted)
        buckets = f"http_request_duration_seconds_bucket{{{SELECTOR}}}"
        quantiles = f"histogram_quantile(0.99, sum by (route, le) (rate({buckets}[1m])))"
        eventually(
            "histogram_quantile over the buckets answers per route",
            lambda: (lambda q: ("/api/v1/metrics" in q and "/api/v1/metrics/count" in q, json.dumps(q)))(
                {
                    r["metric"].get("route"): float(r["value"][1])
                    for r in query(quantiles)
                    if not math.isnan(float(r["value"][1]))
                }
            ),
        )
        ingested = f"monitor_records_ingested_total{{{SELECTOR}}}"
        eventually(
            "monitor_records_ingested_total counts 10 created and 2 rejected metrics",
            lambda: (
                lambda got: (
                    got.get(("metric", "created")) == 10 and got.get(("metric", "rejected")) == 2,
                    json.dumps({"/".join(k): v for k, v in got.items()}),
                )
            )({(r["metric"]["kind"], r["metric"]["outcome"]): float(r["value"][1]) for r in query(ingested)}),
        )
        eventually(
            "monitor_store_up is 1",
            lambda: (lambda r: (r == {"sqlite": 1.0}, json.dumps(r)))(
                {x["metric"].get("store"): float(x["value"][1]) for x in query(f"monitor_store_up{{{SELECTOR}}}")}
            ),
        )
        eventually(
            "monitor_auth_failures_total counts the writes without a token",
            lambda: (lambda r: (r.get("missing", 0) >= 2, json.dumps(r)))(
                {
                    x["metric"].get("reason"): float(x["value"][1])
                    for x in query(f"monitor_auth_failures_total{{{SELECTOR}}}")
                }
            ),
        )

        dashboard = subprocess.run(
            [
                sys.executable,
                os.path.join(os.path.dirname(__file__), "check-dashboard.py"),
                "queries",
                DASHBOARD,
                NAMESPACE,
                JOB,
                "1m",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        for q in json.loads(dashboard.stdout):

            def answered(expr=q["expr"]):
                try:
                    result = query(expr)
                except ValueError as e:
                    return False, str(e)
                return bool(result), f"{len(result)} series"

            eventually(f"dashboard {q['panel']!r} {q['refId']} has data", answered, seconds=15)
        names = subprocess.run(
            [sys.executable, os.path.join(os.path.dirname(__file__), "check-dashboard.py"), "metrics", DASHBOARD],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        match = urllib.parse.urlencode({"match[]": f"{{{SELECTOR}}}"})
        status, body = http(f"http://{PROMETHEUS}/api/v1/label/__name__/values?{match}")
        exposed = set(json.loads(body)["data"])
        missing = [n for n in names if n not in exposed]
        expect(
            f"every metric the dashboard names ({len(names)}) is exposed by the service",
            not missing,
            f"missing: {missing}" if missing else "",
        )

        def rules_ok():
            groups = json.loads(http(f"http://{PROMETHEUS}/api/v1/rules")[1])["data"]["groups"]
            rules = [r for g in groups for r in g["rules"]]
            bad = [f"{r['name']}: {r.get('lastError') or r.get('health')}" for r in rules if r.get("health") != "ok"]
            return bool(rules) and not bad, f"{len(rules)} rules, {bad or 'all evaluated without error'}"

        eventually("the chart's alerting rules evaluate on the real series", rules_ok)
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
    for name in ("service", "prometheus"):
        with open(os.path.join(WORK, name + ".log")) as f:
            tail = f.read().strip().splitlines()[-5:]
        if failures and tail:
            print(f"--- {name} log (last lines) ---\n" + "\n".join(tail))
    print(f"prometheus-scrape: {len(failures)} failure(s) in {time.monotonic() - started:.1f}s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
