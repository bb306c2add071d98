#!/usr/bin/env python3
"""`kai binder` on a real kube-apiserver: BindRequests become bound pods.

    python3 tests/e2e/binder_test.py [-v]
    KAI_BIN=/path/to/kai KAI_FAKE_NVML=/path/to/libkai_fake_nvml.so python3 tests/e2e/binder_test.py

No kubelet runs there, so a thread of the test plays the nodes' part for GPU reservation pods:
it gives each new reservation pod a GPU of its node (the device plugin's part), marks it Running
and runs the real `kai resource-reservation` against the fake NVML library with that GPU, so
that the real program writes the GPU id annotation. Each test has its own namespace and starts
its own binder.

- WholeGpu: a Regular request: the pod is bound with received-resource-type, PodBound, an event,
  and the request Succeeded.
- TwoHalvesShareOneReservation: two half-GPU pods of one group share one reservation pod; both
  get ConfigMaps with the reserved GPU's UUID and GPU_PORTION.
- GpuMemory: a gpu-memory pod (portion from the request).
- MultiDevice: two devices, two groups: two reservation pods, runai-gpu-group/<g> labels and both
  UUIDs in NVIDIA_VISIBLE_DEVICES.
- ReservationTimeout: a node that never reports a GPU: Failed, reservation pod deleted, pod
  unbound without group labels or ConfigMaps.
- RetryWithBackoff: a missing PVC fails the bind; failedAttempts counts, retries wait 1 s, 2 s;
  the claim appears bound and the next retry binds. Without a backoffLimit the first failure is
  final.
- VolumeBindingWaits: a WaitForFirstConsumer claim gets the selected node and the bind waits for
  it to be bound.
- KillMidBind: kill -9 of the binder while reservations are pending and binds in flight; the
  restarted binder binds every pod exactly once and leaves one reservation pod per group.
- SchedulerToBinder: `kai scheduler` and `kai binder` together on fractional pods.
- HamiCore: with the hamicore plugin, each fraction bind writes CUDA_DEVICE_MEMORY_LIMIT (the
  node's nvidia.com/gpu.memory times the portion) into the capabilities ConfigMap; a node without
  the label binds without one; hamicore without gpusharing before it stops the binder.

The reservation namespace enforces Pod Security `restricted`, as deploy/rbac/binder.yaml
installs it: the binder's reservation pods are admitted there (Sharing checks their security
context and requests, and that a pod without one is refused).

Skips when /opt/kube-test/bin/kube-apiserver is not built.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kube_server  # noqa: E402
import scenario_loader as sl  # noqa: E402

REPO = kube_server.REPO_ROOT
KAI_BIN = pathlib.Path(os.environ.get("KAI_BIN", REPO / "build" / "kai"))
FAKE_NVML = pathlib.Path(os.environ.get("KAI_FAKE_NVML",
                                        KAI_BIN.parent / "libkai_fake_nvml.so"))
RES_NS = "kai-resource-reservation"
GPU_ANN = "run.ai/reserve_for_gpu_index"

SERVER: kube_server.Server | None = None
CLIENT: sl.Client | None = None
LOADER: sl.Loader | None = None
TMP: tempfile.TemporaryDirectory | None = None
KUBELET: "FakeKubelet | None" = None


def setUpModule():
    global SERVER, CLIENT, LOADER, TMP, KUBELET
    kube_server.require_apiserver()
    if not KAI_BIN.is_file():
        raise unittest.SkipTest(f"{KAI_BIN} not built")
    if not FAKE_NVML.is_file():
        raise unittest.SkipTest(f"{FAKE_NVML} not built (the fake NVML library of the tests)")
    TMP = tempfile.TemporaryDirectory(prefix="kai-binder-e2e-")
    SERVER = kube_server.Server.start()
    try:
        CLIENT = sl.Client(SERVER.kubeconfig)
        LOADER = sl.Loader(CLIENT)
        LOADER.ensure_crds()
        # As installed (deploy/rbac/binder.yaml): the namespace enforces Pod Security `restricted`.
        ensure_namespace(RES_NS, installed_namespace_labels(RES_NS))
        try:
            CLIENT.post(f"/api/v1/namespaces/{RES_NS}/serviceaccounts",
                        {"apiVersion": "v1", "kind": "ServiceAccount",
                         "metadata": {"name": RES_NS, "namespace": RES_NS}})
        except sl.ApiError as e:
            if e.status != 409:
                raise
        KUBELET = FakeKubelet(SERVER.kubeconfig)
        KUBELET.start()
    except BaseException:
        SERVER.stop()
        raise


def tearDownModule():
    if KUBELET is not None:
        KUBELET.stop()
    kube_server.release(CLIENT, SERVER, TMP)


def installed_namespace_labels(ns: str) -> dict:
    """The labels of Namespace `ns` in deploy/rbac/binder.yaml."""
    objs = kube_server.rbac_objects(REPO / "deploy" / "rbac" / "binder.yaml")
    return objs[("Namespace", ns)]["metadata"].get("labels") or {}


def ensure_namespace(ns: str, labels: dict | None = None) -> None:
    try:
        CLIENT.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                           "metadata": {"name": ns, "labels": labels or {}}})
    except sl.ApiError as e:
        if e.status != 409:
            raise
        if labels:
            CLIENT.merge_patch(f"/api/v1/namespaces/{ns}", {"metadata": {"labels": labels}})


# What the `restricted` Pod Security level asks of a pod (the fixtures' reservation pods).
RESTRICTED_POD = {"runAsNonRoot": True, "runAsUser": 65532,
                  "seccompProfile": {"type": "RuntimeDefault"}}
RESTRICTED_CONTAINER = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


class FakeKubelet(kube_server.Poller):
    """Plays the nodes for reservation pods: one GPU of the node each, Running, and the real
    `kai resource-reservation` (fake NVML) writing the annotation. Nodes listed in `silent` never
    report a GPU; `delay` seconds pass before the program starts."""

    def __init__(self, kubeconfig: str):
        super().__init__(0.05, (sl.ApiError,))
        self.client = sl.Client(kubeconfig)
        self.kubeconfig = kubeconfig
        self.program_kubeconfig = kubeconfig  # what `kai resource-reservation` authenticates as
        self.silent: set[str] = set()
        self.delay = 0.0
        self.procs: dict[str, subprocess.Popen] = {}
        self.gpus: dict[str, str] = {}  # reservation pod uid -> GPU uuid
        self.started_at: dict[str, float] = {}
        self.runs = 0
        self.lock = threading.Lock()

    def uuid_for(self, node: str, pod_uid: str) -> str:
        used = {u for uid, u in self.gpus.items()}
        for i in range(8):
            u = f"GPU-{node}-{i}"
            if u not in used:
                return u
        return f"GPU-{node}-overflow"

    def step(self):
        live = set()
        for p in self.client.get(f"/api/v1/namespaces/{RES_NS}/pods").get("items") or []:
            md, uid = p["metadata"], p["metadata"]["uid"]
            live.add(uid)
            node = p["spec"].get("nodeName") or ""
            if uid in self.procs or node in self.silent or md.get("deletionTimestamp"):
                continue
            first = self.started_at.setdefault(uid, time.time())
            if time.time() - first < self.delay:
                continue
            with self.lock:
                gpu = self.gpus.get(uid) or self.uuid_for(node, uid)
                self.gpus[uid] = gpu
            self.client.request("PATCH", f"/api/v1/namespaces/{RES_NS}/pods/{md['name']}/status",
                                {"status": {"phase": "Running"}},
                                content_type="application/merge-patch+json")
            env = dict(os.environ, POD_NAME=md["name"], POD_NAMESPACE=RES_NS,
                       KUBECONFIG=self.program_kubeconfig, KAI_NVML_LIBRARY=str(FAKE_NVML),
                       FAKE_NVML_DEVICES=f"{gpu}:NVIDIA H200:143771")
            env.pop("KUBERNETES_SERVICE_HOST", None)
            self.procs[uid] = subprocess.Popen([str(KAI_BIN), "resource-reservation"], env=env,
                                               stdout=subprocess.DEVNULL,
                                               stderr=subprocess.DEVNULL)
            self.runs += 1
        for uid in list(self.procs):
            if uid not in live:  # the pod is gone: its container stops
                proc = self.procs.pop(uid)
                proc.terminate()
                proc.wait(timeout=10)
                with self.lock:
                    self.gpus.pop(uid, None)

    def stop(self):
        self.stop_polling()
        for p in self.procs.values():
            p.terminate()
            p.wait(timeout=10)
        self.client.close()


# --------------------------------------------------------------------------------------------
# Objects
# --------------------------------------------------------------------------------------------

READY = [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "fake"}]


def node(name: str, gpus: int = 8, gpu_memory: str | None = "81920") -> dict:
    """A GPU node; `gpu_memory` is its nvidia.com/gpu.memory label (MiB per GPU; None: none)."""
    alloc = {"cpu": "64", "memory": "512Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
    labels = {"kubernetes.io/hostname": name}
    if gpu_memory is not None:
        labels["nvidia.com/gpu.memory"] = gpu_memory
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"capacity": alloc, "allocatable": alloc, "conditions": READY}}


def pod(ns: str, name: str, gpus: int = 0, annotations: dict | None = None,
        volumes: list | None = None, shared: bool = False) -> dict:
    """A pod; `shared` adds what admission adds to a GPU-sharing pod (the ConfigMap annotation and
    the container's environment from the two ConfigMaps)."""
    ann = {"pod-group-name": name, **(annotations or {})}
    c = {"name": "main", "image": "busybox",
         "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}
    if gpus:
        c["resources"]["limits"]["nvidia.com/gpu"] = str(gpus)
    if shared:
        prefix = f"{name}-abcdefg-shared-gpu"
        ann["runai/shared-gpu-configmap"] = prefix
        c["env"] = [{"name": k, "valueFrom": {"configMapKeyRef": {"name": f"{prefix}-0", "key": k}}}
                    for k in ("NVIDIA_VISIBLE_DEVICES", "GPU_PORTION")]
        c["envFrom"] = [{"configMapRef": {"name": f"{prefix}-0-evar", "optional": False}}]
    spec = {"schedulerName": "kai-scheduler", "containers": [c],
            "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]}
    if volumes:
        spec["volumes"] = volumes
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "annotations": ann}, "spec": spec}


def bind_request(ns: str, p: dict, node_name: str, rtype: str = "Regular", groups=None,
                 portion: str = "1.00", count: int = 1, backoff: int | None = None) -> dict:
    spec = {"podName": p["metadata"]["name"], "selectedNode": node_name,
            "receivedResourceType": rtype, "receivedGPU": {"count": count, "portion": portion}}
    if groups:
        spec["selectedGPUGroups"] = groups
    if backoff is not None:
        spec["backoffLimit"] = backoff
    return {"apiVersion": "scheduling.run.ai/v1alpha2", "kind": "BindRequest",
            "metadata": {"name": p["metadata"]["name"], "namespace": ns,
                         "labels": {"selected-node": node_name},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod",
                                              "name": p["metadata"]["name"],
                                              "uid": p["metadata"]["uid"]}]},
            "spec": spec}


def create(obj: dict) -> dict:
    ns = obj["metadata"].get("namespace")
    if obj["kind"] == "PersistentVolumeClaim":
        return CLIENT.post(f"/api/v1/namespaces/{ns}/persistentvolumeclaims", obj)
    return CLIENT.post(sl.R[obj["kind"]].collection(ns), obj)


def get_pod(ns: str, name: str) -> dict:
    return CLIENT.get(f"/api/v1/namespaces/{ns}/pods/{name}")


def get_br(ns: str, name: str) -> dict:
    return CLIENT.get(sl.R["BindRequest"].item(name, ns))


def config_map(ns: str, name: str) -> dict | None:
    try:
        return CLIENT.get(f"/api/v1/namespaces/{ns}/configmaps/{name}")
    except sl.ApiError as e:
        if e.status == 404:
            return None
        raise


def reservation_pods() -> list[dict]:
    return [p for p in CLIENT.get(f"/api/v1/namespaces/{RES_NS}/pods").get("items") or []
            if not p["metadata"].get("deletionTimestamp")]


def events(ns: str) -> list[dict]:
    return CLIENT.get(f"/api/v1/namespaces/{ns}/events").get("items") or []


def condition(p: dict, kind: str) -> dict | None:
    for c in (p.get("status") or {}).get("conditions") or []:
        if c.get("type") == kind:
            return c
    return None


def finish_and_expect_reservation_gone(ns: str, pod_names: list[str], group: str) -> None:
    """Marks the pods Succeeded and waits for the binder to delete the group's reservation pod."""
    for name in pod_names:
        CLIENT.request("PATCH", f"/api/v1/namespaces/{ns}/pods/{name}/status",
                       {"status": {"phase": "Succeeded"}},
                       content_type="application/merge-patch+json")
    wait_for("the reservation pod deleted", lambda: not [
        r for r in reservation_pods()
        if r["metadata"]["labels"].get("runai-gpu-group") == group], timeout=20)


def wait_for(what: str, fn, timeout: float = 30.0, interval: float = 0.1):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


class BinderCase(unittest.TestCase):
    NS = "binder"

    def setUp(self):
        self.ns = f"{self.NS}-{self._testMethodName.lower().replace('_', '-')}"[:60]
        ensure_namespace(self.ns)
        self.procs: list[subprocess.Popen] = []
        self.logs: list[pathlib.Path] = []
        KUBELET.silent = set()
        KUBELET.delay = 0.0

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait(timeout=10)
        if not getattr(self._outcome, "success", True) or os.environ.get("KAI_E2E_VERBOSE"):
            for log in self.logs:
                sys.stderr.write(f"--- {log}\n{log.read_text()[-4000:]}\n")

    def start_binder(self, *args: str, kubeconfig: str | None = None) -> subprocess.Popen:
        log = pathlib.Path(TMP.name) / f"{self.ns}-binder-{len(self.logs)}.log"
        self.logs.append(log)
        with log.open("w") as f:
            p = subprocess.Popen([str(KAI_BIN), "binder", "--kubeconfig",
                                  kubeconfig or SERVER.kubeconfig,
                                  "--status-write-deferral", "0s", *args],
                                 stdout=subprocess.DEVNULL, stderr=f)
        self.procs.append(p)
        return p

    def make_pod(self, name: str, **kw) -> dict:
        return create(pod(self.ns, name, **kw))

    def node(self, name: str, **kw) -> None:
        try:
            create(node(name, **kw))
        except sl.ApiError as e:
            if e.status != 409:
                raise

    def assert_bound(self, name: str, node_name: str, rtype: str) -> dict:
        p = wait_for(f"pod {name} bound", lambda: (lambda q: q if q["spec"].get("nodeName") else
                                                   None)(get_pod(self.ns, name)))
        self.assertEqual(p["spec"]["nodeName"], node_name)
        self.assertEqual(p["metadata"]["annotations"].get("received-resource-type"), rtype)
        wait_for(f"BindRequest {name} Succeeded",
                 lambda: (get_br(self.ns, name).get("status") or {}).get("phase") == "Succeeded")
        c = wait_for(f"PodBound on {name}", lambda: condition(get_pod(self.ns, name), "PodBound"))
        self.assertEqual((c["status"], c["reason"]), ("True", "Bound"))
        return get_pod(self.ns, name)


class WholeGpu(BinderCase):
    def test_whole_gpu(self):
        self.node("n-whole")
        p = self.make_pod("whole", gpus=1)
        create(bind_request(self.ns, p, "n-whole"))
        self.start_binder()
        self.assert_bound("whole", "n-whole", "Regular")
        wait_for("a Bound event", lambda: [e for e in events(self.ns) if e["reason"] == "Bound" and
                                           e["involvedObject"]["name"] == "whole"])
        self.assertEqual(config_map(self.ns, "whole-abcdefg-shared-gpu-0"), None)


class NumaPlacement(BinderCase):
    def test_the_predicted_zones_become_the_pods_annotation(self):
        self.node("n-numa")
        p = self.make_pod("aligned", gpus=1)
        br = bind_request(self.ns, p, "n-numa")
        br["spec"]["predictedNUMAZones"] = [{"zone": "node-1",
                                              "amount": {"cpu": "3", "nvidia.com/gpu": "1"}}]
        create(br)
        self.start_binder()
        bound = self.assert_bound("aligned", "n-numa", "Regular")
        placed = json.loads(bound["metadata"]["annotations"]["kai.scheduler/numa-placement-predicted"])
        self.assertEqual(placed, [{"zone": "node-1", "amount": {"cpu": "3", "nvidia.com/gpu": "1"}}])


class Sharing(BinderCase):
    def uuid_of(self, group: str) -> str:
        rs = [r for r in reservation_pods()
              if r["metadata"]["labels"].get("runai-gpu-group") == group]
        self.assertEqual(len(rs), 1, f"reservation pods of {group}: {rs}")
        return rs[0]["metadata"]["annotations"][GPU_ANN]

    def test_two_halves_share_one_reservation(self):
        self.node("n-half")
        a = self.make_pod("half-a", annotations={"gpu-fraction": "0.5"}, shared=True)
        b = self.make_pod("half-b", annotations={"gpu-fraction": "0.5"}, shared=True)
        for p in (a, b):
            create(bind_request(self.ns, p, "n-half", "Fraction", ["grp-half"], "0.50"))
        self.start_binder()
        for name in ("half-a", "half-b"):
            p = self.assert_bound(name, "n-half", "Fraction")
            self.assertEqual(p["metadata"]["labels"].get("runai-gpu-group"), "grp-half")
        uuid = self.uuid_of("grp-half")
        self.assertTrue(uuid.startswith("GPU-n-half-"), uuid)
        r = [r for r in reservation_pods()
             if r["metadata"]["labels"].get("runai-gpu-group") == "grp-half"][0]
        self.assertEqual(r["spec"]["nodeName"], "n-half")
        self.assertEqual(r["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], "1")
        self.assertEqual(r["spec"]["tolerations"][0]["key"], "gpu")
        self.assertTrue(r["metadata"]["name"].startswith("gpu-reservation-"))
        self.assert_restricted_reservation(r)
        for name in ("half-a", "half-b"):
            caps = config_map(self.ns, f"{name}-abcdefg-shared-gpu-0")
            self.assertIsNotNone(caps)
            self.assertEqual(caps["data"]["NVIDIA_VISIBLE_DEVICES"], uuid)
            self.assertEqual(caps["data"]["GPU_PORTION"], "0.50")
            self.assertEqual(caps["metadata"]["ownerReferences"][0]["name"], name)
            self.assertIsNotNone(config_map(self.ns, f"{name}-abcdefg-shared-gpu-0-evar"))

    def assert_restricted_reservation(self, r: dict) -> None:
        """The reservation pod was admitted by a namespace enforcing `restricted` (a pod that is
        not compliant is refused there), with kai's security context and small requests."""
        ns = CLIENT.get(f"/api/v1/namespaces/{RES_NS}")
        self.assertEqual(ns["metadata"]["labels"].get("pod-security.kubernetes.io/enforce"),
                         "restricted")
        with self.assertRaises(sl.ApiError) as refused:
            CLIENT.post(f"/api/v1/namespaces/{RES_NS}/pods",
                        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "not-restricted"},
                         "spec": {"containers": [{"name": "c", "image": "x"}]}},
                        query={"dryRun": "All"})
        self.assertIn("violates PodSecurity", refused.exception.message)
        psc, c = r["spec"]["securityContext"], r["spec"]["containers"][0]
        self.assertEqual((psc["runAsNonRoot"], psc["runAsUser"]), (True, 65532))
        self.assertEqual(psc["seccompProfile"]["type"], "RuntimeDefault")
        self.assertIs(c["securityContext"]["allowPrivilegeEscalation"], False)
        self.assertEqual(c["securityContext"]["capabilities"]["drop"], ["ALL"])
        self.assertEqual(c["resources"]["requests"],
                         {"cpu": "10m", "memory": "64Mi", "nvidia.com/gpu": "1"})
        self.assertEqual(c["resources"]["limits"],
                         {"cpu": "100m", "memory": "256Mi", "nvidia.com/gpu": "1"})

    def test_gpu_memory(self):
        self.node("n-mem")
        p = self.make_pod("mem", annotations={"gpu-memory": "2000"}, shared=True)
        create(bind_request(self.ns, p, "n-mem", "Fraction", ["grp-mem"], "0.03"))
        self.start_binder()
        self.assert_bound("mem", "n-mem", "Fraction")
        caps = config_map(self.ns, "mem-abcdefg-shared-gpu-0")
        self.assertEqual(caps["data"]["GPU_PORTION"], "0.03")
        self.assertEqual(caps["data"]["NVIDIA_VISIBLE_DEVICES"], self.uuid_of("grp-mem"))

    def test_multi_device(self):
        self.node("n-multi")
        p = self.make_pod("multi", annotations={"gpu-fraction": "0.5",
                                                "gpu-fraction-num-devices": "2"}, shared=True)
        create(bind_request(self.ns, p, "n-multi", "Fraction", ["grp-m1", "grp-m2"], "0.50", 2))
        self.start_binder()
        got = self.assert_bound("multi", "n-multi", "Fraction")
        labels = got["metadata"]["labels"]
        self.assertEqual(labels.get("runai-gpu-group/grp-m1"), "grp-m1")
        self.assertEqual(labels.get("runai-gpu-group/grp-m2"), "grp-m2")
        self.assertNotIn("runai-gpu-group", labels)
        u1, u2 = self.uuid_of("grp-m1"), self.uuid_of("grp-m2")
        self.assertNotEqual(u1, u2)
        caps = config_map(self.ns, "multi-abcdefg-shared-gpu-0")
        self.assertEqual(caps["data"]["NVIDIA_VISIBLE_DEVICES"], f"{u1},{u2}")

    def test_reservation_timeout_rolled_back(self):
        self.node("n-dead")
        KUBELET.silent = {"n-dead"}
        p = self.make_pod("late", annotations={"gpu-fraction": "0.5"}, shared=True)
        create(bind_request(self.ns, p, "n-dead", "Fraction", ["grp-dead"], "0.50"))
        self.start_binder("--resource-reservation-allocation-timeout", "2s")
        br = wait_for("BindRequest Failed", lambda: (lambda b: b if (b.get("status") or {}).get(
            "phase") == "Failed" else None)(get_br(self.ns, "late")), timeout=20)
        self.assertIn("got no GPU id", br["status"]["reason"])
        self.assertEqual(br["status"].get("failedAttempts", 0), 0)
        wait_for("the reservation pod deleted", lambda: not [
            r for r in reservation_pods()
            if r["metadata"]["labels"].get("runai-gpu-group") == "grp-dead"])
        got = get_pod(self.ns, "late")
        self.assertFalse(got["spec"].get("nodeName"))
        self.assertNotIn("runai-gpu-group", got["metadata"].get("labels") or {})
        self.assertIsNone(config_map(self.ns, "late-abcdefg-shared-gpu-0"))
        c = wait_for("PodBound False", lambda: condition(get_pod(self.ns, "late"), "PodBound"))
        self.assertEqual((c["status"], c["reason"]), ("False", "BindingError"))


class HamiCore(BinderCase):
    """The hamicore plugin (`--plugins '{"hamicore":{"enabled":true}}'`): each fraction bind
    writes CUDA_DEVICE_MEMORY_LIMIT, the node's nvidia.com/gpu.memory times the received portion
    (rounded down, "<MiB>m"), into the pod's capabilities ConfigMap after gpusharing made it."""

    PLUGINS = '{"hamicore":{"enabled":true}}'

    def test_the_limit_is_the_nodes_gpu_memory_times_the_portion(self):
        self.node("n-hami", gpu_memory="15360")
        self.node("n-hami-bare", gpu_memory=None)
        cases = [("hami-half", "n-hami", {"gpu-fraction": "0.5"}, "0.50", "7680m"),
                 ("hami-mem", "n-hami", {"gpu-memory": "4096"}, "0.27", "4147m"),
                 ("hami-bare", "n-hami-bare", {"gpu-fraction": "0.5"}, "0.50", None)]
        for name, node_name, ann, portion, _ in cases:
            p = self.make_pod(name, annotations=ann, shared=True)
            create(bind_request(self.ns, p, node_name, "Fraction", [f"grp-{name}"], portion))
        whole = self.make_pod("hami-whole", gpus=1)
        create(bind_request(self.ns, whole, "n-hami"))
        self.start_binder("--plugins", self.PLUGINS)
        for name, node_name, _, portion, limit in cases:
            self.assert_bound(name, node_name, "Fraction")
            data = config_map(self.ns, f"{name}-abcdefg-shared-gpu-0")["data"]
            self.assertEqual(data["GPU_PORTION"], portion)
            self.assertEqual(data.get("CUDA_DEVICE_MEMORY_LIMIT"), limit, name)
        self.assert_bound("hami-whole", "n-hami", "Regular")
        self.assertIsNone(config_map(self.ns, "hami-whole-abcdefg-shared-gpu-0"))
        # A node without the label binds without a limit, as KAI's plugin does; the log says why.
        log = self.logs[-1].read_text()
        self.assertIn(f"pod {self.ns}/hami-bare gets no CUDA_DEVICE_MEMORY_LIMIT: Node n-hami-bare:"
                      " label nvidia.com/gpu.memory: absent", log)

    def test_it_needs_gpusharing_before_it(self):
        for plugins, want in [
                ('{"hamicore":{"enabled":true},"gpusharing":{"enabled":false}}',
                 "binder plugin hamicore needs plugin gpusharing enabled"),
                ('{"hamicore":{"enabled":true,"priority":100}}',
                 "gpusharing.priority 100 must be above hamicore.priority 100")]:
            binder = self.start_binder("--plugins", plugins)
            self.assertEqual(binder.wait(timeout=30), 2, plugins)
            self.assertIn(want, self.logs[-1].read_text())


class Retries(BinderCase):
    def test_retry_with_backoff(self):
        self.node("n-retry")
        vol = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]
        p = self.make_pod("retry", gpus=1, volumes=vol)
        create(bind_request(self.ns, p, "n-retry", backoff=5))
        self.start_binder()
        first = wait_for("the first failure", lambda: (lambda b: b if (b.get("status") or {}).get(
            "failedAttempts", 0) >= 1 else None)(get_br(self.ns, "retry")))
        t1 = time.time()
        self.assertEqual(first["status"]["phase"], "Failed")
        self.assertIn("not found", first["status"]["reason"])
        wait_for("the second failure", lambda: get_br(self.ns, "retry")["status"].get(
            "failedAttempts", 0) >= 2, timeout=10, interval=0.05)
        gap = time.time() - t1
        self.assertGreaterEqual(gap, 0.8, "the first retry waits 2^0 = 1 s")
        # The claim appears, bound: the next retry (after 2 s) binds the pod.
        create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data", "namespace": self.ns},
                "spec": {"accessModes": ["ReadWriteOnce"],
                         "resources": {"requests": {"storage": "1Gi"}}}})
        CLIENT.request("PATCH", f"/api/v1/namespaces/{self.ns}/persistentvolumeclaims/data/status",
                       {"status": {"phase": "Bound"}}, content_type="application/merge-patch+json")
        t2 = time.time()
        self.assert_bound("retry", "n-retry", "Regular")
        self.assertGreaterEqual(time.time() - t2 + (t2 - t1 - gap), 0.0)
        br = get_br(self.ns, "retry")
        self.assertEqual(br["status"]["failedAttempts"], 2)

    def test_no_backoff_limit_fails_once(self):
        self.node("n-once")
        vol = [{"name": "data", "persistentVolumeClaim": {"claimName": "missing"}}]
        p = self.make_pod("once", gpus=1, volumes=vol)
        create(bind_request(self.ns, p, "n-once"))
        self.start_binder()
        br = wait_for("Failed", lambda: (lambda b: b if (b.get("status") or {}).get(
            "phase") == "Failed" else None)(get_br(self.ns, "once")))
        self.assertEqual(br["status"].get("failedAttempts", 0), 0)
        time.sleep(3)
        failures = [e for e in events(self.ns) if e["reason"] == "BindingError"]
        self.assertEqual(len(failures), 1, "one attempt only")

    def test_volume_binding_waits(self):
        self.node("n-vol")
        CLIENT.post("/apis/storage.k8s.io/v1/storageclasses",
                    {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                     "metadata": {"name": f"wffc-{self.ns}"}, "provisioner": "example.com/x",
                     "volumeBindingMode": "WaitForFirstConsumer"})
        create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": "scratch", "namespace": self.ns},
                "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": f"wffc-{self.ns}",
                         "resources": {"requests": {"storage": "1Gi"}}}})
        vol = [{"name": "s", "persistentVolumeClaim": {"claimName": "scratch"}}]
        p = self.make_pod("vol", gpus=1, volumes=vol)
        create(bind_request(self.ns, p, "n-vol"))
        self.start_binder()
        path = f"/api/v1/namespaces/{self.ns}/persistentvolumeclaims/scratch"
        wait_for("the selected-node annotation", lambda: (CLIENT.get(path)["metadata"].get(
            "annotations") or {}).get("volume.kubernetes.io/selected-node") == "n-vol")
        time.sleep(1)
        self.assertFalse(get_pod(self.ns, "vol")["spec"].get("nodeName"), "waits for the claim")
        CLIENT.request("PATCH", path + "/status", {"status": {"phase": "Bound"}},
                       content_type="application/merge-patch+json")
        self.assert_bound("vol", "n-vol", "Regular")


class KillMidBind(BinderCase):
    def test_kill_mid_bind(self):
        for n in ("n-k1", "n-k2"):
            self.node(n)
        KUBELET.delay = 3.0  # reservations take a while: the kill lands while binds wait
        names = []
        for i in range(6):
            p = self.make_pod(f"frac-{i}", annotations={"gpu-fraction": "0.5"}, shared=True)
            # Two pods per group, each group on one node (groups 0 and 2 on n-k1, 1 on n-k2).
            create(bind_request(self.ns, p, f"n-k{1 + (i // 2) % 2}", "Fraction",
                                [f"grp-k{i // 2}"], "0.50"))
            names.append(p["metadata"]["name"])
        for i in range(40):
            p = self.make_pod(f"whole-{i}", gpus=1)
            create(bind_request(self.ns, p, f"n-k{1 + i % 2}"))
            names.append(p["metadata"]["name"])
        first = self.start_binder()
        wait_for("a reservation pod", lambda: [r for r in reservation_pods() if r["metadata"][
            "labels"].get("runai-gpu-group", "").startswith("grp-k")], timeout=20, interval=0.02)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        KUBELET.delay = 0.0
        self.start_binder()
        for name in names:
            wait_for(f"{name} bound", lambda: get_pod(self.ns, name)["spec"].get("nodeName"),
                     timeout=60)
        for name in names:
            p, br = get_pod(self.ns, name), get_br(self.ns, name)
            self.assertEqual(p["spec"]["nodeName"], br["spec"]["selectedNode"])
        wait_for("all Succeeded", lambda: all((get_br(self.ns, n).get("status") or {}).get(
            "phase") == "Succeeded" for n in names))
        groups = {}
        for r in reservation_pods():
            g = r["metadata"]["labels"].get("runai-gpu-group", "")
            if g.startswith("grp-k"):
                groups.setdefault(g, []).append(r["metadata"]["name"])
        self.assertEqual(sorted(groups), ["grp-k0", "grp-k1", "grp-k2"])
        self.assertTrue(all(len(v) == 1 for v in groups.values()), groups)
        # Each fraction pod's group has its reservation on the pod's node.
        for i in range(6):
            p = get_pod(self.ns, f"frac-{i}")
            g = p["metadata"]["labels"]["runai-gpu-group"]
            self.assertEqual(g, f"grp-k{i // 2}")
            r = [r for r in reservation_pods() if r["metadata"]["labels"]["runai-gpu-group"] == g]
            self.assertEqual(r[0]["spec"]["nodeName"], p["spec"]["nodeName"])


class Cleanup(BinderCase):
    def test_reservation_deleted_when_last_pod_goes(self):
        self.node("n-gone")
        p = self.make_pod("short", annotations={"gpu-fraction": "0.5"}, shared=True)
        create(bind_request(self.ns, p, "n-gone", "Fraction", ["grp-gone"], "0.50"))
        self.start_binder()
        self.assert_bound("short", "n-gone", "Fraction")
        self.assertEqual(len([r for r in reservation_pods() if r["metadata"]["labels"].get(
            "runai-gpu-group") == "grp-gone"]), 1)
        finish_and_expect_reservation_gone(self.ns, ["short"], "grp-gone")


RBAC = REPO / "deploy" / "rbac" / "binder.yaml"
FORBIDDEN = re.compile(r"\b403\b|Forbidden", re.I)
BINDER_SA = "system:serviceaccount:kai-scheduler:kai-binder"


class Rbac(BinderCase):
    """The binder and `kai resource-reservation` with deploy/rbac/binder.yaml's ServiceAccounts:
    every kind of bind works and nothing is refused; the role holds exactly those calls."""

    def setUp(self):
        super().setUp()
        SERVER.kubectl("apply", "-f", str(RBAC))
        tmp = pathlib.Path(TMP.name)
        self.binder_kc = SERVER.token_kubeconfig("kai-scheduler", "kai-binder", tmp / "binder.kc")
        KUBELET.program_kubeconfig = SERVER.token_kubeconfig(RES_NS, RES_NS, tmp / "rr.kc")

    def tearDown(self):
        KUBELET.program_kubeconfig = SERVER.kubeconfig
        super().tearDown()

    def test_every_bind_with_the_installed_service_accounts(self):
        for verb, res, ns, allowed in [("create", "pods", self.ns, "no"),
                                       ("create", "pods", RES_NS, "yes"),
                                       ("update", "pods", self.ns, "no"),
                                       ("create", "bindrequests.scheduling.run.ai", self.ns, "no"),
                                       ("delete", "nodes", self.ns, "no"),
                                       ("update", "leases", "kai-scheduler", "yes"),
                                       ("update", "leases", self.ns, "no")]:
            self.assertEqual(SERVER.can_i(verb, res, BINDER_SA, ns), allowed,
                             f"binder: can-i {verb} {res} -n {ns}")
        rr = f"system:serviceaccount:{RES_NS}:{RES_NS}"
        self.assertEqual(SERVER.can_i("patch", "pods", rr, RES_NS), "yes")
        self.assertEqual(SERVER.can_i("patch", "pods", rr, self.ns), "no")

        for n in ("n-rbac", "n-rbac-vol"):
            self.node(n)
        whole = self.make_pod("r-whole", gpus=1)
        create(bind_request(self.ns, whole, "n-rbac"))
        halves = [self.make_pod(f"r-half-{i}", annotations={"gpu-fraction": "0.5"}, shared=True)
                  for i in range(2)]
        for p in halves:
            create(bind_request(self.ns, p, "n-rbac", "Fraction", ["grp-rbac"], "0.50"))
        CLIENT.post("/apis/storage.k8s.io/v1/storageclasses",
                    {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                     "metadata": {"name": "wffc-rbac"}, "provisioner": "example.com/x",
                     "volumeBindingMode": "WaitForFirstConsumer"})
        create({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data", "namespace": self.ns},
                "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "wffc-rbac",
                         "resources": {"requests": {"storage": "1Gi"}}}})
        vol = self.make_pod("r-vol", gpus=1,
                            volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}])
        create(bind_request(self.ns, vol, "n-rbac-vol"))
        # An invalid request (a fraction without a group) is deleted.
        bad = self.make_pod("r-bad", annotations={"gpu-fraction": "0.5"}, shared=True)
        create(bind_request(self.ns, bad, "n-rbac", "Fraction", None, "0.50"))

        p = self.start_binder("--leader-elect", "--leader-elect-identity", "rbac-binder",
                              kubeconfig=self.binder_kc)
        self.assert_bound("r-whole", "n-rbac", "Regular")
        for h in halves:
            self.assert_bound(h["metadata"]["name"], "n-rbac", "Fraction")
        pvc = f"/api/v1/namespaces/{self.ns}/persistentvolumeclaims/data"
        wait_for("the selected-node annotation", lambda: (CLIENT.get(pvc)["metadata"].get(
            "annotations") or {}).get("volume.kubernetes.io/selected-node") == "n-rbac-vol")
        CLIENT.request("PATCH", pvc + "/status", {"status": {"phase": "Bound"}},
                       content_type="application/merge-patch+json")
        self.assert_bound("r-vol", "n-rbac-vol", "Regular")
        wait_for("the invalid BindRequest deleted", lambda: not [
            b for b in CLIENT.get(sl.R["BindRequest"].collection(self.ns))["items"]
            if b["metadata"]["name"] == "r-bad"])
        lease = CLIENT.get("/apis/coordination.k8s.io/v1/namespaces/kai-scheduler/leases/kai-binder")
        self.assertEqual(lease["spec"]["holderIdentity"], "rbac-binder")
        # The last fraction pods finish: the reservation pod goes (delete pods).
        finish_and_expect_reservation_gone(self.ns, [h["metadata"]["name"] for h in halves],
                                           "grp-rbac")
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)
        log = self.logs[-1].read_text()
        self.assertNotRegex(log, FORBIDDEN, f"the binder's ServiceAccount lacks a right:\n{log[-3000:]}")

    def test_role_is_exactly_what_the_binder_calls(self):
        by = kube_server.rbac_objects(RBAC)
        want = {("", "nodes", v) for v in ("get", "list", "watch")} | {
            ("", "pods", v) for v in ("get", "list", "watch", "patch", "delete")} | {
            ("", "pods/binding", "create"), ("", "pods/status", "patch"), ("", "events", "create"),
            ("", "configmaps", "create"), ("", "configmaps", "patch"), ("", "configmaps", "delete"),
            ("", "persistentvolumeclaims", "get"), ("", "persistentvolumeclaims", "patch"),
            ("storage.k8s.io", "storageclasses", "get"),
            ("", "persistentvolumes", "get"), ("", "persistentvolumes", "list"),
            ("", "persistentvolumes", "patch"),
            ("scheduling.run.ai", "bindrequests", "list"), ("scheduling.run.ai", "bindrequests", "watch"),
            ("scheduling.run.ai", "bindrequests", "delete"),
            ("scheduling.run.ai", "bindrequests/status", "patch")} | {
            ("resource.k8s.io", "resourceclaims", v) for v in ("get", "list", "create", "delete")} | {
            ("resource.k8s.io", "resourceclaims/status", "patch")}
        self.assertEqual(kube_server.rbac_rules(by[("ClusterRole", "kai-binder")]), want)
        self.assertEqual(kube_server.rbac_rules(by[("Role", "kai-binder-reservations")]),
                         {("", "pods", "create")})
        self.assertEqual(by[("Role", "kai-binder-reservations")]["metadata"]["namespace"], RES_NS)
        self.assertEqual(kube_server.rbac_rules(by[("Role", "kai-binder-leader-election")]),
                         {("coordination.k8s.io", "leases", v) for v in ("get", "create", "update")})
        self.assertEqual(kube_server.rbac_rules(by[("Role", "kai-resource-reservation")]),
                         {("", "pods", "get"), ("", "pods", "patch")})
        sa = {"kind": "ServiceAccount", "name": "kai-binder", "namespace": "kai-scheduler"}
        for kind, name in [("ClusterRoleBinding", "kai-binder"),
                           ("RoleBinding", "kai-binder-reservations"),
                           ("RoleBinding", "kai-binder-leader-election")]:
            self.assertEqual(by[(kind, name)]["subjects"], [sa], f"{kind} {name}")
        self.assertEqual(by[("RoleBinding", "kai-resource-reservation")]["subjects"],
                         [{"kind": "ServiceAccount", "name": RES_NS, "namespace": RES_NS}])


SCENARIOS = REPO.parent / "shared" / "scenarios"
NOW = "2025-01-01T12:00:00Z"


def first_cycle(path: pathlib.Path) -> dict:
    out = subprocess.run([str(KAI_BIN), "simulate", "-f", str(path), "--now", NOW, "--cycles", "1",
                          "-o", "json"], capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        return {}
    return json.loads(out.stdout)["cycles"][0]


def fractional_first_cycles() -> list[tuple[pathlib.Path, dict]]:
    """The scenarios whose first cycle binds a pod that shares a GPU."""
    found = []
    for path in sorted(SCENARIOS.glob("*/*/scenario.yaml")):
        text = path.read_text()
        if "gpu-fraction" not in text and "gpu-memory" not in text:
            continue
        cycle = first_cycle(path)
        if any(p["status"] == "Binding" and p.get("gpuGroups") for p in cycle.get("pods", [])):
            found.append((path, cycle))
    return found


def reservation_name(node_name: str, group: str) -> str:
    return "gpu-reservation-" + hashlib.sha256(f"{node_name}/{group}".encode()).hexdigest()[:16]


def as_admitted(objs: list[dict]) -> list[dict]:
    """What the admission webhook makes of the GPU-sharing pods (issue "admission"), plus the
    reservation pods the running shared pods' groups had (a binder made them earlier)."""
    extra = []
    for o in objs:
        if o.get("kind") != "Pod":
            continue
        md = o["metadata"]
        ann = md.setdefault("annotations", {})
        if "gpu-fraction" not in ann and "gpu-memory" not in ann:
            continue
        prefix = f"{md['name'][:30]}-abcdefg-shared-gpu"
        ann.setdefault("runai/shared-gpu-configmap", prefix)
        c = o["spec"]["containers"][0]
        c.setdefault("env", []).extend(
            {"name": k, "valueFrom": {"configMapKeyRef": {"name": f"{prefix}-0", "key": k}}}
            for k in ("NVIDIA_VISIBLE_DEVICES", "GPU_PORTION"))
        node_name = o["spec"].get("nodeName")
        labels = md.get("labels") or {}
        groups = [v for k, v in labels.items()
                  if k == "runai-gpu-group" or k.startswith("runai-gpu-group/")]
        for g in groups if node_name else []:
            extra.append({"apiVersion": "v1", "kind": "Pod",
                          "metadata": {"name": reservation_name(node_name, g), "namespace": RES_NS,
                                       "labels": {"app": RES_NS, "runai-gpu-group": g}},
                          "spec": {"nodeName": node_name, "serviceAccountName": RES_NS,
                                   "securityContext": RESTRICTED_POD,
                                   "containers": [{"name": "resource-reservation",
                                                   "image": "kai",
                                                   "securityContext": RESTRICTED_CONTAINER,
                                                   "resources": {"limits": {
                                                       "nvidia.com/gpu": "1"}}}]}})
    unique = {e["metadata"]["name"]: e for e in extra}
    return objs + list(unique.values())


class SchedulerToBinder(BinderCase):
    """`kai scheduler --once` writes the BindRequests of a scenario's first cycle, `kai binder`
    binds them; every pod the cycle bound is on its node, and each shared one has its GPU."""

    def test_fractional_scenarios(self):
        cases = fractional_first_cycles()
        self.assertGreater(len(cases), 5, "the corpus has scenarios binding shared GPUs")
        only = os.environ.get("KAI_BINDER_SCENARIO")
        cases = [c for c in cases if not only or only in str(c[0])]
        for path, cycle in cases:
            with self.subTest(scenario=path.parent.name):
                self.run_scenario(path, cycle)

    def run_scenario(self, path: pathlib.Path, _simulated: dict):
        errs = sl.clear(CLIENT)
        self.assertEqual(errs, [])
        wait_for("the reservation namespace empty", lambda: not CLIENT.get(
            f"/api/v1/namespaces/{RES_NS}/pods").get("items"), timeout=30)
        objs = as_admitted(sl.read_objects(path))
        shards = [o["metadata"]["name"] for o in objs if o.get("kind") == "SchedulingShard"]
        res = LOADER.load(objs)
        self.assertTrue(res.ok, "\n".join(res.failures[:5]))
        wait_for("the existing reservations annotated", lambda: all(
            GPU_ANN in (r["metadata"].get("annotations") or {}) for r in reservation_pods()),
            timeout=30)
        binder = self.start_binder()
        cmd = [str(KAI_BIN), "scheduler", "--kubeconfig", SERVER.kubeconfig, "--once", "--now",
               NOW, "-o", "json"] + (["--shard", shards[0]] if shards else [])
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr[-2000:])
        # What the scheduler decided on the server (creation times there are the server's, so
        # the choice among equal pods may differ from a simulation of the file).
        decided = json.loads(out.stdout)["cycles"][0]
        bound = [p for p in decided["pods"] if p["status"] == "Binding"]
        self.assertTrue(bound, "the cycle binds pods")
        for want in bound:
            ns, name = want["namespace"], want["name"]
            got = wait_for(f"{ns}/{name} bound", lambda: (lambda q: q if q["spec"].get(
                "nodeName") else None)(CLIENT.get(f"/api/v1/namespaces/{ns}/pods/{name}")),
                timeout=60)
            self.assertEqual(got["spec"]["nodeName"], want["node"])
            if not want.get("gpuGroups"):
                continue
            labels = got["metadata"].get("labels") or {}
            self.assertEqual(sorted(v for k, v in labels.items() if k.startswith(
                "runai-gpu-group")), sorted(want["gpuGroups"]))
            uuids = []
            for g in want["gpuGroups"]:
                r = wait_for(f"the reservation of {g}", lambda: [
                    r for r in reservation_pods() if r["metadata"]["labels"].get(
                        "runai-gpu-group") == g and GPU_ANN in (r["metadata"].get(
                            "annotations") or {})])
                self.assertEqual(r[0]["spec"]["nodeName"], want["node"])
                uuids.append(r[0]["metadata"]["annotations"][GPU_ANN])
            prefix = got["metadata"]["annotations"]["runai/shared-gpu-configmap"]
            caps = config_map(ns, f"{prefix}-0")
            self.assertIsNotNone(caps, f"{ns}/{name}: no ConfigMap {prefix}-0")
            self.assertEqual(caps["data"]["NVIDIA_VISIBLE_DEVICES"], ",".join(uuids))
            self.assertTrue(caps["data"]["GPU_PORTION"])
        binder.send_signal(signal.SIGTERM)
        binder.wait(timeout=30)


if __name__ == "__main__":
    unittest.main()
