import unittest

from tests.support import BIN, RETENTION_MODE, by_kind, load_script, rendering

check_retention = load_script("check-retention")


def failed(docs, mode=RETENTION_MODE, bin_path=BIN):
    return check_retention.check_cronjobs(docs, bin_path, mode).errors


def cronjob_pod(docs):
    return by_kind(docs, "CronJob")["spec"]["jobTemplate"]["spec"]["template"]


class CheckCronJobsTest(unittest.TestCase):
    def test_the_rendering_passes(self):
        checks = check_retention.check_cronjobs(rendering(), BIN, RETENTION_MODE)
        self.assertEqual(checks.errors, [])
        self.assertGreater(len(checks.checked), 15)

    def test_absent(self):
        docs = [d for d in rendering() if d["kind"] != "CronJob"]
        self.assertEqual(failed(docs, ["absent"]), [])
        self.assertEqual(failed(rendering(), ["absent"]), ["no CronJob (retention.enabled is false)"])

    def test_exactly_one(self):
        docs = rendering()
        docs.append(by_kind(docs, "CronJob"))
        self.assertEqual(failed(docs), ["exactly one CronJob"])
        self.assertEqual(failed([d for d in rendering() if d["kind"] != "CronJob"]), ["exactly one CronJob"])

    def test_schedule_and_age(self):
        self.assertEqual(
            failed(rendering(), ["days=90", "schedule=17 3 * * *"]),
            [
                "schedule is '17 3 * * *' (got '0 4 * * 0')",
                "args are ['purge', '--older-than', '90d', '--yes'] (got ['purge', '--older-than', '30d', '--yes'])",
            ],
        )

    def test_command_is_the_package_bin(self):
        self.assertEqual(
            failed(rendering(), bin_path="dist/cli.js"),
            ["command is node dist/cli.js (package.json bin monitor-admin), got ['node', 'dist/src/cli/main.js']"],
        )

    def test_job_limits(self):
        docs = rendering()
        spec = by_kind(docs, "CronJob")["spec"]
        spec["concurrencyPolicy"] = "Allow"
        del spec["failedJobsHistoryLimit"]
        del spec["jobTemplate"]["spec"]["backoffLimit"]
        cronjob_pod(docs)["spec"]["restartPolicy"] = "OnFailure"
        self.assertEqual(
            failed(docs),
            [
                "concurrencyPolicy is Forbid (two purges never overlap)",
                "failedJobsHistoryLimit is set",
                "the Job has a backoffLimit and an activeDeadlineSeconds",
                "restartPolicy is Never (retries are the Job's backoffLimit)",
            ],
        )

    def test_same_as_the_deployment(self):
        docs = rendering()
        pod = cronjob_pod(docs)["spec"]
        container = pod["containers"][0]
        container["image"] = "other:1"
        container.pop("envFrom")
        container["env"] = []
        container["securityContext"] = {}
        pod["serviceAccountName"] = "default"
        self.assertEqual(
            failed(docs),
            [
                "the Deployment's image 'monitor-server:0.1.0' (got 'other:1')",
                "the Deployment's envFrom (store settings)",
                "the Deployment's env (store credentials, extraEnv)",
                "the Deployment's container securityContext",
                "the Deployment's service account",
            ],
        )

    def test_ca_mount_and_volume(self):
        docs = rendering()
        server = by_kind(docs, "Deployment")["spec"]["template"]["spec"]
        mount = {"name": "elasticsearch-ca", "mountPath": "/etc/monitor-server/elasticsearch-ca", "readOnly": True}
        volume = {"name": "elasticsearch-ca", "secret": {"secretName": "ca"}}
        server["containers"][0]["volumeMounts"].append(mount)
        server["volumes"].append(volume)
        self.assertEqual(failed(docs), ["the Deployment's CA mount", "the Deployment's CA volume"])
        pod = cronjob_pod(docs)["spec"]
        pod["containers"][0]["volumeMounts"].append(mount)
        pod["volumes"].append(volume)
        self.assertEqual(failed(docs), [])

    def test_no_data_volume_and_no_traffic(self):
        docs = rendering()
        template = cronjob_pod(docs)
        template["spec"]["containers"][0]["volumeMounts"].append({"name": "data", "mountPath": "/data"})
        template["metadata"]["labels"]["app.kubernetes.io/name"] = "monitor"
        errors = failed(docs)
        self.assertEqual(errors[0], "no SQLite data volume")
        self.assertTrue(errors[1].startswith("the purge pod's labels"), errors[1])
        self.assertEqual(len(errors), 2)


if __name__ == "__main__":
    unittest.main()
