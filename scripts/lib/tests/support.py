"""What the tests share: loading a script of scripts/lib by its file name, and a small chart rendering that passes
every check (each test breaks one thing in a copy)."""

import base64
import contextlib
import copy
import hashlib
import importlib.util
import io
import os

LIB = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_script(name):
    """scripts/lib/NAME.py as a module (the scripts have '-' in their names, so `import` cannot reach them)."""
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), os.path.join(LIB, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def quietly(function, *args, **kwargs):
    """(function's result, what it printed)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = function(*args, **kwargs)
    return result, out.getvalue()


def b64(text):
    return base64.b64encode(text.encode()).decode()


def sha256(text):
    return hashlib.sha256(text.encode()).hexdigest()


TEST_TOKEN = "t" * 43
METRICS_TOKEN = "m" * 43
SECRET = "monitor-server-auth"
BIN = "dist/src/cli/main.js"
# check-auth.py's arguments that RENDERING passes.
AUTH_EXPECTATIONS = {
    "auth": "on",
    "secret": SECRET,
    "created": "yes",
    "reads": "true",
    "metrics": "true",
    "generated": "test-token,metrics-token",
    "users": "ci",
    "http": "10000,60000,5000,10000",
}
# check-retention.py's arguments that RENDERING passes.
RETENTION_MODE = ["days=30", "schedule=0 4 * * 0"]

_HARDENED = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "readOnlyRootFilesystem": True,
    "runAsNonRoot": True,
    "seccompProfile": {"type": "RuntimeDefault"},
}
_POD_SECURITY = {"runAsNonRoot": True, "runAsUser": 10001, "seccompProfile": {"type": "RuntimeDefault"}}
_SELECTOR = {"app.kubernetes.io/name": "monitor", "app.kubernetes.io/instance": "monitor-server"}
_IMAGE = "monitor-server:0.1.0"
_ENV_FROM = [{"configMapRef": {"name": "monitor-server"}}]
_ENV = [{"name": "NODE_OPTIONS", "value": "--max-old-space-size=384"}]
_RESOURCES = {"requests": {"memory": "256Mi"}, "limits": {"memory": "768Mi"}}

_TOKENS_FILE = (
    "# monitor-server tokens file\n"
    f"ci:write:sha256:{'ab' * 32}\n"
    f"helm-test:read:sha256:{sha256(TEST_TOKEN)}\n"
    f"helm-metrics:read:sha256:{sha256(METRICS_TOKEN)}\n"
)

_RENDERING = [
    {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "monitor-server"},
        "data": {
            "MONITOR_STORE": "sqlite",
            "SHUTDOWN_GRACE_MS": "10000",
            "MONITOR_AUTH_TOKENS_FILE": "/etc/monitor-server/auth/tokens",
            "MONITOR_AUTH_READS": "true",
            "MONITOR_AUTH_METRICS": "true",
            "HTTP_HEADERS_TIMEOUT_MS": "10000",
            "HTTP_REQUEST_TIMEOUT_MS": "60000",
            "HTTP_KEEP_ALIVE_TIMEOUT_MS": "5000",
            "MAX_CONNECTIONS": "10000",
        },
    },
    {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": SECRET},
        "data": {"tokens": b64(_TOKENS_FILE), "test-token": b64(TEST_TOKEN), "metrics-token": b64(METRICS_TOKEN)},
    },
    {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "monitor-server"},
        "spec": {"selector": _SELECTOR, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]},
    },
    {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "monitor-server"},
        "spec": {
            "selector": {"matchLabels": _SELECTOR},
            "template": {
                "metadata": {"labels": dict(_SELECTOR, **{"app.kubernetes.io/component": "server"})},
                "spec": {
                    "automountServiceAccountToken": False,
                    "serviceAccountName": "monitor-server",
                    "securityContext": _POD_SECURITY,
                    "terminationGracePeriodSeconds": 30,
                    "containers": [
                        {
                            "name": "monitor-server",
                            "image": _IMAGE,
                            "securityContext": _HARDENED,
                            "envFrom": _ENV_FROM,
                            "env": _ENV,
                            "resources": _RESOURCES,
                            "startupProbe": {"httpGet": {"path": "/healthz", "port": "http"}},
                            "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}},
                            "readinessProbe": {"httpGet": {"path": "/readyz", "port": "http"}},
                            "lifecycle": {"preStop": {"exec": {"command": ["sleep", "5"]}}},
                            "volumeMounts": [
                                {"name": "tmp", "mountPath": "/tmp"},
                                {"name": "auth-tokens", "mountPath": "/etc/monitor-server/auth", "readOnly": True},
                            ],
                        }
                    ],
                    "volumes": [
                        {"name": "tmp", "emptyDir": {}},
                        {
                            "name": "auth-tokens",
                            "secret": {"secretName": SECRET, "items": [{"key": "tokens", "path": "tokens"}]},
                        },
                    ],
                },
            },
        },
    },
    {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "monitor-server-retention"},
        "spec": {
            "schedule": "0 4 * * 0",
            "concurrencyPolicy": "Forbid",
            "startingDeadlineSeconds": 600,
            "successfulJobsHistoryLimit": 1,
            "failedJobsHistoryLimit": 5,
            "jobTemplate": {
                "spec": {
                    "backoffLimit": 1,
                    "activeDeadlineSeconds": 14400,
                    "template": {
                        "metadata": {
                            "labels": {
                                "app.kubernetes.io/name": "monitor-retention",
                                "app.kubernetes.io/instance": "monitor-server",
                            }
                        },
                        "spec": {
                            "restartPolicy": "Never",
                            "automountServiceAccountToken": False,
                            "serviceAccountName": "monitor-server",
                            "securityContext": _POD_SECURITY,
                            "containers": [
                                {
                                    "name": "retention",
                                    "image": _IMAGE,
                                    "command": ["node", BIN],
                                    "args": ["purge", "--older-than", "30d", "--yes"],
                                    "securityContext": _HARDENED,
                                    "envFrom": _ENV_FROM,
                                    "env": _ENV,
                                    "resources": _RESOURCES,
                                    "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
                                }
                            ],
                            "volumes": [{"name": "tmp", "emptyDir": {}}],
                        },
                    },
                }
            },
        },
    },
    {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": "monitor-server"},
        "spec": {
            "groups": [{"name": "monitor-server.rules", "rules": [{"alert": "MonitorServerDown", "expr": "up == 0"}]}]
        },
    },
    {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {"name": "monitor-server"},
        "spec": {
            "selector": {"matchLabels": _SELECTOR},
            "endpoints": [
                {
                    "port": "http",
                    "path": "/metrics",
                    "authorization": {"type": "Bearer", "credentials": {"name": SECRET, "key": "metrics-token"}},
                }
            ],
        },
    },
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "monitor-server-test", "annotations": {"helm.sh/hook": "test"}},
        "spec": {
            "restartPolicy": "Never",
            "automountServiceAccountToken": False,
            "securityContext": _POD_SECURITY,
            "containers": [
                {
                    "name": "check",
                    "image": _IMAGE,
                    "securityContext": _HARDENED,
                    "resources": _RESOURCES,
                    "command": ["node", "-e", "process.exit(0)"],
                    "env": [
                        {"name": "MONITOR_URL", "value": "http://monitor-server.monitor.svc:80"},
                        {"name": "MONITOR_AUTH", "value": "true"},
                        {
                            "name": "MONITOR_TOKEN",
                            "valueFrom": {"secretKeyRef": {"name": SECRET, "key": "test-token", "optional": True}},
                        },
                    ],
                }
            ],
        },
    },
]


def rendering():
    """A fresh copy of a small rendering (with auth.reads, auth.metrics, a ServiceMonitor, a PrometheusRule, the
    retention CronJob and the helm test Pod) that every checker passes with the expectations above."""
    return copy.deepcopy(_RENDERING)


def by_kind(docs, kind):
    return next(d for d in docs if d["kind"] == kind)


def dashboard():
    """A small Grafana dashboard that check-dashboard.py passes."""
    source = {"type": "prometheus", "uid": "${datasource}"}
    expr = 'sum(rate(http_request_duration_seconds_count{namespace="$namespace", job="$job"}[$__rate_interval]))'
    return {
        "uid": "monitor-server",
        "title": "monitor-server",
        "schemaVersion": 39,
        "templating": {
            "list": [
                {"name": "datasource", "type": "datasource", "query": "prometheus"},
                {"name": "namespace", "type": "query", "datasource": source},
                {"name": "job", "type": "query", "datasource": source},
            ]
        },
        "panels": [
            {
                "id": 1,
                "title": "Requests",
                "datasource": source,
                "targets": [{"refId": "A", "expr": expr, "datasource": source}],
            },
            {"id": 2, "title": "Row", "type": "row", "panels": []},
        ],
    }
