#!/usr/bin/env python3
"""DRA end to end on a real kube-apiserver: `kai run` (scheduler, binder, pod grouper,
controllers) with resource.k8s.io/v1 served by stand-in CRDs (fixtures/dra-v1.crds.yaml; the 1.28
test server has no such API; its DynamicResourceAllocation gate is on so that it keeps a pod's
spec.resourceClaims, written in its 1.28 form, and status.resourceClaimStatuses).

DRA-backed extended resources: a DeviceClass maps example.com/nic to its devices; a node that does
not list example.com/nic has three NICs in its ResourceSlice. A pod asking two NICs is bound: its
BindRequest carries the allocation, the binder created its ResourceClaim (annotated, owned by the
pod, protected by the finalizer, allocated, reserved for it); a second pod asking two more stays
pending, naming the resource, while the scheduler, watching the claim the binder made, keeps its
devices taken.

GB200 ComputeDomains: KAI's docs/dra/gpu-imex-pod.yaml (a ComputeDomain, stand-in CRD
fixtures/computedomain.crd.yaml, and the IMEX pod), with the test playing NVIDIA's DRA driver (the
domain's claim template with its ComputeDomainChannelConfig, the channel DeviceClass, the IMEX
channels published on gb200-0) and the resource claim controller (the pod's claim). The pod is
bound on gb200-0, not on gb200-1 which GPU bin-packing alone would pick; its BindRequest and then
its claim's status.allocation carry the channel and, in devices.config, the domain's config.

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
from e2e_objects import gpu_node, queue  # noqa: E402
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
    SERVER = kube_server.Server.start("--", "--feature-gates=DynamicResourceAllocation=true")
    try:
        CLIENT = sl.Client(SERVER.kubeconfig)
        SERVER.kubectl("apply", "-f", str(REPO / "deploy" / "crds"))
        SERVER.kubectl("apply", "-f", str(HERE / "fixtures" / "dra-v1.crds.yaml"))
        SERVER.kubectl("apply", "-f", str(HERE / "fixtures" / "computedomain.crd.yaml"))
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


IMEX_NS = "gb200"
DOMAIN_UID_KEY = "resource.nvidia.com/computeDomain"
CHANNEL_CLASS = "compute-domain-default-channel.nvidia.com"
CD_DRIVER = "compute-domain.nvidia.com"


def imex_path(kind: str, name: str = "") -> str:
    group = {"resourceclaims": "resource.k8s.io/v1", "resourceclaimtemplates": "resource.k8s.io/v1",
             "computedomains": "resource.nvidia.com/v1beta1", "pods": None}[kind]
    base = f"/api/v1/namespaces/{IMEX_NS}/{kind}" if group is None else \
        f"/apis/{group}/namespaces/{IMEX_NS}/{kind}"
    return f"{base}/{name}" if name else base


def compute_domain() -> dict:
    """The ComputeDomain of KAI's docs/dra/gpu-imex-pod.yaml."""
    return {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomain",
            "metadata": {"name": "imex-channel-injection", "namespace": IMEX_NS},
            "spec": {"numNodes": 1,
                     "channel": {"resourceClaimTemplate": {"name": "imex-channel-0"}}}}


def imex_pod() -> dict:
    """The pod of KAI's docs/dra/gpu-imex-pod.yaml, its claim reference in the 1.28 form
    (`source`), gated until the test, playing the resource claim controller, has made its claim."""
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "gpu-imex-pod", "namespace": IMEX_NS,
                         "labels": {"kai.scheduler/queue": "default-queue"}},
            "spec": {"schedulerName": "kai-scheduler",
                     "schedulingGates": [{"name": "e2e.kai/claim-controller"}],
                     "containers": [{"name": "main", "image": "ubuntu",
                                     "command": ["bash", "-c"],
                                     "args": ["nvidia-smi; ls -la /dev/nvidia-caps-imex-channels; "
                                              "trap 'exit 0' TERM; sleep 9000 & wait"],
                                     "resources": {"limits": {"nvidia.com/gpu": "1"},
                                                   "claims": [{"name": "imex-channel-0"}]}}],
                     "resourceClaims": [{"name": "imex-channel-0", "source": {
                         "resourceClaimTemplateName": "imex-channel-0"}}]}}


def domain_config(uid: str) -> dict:
    """The claim config NVIDIA's ComputeDomain controller writes into the domain's template."""
    return {"requests": ["channel"], "opaque": {"driver": CD_DRIVER, "parameters": {
        "apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomainChannelConfig",
        "domainID": uid}}}


def play_the_driver(cd: dict) -> None:
    """What NVIDIA's DRA driver makes of the domain: the claim template (owned by the domain), the
    channel DeviceClass, and the IMEX channels its kubelet plugin publishes on gb200-0, the node
    of the domain."""
    uid = cd["metadata"]["uid"]
    CLIENT.post(imex_path("resourceclaimtemplates"), {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "imex-channel-0", "namespace": IMEX_NS,
                     "labels": {DOMAIN_UID_KEY: uid},
                     "ownerReferences": [{"apiVersion": "resource.nvidia.com/v1beta1",
                                          "kind": "ComputeDomain", "name": cd["metadata"]["name"],
                                          "uid": uid, "controller": True}]},
        "spec": {"spec": {"devices": {
            "requests": [{"name": "channel", "exactly": {"deviceClassName": CHANNEL_CLASS}}],
            "config": [domain_config(uid)]}}}})
    CLIENT.post("/apis/resource.k8s.io/v1/deviceclasses", {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
        "metadata": {"name": CHANNEL_CLASS},
        "spec": {"selectors": [{"cel": {"expression":
            "device.driver == 'compute-domain.nvidia.com' && "
            "device.attributes['compute-domain.nvidia.com'].type == 'channel' && "
            "device.attributes['compute-domain.nvidia.com'].id == 0"}}]}})
    CLIENT.post("/apis/resource.k8s.io/v1/resourceslices", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": "gb200-0-compute-domain.nvidia.com-7xq2m"},
        "spec": {"driver": CD_DRIVER, "nodeName": "gb200-0",
                 "pool": {"name": "gb200-0", "generation": 1, "resourceSliceCount": 1},
                 "devices": [{"name": f"channel-{i}", "attributes": {
                     "type": {"string": "channel"}, "id": {"int": i}}} for i in range(3)]
                 + [{"name": "daemon-0", "attributes": {"type": {"string": "daemon"},
                                                         "id": {"int": 0}}}]}})


def play_the_claim_controller(pod: dict) -> str:
    """The resource claim controller's part: the pod's claim from the template (owned by the pod,
    annotated with its claim name), named in the pod's status; then the gate goes."""
    template = CLIENT.get(imex_path("resourceclaimtemplates", "imex-channel-0"))
    claim = CLIENT.post(imex_path("resourceclaims"), {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"generateName": "gpu-imex-pod-imex-channel-0-", "namespace": IMEX_NS,
                     "annotations": {"resource.kubernetes.io/pod-claim-name": "imex-channel-0"},
                     "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "gpu-imex-pod",
                                          "uid": pod["metadata"]["uid"], "controller": True,
                                          "blockOwnerDeletion": True}]},
        "spec": template["spec"]["spec"]})
    name = claim["metadata"]["name"]
    CLIENT.merge_patch(imex_path("pods", "gpu-imex-pod") + "/status", {"status": {
        "resourceClaimStatuses": [{"name": "imex-channel-0", "resourceClaimName": name}]}})
    CLIENT.merge_patch(imex_path("pods", "gpu-imex-pod"), {"spec": {"schedulingGates": None}})
    return name


class ComputeDomainImex(unittest.TestCase):
    """KAI's gpu-imex-pod.yaml: the IMEX pod binds on the domain's node with the domain's config."""

    @classmethod
    def setUpClass(cls):
        SERVER.kubectl("create", "namespace", IMEX_NS)
        for n in ("gb200-0", "gb200-1"):
            CLIENT.post("/api/v1/nodes", gpu_node(n, 4))
        # Two GPUs in use on gb200-1: GPU bin-packing alone would put the IMEX pod there.
        CLIENT.post(imex_path("pods"), {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "busy", "namespace": IMEX_NS,
                         "labels": {"kai.scheduler/queue": "default-queue"}},
            "spec": {"schedulerName": "kai-scheduler", "nodeName": "gb200-1",
                     "containers": [{"name": "main", "image": "ubuntu",
                                     "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}})
        cls.domain = CLIENT.post(imex_path("computedomains"), compute_domain())
        play_the_driver(cls.domain)
        pod = CLIENT.post(imex_path("pods"), imex_pod())
        cls.claim = play_the_claim_controller(pod)

    def bound_pod(self) -> dict:
        def bound():
            p = CLIENT.get(imex_path("pods", "gpu-imex-pod"))
            return p if p["spec"].get("nodeName") else None
        return wait_for("gpu-imex-pod bound", bound, 120)

    def expected_allocation(self) -> dict:
        return {"devices": {
            "results": [{"request": "channel", "driver": CD_DRIVER, "pool": "gb200-0",
                         "device": "channel-0"}],
            "config": [dict(source="FromClaim", **domain_config(self.domain["metadata"]["uid"]))]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["gb200-0"]}]}]}}

    def test_1_the_imex_pod_is_bound_on_a_node_of_its_domain(self):
        self.assertEqual(self.bound_pod()["spec"]["nodeName"], "gb200-0")

    def test_2_its_bind_request_carries_the_channel_and_the_domain_config(self):
        self.bound_pod()
        brs = CLIENT.get(f"/apis/scheduling.run.ai/v1alpha2/namespaces/{IMEX_NS}/bindrequests")
        spec = [b["spec"] for b in brs["items"] if b["spec"]["podName"] == "gpu-imex-pod"][0]
        self.assertEqual(spec["selectedNode"], "gb200-0")
        self.assertEqual(spec["resourceClaimAllocations"],
                         [{"name": "imex-channel-0", "allocation": self.expected_allocation()}])

    def test_3_the_claim_is_allocated_with_the_config_and_reserved_for_the_pod(self):
        pod = self.bound_pod()

        def allocated():
            c = CLIENT.get(imex_path("resourceclaims", self.claim))
            return c if c.get("status", {}).get("allocation") else None
        claim = wait_for("claim allocated", allocated, 60)
        self.assertEqual(claim["status"]["allocation"], self.expected_allocation())
        config = claim["status"]["allocation"]["devices"]["config"][0]
        self.assertEqual(config["opaque"]["parameters"]["domainID"], self.domain["metadata"]["uid"])
        self.assertEqual(claim["status"]["reservedFor"],
                         [{"resource": "pods", "name": "gpu-imex-pod",
                           "uid": pod["metadata"]["uid"]}])


if __name__ == "__main__":
    unittest.main(verbosity=2)
