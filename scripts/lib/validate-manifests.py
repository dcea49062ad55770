"""Validates rendered manifests: Kubernetes schemas, CRD schemas, PromQL, hardening policy.

  validate-manifests.py NODE_TOOLS VERSIONS FILE...

Each object of each FILE (chart renderings, kustomize builds):
  - ServiceMonitor and PrometheusRule (monitoring.coreos.com/v1): against the prometheus-operator schemas, by
    NODE_TOOLS/validate-crds.mjs (check-deploy.sh writes it beside its node_modules); every PrometheusRule expression
    is parsed as PromQL (promql-parser);
  - any other kind: against the Kubernetes JSON schemas of every version in VERSIONS (comma-separated, e.g.
    1.25.0,1.37.0; kubernetes-validate, strict: an unknown field is an error, and so is a kind without a schema);
  - every pod (Pod, Deployment, StatefulSet, DaemonSet, Job, CronJob) keeps the hardening of policy().
Prints a line per file, then each error ("ERROR FILE: ...") and the totals. Exit 1 on any error, or when FILEs held no
object at all.
"""

import json
import subprocess
import sys

import promql_parser

from deploy_checks import load_documents, object_name

CRD_GROUPS = {"monitoring.coreos.com/v1": {"ServiceMonitor", "PrometheusRule"}}
WORKLOADS = ("Deployment", "StatefulSet", "DaemonSet", "Job")


def validate_crds(objects, node_tools):
    if not objects:
        return []
    run = subprocess.run(
        ["node", node_tools + "/validate-crds.mjs"], input=json.dumps(objects), capture_output=True, text=True
    )
    if run.returncode != 0:
        return ["the CRD validator failed: " + run.stderr.strip()]
    return [f"{object_name(o)}: {err}" for o, err in zip(objects, json.loads(run.stdout), strict=True) if err]


def validate_promql(o):
    errors = []
    for group in (o.get("spec") or {}).get("groups") or []:
        for rule in group.get("rules") or []:
            try:
                promql_parser.parse(str(rule.get("expr", "")))
            except Exception as e:  # the parser raises ValueError with the position
                errors.append(f"{object_name(o)}: rule {rule.get('alert') or rule.get('record')}: PromQL: {e}")
    return errors


def validate_schemas(o, versions):
    # Imported here, not at the top: its ~100 MB of schemas are not needed by the unit tests of the rest.
    from kubernetes_validate import utils as kv

    errors = []
    for version in versions:
        try:
            kv.validate(o, version, strict=True)
        except kv.ValidationError as e:
            where = ".".join(map(str, e.path)) or "(root)"
            errors.append(f"{object_name(o)}: Kubernetes {version} schema: {where}: {e.message}")
        except kv.SchemaNotFoundError as e:
            errors.append(f"{object_name(o)}: {e.message}")
    return errors


def pod_specs(o):
    if o["kind"] == "Pod":
        yield o["spec"]
    elif o["kind"] in WORKLOADS:
        yield o["spec"]["template"]["spec"]
    elif o["kind"] == "CronJob":
        yield o["spec"]["jobTemplate"]["spec"]["template"]["spec"]


def policy(o, configmaps):
    """The hardening every pod of this project must keep. configmaps: name -> data of the rendering's ConfigMaps (a
    Deployment's SHUTDOWN_GRACE_MS comes from its envFrom)."""
    errors = []
    for spec in pod_specs(o):
        psc = spec.get("securityContext") or {}
        if spec.get("automountServiceAccountToken") is not False:
            errors.append("automountServiceAccountToken must be false")
        for c in spec.get("containers", []) + spec.get("initContainers", []):
            sc = c.get("securityContext") or {}
            where = f"container {c['name']}"
            if sc.get("runAsNonRoot", psc.get("runAsNonRoot")) is not True:
                errors.append(where + ": runAsNonRoot must be true")
            if sc.get("readOnlyRootFilesystem") is not True:
                errors.append(where + ": readOnlyRootFilesystem must be true")
            if sc.get("allowPrivilegeEscalation") is not False:
                errors.append(where + ": allowPrivilegeEscalation must be false")
            if "ALL" not in ((sc.get("capabilities") or {}).get("drop") or []):
                errors.append(where + ": capabilities.drop must contain ALL")
            seccomp = (sc.get("seccompProfile") or psc.get("seccompProfile") or {}).get("type")
            if seccomp not in ("RuntimeDefault", "Localhost"):
                errors.append(where + ": seccompProfile must be RuntimeDefault")
            resources = c.get("resources") or {}
            if not (resources.get("requests") or {}).get("memory") or not (resources.get("limits") or {}).get("memory"):
                errors.append(where + ": needs a memory request and limit")
            if o["kind"] == "Deployment":
                errors += deployment_policy(spec, c, where, configmaps)
    return [f"{object_name(o)}: {e}" for e in errors]


def deployment_policy(spec, c, where, configmaps):
    """The service's container: a writable /tmp, the probes, and a grace period the shutdown fits in."""
    errors = []
    if not any(m.get("mountPath") == "/tmp" for m in c.get("volumeMounts", [])):
        errors.append(where + ": needs a writable /tmp volume (read-only root filesystem)")
    for probe, path in (("startupProbe", "/healthz"), ("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        if ((c.get(probe) or {}).get("httpGet") or {}).get("path") != path:
            errors.append(f"{where}: {probe} must GET {path}")
    grace_ms = 10000
    for ref in c.get("envFrom", []):
        data = configmaps.get((ref.get("configMapRef") or {}).get("name"), {})
        grace_ms = int(data.get("SHUTDOWN_GRACE_MS", grace_ms))
    pre_stop = ((c.get("lifecycle") or {}).get("preStop") or {}).get("exec", {}).get("command") or []
    sleep = int(pre_stop[1]) if len(pre_stop) == 2 and pre_stop[0] == "sleep" else 0
    grace = spec.get("terminationGracePeriodSeconds", 30)
    if grace * 1000 <= grace_ms + sleep * 1000:
        errors.append(
            f"terminationGracePeriodSeconds ({grace}s) must exceed preStop sleep ({sleep}s)"
            f" + SHUTDOWN_GRACE_MS ({grace_ms}ms)"
        )
    return errors


def file_errors(objects, node_tools, versions):
    """Every error of one file's objects."""
    configmaps = {o["metadata"]["name"]: o.get("data") or {} for o in objects if o.get("kind") == "ConfigMap"}
    crds = []
    errors = []
    for o in objects:
        if not isinstance(o, dict) or "apiVersion" not in o or "kind" not in o:
            errors.append("an object without apiVersion/kind: " + repr(o)[:200])
            continue
        if o["kind"] in CRD_GROUPS.get(o["apiVersion"], ()):
            crds.append(o)
            if o["kind"] == "PrometheusRule":
                errors += validate_promql(o)
            continue
        errors += validate_schemas(o, versions)
        errors += policy(o, configmaps)
    return errors + validate_crds(crds, node_tools)


def main(node_tools, versions, files):
    errors, counted = [], 0
    for path in files:
        objects = load_documents(path)
        counted += len(objects)
        found = file_errors(objects, node_tools, versions)
        name = path.rsplit("/", 1)[-1]
        status = f"{len(found)} error(s)" if found else "ok"
        print(f"{name:<45} {len(objects):3d} objects  {status}")
        errors += [f"{name}: {e}" for e in found]
    for e in errors:
        print("ERROR " + e)
    print(f"{counted} objects, {len(errors)} error(s); Kubernetes {' and '.join(versions)}")
    return 1 if errors or counted == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2].split(","), sys.argv[3:]))
