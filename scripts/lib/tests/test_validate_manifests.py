import os
import tempfile
import unittest

import yaml

from tests.support import by_kind, load_script, quietly, rendering

validate = load_script("validate-manifests")


def configmaps(docs):
    return {o["metadata"]["name"]: o.get("data") or {} for o in docs if o.get("kind") == "ConfigMap"}


class PolicyTest(unittest.TestCase):
    def setUp(self):
        self.docs = rendering()
        self.deployment = by_kind(self.docs, "Deployment")
        self.container = self.deployment["spec"]["template"]["spec"]["containers"][0]

    def errors(self, o=None):
        return validate.policy(o or self.deployment, configmaps(self.docs))

    def test_every_pod_of_the_rendering_passes(self):
        for o in self.docs:
            self.assertEqual(validate.policy(o, configmaps(self.docs)), [], o["kind"])

    def test_pod_specs_of_each_kind(self):
        self.assertEqual(len(list(validate.pod_specs(by_kind(self.docs, "CronJob")))), 1)
        self.assertEqual(len(list(validate.pod_specs(by_kind(self.docs, "Pod")))), 1)
        self.assertEqual(list(validate.pod_specs(by_kind(self.docs, "Service"))), [])
        job = {"kind": "Job", "spec": {"template": {"spec": {"containers": []}}}}
        self.assertEqual(list(validate.pod_specs(job)), [{"containers": []}])

    def test_root_container(self):
        self.container["securityContext"]["runAsNonRoot"] = False
        self.assertEqual(
            self.errors(), ["Deployment/monitor-server: container monitor-server: runAsNonRoot must be true"]
        )

    def test_run_as_non_root_from_the_pod(self):
        del self.container["securityContext"]["runAsNonRoot"]
        self.assertEqual(self.errors(), [])
        del self.deployment["spec"]["template"]["spec"]["securityContext"]["runAsNonRoot"]
        self.assertEqual(len(self.errors()), 1)

    def test_each_hardening_rule(self):
        sc = self.container["securityContext"]
        sc["readOnlyRootFilesystem"] = False
        sc["allowPrivilegeEscalation"] = True
        sc["capabilities"] = {"drop": ["NET_RAW"]}
        sc["seccompProfile"] = {"type": "Unconfined"}
        self.deployment["spec"]["template"]["spec"]["securityContext"].pop("seccompProfile")
        self.deployment["spec"]["template"]["spec"]["automountServiceAccountToken"] = True
        self.container["resources"] = {"requests": {"cpu": "1"}}
        where = "Deployment/monitor-server: container monitor-server: "
        self.assertEqual(
            self.errors(),
            [
                "Deployment/monitor-server: automountServiceAccountToken must be false",
                where + "readOnlyRootFilesystem must be true",
                where + "allowPrivilegeEscalation must be false",
                where + "capabilities.drop must contain ALL",
                where + "seccompProfile must be RuntimeDefault",
                where + "needs a memory request and limit",
            ],
        )

    def test_init_containers_too(self):
        self.deployment["spec"]["template"]["spec"]["initContainers"] = [{"name": "init", "resources": {}}]
        self.assertIn("Deployment/monitor-server: container init: readOnlyRootFilesystem must be true", self.errors())

    def test_deployment_needs_tmp_and_probes(self):
        self.container["volumeMounts"] = []
        self.container["readinessProbe"]["httpGet"]["path"] = "/healthz"
        del self.container["startupProbe"]
        errors = self.errors()
        self.assertIn("Deployment/monitor-server: container monitor-server: needs a writable /tmp volume", errors[0])
        self.assertIn("Deployment/monitor-server: container monitor-server: startupProbe must GET /healthz", errors)
        self.assertIn("Deployment/monitor-server: container monitor-server: readinessProbe must GET /readyz", errors)

    def test_grace_period_must_exceed_pre_stop_and_shutdown(self):
        pod = self.deployment["spec"]["template"]["spec"]
        pod["terminationGracePeriodSeconds"] = 15  # 15 s == 5 s sleep + 10,000 ms
        self.assertEqual(
            self.errors(),
            [
                "Deployment/monitor-server: terminationGracePeriodSeconds (15s) must exceed preStop sleep (5s)"
                " + SHUTDOWN_GRACE_MS (10000ms)"
            ],
        )
        pod["terminationGracePeriodSeconds"] = 16
        self.assertEqual(self.errors(), [])

    def test_shutdown_grace_read_from_the_configmap(self):
        by_kind(self.docs, "ConfigMap")["data"]["SHUTDOWN_GRACE_MS"] = "30000"
        self.assertEqual(len(self.errors()), 1)

    def test_defaults_without_configmap_or_pre_stop(self):
        del self.container["lifecycle"]
        self.deployment["spec"]["template"]["spec"].pop("terminationGracePeriodSeconds")
        # 30 s (Kubernetes' default) against 10,000 ms (the service's default) and no sleep.
        self.assertEqual(validate.policy(self.deployment, {}), [])


class PromQLTest(unittest.TestCase):
    def test_valid_rules(self):
        rule = by_kind(rendering(), "PrometheusRule")
        self.assertEqual(validate.validate_promql(rule), [])

    def test_broken_expression_named_by_alert_or_record(self):
        rule = by_kind(rendering(), "PrometheusRule")
        rule["spec"]["groups"][0]["rules"] = [{"alert": "A", "expr": "sum(rate(x[5m])"}, {"record": "r", "expr": "up{"}]
        errors = validate.validate_promql(rule)
        self.assertEqual(len(errors), 2)
        self.assertTrue(errors[0].startswith("PrometheusRule/monitor-server: rule A: PromQL: "), errors[0])
        self.assertTrue(errors[1].startswith("PrometheusRule/monitor-server: rule r: PromQL: "), errors[1])

    def test_no_groups(self):
        self.assertEqual(validate.validate_promql({"kind": "PrometheusRule", "spec": {}}), [])


class FileErrorsTest(unittest.TestCase):
    """file_errors() and main() with the two validators that need kubernetes-validate and node stubbed."""

    def setUp(self):
        self.schema_calls, self.crd_calls = [], []
        self.saved = validate.validate_schemas, validate.validate_crds
        validate.validate_schemas = lambda o, versions: self.schema_calls.append((o["kind"], versions)) or []
        validate.validate_crds = lambda objects, node_tools: self.crd_calls.append([o["kind"] for o in objects]) or []

    def tearDown(self):
        validate.validate_schemas, validate.validate_crds = self.saved

    def test_routes_each_kind(self):
        self.assertEqual(validate.file_errors(rendering(), "/tools", ["1.25.0", "1.37.0"]), [])
        self.assertEqual(
            [kind for kind, _ in self.schema_calls], ["ConfigMap", "Secret", "Service", "Deployment", "CronJob", "Pod"]
        )
        self.assertEqual(self.schema_calls[0][1], ["1.25.0", "1.37.0"])
        self.assertEqual(self.crd_calls, [["PrometheusRule", "ServiceMonitor"]])

    def test_object_without_kind_is_cut_at_200_characters(self):
        errors = validate.file_errors([{"apiVersion": "v1", "data": "x" * 500}], "/tools", ["1.37.0"])
        self.assertEqual(len(errors), 1)
        self.assertTrue(errors[0].startswith("an object without apiVersion/kind: {'apiVersion': 'v1'"))
        self.assertEqual(len(errors[0]), len("an object without apiVersion/kind: ") + 200)

    def test_policy_errors_reported(self):
        docs = rendering()
        by_kind(docs, "Pod")["spec"]["automountServiceAccountToken"] = True
        self.assertEqual(
            validate.file_errors(docs, "/tools", ["1.37.0"]),
            ["Pod/monitor-server-test: automountServiceAccountToken must be false"],
        )

    def test_main_prints_per_file_and_totals(self):
        with tempfile.TemporaryDirectory() as work:
            good, bad = os.path.join(work, "good.yaml"), os.path.join(work, "bad.yaml")
            with open(good, "w") as f:
                yaml.safe_dump_all(rendering(), f)
            docs = rendering()
            by_kind(docs, "Pod")["spec"]["automountServiceAccountToken"] = True
            with open(bad, "w") as f:
                yaml.safe_dump_all(docs, f)
            status, out = quietly(validate.main, "/tools", ["1.25.0", "1.37.0"], [good, bad])
        self.assertEqual(status, 1)
        self.assertEqual(
            out.splitlines(),
            [
                f"{'good.yaml':<45}   8 objects  ok",
                f"{'bad.yaml':<45}   8 objects  1 error(s)",
                "ERROR bad.yaml: Pod/monitor-server-test: automountServiceAccountToken must be false",
                "16 objects, 1 error(s); Kubernetes 1.25.0 and 1.37.0",
            ],
        )

    def test_main_fails_without_objects(self):
        with tempfile.TemporaryDirectory() as work:
            empty = os.path.join(work, "empty.yaml")
            open(empty, "w").close()
            status, out = quietly(validate.main, "/tools", ["1.37.0"], [empty])
        self.assertEqual(status, 1)
        self.assertTrue(out.endswith("0 objects, 0 error(s); Kubernetes 1.37.0\n"))


if __name__ == "__main__":
    unittest.main()
