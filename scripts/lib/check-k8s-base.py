"""k8s/base must be the chart's default rendering, minus what only Helm adds.

  check-k8s-base.py CHART_RENDERING KUSTOMIZE_BUILD

Both sides are compared object by object (KIND/NAME) once normalised: no namespace, no Helm labels
(helm.sh/chart, app.kubernetes.io/managed-by) and no checksum/* annotations, in the objects and their pod templates;
the chart's hooks (the helm test Pod) are left out. The tokens Secret the chart generates may be missing from k8s/base
(it mounts one that must exist). Prints a line per object and a unified diff for each that differs; exit 1 then.
"""

import difflib
import sys

import yaml

from deploy_checks import load_documents

HELM_ONLY_LABELS = {"helm.sh/chart", "app.kubernetes.io/managed-by"}
# The tokens Secret the chart generates (a random token per install): k8s/base mounts it but expects it to exist.
CHART_ONLY = {"Secret/monitor-server-auth"}


def clean_metadata(meta):
    meta.pop("namespace", None)
    for key in HELM_ONLY_LABELS:
        (meta.get("labels") or {}).pop(key, None)
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if not k.startswith("checksum/")}
    meta.pop("annotations", None)
    if annotations:
        meta["annotations"] = annotations
    if meta.get("labels") == {}:
        meta.pop("labels")
    return meta


def normalise(o):
    """The object without what only Helm adds (changed in place, and returned)."""
    clean_metadata(o["metadata"])
    template = (o.get("spec") or {}).get("template")
    if template:
        clean_metadata(template.setdefault("metadata", {}))
    return o


def by_key(docs, skip_hooks):
    """KIND/NAME -> the normalised object; with skip_hooks, the Helm hooks left out."""
    if skip_hooks:
        docs = [d for d in docs if "helm.sh/hook" not in ((d.get("metadata") or {}).get("annotations") or {})]
    return {f"{d['kind']}/{d['metadata']['name']}": normalise(d) for d in docs}


def compare(chart, base):
    """(lines to print, whether they differ) for two KIND/NAME -> object maps."""
    lines, failed = [], False
    for key in sorted(set(chart) | set(base)):
        if key in CHART_ONLY and key not in base:
            lines.append("only in the chart, as it should: " + key)
        elif key not in base:
            lines.append("only in the chart: " + key)
            failed = True
        elif key not in chart:
            lines.append("only in k8s/base: " + key)
            failed = True
        elif chart[key] != base[key]:
            failed = True
            a = yaml.safe_dump(chart[key], sort_keys=True).splitlines()
            b = yaml.safe_dump(base[key], sort_keys=True).splitlines()
            lines.append("\n".join(difflib.unified_diff(a, b, "chart " + key, "k8s/base " + key, lineterm="")))
        else:
            lines.append("same: " + key)
    return lines, failed


def main(chart_rendering, kustomize_build):
    lines, failed = compare(
        by_key(load_documents(chart_rendering), skip_hooks=True), by_key(load_documents(kustomize_build), False)
    )
    for line in lines:
        print(line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
