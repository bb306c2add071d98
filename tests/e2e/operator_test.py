#!/usr/bin/env python3
"""`kai operator` on a real kube-apiserver with the real kube-controller-manager (its garbage
collector and Deployment controller), run as its installed ServiceAccount (deploy/operator/,
RBAC on): KAI's install steps with the Config kai-config and the SchedulingShards.

- A Config deploys every component: each Deployment (the Config's images, replicas, node
  selector, flags), the admission webhooks with a CA the operator made, one scheduler Deployment
  per shard; the Config's conditions say Deployed, and Available False while no pod runs (no
  kubelet here).
- Editing kai-config changes the Deployments (a long-running operator follows within seconds);
  turning a component off deletes its Deployment.
- A second SchedulingShard gets its own scheduler Deployment and Lease name, owned by the Config,
  with the shard's conditions; deleting the shard removes it (the operator prunes it).
- Deleting kai-config removes what the operator made and nothing of the users' (a Queue, the
  namespace, the priority classes).
- FIPS mode: `kai operator --fips-mode` refuses to start where OpenSSL's FIPS provider is
  missing; with a provider named fips (the tests' stand-in, KAI_FAKE_FIPS) it talks TLS to the
  API server through it and passes --fips-mode to every component; a Config whose image is tagged
  -fips runs that component in FIPS mode.
- No call is refused (no 403 in the operator's log).

    python3 tests/e2e/operator_test.py [-v]         (KAI_BIN: the kai binary; default build/kai)

Skips when /opt/kube-test/bin/kube-apiserver or kube-controller-manager is not built.
"""

from __future__ import annotations

import base64
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kube_server  # noqa: E402
import scenario_loader as sl  # noqa: E402

REPO = kube_server.REPO_ROOT
KAI_BIN = pathlib.Path(os.environ.get("KAI_BIN", REPO / "build" / "kai"))
FAKE_FIPS = pathlib.Path(os.environ.get("KAI_FAKE_FIPS", REPO / "build" / "libkai_fake_fips.so"))
OPERATOR = REPO / "deploy" / "operator" / "operator.yaml"
NS = "kai-scheduler"
CONFIGS = "/apis/kai.scheduler/v1/configs"
SHARDS = "/apis/kai.scheduler/v1/schedulingshards"
DEPLOYMENTS = f"/apis/apps/v1/namespaces/{NS}/deployments"
FORBIDDEN = re.compile(r"\b403\b|Forbidden", re.I)

SERVER: kube_server.Server | None = None
CLIENT: sl.Client | None = None
TMP: tempfile.TemporaryDirectory | None = None
KUBECONFIG = ""
LOGS: list[str] = []


def setUpModule():
    global SERVER, CLIENT, TMP, KUBECONFIG
    kube_server.require_apiserver()
    kube_server.require_controller_manager()
    if not KAI_BIN.is_file():
        raise unittest.SkipTest(f"{KAI_BIN} not built")
    TMP = tempfile.TemporaryDirectory(prefix="kai-operator-e2e-")
    SERVER = kube_server.Server.start("--controller-manager")
    try:
        CLIENT = sl.Client(SERVER.kubeconfig)
        SERVER.kubectl("apply", "-f", str(REPO / "deploy" / "crds"))
        SERVER.kubectl("wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
        SERVER.kubectl("apply", "-f", str(OPERATOR))
        # A user's Queue, made before the webhooks exist (no kubelet runs `kai admission` here,
        # and the webhooks fail closed).
        CLIENT.post("/apis/scheduling.run.ai/v2/queues", {
            "apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "team"},
            "spec": {"resources": {"gpu": {"quota": 1, "limit": -1, "overQuotaWeight": 1},
                                   "cpu": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
                                   "memory": {"quota": -1, "limit": -1, "overQuotaWeight": 1}}}})
        KUBECONFIG = SERVER.token_kubeconfig(NS, "kai-operator", pathlib.Path(TMP.name) / "sa.kc")
    except BaseException:
        SERVER.stop()
        raise


def tearDownModule():
    kube_server.release(CLIENT, SERVER, TMP)


def once(expect_rc: int = 0, flags: list[str] | None = None,
         env: dict[str, str] | None = None) -> str:
    p = subprocess.run([str(KAI_BIN), "operator", "--once", "--kubeconfig", KUBECONFIG,
                        "--image", "registry.example/kai:e2e", *(flags or [])],
                       capture_output=True, text=True, timeout=120,
                       env={**os.environ, **(env or {})})
    LOGS.append(p.stderr)
    if p.returncode != expect_rc:
        raise AssertionError(f"kai operator --once: rc {p.returncode}, expected {expect_rc}\n"
                             f"{p.stderr[-4000:]}")
    return p.stderr


def deployment(name: str) -> dict | None:
    try:
        return CLIENT.get(f"{DEPLOYMENTS}/{name}")
    except sl.ApiError as e:
        if e.status == 404:
            return None
        raise


def managed_deployments() -> list[str]:
    got = CLIENT.get(f"{DEPLOYMENTS}?labelSelector=app.kubernetes.io/managed-by%3Dkai-operator")
    return sorted(d["metadata"]["name"] for d in got["items"])


def modules_dir(with_provider: bool) -> str:
    """A directory for OPENSSL_MODULES: empty, or with the stand-in provider as fips.so."""
    d = pathlib.Path(TMP.name) / ("fips-modules" if with_provider else "no-fips-modules")
    d.mkdir(exist_ok=True)
    if with_provider:
        shutil.copyfile(FAKE_FIPS, d / "fips.so")
    return str(d)


def args_of(d: dict) -> list[str]:
    return d["spec"]["template"]["spec"]["containers"][0]["args"]


def conditions(obj: dict) -> dict[str, dict]:
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions", [])}


def wait_for(what: str, fn, timeout: float = 60.0):
    return kube_server.wait_until(what, fn, timeout, errors=(OSError, sl.ApiError))


class Operator(unittest.TestCase):
    def test_a_config_deploys_every_component(self):
        CLIENT.post(SHARDS, {"apiVersion": "kai.scheduler/v1", "kind": "SchedulingShard",
                             "metadata": {"name": "default"}, "spec": {"partitionLabelValue": ""}})
        CLIENT.post(CONFIGS, {
            "apiVersion": "kai.scheduler/v1", "kind": "Config", "metadata": {"name": "kai-config"},
            "spec": {"global": {"nodeSelector": {"gpu-node": "true"}},
                     "binder": {"replicas": 2},
                     "admission": {"gpuSharing": True},
                     "scheduler": {"GOGC": 200}}})
        log = once()
        self.assertIn("not applied: spec.scheduler.GOGC", log)
        names = {d["metadata"]["name"] for d in CLIENT.get(DEPLOYMENTS)["items"]}
        for want in ("kai-binder", "kai-podgrouper", "kai-controllers", "kai-admission",
                     "kai-scale-adjuster", "kai-scheduler-default"):
            self.assertIn(want, names)
        binder = deployment("kai-binder")
        self.assertEqual(binder["spec"]["replicas"], 2)
        pod = binder["spec"]["template"]["spec"]
        self.assertEqual(pod["nodeSelector"], {"gpu-node": "true"})
        self.assertEqual(pod["containers"][0]["image"], "registry.example/kai:e2e")
        self.assertEqual(binder["metadata"]["ownerReferences"][0]["kind"], "Config")
        self.assertIn("--gpu-sharing-enabled=true", args_of(deployment("kai-admission")))
        sched = deployment("kai-scheduler-default")
        self.assertIn("--shard=default", args_of(sched))
        self.assertIn("--leader-elect-id=kai-scheduler", args_of(sched))
        # The webhooks trust the CA of the Secret the operator made.
        secret = CLIENT.get(f"/api/v1/namespaces/{NS}/secrets/kai-admission-tls")
        hooks = CLIENT.get("/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/"
                           "kai-admission")
        self.assertEqual(hooks["webhooks"][0]["clientConfig"]["caBundle"], secret["data"]["ca.crt"])
        self.assertIn(b"BEGIN CERTIFICATE", base64.b64decode(secret["data"]["tls.crt"]))
        cond = conditions(CLIENT.get(f"{CONFIGS}/kai-config"))
        self.assertEqual(cond["Deployed"]["status"], "True", cond)
        self.assertIn("GOGC", cond["Deployed"]["message"])
        self.assertEqual(cond["Available"]["status"], "False", cond)  # no kubelet runs the pods
        self.assertIn("kai-binder (0/2 available)", cond["Available"]["message"])
        shard = conditions(CLIENT.get(f"{SHARDS}/default"))
        self.assertEqual(shard["Deployed"]["status"], "True", shard)
        # A second pass changes nothing: the certificate is kept.
        once()
        again = CLIENT.get(f"/api/v1/namespaces/{NS}/secrets/kai-admission-tls")
        self.assertEqual(again["data"]["tls.crt"], secret["data"]["tls.crt"])

    def test_b_editing_the_config_changes_the_deployments(self):
        proc = subprocess.Popen([str(KAI_BIN), "operator", "--kubeconfig", KUBECONFIG,
                                 "--image", "registry.example/kai:e2e", "--resync-period", "1s"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            CLIENT.merge_patch(f"{CONFIGS}/kai-config",
                               {"spec": {"binder": {"replicas": 3},
                                         "podGrouper": {"service": {"enabled": False}}}})
            wait_for("kai-binder at 3 replicas",
                     lambda: (d := deployment("kai-binder")) and d["spec"]["replicas"] == 3, 30)
            wait_for("kai-podgrouper deleted", lambda: deployment("kai-podgrouper") is None, 30)
        finally:
            proc.terminate()
            _, err = proc.communicate(timeout=30)
            LOGS.append(err)
        self.assertEqual(proc.returncode, 0, err[-3000:])

    def test_c_a_second_shard_gets_its_own_scheduler(self):
        CLIENT.post(SHARDS, {"apiVersion": "kai.scheduler/v1", "kind": "SchedulingShard",
                             "metadata": {"name": "pool-a"}, "spec": {"partitionLabelValue": "a"}})
        once()
        d = deployment("kai-scheduler-pool-a")
        self.assertIsNotNone(d)
        self.assertIn("--shard=pool-a", args_of(d))
        self.assertIn("--leader-elect-id=kai-scheduler-a", args_of(d))
        # Owned by the Config (helm uninstall keeps shards, not their schedulers).
        self.assertEqual(d["metadata"]["ownerReferences"][0]["kind"], "Config")
        self.assertEqual(d["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"],
                         "kai-scheduler-pool-a")
        self.assertEqual(conditions(CLIENT.get(f"{SHARDS}/pool-a"))["Deployed"]["status"], "True")
        CLIENT.delete(f"{SHARDS}/pool-a")
        once()  # the operator prunes the Deployment of a shard that is gone
        wait_for("the shard's scheduler pruned",
                 lambda: deployment("kai-scheduler-pool-a") is None, 60)
        self.assertIsNotNone(deployment("kai-scheduler-default"))

    def test_d_deleting_the_config_keeps_what_users_made(self):
        CLIENT.delete(f"{CONFIGS}/kai-config")
        wait_for("kai-binder collected", lambda: deployment("kai-binder") is None, 60)
        wait_for("the binder's ClusterRole collected", lambda: not any(
            r["metadata"]["name"] == "kai-binder" for r in CLIENT.get(
                "/apis/rbac.authorization.k8s.io/v1/clusterroles")["items"]), 60)
        CLIENT.get("/apis/scheduling.run.ai/v2/queues/team")
        CLIENT.get(f"/api/v1/namespaces/{NS}")
        CLIENT.get("/apis/scheduling.k8s.io/v1/priorityclasses/train")
        self.assertIsNotNone(deployment("kai-operator"))  # the chart's, not the Config's

    def test_e_fips_mode(self):
        # Without OpenSSL's FIPS provider (Debian does not package it) `--fips-mode` refuses to
        # start: one line, exit status 1, nothing written.
        wait_for("the Config's Deployments collected", lambda: not managed_deployments(), 60)
        CLIENT.post(CONFIGS, {
            "apiVersion": "kai.scheduler/v1", "kind": "Config", "metadata": {"name": "kai-config"},
            "spec": {"binder": {"service": {"image": {"tag": "e2e-fips"}}}}})
        err = once(1, ["--fips-mode"], {"OPENSSL_MODULES": modules_dir(False)})
        self.assertTrue(err.startswith("kai: FIPS mode: OpenSSL's FIPS provider is not available"),
                        err)
        self.assertEqual(managed_deployments(), [])
        # A component whose image is tagged -fips (KAI's chart with global.fipsMode "on") runs
        # in FIPS mode; the others do not.
        once()
        self.assertIn("--fips-mode", args_of(deployment("kai-binder")))
        self.assertNotIn("--fips-mode", args_of(deployment("kai-podgrouper")))
        # With a provider named fips (tests/fips' stand-in: OpenSSL's default provider's
        # algorithms as fips=yes) the operator talks TLS 1.2+/AES-GCM to the API server through
        # it, and runs every component in FIPS mode.
        if not FAKE_FIPS.is_file():
            self.skipTest(f"{FAKE_FIPS} not built (the stand-in FIPS provider)")
        err = once(0, ["--fips-mode"], {"OPENSSL_MODULES": modules_dir(True)})
        self.assertIn("FIPS mode: TLS through OpenSSL's FIPS provider only", err)
        for name in managed_deployments():
            self.assertIn("--fips-mode", args_of(deployment(name)), name)
        CLIENT.delete(f"{CONFIGS}/kai-config")

    def test_z_no_call_was_refused(self):
        for log in LOGS:
            self.assertIsNone(FORBIDDEN.search(log), log[-3000:])


if __name__ == "__main__":
    unittest.main()
