#!/usr/bin/env python3
"""Batch Jobs whose pods kai evicts, on a real kube-apiserver WITH kube-controller-manager (its Job
controller): `kai run` (scheduler, binder, pod grouper, controllers) binds a Job's pod, a pod of
higher priority in the same queue preempts it, and this test plays the kubelet (Running, then
Failed and deleted with grace 0 once the pod is being deleted).

- By default kai sets the DisruptionTarget condition (reason PreemptionByScheduler, a message
  naming the action and the preemptor) before the delete, so a Job whose podFailurePolicy ignores
  DisruptionTarget, with backoffLimit 0, does not fail: its controller creates a replacement pod.
- With `--update-pod-eviction-condition=false` (KAI's default) the same Job fails.

    python3 tests/e2e/jobs_test.py        (KAI_BIN: the kai binary; default build/kai)
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kube_server  # noqa: E402
from e2e_objects import gpu_node, queue  # noqa: E402
import scenario_loader as sl  # noqa: E402

REPO = kube_server.REPO_ROOT
KAI_BIN = pathlib.Path(os.environ.get("KAI_BIN", REPO / "build" / "kai"))

SERVER: kube_server.Server | None = None
CLIENT: sl.Client | None = None
TMP: tempfile.TemporaryDirectory | None = None

# How long the Job controller may take to replace an ignored pod: Kubernetes 1.28 still counts it
# in the Job's pod-failure backoff record, so the first replacement waits out the 10 s base
# delay (from the pod's finish time); the rest is slack for a loaded machine.
REPLACEMENT_S = 25


def setUpModule():
    global SERVER, CLIENT, TMP
    kube_server.require_controller_manager()
    if not KAI_BIN.is_file():
        raise unittest.SkipTest(f"{KAI_BIN} not built")
    TMP = tempfile.TemporaryDirectory(prefix="kai-jobs-e2e-")
    SERVER = kube_server.Server.start("--controller-manager")
    try:
        CLIENT = sl.Client(SERVER.kubeconfig)
        SERVER.install_kai_basics()
    except BaseException:
        tearDownModule()
        raise


def tearDownModule():
    kube_server.release(CLIENT, SERVER, TMP)


def wait_for(what: str, fn, timeout: float = 60.0, log: pathlib.Path | None = None):
    return kube_server.wait_until(what, fn, timeout, (OSError, sl.ApiError), log=log)


class FakeKubelet(kube_server.Poller):
    """Plays the kubelet for the pods bound in one namespace: a bound pod runs; a pod being deleted
    is recorded as the kubelet last saw it, turns Failed, and is deleted with grace 0 (its
    finalizers, the Job controller's, then keep it until that controller has counted it)."""

    def __init__(self, kubeconfig: str, ns: str):
        super().__init__(0.1, (sl.ApiError,))
        self.client = sl.Client(kubeconfig)
        self.ns = ns
        self.deleting: dict[str, dict] = {}  # uid -> the pod when its deletion was first seen
        self.finished_at: dict[str, float] = {}  # uid -> when it was made Failed and deleted
        self.lock = threading.Lock()

    def step(self):
        base = f"/api/v1/namespaces/{self.ns}/pods"
        for p in self.client.get(base).get("items") or []:
            md, phase = p["metadata"], (p.get("status") or {}).get("phase")
            if not p["spec"].get("nodeName"):
                continue
            if not md.get("deletionTimestamp"):
                if phase == "Pending":
                    self.client.merge_patch(f"{base}/{md['name']}/status",
                                            {"status": {"phase": "Running"}})
                continue
            with self.lock:
                first = md["uid"] not in self.deleting
                if first:
                    self.deleting[md["uid"]] = p
            if phase not in ("Failed", "Succeeded"):
                self.client.merge_patch(f"{base}/{md['name']}/status",
                                        {"status": {"phase": "Failed"}})
            if first:
                self.client.delete(f"{base}/{md['name']}", query={"gracePeriodSeconds": "0"})
                with self.lock:
                    self.finished_at[md["uid"]] = time.monotonic()

    def seen_deleting(self, uid: str) -> dict | None:
        with self.lock:
            return self.deleting.get(uid)

    def stop(self):
        self.stop_polling()
        self.client.close()


def job(ns: str, name: str, q: str, node: str) -> dict:
    """A one-pod batch Job for kai-scheduler whose podFailurePolicy ignores disruptions and which
    fails at its first counted failure (backoffLimit 0)."""
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": ns},
            "spec": {"backoffLimit": 0, "parallelism": 1, "completions": 1,
                     "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [
                         {"type": "DisruptionTarget"}]}]},
                     "template": {
                         "metadata": {"labels": {"kai.scheduler/queue": q}},
                         "spec": {"schedulerName": "kai-scheduler", "priorityClassName": "train",
                                  "restartPolicy": "Never",
                                  "nodeSelector": {"kubernetes.io/hostname": node},
                                  "containers": [{"name": "train", "image": "x", "resources": {
                                      "requests": {"cpu": "1", "memory": "1Gi"},
                                      "limits": {"nvidia.com/gpu": "1"}}}]}}}}


def urgent_pod(ns: str, name: str, q: str, node: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": {"kai.scheduler/queue": q}},
            "spec": {"schedulerName": "kai-scheduler", "priorityClassName": "inference",
                     "nodeSelector": {"kubernetes.io/hostname": node},
                     "containers": [{"name": "serve", "image": "x", "resources": {
                         "requests": {"cpu": "1", "memory": "1Gi"},
                         "limits": {"nvidia.com/gpu": "1"}}}]}}


def labelled_node(name: str) -> dict:
    n = gpu_node(name, gpus=1)
    n["metadata"]["labels"] = {"kubernetes.io/hostname": name}
    return n


class JobCase(unittest.TestCase):
    """One namespace, queue and one-GPU node per case; `kai run` with `flags`."""

    NS = ""
    FLAGS: list[str] = []

    def setUp(self):
        self.node, self.q = f"{self.NS}-node", f"{self.NS}-q"
        SERVER.kubectl("create", "namespace", self.NS)
        CLIENT.post("/api/v1/nodes", labelled_node(self.node))
        CLIENT.post("/apis/scheduling.run.ai/v2/queues", queue(self.q, None, 1))
        self.log = pathlib.Path(TMP.name) / f"{self.NS}.log"
        with self.log.open("w") as log:
            self.proc = subprocess.Popen(
                [str(KAI_BIN), "run", "--kubeconfig", SERVER.kubeconfig, "--components",
                 "scheduler,binder,podgrouper,controllers", "--shard", "default",
                 "--create-defaults", *self.FLAGS],
                stdout=subprocess.DEVNULL, stderr=log)
        self.kubelet = FakeKubelet(SERVER.kubeconfig, self.NS)
        self.kubelet.start()

    def tearDown(self):
        self.kubelet.stop()
        kube_server.stop_process(self.proc)
        if os.environ.get("KAI_E2E_VERBOSE"):
            sys.stderr.write(f"--- kai run ({self.NS})\n{self.log.read_text()[-5000:]}")

    def pods_of_job(self, name: str) -> list[dict]:
        pods = CLIENT.get(f"/api/v1/namespaces/{self.NS}/pods",
                          query={"labelSelector": f"job-name={name}"}).get("items") or []
        return pods

    def job_condition(self, name: str, kind: str) -> dict | None:
        j = CLIENT.get(f"/apis/batch/v1/namespaces/{self.NS}/jobs/{name}")
        for c in (j.get("status") or {}).get("conditions") or []:
            if c["type"] == kind and c["status"] == "True":
                return c
        return None

    def evict_the_jobs_pod(self) -> tuple[dict, dict]:
        """Runs the Job's pod, then makes kai preempt it: (the pod as first bound, as the kubelet
        saw it being deleted)."""
        CLIENT.post(f"/apis/batch/v1/namespaces/{self.NS}/jobs",
                    job(self.NS, "train", self.q, self.node))
        first = wait_for("the Job's pod bound and running", lambda: next(
            (p for p in self.pods_of_job("train") if p["spec"].get("nodeName") and
             (p.get("status") or {}).get("phase") == "Running"), None), 90, self.log)
        CLIENT.post(f"/api/v1/namespaces/{self.NS}/pods",
                    urgent_pod(self.NS, "urgent", self.q, self.node))
        uid = first["metadata"]["uid"]
        seen = wait_for("the Job's pod preempted", lambda: self.kubelet.seen_deleting(uid), 90,
                        self.log)
        return first, seen


class DisruptionTargetByDefault(JobCase):
    NS = "jobs-default"

    def test_an_ignored_eviction_is_replaced_and_the_job_goes_on(self):
        first, seen = self.evict_the_jobs_pod()
        conds = {c["type"]: c for c in (seen.get("status") or {}).get("conditions") or []}
        self.assertIn("DisruptionTarget", conds, f"conditions: {list(conds)}")
        c = conds["DisruptionTarget"]
        self.assertEqual((c["status"], c["reason"]), ("True", "PreemptionByScheduler"))
        # The action and the preemptor (its PodGroup, named after the pod by the pod grouper).
        self.assertTrue(c["message"].startswith(f"preempt for {self.NS}/"), c["message"])
        self.assertIn("urgent", c["message"].split("\n")[0])

        uid = first["metadata"]["uid"]
        finished = wait_for("the kubelet done", lambda: self.kubelet.finished_at.get(uid), 30)
        replacement = wait_for("a replacement pod", lambda: next(
            (p for p in self.pods_of_job("train") if p["metadata"]["uid"] != uid), None),
            REPLACEMENT_S, self.log)
        delay = time.monotonic() - finished
        sys.stderr.write(f"replacement pod {replacement['metadata']['name']} created "
                         f"{delay:.1f}s after the evicted pod was deleted\n")
        self.assertIsNone(self.job_condition("train", "Failed"), "the Job failed")
        j = CLIENT.get(f"/apis/batch/v1/namespaces/{self.NS}/jobs/train")
        self.assertEqual((j.get("status") or {}).get("failed", 0), 0, j.get("status"))
        self.assertIsNone(self.proc.poll(), f"kai run exited:\n{self.log.read_text()[-3000:]}")


class WithoutTheCondition(JobCase):
    """KAI's default: the same eviction counts as the Job's failure."""

    NS = "jobs-off"
    FLAGS = ["--update-pod-eviction-condition=false"]

    def test_the_job_fails(self):
        first, seen = self.evict_the_jobs_pod()
        conds = [c["type"] for c in (seen.get("status") or {}).get("conditions") or []]
        self.assertNotIn("DisruptionTarget", conds)
        failed = wait_for("the Job failed", lambda: self.job_condition("train", "Failed"), 60,
                          self.log)
        self.assertEqual(failed["reason"], "BackoffLimitExceeded", failed)
        uid = first["metadata"]["uid"]
        self.assertEqual([p for p in self.pods_of_job("train") if p["metadata"]["uid"] != uid], [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
