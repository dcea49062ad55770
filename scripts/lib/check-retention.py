"""The retention CronJob in a rendering of the chart, against what the values asked for.

  check-retention.py RENDERING PACKAGE_JSON absent
  check-retention.py RENDERING PACKAGE_JSON days=N schedule=CRON

With `absent`: no CronJob. Otherwise exactly one, which
  - runs `monitor-admin purge --older-than <N>d --yes` (the command is package.json's "bin" path in the image) on the
    schedule, with concurrencyPolicy Forbid, history limits, a backoff limit and a deadline, restartPolicy Never;
  - uses the Deployment's image, store settings (envFrom), credentials (env), CA mount, service account and container
    securityContext: it opens the same store with the same hardening;
  - carries labels that the Service's selector does not match (the purge pod must get no traffic).
Exit 1 listing every mismatch.
"""

import json
import os
import sys

from deploy_checks import Checklist, load_documents

CA = "elasticsearch-ca"


def check_cronjobs(docs, bin_path, mode):
    """Every check of a rendering's objects (docs) for MODE (the arguments after PACKAGE_JSON); bin_path is
    package.json's bin monitor-admin. A Checklist."""
    checks = Checklist()
    cronjobs = [d for d in docs if d["kind"] == "CronJob"]
    if mode == ["absent"]:
        checks.check(not cronjobs, "no CronJob (retention.enabled is false)")
        return checks
    want = dict(a.split("=", 1) for a in mode)
    checks.check(len(cronjobs) == 1, "exactly one CronJob")
    for cronjob in cronjobs:
        check_cronjob(checks.check, cronjob, docs, want, bin_path)
    return checks


def check_cronjob(check, cronjob, docs, want, bin_path):
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    server_pod = deployment["spec"]["template"]["spec"]
    server = server_pod["containers"][0]
    service = next((d for d in docs if d["kind"] == "Service"), {})
    spec = cronjob["spec"]
    check(spec.get("schedule") == want["schedule"], f"schedule is {want['schedule']!r} (got {spec.get('schedule')!r})")
    check(spec.get("concurrencyPolicy") == "Forbid", "concurrencyPolicy is Forbid (two purges never overlap)")
    for key in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit", "startingDeadlineSeconds"):
        check(isinstance(spec.get(key), int), f"{key} is set")
    job = spec["jobTemplate"]["spec"]
    check(
        isinstance(job.get("backoffLimit"), int) and isinstance(job.get("activeDeadlineSeconds"), int),
        "the Job has a backoffLimit and an activeDeadlineSeconds",
    )
    pod = job["template"]["spec"]
    check(pod.get("restartPolicy") == "Never", "restartPolicy is Never (retries are the Job's backoffLimit)")
    containers = pod["containers"]
    check(len(containers) == 1, "one container")
    c = containers[0]
    check(
        c.get("command") == ["node", bin_path],
        f"command is node {bin_path} (package.json bin monitor-admin), got {c.get('command')!r}",
    )
    args = ["purge", "--older-than", f"{want['days']}d", "--yes"]
    check(c.get("args") == args, f"args are {args!r} (got {c.get('args')!r})")
    check(
        c.get("image") == server.get("image"),
        f"the Deployment's image {server.get('image')!r} (got {c.get('image')!r})",
    )
    check(c.get("envFrom") == server.get("envFrom"), "the Deployment's envFrom (store settings)")
    check(c.get("env") == server.get("env"), "the Deployment's env (store credentials, extraEnv)")
    check(c.get("securityContext") == server.get("securityContext"), "the Deployment's container securityContext")
    check(pod.get("securityContext") == server_pod.get("securityContext"), "the Deployment's pod securityContext")
    check(pod.get("serviceAccountName") == server_pod.get("serviceAccountName"), "the Deployment's service account")
    ca = [m for m in server.get("volumeMounts", []) if m["name"] == CA]
    check([m for m in c.get("volumeMounts", []) if m["name"] == CA] == ca, "the Deployment's CA mount")
    if ca:
        check(volumes(pod, CA) == volumes(server_pod, CA), "the Deployment's CA volume")
    check(all(m["name"] != "data" for m in c.get("volumeMounts", [])), "no SQLite data volume")
    selector = (service.get("spec") or {}).get("selector") or {}
    labels = job["template"]["metadata"].get("labels") or {}
    check(
        not selector or any(labels.get(k) != v for k, v in selector.items()),
        f"the purge pod's labels {labels} do not match the Service selector {selector}",
    )


def volumes(pod, name):
    return [v for v in pod.get("volumes", []) if v["name"] == name]


def main(path, package, mode):
    with open(package) as f:
        bin_path = json.load(f)["bin"]["monitor-admin"]
    return check_cronjobs(load_documents(path), bin_path, mode).report(os.path.basename(path))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
