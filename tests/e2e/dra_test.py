#!/usr/bin/env python3
"""DRA-backed extended resources end to end on a real kube-apiserver: `kai run` (scheduler,
binder, pod grouper, controllers) with resource.k8s.io/v1 served by stand-in CRDs
(fixtures/dra-v1.crds.yaml; the 1.28 test server has no such API). A DeviceClass maps
example.com/nic to its devices; a node that does not list example.com/nic has three NICs in its
ResourceSlice. A pod asking two NICs is bound: its BindRequest carries the allocation, the
binder created its ResourceClaim (annotated, owned by the pod, protected by the finalizer,
allocated, reserved for it); a second pod asking two more stays pending, naming the resource,
while the scheduler, watching the claim the binder made, keeps its devices taken.

    python3 tests/e2e/dra_test.py        (KAI_BIN: the kai binary; default build/kai)
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kube_server  # noqa: E402
from e2e_objects import queue  # noqa: E402
import scenario_loader as sl  # noqa: E402

REPO = kube_server.REPO_ROOT
HERE = pathlib.Path(__file__).resolve().parent
KAI_BIN = pathlib.Path(os.environ.get("KAI_BIN", REPO / "build" / "kai"))
NS = "ml"
CLAIMS = f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaims"

SERVER: kube_server.Server | None = None
CLIENT: sl.Client | None = None
TMP: tempfile.TemporaryDirectory | None = None
PROC: subprocess.Popen | None = None
LOG: pathlib.Path | None = None


def wait_for(what: str, fn, timeout: float = 60.0):
    return kube_server.wait_until(what, fn, timeout, (OSError, sl.ApiError), log=LOG)


def node(name: str) -> dict:
    alloc = {"cpu": "16", "memory": "64Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {"capacity": alloc, "allocatable": alloc,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def nic_pod(name: str, nics: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "labels": {"kai.scheduler/queue": "team"}},
            "spec": {"schedulerName": "kai-scheduler", "restartPolicy": "Never",
                     "containers": [{"name": "main", "image": "x", "resources": {
                         "requests": {"cpu": "1", "memory": "1Gi", "example.com/nic": nics},
                         "limits": {"example.com/nic": nics}}}]}}


def setUpModule():
    global SERVER, CLIENT, TMP, PROC, LOG
    kube_server.require_apiserver()
    if not KAI_BIN.is_file():
        raise unittest.SkipTest(f"{KAI_BIN} not built")
    TMP = tempfile.TemporaryDirectory(prefix="kai-dra-e2e-")
    SERVER = kube_server.Server.start()
    try:
        CLIENT = sl.Client(SERVER.kubeconfig)
        SERVER.kubectl("apply", "-f", str(REPO / "deploy" / "crds"))
        SERVER.kubectl("apply", "-f", str(HERE / "fixtures" / "dra-v1.crds.yaml"))
        SERVER.kubectl("wait", "--for=condition=Established", "--timeout=60s", "crd", "--all")
        SERVER.kubectl("apply", "-f", str(REPO / "deploy" / "install" / "priorityclasses.yaml"))
        SERVER.kubectl("create", "namespace", "kai-scheduler")
        SERVER.kubectl("create", "namespace", NS)
        CLIENT.post("/api/v1/nodes", node("nic-node"))
        CLIENT.post("/apis/resource.k8s.io/v1/deviceclasses", {
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": "nic.example.com"},
            "spec": {"selectors": [{"cel": {"expression": 'device.driver == "nic.example.com"'}}],
                     "extendedResourceName": "example.com/nic"}})
        CLIENT.post("/apis/resource.k8s.io/v1/resourceslices", {
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": "nic-node-nics"},
            "spec": {"driver": "nic.example.com", "pool": {"name": "nic-node"},
                     "nodeName": "nic-node",
                     "devices": [{"name": "nic-0"}, {"name": "nic-1"}, {"name": "nic-2"}]}})
        CLIENT.post("/apis/scheduling.run.ai/v2/queues", queue("team", None, 0))
        LOG = pathlib.Path(TMP.name) / "run.log"
        with LOG.open("w") as log:
            PROC = subprocess.Popen(
                [str(KAI_BIN), "run", "--kubeconfig", SERVER.kubeconfig,
                 "--components", "scheduler,binder,podgrouper,controllers", "--shard", "default",
                 "--create-defaults"],
                stdout=subprocess.DEVNULL, stderr=log)
        CLIENT.post(f"/api/v1/namespaces/{NS}/pods", nic_pod("first", "2"))
    except BaseException:
        tearDownModule()
        raise


def tearDownModule():
    kube_server.stop_process(PROC)
    if os.environ.get("KAI_E2E_VERBOSE") and LOG is not None and LOG.exists():
        sys.stderr.write(f"--- kai run\n{LOG.read_text()[-5000:]}")
    kube_server.release(CLIENT, SERVER, TMP)


def pod(name: str) -> dict:
    return CLIENT.get(f"/api/v1/namespaces/{NS}/pods/{name}")


class ExtendedResources(unittest.TestCase):
    def test_1_the_pod_is_bound_with_a_claim_the_binder_made(self):
        first = wait_for("first bound", lambda: pod("first")["spec"].get("nodeName") and pod("first"),
                         120)
        self.assertEqual(first["spec"]["nodeName"], "nic-node")
        br = CLIENT.get(f"/apis/scheduling.run.ai/v1alpha2/namespaces/{NS}/bindrequests")["items"]
        spec = [b["spec"] for b in br if b["spec"]["podName"] == "first"][0]
        ext = spec["extendedResourceClaimAllocation"]
        self.assertEqual(ext["deviceRequests"], [{"name": "container-0-request-1", "exactly": {
            "deviceClassName": "nic.example.com", "allocationMode": "ExactCount", "count": 2}}])
        self.assertEqual(ext["containerMappings"], [{"containerName": "main",
                                                     "resourceName": "example.com/nic",
                                                     "requestName": "container-0-request-1"}])
        claims = CLIENT.get(CLAIMS)["items"]
        self.assertEqual(len(claims), 1, claims)
        c = claims[0]
        md = c["metadata"]
        self.assertTrue(md["name"].startswith("first-extended-resources-"), md["name"])
        self.assertEqual(md["annotations"], {"resource.kubernetes.io/extended-resource-claim": "true"})
        self.assertEqual(md["finalizers"], ["resource.kubernetes.io/delete-protection"])
        owner = md["ownerReferences"][0]
        self.assertEqual((owner["kind"], owner["name"], owner["uid"], owner["controller"]),
                         ("Pod", "first", first["metadata"]["uid"], True))
        self.assertEqual(c["spec"]["devices"]["requests"], ext["deviceRequests"])
        results = c["status"]["allocation"]["devices"]["results"]
        self.assertEqual(sorted(r["device"] for r in results), ["nic-0", "nic-1"], results)
        self.assertEqual({(r["driver"], r["pool"]) for r in results},
                         {("nic.example.com", "nic-node")})
        self.assertEqual(c["status"]["reservedFor"],
                         [{"resource": "pods", "name": "first", "uid": first["metadata"]["uid"]}])

    def test_2_a_second_pod_finds_the_devices_the_claim_holds(self):
        wait_for("first bound", lambda: pod("first")["spec"].get("nodeName"), 120)
        CLIENT.post(f"/api/v1/namespaces/{NS}/pods", nic_pod("second", "2"))

        def unschedulable():
            conds = pod("second").get("status", {}).get("conditions", [])
            return [c for c in conds if c["type"] == "PodScheduled" and c["status"] == "False"]
        cond = wait_for("second unschedulable", unschedulable, 60)[0]
        self.assertIn("extended resource example.com/nic: device class nic.example.com matches "
                      "no free device", cond["message"])
        time.sleep(3)  # more cycles, with the binder's claim watched: still one claim, one pod bound
        self.assertFalse(pod("second")["spec"].get("nodeName"))
        self.assertEqual(len(CLIENT.get(CLAIMS)["items"]), 1)

    def test_3_no_call_was_refused_and_the_process_runs(self):
        text = LOG.read_text()
        self.assertIsNone(re.search(r"\b403\b|forbidden", text), text[-3000:])
        self.assertNotIn("resourceclaims not served", text)
        self.assertIsNone(PROC.poll(), f"kai run exited:\n{text[-3000:]}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
