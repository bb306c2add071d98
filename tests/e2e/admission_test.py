#!/usr/bin/env python3
"""`kai admission` on a real kube-apiserver: the webhooks registered with
`kai admission --print-webhook-config` (a CA and a serving certificate made by this test), then
objects created through kubectl and the API: GPU-sharing pods refused with the rule or mutated
(the ConfigMap environment the binder fills, the runtime class), a queue tree whose parent cannot
be deleted while it has children, a PodGroup with a broken SubGroup tree refused, and the serving
certificate replaced on disk and served without a restart; and the whole path of a half-GPU
pod: admission -> `kai scheduler --once` -> `kai binder` -> bound, with its ConfigMaps filled;
the same for a gpu-memory pod with HAMi-core's limit (`--hami-core-enabled`, the binder's
hamicore plugin): CUDA_DEVICE_MEMORY_LIMIT from the node's GPU memory and the portion received;
and for an NvFractions pod (per-container GPU memory annotations), bound by the binder's
ServiceAccount with its GPU in the devices annotation only the binder may write.

    python3 tests/e2e/admission_test.py        (KAI_BIN: the kai binary; default build/kai)
"""

from __future__ import annotations

import json
import os
import pathlib
import socket
import ssl
import subprocess
import sys
import tempfile
import unittest
import urllib.request
from decimal import Decimal

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kube_server  # noqa: E402
import scenario_loader as sl  # noqa: E402

REPO = kube_server.REPO_ROOT
KAI_BIN = pathlib.Path(os.environ.get("KAI_BIN", REPO / "build" / "kai"))
NS = "adm"

SERVER: kube_server.Server | None = None
CLIENT: sl.Client | None = None
TMP: tempfile.TemporaryDirectory | None = None
WEBHOOK: subprocess.Popen | None = None
PORT = 0
METRICS_PORT = 0
LOG: pathlib.Path | None = None
LOG_FILE = None


def openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def make_certs(d: pathlib.Path, name: str, serial: int) -> None:
    """A CA (once) and a serving certificate for 127.0.0.1 signed by it, as <name>.crt/.key."""
    if not (d / "ca.crt").exists():
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                "/CN=kai-e2e-ca", "-keyout", str(d / "ca.key"), "-out", str(d / "ca.crt"))
    (d / "san.cnf").write_text("subjectAltName=IP:127.0.0.1\n")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN=kai-admission-{serial}",
            "-keyout", str(d / f"{name}.key"), "-out", str(d / f"{name}.csr"))
    openssl("x509", "-req", "-in", str(d / f"{name}.csr"), "-CA", str(d / "ca.crt"), "-CAkey",
            str(d / "ca.key"), "-set_serial", str(serial), "-days", "1", "-extfile",
            str(d / "san.cnf"), "-out", str(d / f"{name}.crt"))


free_port = kube_server.free_port


def served_subject() -> str:
    """The CN of the certificate the webhook serves now (verified against the test CA)."""
    ctx = ssl.create_default_context(cafile=str(pathlib.Path(TMP.name) / "ca.crt"))
    with socket.create_connection(("127.0.0.1", PORT), timeout=5) as raw:
        with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
            subject = dict(x[0] for x in tls.getpeercert()["subject"])
            return subject["commonName"]


def wait_for(what: str, fn, timeout: float = 30.0):
    return kube_server.wait_until(what, fn, timeout, (OSError, sl.ApiError, ssl.SSLError), LOG)


def setUpModule():
    global SERVER, CLIENT, TMP, PORT, METRICS_PORT, LOG, LOG_FILE
    kube_server.require_apiserver()
    if not KAI_BIN.is_file():
        raise unittest.SkipTest(f"{KAI_BIN} not built")
    TMP = tempfile.TemporaryDirectory(prefix="kai-admission-e2e-")
    d = pathlib.Path(TMP.name)
    make_certs(d, "serving", 1)
    # In-place resize (class Resize) is alpha on 1.28: resources of a running pod change by update.
    SERVER = kube_server.Server.start("--", "--feature-gates=InPlacePodVerticalScaling=true")
    try:
        CLIENT = sl.Client(SERVER.kubeconfig)
        sl.Loader(CLIENT).ensure_crds()
        CLIENT.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                           "metadata": {"name": NS}})
        CLIENT.post("/apis/node.k8s.io/v1/runtimeclasses",
                    {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                     "metadata": {"name": "nvidia"}, "handler": "nvidia"})
        PORT = free_port()
        METRICS_PORT = free_port()
        LOG = d / "admission.log"
        LOG_FILE = LOG.open("w")
        start_webhook()
        cfg = subprocess.run([str(KAI_BIN), "admission", "--print-webhook-config", "--ca-bundle",
                              str(d / "ca.crt"), "--url", f"https://127.0.0.1:{PORT}"],
                             check=True, capture_output=True, text=True).stdout
        SERVER.kubectl("apply", "-f", "-", input=cfg)
        # The API server picks new webhook configurations up within a moment.
        wait_for("the pod webhook in force", lambda: refused(pod("probe", {"gpu-fraction": "1.0"})))
    except BaseException:
        tearDownModule()
        raise


def start_webhook(*extra: str) -> None:
    """`kai admission` on PORT with the module's flags and `extra`, serving once this returns."""
    global WEBHOOK
    d = pathlib.Path(TMP.name)
    WEBHOOK = subprocess.Popen(
        [str(KAI_BIN), "admission", "--bind-address", f"127.0.0.1:{PORT}",
         "--tls-cert-file", str(d / "serving.crt"), "--tls-key-file", str(d / "serving.key"),
         "--metrics-bind-address", f"127.0.0.1:{METRICS_PORT}",
         "--gpu-sharing-enabled", "--limit-descendents-over-subscription", "block",
         "--kubeconfig", SERVER.kubeconfig, *extra],
        stdout=subprocess.DEVNULL, stderr=LOG_FILE)
    wait_for("the webhook serving TLS", served_subject)


def tearDownModule():
    kube_server.stop_process(WEBHOOK)
    if LOG_FILE is not None:
        LOG_FILE.close()
    if os.environ.get("KAI_E2E_VERBOSE") and LOG is not None and LOG.exists():
        sys.stderr.write(LOG.read_text()[-4000:])
    kube_server.release(CLIENT, SERVER, TMP)


def pod(name: str, annotations: dict | None = None, gpus: str | None = None,
        scheduler: str = "kai-scheduler") -> dict:
    c = {"name": "main", "image": "busybox", "resources": {"limits": {"cpu": "1"}}}
    if gpus:
        c["resources"]["limits"]["nvidia.com/gpu"] = gpus
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "annotations": annotations or {}},
            "spec": {"schedulerName": scheduler, "containers": [c]}}


def refused(obj: dict, path: str | None = None) -> str:
    """The API server's refusal message for creating obj ("" when it was created)."""
    path = path or f"/api/v1/namespaces/{NS}/pods"
    try:
        CLIENT.post(path, obj)
    except sl.ApiError as e:
        return e.message
    return ""


def queue(name: str, parent: str | None = None, gpu_quota: int = 2) -> dict:
    spec = {"resources": {r: {"quota": gpu_quota if r == "gpu" else -1, "limit": -1,
                              "overQuotaWeight": 1} for r in ("gpu", "cpu", "memory")}}
    if parent:
        spec["parentQueue"] = parent
    return {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": name},
            "spec": spec}


QUEUES = "/apis/scheduling.run.ai/v2/queues"


class Pods(unittest.TestCase):
    def test_bad_gpu_requests_are_refused_with_the_rule(self):
        msg = refused(pod("whole-fraction", {"gpu-fraction": "1.0"}))
        self.assertIn("gpu-fraction", msg)
        self.assertIn(f"Pod {NS}/whole-fraction", msg)
        msg = refused(pod("both", {"gpu-fraction": "0.5"}, gpus="1"))
        self.assertIn("nvidia.com/gpu", msg)
        msg = refused(pod("mem-and-fraction", {"gpu-fraction": "0.5", "gpu-memory": "1000"}))
        self.assertIn("gpu-memory", msg)
        # The same through kubectl, as a user sees it.
        p = SERVER.kubectl("apply", "-f", "-", check=False,
                           input=json.dumps(pod("kubectl-bad", {"gpu-fraction": "0"})))
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("denied the request", p.stderr)
        self.assertIn("gpu-fraction", p.stderr)

    def test_metrics_count_requests_and_rejections(self):
        refused(pod("metrics-bad", {"gpu-fraction": "1.0"}))
        with urllib.request.urlopen(f"http://127.0.0.1:{METRICS_PORT}/metrics", timeout=5) as r:
            text = r.read().decode()
        self.assertRegex(text, r'(?m)^kai_admission_rejections_total\{reason="gpu_sharing",'
                               r'webhook="/(mutate|validate)-pod"\} [1-9]')
        self.assertRegex(text, r'(?m)^kai_admission_request_duration_seconds_count'
                               r'\{webhook="/mutate-pod"\} [1-9]')
        self.assertRegex(text, r"(?m)^process_resident_memory_bytes ")

    def test_a_fraction_pod_gets_the_environment_the_binder_fills(self):
        self.assertEqual(refused(pod("half", {"gpu-fraction": "0.5"})), "")
        got = CLIENT.get(f"/api/v1/namespaces/{NS}/pods/half")
        prefix = got["metadata"]["annotations"]["runai/shared-gpu-configmap"]
        self.assertTrue(prefix.startswith("half-") and prefix.endswith("-shared-gpu"), prefix)
        self.assertEqual(got["spec"].get("runtimeClassName"), "nvidia")
        c = got["spec"]["containers"][0]
        env = {e["name"]: e for e in c.get("env") or []}
        self.assertEqual(env["NVIDIA_VISIBLE_DEVICES"]["valueFrom"]["configMapKeyRef"]["name"],
                         f"{prefix}-0")
        self.assertEqual(env["GPU_PORTION"]["valueFrom"]["configMapKeyRef"]["name"], f"{prefix}-0")
        self.assertIn({"configMapRef": {"name": f"{prefix}-0-evar", "optional": False}},
                      c.get("envFrom") or [])

    def test_other_schedulers_pods_are_left_alone(self):
        self.assertEqual(refused(pod("foreign", {"gpu-fraction": "1.0"}, scheduler="default-scheduler")), "")
        got = CLIENT.get(f"/api/v1/namespaces/{NS}/pods/foreign")
        self.assertNotIn("runai/shared-gpu-configmap", got["metadata"].get("annotations") or {})


def dry_run_refusal(obj: dict) -> str:
    """The refusal of creating obj in a dry run (webhooks are called; nothing is stored)."""
    try:
        CLIENT.post(f"/api/v1/namespaces/{NS}/pods", obj, query={"dryRun": "All"})
    except sl.ApiError as e:
        return e.message
    return ""


class Scope(unittest.TestCase):
    """The pod webhooks are called only for pods of kai's scheduler (a matchCondition on
    spec.schedulerName): with a second configuration whose server is down (failurePolicy Fail),
    a kai pod is refused while a default-scheduler pod in the same namespace is created."""

    def test_a_webhook_that_is_down_stops_only_kais_pods(self):
        d = pathlib.Path(TMP.name)
        cfg = subprocess.run([str(KAI_BIN), "admission", "--print-webhook-config", "--ca-bundle",
                              str(d / "ca.crt"), "--url", f"https://127.0.0.1:{free_port()}"],
                             check=True, capture_output=True, text=True).stdout
        self.assertIn("object.spec.schedulerName == 'kai-scheduler'", cfg)
        down = cfg.replace("name: kai-admission\n", "name: kai-admission-down\n")
        self.assertEqual(down.count("kai-admission-down"), 2)
        SERVER.kubectl("apply", "-f", "-", input=down)
        try:
            msg = wait_for("the webhook that is down in force", lambda: (
                m := dry_run_refusal(pod("kai-while-down"))) and "failed calling webhook" in m and m)
            self.assertIn("pods.", msg)
            self.assertEqual(dry_run_refusal(pod("default-while-down",
                                                 scheduler="default-scheduler")), "")
            self.assertEqual(refused(pod("other-while-down", scheduler="other-scheduler")), "")
            got = CLIENT.get(f"/api/v1/namespaces/{NS}/pods/other-while-down")
            self.assertEqual(got["spec"]["schedulerName"], "other-scheduler")
        finally:
            SERVER.kubectl("delete", "mutatingwebhookconfiguration,validatingwebhookconfiguration",
                           "kai-admission-down")
        wait_for("the configuration that is down gone",
                 lambda: dry_run_refusal(pod("kai-after-down")) == "")


class Queues(unittest.TestCase):
    def test_a_tree_is_built_top_down_and_taken_down_bottom_up(self):
        self.assertIn("parentQueue", refused(queue("orphan", "no-such-parent"), QUEUES))
        self.assertEqual(refused(queue("dept"), QUEUES), "")
        self.assertEqual(refused(queue("team", "dept"), QUEUES), "")
        with self.assertRaises(sl.ApiError) as e:
            CLIENT.delete(f"{QUEUES}/dept")
        self.assertIn("team", e.exception.message)
        # The same as a user meets it, through kubectl.
        p = SERVER.kubectl("delete", "queues.scheduling.run.ai", "dept", check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("denied the request", p.stderr)
        self.assertIn("cannot be deleted", p.stderr)
        p = SERVER.kubectl("apply", "-f", "-", check=False,
                           input=json.dumps(queue("orphan2", "nowhere")))
        self.assertIn("does not exist", p.stderr)
        CLIENT.delete(f"{QUEUES}/team")
        CLIENT.delete(f"{QUEUES}/dept")
        wait_for("dept gone", lambda: dept_gone())
        bad = queue("greedy", gpu_quota=4)
        bad["spec"]["resources"]["gpu"]["limit"] = 2
        self.assertIn("limit", refused(bad, QUEUES))

    def test_children_above_their_parent_are_refused_in_block_mode(self):
        """The webhook runs with --limit-descendents-over-subscription=block (KAI v0.18)."""
        self.assertEqual(refused(queue("org", gpu_quota=4), QUEUES), "")
        self.addCleanup(CLIENT.delete, f"{QUEUES}/org")
        self.assertEqual(refused(queue("org-a", "org", gpu_quota=3), QUEUES), "")
        self.addCleanup(CLIENT.delete, f"{QUEUES}/org-a")
        self.assertIn("Queue org-b: spec.resources.gpu.quota: total children GPU quota (5) "
                      "exceeds parent queue org GPU quota (4)",
                      refused(queue("org-b", "org", gpu_quota=2), QUEUES))
        # Lowering the parent below its child is refused the same way, through kubectl too.
        lowered = CLIENT.get(f"{QUEUES}/org")
        lowered["spec"]["resources"]["gpu"]["quota"] = 2
        p = SERVER.kubectl("replace", "-f", "-", check=False, input=json.dumps(lowered))
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("child queue org-a GPU quota (3) exceeds parent GPU quota (2)", p.stderr)
        self.assertEqual(refused(queue("org-c", "org", gpu_quota=1), QUEUES), "")
        self.addCleanup(CLIENT.delete, f"{QUEUES}/org-c")


def dept_gone() -> bool:
    try:
        CLIENT.get(f"{QUEUES}/dept")
    except sl.ApiError as e:
        return e.status == 404
    return False


class PodGroups(unittest.TestCase):
    def test_a_broken_sub_group_tree_is_refused(self):
        pg = {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
              "metadata": {"name": "gang", "namespace": NS},
              "spec": {"queue": "team", "minMember": 2,
                       "subGroups": [{"name": "workers", "minMember": 2},
                                     {"name": "workers", "minMember": 1}]}}
        path = f"/apis/scheduling.run.ai/v2alpha2/namespaces/{NS}/podgroups"
        msg = refused(pg, path)
        self.assertIn("workers", msg)
        self.assertIn("PodGroup", msg)
        pg["spec"]["subGroups"][1]["name"] = "launcher"
        pg["spec"]["subGroups"][1]["parent"] = "missing"
        self.assertIn("missing", refused(pg, path))
        del pg["spec"]["subGroups"][1]["parent"]
        self.assertEqual(refused(pg, path), "")


class Certificates(unittest.TestCase):
    def test_a_rotated_certificate_is_served_without_a_restart(self):
        d = pathlib.Path(TMP.name)
        self.assertEqual(served_subject(), "kai-admission-1")
        make_certs(d, "next", 2)
        # Replace both files (rename: each swap is atomic, as a Secret volume update is).
        os.replace(d / "next.key", d / "serving.key")
        os.replace(d / "next.crt", d / "serving.crt")
        wait_for("the new certificate served", lambda: served_subject() == "kai-admission-2")
        self.assertNotEqual(refused(pod("after-rotation", {"gpu-fraction": "2"})), "")
        self.assertIsNone(WEBHOOK.poll(), "the webhook exited")


class FullPath(unittest.TestCase):
    """A half-GPU pod as a user submits it: admission adds the ConfigMap environment, the
    scheduler writes its BindRequest, the binder reserves a GPU (the fake kubelet of
    binder_test.py runs the real `kai resource-reservation` on a fake NVML) and fills the
    ConfigMaps the pod's environment reads."""

    def test_admission_scheduler_binder(self):
        import binder_test as bt  # the fake kubelet; its module state is not used
        if not bt.FAKE_NVML.is_file():
            self.skipTest(f"{bt.FAKE_NVML} not built")
        CLIENT.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                           "metadata": {"name": bt.RES_NS}})
        kubelet = bt.FakeKubelet(SERVER.kubeconfig)
        kubelet.start()
        binder = None
        try:
            CLIENT.post(QUEUES, queue("fp-q", gpu_quota=8))
            CLIENT.post("/api/v1/nodes", bt.node("fp-n"))
            CLIENT.post(f"/apis/scheduling.run.ai/v2alpha2/namespaces/{NS}/podgroups",
                        {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
                         "metadata": {"name": "fp-pg", "namespace": NS},
                         "spec": {"queue": "fp-q", "minMember": 1}})
            self.assertEqual(refused(pod("fp-half", {"gpu-fraction": "0.5",
                                                     "pod-group-name": "fp-pg"})), "")
            binder_log = pathlib.Path(TMP.name) / "binder.log"
            with binder_log.open("w") as log:
                binder = subprocess.Popen([str(KAI_BIN), "binder", "--kubeconfig",
                                           SERVER.kubeconfig, "--status-write-deferral", "0s"],
                                          stdout=subprocess.DEVNULL, stderr=log)
            out = subprocess.run([str(KAI_BIN), "scheduler", "--kubeconfig", SERVER.kubeconfig,
                                  "--once"], capture_output=True, text=True, timeout=120)
            self.assertEqual(out.returncode, 0, out.stderr[-2000:])
            got = wait_for("fp-half bound", lambda: (lambda p: p if p["spec"].get("nodeName")
                                                     else None)(
                CLIENT.get(f"/api/v1/namespaces/{NS}/pods/fp-half")), timeout=60)
            self.assertEqual(got["spec"]["nodeName"], "fp-n")
            env = {e["name"]: e for e in got["spec"]["containers"][0]["env"]}
            cm = env["NVIDIA_VISIBLE_DEVICES"]["valueFrom"]["configMapKeyRef"]["name"]
            data = wait_for(f"ConfigMap {cm} filled", lambda: CLIENT.get(
                f"/api/v1/namespaces/{NS}/configmaps/{cm}").get("data"))
            group = got["metadata"]["labels"]["runai-gpu-group"]
            res = [r for r in CLIENT.get(f"/api/v1/namespaces/{bt.RES_NS}/pods")["items"]
                   if r["metadata"]["labels"].get("runai-gpu-group") == group]
            self.assertEqual(len(res), 1)
            self.assertEqual(data["NVIDIA_VISIBLE_DEVICES"],
                             res[0]["metadata"]["annotations"][bt.GPU_ANN])
            self.assertEqual(data["GPU_PORTION"], "0.50")
            evar = got["spec"]["containers"][0]["envFrom"][0]["configMapRef"]["name"]
            CLIENT.get(f"/api/v1/namespaces/{NS}/configmaps/{evar}")  # exists
        finally:
            if binder is not None:
                binder.terminate()
                binder.wait(timeout=30)
            kubelet.stop()


def limit_ref(p: dict) -> dict | None:
    """The configMapKeyRef of the first container's CUDA_DEVICE_MEMORY_LIMIT (None: none)."""
    for e in p["spec"]["containers"][0].get("env") or []:
        if e["name"] == "CUDA_DEVICE_MEMORY_LIMIT":
            return e["valueFrom"]["configMapKeyRef"]
    return None


def ensure(path: str, obj: dict) -> None:
    try:
        CLIENT.post(path, obj)
    except sl.ApiError as e:
        if e.status != 409:
            raise


class HamiCore(unittest.TestCase):
    """`kai admission --hami-core-enabled` with the binder's hamicore plugin (KAI's split): a
    gpu-memory pod as a user submits it reads CUDA_DEVICE_MEMORY_LIMIT from an optional key of its
    capabilities ConfigMap; after `kai scheduler --once` and `kai binder --plugins
    '{"hamicore":{"enabled":true}}'` the key holds the node's nvidia.com/gpu.memory times the
    portion of a GPU the pod received, in MiB ("<MiB>m"). The module's webhook is restarted with
    the flag for this class and without it after."""

    @classmethod
    def setUpClass(cls):
        kube_server.stop_process(WEBHOOK)
        start_webhook("--hami-core-enabled")
        probe = pod("hami-probe", {"gpu-fraction": "0.5"})
        wait_for("the webhook with HAMi-core in force", lambda: limit_ref(CLIENT.post(
            f"/api/v1/namespaces/{NS}/pods", probe, query={"dryRun": "All"})))

    @classmethod
    def tearDownClass(cls):
        kube_server.stop_process(WEBHOOK)
        start_webhook()

    def test_admission_scheduler_binder(self):
        import binder_test as bt  # the fake kubelet; its module state is not used
        if not bt.FAKE_NVML.is_file():
            self.skipTest(f"{bt.FAKE_NVML} not built")
        ensure("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                      "metadata": {"name": bt.RES_NS}})
        kubelet = bt.FakeKubelet(SERVER.kubeconfig)
        kubelet.start()
        binder = None
        binder_log = pathlib.Path(TMP.name) / "hamicore-binder.log"
        try:
            CLIENT.post(QUEUES, queue("hc-q", gpu_quota=8))
            CLIENT.post("/api/v1/nodes", bt.node("hc-n", gpu_memory="15360"))
            CLIENT.post(f"/apis/scheduling.run.ai/v2alpha2/namespaces/{NS}/podgroups",
                        {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
                         "metadata": {"name": "hc-pg", "namespace": NS},
                         "spec": {"queue": "hc-q", "minMember": 1}})
            p = pod("hc-mem", {"gpu-memory": "4096", "pod-group-name": "hc-pg"})
            p["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "hc-n"}
            self.assertEqual(refused(p), "")
            admitted = CLIENT.get(f"/api/v1/namespaces/{NS}/pods/hc-mem")
            prefix = admitted["metadata"]["annotations"]["runai/shared-gpu-configmap"]
            self.assertEqual(limit_ref(admitted), {"key": "CUDA_DEVICE_MEMORY_LIMIT",
                                                   "name": f"{prefix}-0", "optional": True})
            with binder_log.open("w") as log:
                binder = subprocess.Popen(
                    [str(KAI_BIN), "binder", "--kubeconfig", SERVER.kubeconfig,
                     "--status-write-deferral", "0s", "--plugins",
                     '{"hamicore":{"enabled":true}}'],
                    stdout=subprocess.DEVNULL, stderr=log)
            out = subprocess.run([str(KAI_BIN), "scheduler", "--kubeconfig", SERVER.kubeconfig,
                                  "--once"], capture_output=True, text=True, timeout=120)
            self.assertEqual(out.returncode, 0, out.stderr[-2000:])
            got = wait_for("hc-mem bound", lambda: (lambda q: q if q["spec"].get("nodeName")
                                                    else None)(
                CLIENT.get(f"/api/v1/namespaces/{NS}/pods/hc-mem")), timeout=60)
            self.assertEqual(got["spec"]["nodeName"], "hc-n")
            brs = CLIENT.get(f"/apis/scheduling.run.ai/v1alpha2/namespaces/{NS}/bindrequests")
            br = [b for b in brs["items"] if b["spec"]["podName"] == "hc-mem"][0]
            portion = br["spec"]["receivedGPU"]["portion"]
            want = int(15360 * Decimal(portion))  # floor: both are positive
            data = wait_for(f"ConfigMap {prefix}-0 filled", lambda: CLIENT.get(
                f"/api/v1/namespaces/{NS}/configmaps/{prefix}-0").get("data"))
            self.assertEqual(data["CUDA_DEVICE_MEMORY_LIMIT"], f"{want}m", f"portion {portion}")
            self.assertEqual(data["GPU_PORTION"], portion)
        finally:
            if binder is not None:
                binder.terminate()
                binder.wait(timeout=30)
            kubelet.stop()
            if os.environ.get("KAI_E2E_VERBOSE") and binder_log.exists():
                sys.stderr.write(binder_log.read_text()[-4000:])


NV_REQUEST = "nvidia.com/container.main.gpu-memory.request"
NV_LIMIT = "nvidia.com/container.main.gpu-memory.limit"
NV_DEVICES = "nvidia.com/container.main.gpus.devices"


class NvFractions(unittest.TestCase):
    """KAI v0.18's NvFractions: per-container GPU memory in annotations. Bad requests are refused
    naming the annotation; the devices annotation is the binder's alone (no pod is created with
    it, the admin may not change it); a valid pod goes through `kai scheduler --once` and `kai
    binder`, running as deploy/rbac/binder.yaml's ServiceAccount (the webhook's default writer),
    and ends bound with the reserved GPU in its devices annotation and no ConfigMap environment."""

    def test_bad_requests_are_refused_with_the_annotation(self):
        msg = refused(pod("nv-over", {NV_REQUEST: "8Gi", NV_LIMIT: "4Gi"}))
        self.assertIn(f"Pod {NS}/nv-over: metadata.annotations.{NV_REQUEST}: the request 8Gi is "
                      "above the limit 4Gi", msg)
        msg = refused(pod("nv-zero", {NV_REQUEST: "0"}))
        self.assertIn("must be a positive memory quantity", msg)
        msg = refused(pod("nv-ghost", {"nvidia.com/container.ghost.gpu-memory.request": "1Gi"}))
        self.assertIn('no container or init container named "ghost"', msg)
        msg = refused(pod("nv-whole", {NV_REQUEST: "1Gi"}, gpus="1"))
        self.assertIn("must not also request nvidia.com/gpu", msg)
        msg = refused(pod("nv-legacy", {NV_REQUEST: "1Gi", "gpu-memory": "1024"}))
        self.assertIn("cannot be combined with the gpu-memory annotation", msg)
        msg = refused(pod("nv-devices", {NV_REQUEST: "1Gi", NV_DEVICES: "GPU-0"}))
        self.assertIn(f"metadata.annotations.{NV_DEVICES}: only the binder writes it", msg)

    def test_no_one_but_the_binder_changes_the_devices(self):
        self.assertEqual(refused(pod("nv-edit", {NV_REQUEST: "1Gi"})), "")
        path = f"/api/v1/namespaces/{NS}/pods/nv-edit"
        with self.assertRaises(sl.ApiError) as e:
            CLIENT.merge_patch(path, {"metadata": {"annotations": {NV_DEVICES: "GPU-0"}}})
        self.assertIn("only the binder (system:serviceaccount:kai-scheduler:kai-binder) may "
                      "change it", e.exception.message)
        # Other edits of the pod are anyone's.
        CLIENT.merge_patch(path, {"metadata": {"labels": {"x": "y"}}})

    def test_admission_scheduler_binder(self):
        import binder_test as bt  # the fake kubelet; its module state is not used
        if not bt.FAKE_NVML.is_file():
            self.skipTest(f"{bt.FAKE_NVML} not built")
        SERVER.kubectl("apply", "-f", str(REPO / "deploy" / "rbac" / "binder.yaml"))
        binder_kc = SERVER.token_kubeconfig("kai-scheduler", "kai-binder",
                                            pathlib.Path(TMP.name) / "nv-binder.kc")
        kubelet = bt.FakeKubelet(SERVER.kubeconfig)
        kubelet.start()
        binder = None
        binder_log = pathlib.Path(TMP.name) / "nvfractions-binder.log"
        try:
            CLIENT.post(QUEUES, queue("nv-q", gpu_quota=8))
            CLIENT.post("/api/v1/nodes", bt.node("nv-n", gpu_memory="15360"))
            CLIENT.post(f"/apis/scheduling.run.ai/v2alpha2/namespaces/{NS}/podgroups",
                        {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
                         "metadata": {"name": "nv-pg", "namespace": NS},
                         "spec": {"queue": "nv-q", "minMember": 1}})
            p = pod("nv-mem", {NV_REQUEST: "4096Mi", NV_LIMIT: "6Gi", "pod-group-name": "nv-pg"})
            p["spec"]["nodeSelector"] = {"kubernetes.io/hostname": "nv-n"}
            self.assertEqual(refused(p), "")
            admitted = CLIENT.get(f"/api/v1/namespaces/{NS}/pods/nv-mem")
            self.assertNotIn("runai/shared-gpu-configmap", admitted["metadata"]["annotations"])
            self.assertIsNone(admitted["spec"]["containers"][0].get("env"))
            self.assertEqual(admitted["spec"].get("runtimeClassName"), "nvidia")
            with binder_log.open("w") as log:
                binder = subprocess.Popen(
                    [str(KAI_BIN), "binder", "--kubeconfig", binder_kc,
                     "--status-write-deferral", "0s"], stdout=subprocess.DEVNULL, stderr=log)
            out = subprocess.run([str(KAI_BIN), "scheduler", "--kubeconfig", SERVER.kubeconfig,
                                  "--once"], capture_output=True, text=True, timeout=120)
            self.assertEqual(out.returncode, 0, out.stderr[-2000:])
            got = wait_for("nv-mem bound", lambda: (lambda q: q if q["spec"].get("nodeName")
                                                    else None)(
                CLIENT.get(f"/api/v1/namespaces/{NS}/pods/nv-mem")), timeout=60)
            self.assertEqual(got["spec"]["nodeName"], "nv-n")
            self.assertEqual(got["metadata"]["annotations"].get(NV_DEVICES), "GPU-nv-n-0")
            self.assertEqual(got["metadata"]["annotations"].get("received-resource-type"),
                             "Fraction")
            brs = CLIENT.get(f"/apis/scheduling.run.ai/v1alpha2/namespaces/{NS}/bindrequests")
            br = [b for b in brs["items"] if b["spec"]["podName"] == "nv-mem"][0]
            self.assertEqual(br["spec"]["receivedGPU"]["portion"], "0.27")  # 4096 / 15360
            cms = CLIENT.get(f"/api/v1/namespaces/{NS}/configmaps")["items"]
            self.assertEqual([c["metadata"]["name"] for c in cms
                              if c["metadata"]["name"].startswith("nv-mem")], [])
        finally:
            if binder is not None:
                binder.terminate()
                binder.wait(timeout=30)
            kubelet.stop()
            if os.environ.get("KAI_E2E_VERBOSE") and binder_log.exists():
                sys.stderr.write(binder_log.read_text()[-4000:])


class Resize(unittest.TestCase):
    """In-place resize against the queue's limit: queue rz allows 3 CPUs and holds 2 (its
    status); its running pod asking 1 CPU may grow to 2 but not to 3, and the refusal names the
    queue and the amounts."""

    def test_a_growth_past_the_queue_limit_is_refused(self):
        q = queue("rz")
        q["spec"]["resources"]["cpu"]["limit"] = 3000  # millicores
        CLIENT.post(QUEUES, q)
        CLIENT.merge_patch(f"{QUEUES}/rz/status", {"status": {"allocated": {"cpu": "2"}}})
        p = pod("rz-0")
        p["metadata"]["labels"] = {"kai.scheduler/queue": "rz"}
        p["spec"]["nodeName"] = "rz-n"
        CLIENT.post(f"/api/v1/namespaces/{NS}/pods", p)
        path = f"/api/v1/namespaces/{NS}/pods/rz-0"
        CLIENT.merge_patch(path + "/status", {"status": {"phase": "Running", "containerStatuses": [
            {"name": "main", "image": "busybox", "imageID": "", "ready": True, "restartCount": 0,
             "state": {"running": {}}, "allocatedResources": {"cpu": "1"}}]}})

        def resize(cpu: str) -> str:
            got = CLIENT.get(path)
            got["spec"]["containers"][0]["resources"] = {"limits": {"cpu": cpu},
                                                          "requests": {"cpu": cpu}}
            try:
                CLIENT.request("PUT", path, got)
            except sl.ApiError as e:
                return e.message
            return ""

        msg = resize("3")
        self.assertIn("Pod adm/rz-0: spec.containers[*].resources: the resize adds cpu 2 to queue "
                      "rz, which holds 2 of its limit of 3", msg)
        self.assertEqual(resize("2"), "")
        self.assertEqual(CLIENT.get(path)["spec"]["containers"][0]["resources"]["requests"]["cpu"],
                         "2")


if __name__ == "__main__":
    unittest.main(verbosity=2)
