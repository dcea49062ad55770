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

import yaml

path, package, mode = sys.argv[1], sys.argv[2], sys.argv[3:]
docs = [d for d in yaml.safe_load_all(open(path)) if d]
cronjobs = [d for d in docs if d["kind"] == "CronJob"]
errors, checked = [], []


def check(condition, message):
    checked.append(message)
    if not condition:
        errors.append(message)


if mode == ["absent"]:
    check(not cronjobs, "no CronJob (retention.enabled is false)")
else:
    want = dict(a.split("=", 1) for a in mode)
    check(len(cronjobs) == 1, "exactly one CronJob")
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    server_pod = deployment["spec"]["template"]["spec"]
    server = server_pod["containers"][0]
    service = next((d for d in docs if d["kind"] == "Service"), {})
    for cronjob in cronjobs:
        spec = cronjob["spec"]
        check(spec.get("schedule") == want["schedule"], "schedule is %r (got %r)" % (want["schedule"], spec.get("schedule")))
        check(spec.get("concurrencyPolicy") == "Forbid", "concurrencyPolicy is Forbid (two purges never overlap)")
        for key in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit", "startingDeadlineSeconds"):
            check(isinstance(spec.get(key), int), "%s is set" % key)
        job = spec["jobTemplate"]["spec"]
        check(isinstance(job.get("backoffLimit"), int) and isinstance(job.get("activeDeadlineSeconds"), int),
              "the Job has a backoffLimit and an activeDeadlineSeconds")
        pod = job["template"]["spec"]
        check(pod.get("restartPolicy") == "Never", "restartPolicy is Never (retries are the Job's backoffLimit)")
        containers = pod["containers"]
        check(len(containers) == 1, "one container")
        c = containers[0]
        bin_path = json.load(open(package))["bin"]["monitor-admin"]
        check(c.get("command") == ["node", bin_path], "command is node %s (package.json bin monitor-admin), got %r" % (bin_path, c.get("command")))
        args = ["purge", "--older-than", "%sd" % want["days"], "--yes"]
        check(c.get("args") == args, "args are %r (got %r)" % (args, c.get("args")))
        check(c.get("image") == server.get("image"), "the Deployment's image %r (got %r)" % (server.get("image"), c.get("image")))
        check(c.get("envFrom") == server.get("envFrom"), "the Deployment's envFrom (store settings)")
        check(c.get("env") == server.get("env"), "the Deployment's env (store credentials, extraEnv)")
        check(c.get("securityContext") == server.get("securityContext"), "the Deployment's container securityContext")
        check(pod.get("securityContext") == server_pod.get("securityContext"), "the Deployment's pod securityContext")
        check(pod.get("serviceAccountName") == server_pod.get("serviceAccountName"), "the Deployment's service account")
        ca = [m for m in server.get("volumeMounts", []) if m["name"] == "elasticsearch-ca"]
        check([m for m in c.get("volumeMounts", []) if m["name"] == "elasticsearch-ca"] == ca, "the Deployment's CA mount")
        if ca:
            volume = lambda p: [v for v in p.get("volumes", []) if v["name"] == "elasticsearch-ca"]
            check(volume(pod) == volume(server_pod), "the Deployment's CA volume")
        check(all(m["name"] != "data" for m in c.get("volumeMounts", [])), "no SQLite data volume")
        selector = (service.get("spec") or {}).get("selector") or {}
        labels = job["template"]["metadata"].get("labels") or {}
        check(not selector or any(labels.get(k) != v for k, v in selector.items()),
              "the purge pod's labels %s do not match the Service selector %s" % (labels, selector))

for e in errors:
    print("FAILED: " + e)
print("%s: %d checks, %d failed" % (os.path.basename(path), len(checked), len(errors)))
sys.exit(1 if errors or not checked else 0)
