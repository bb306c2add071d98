#!/usr/bin/env python3
"""`kai controllers` on a real kube-apiserver with RBAC enforced, run with the token of
deploy/rbac/controllers.yaml's ServiceAccount: a queue tree (root with two leaves), PodGroups of
a few priorities and their pods (made here with spec.nodeName set; their phase and PodScheduled
condition set through pods/status as the admin, no kubelet runs), a fractional pod and a
gpu-memory pod. The statuses must be what KAI's podgroup and queue controllers write (values
worked out by hand below from KAI's rules), /metrics must carry KAI's queue metrics, nothing may
be refused, a restart on an unchanged cluster must write nothing, and a change made while the
controller was down must be caught up after a restart.

    python3 tests/e2e/controllers_test.py       (KAI_BIN: the kai binary; default build/kai)
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kube_server  # noqa: E402
import scenario_loader as sl  # noqa: E402

REPO = kube_server.REPO_ROOT
KAI_BIN = pathlib.Path(os.environ.get("KAI_BIN", REPO / "build" / "kai"))
RBAC = REPO / "deploy" / "rbac" / "controllers.yaml"
SA = "system:serviceaccount:kai-scheduler:kai-controllers"
NS = "team"
PG = "/apis/scheduling.run.ai/v2alpha2/namespaces/team/podgroups"
QUEUES = "/apis/scheduling.run.ai/v2/queues"
FORBIDDEN = re.compile(r"\b403\b|Forbidden", re.I)

SERVER: kube_server.Server | None = None
CLIENT: sl.Client | None = None
TMP: tempfile.TemporaryDirectory | None = None
KUBECONFIG = ""


free_port = kube_server.free_port


def setUpModule():
    global SERVER, CLIENT, TMP, KUBECONFIG
    kube_server.require_apiserver()
    if not KAI_BIN.is_file():
        raise unittest.SkipTest(f"{KAI_BIN} not built")
    TMP = tempfile.TemporaryDirectory(prefix="kai-controllers-e2e-")
    SERVER = kube_server.Server.start()
    try:
        CLIENT = sl.Client(SERVER.kubeconfig)
        sl.Loader(CLIENT).ensure_crds()
        SERVER.kubectl("apply", "-f", str(RBAC))
        KUBECONFIG = SERVER.token_kubeconfig("kai-scheduler", "kai-controllers",
                                             pathlib.Path(TMP.name) / "controllers.kc")
        make_cluster()
    except BaseException:
        kube_server.release(CLIENT, SERVER, TMP)
        raise


def tearDownModule():
    kube_server.release(CLIENT, SERVER, TMP)


def queue(name: str, parent: str = "", gpu: float = 0, display: str = "") -> dict:
    spec = {"resources": {"gpu": {"quota": gpu, "limit": -1, "overQuotaWeight": 1},
                          "cpu": {"quota": 8000, "limit": -1, "overQuotaWeight": 1},
                          "memory": {"quota": -1, "limit": -1, "overQuotaWeight": 1}}}
    if parent:
        spec["parentQueue"] = parent
    if display:
        spec["displayName"] = display
    return {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": name},
            "spec": spec}


def pod_group(name: str, q: str, priority_class: str, preemptibility: str = "") -> dict:
    spec = {"queue": q, "priorityClassName": priority_class, "minMember": 1}
    if preemptibility:
        spec["preemptibility"] = preemptibility
    return {"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": NS}, "spec": spec}


def pod(name: str, group: str, requests: dict, annotations: dict | None = None) -> dict:
    limits = {k: v for k, v in requests.items() if k == "nvidia.com/gpu"}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS,
                         "annotations": {"pod-group-name": group, **(annotations or {})}},
            "spec": {"schedulerName": "kai-scheduler", "nodeName": "n1",
                     "containers": [{"name": "c", "image": "x",
                                     "resources": {"requests": requests, "limits": limits}}]}}


def set_phase(name: str, phase: str, scheduled: bool) -> None:
    status = {"phase": phase}
    if scheduled:
        status["conditions"] = [{"type": "PodScheduled", "status": "True"}]
    CLIENT.merge_patch(f"/api/v1/namespaces/{NS}/pods/{name}/status", {"status": status})


FRACTION = {"gpu-fraction": "0.5", "received-resource-type": "Fraction"}
MEMORY = {"gpu-memory": "10000", "received-resource-type": "Fraction"}


def make_cluster() -> None:
    CLIENT.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                       "metadata": {"name": NS}})
    for name, value in (("train", 50), ("inference", 125)):
        CLIENT.post("/apis/scheduling.k8s.io/v1/priorityclasses",
                    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                     "metadata": {"name": name}, "value": value})
    CLIENT.post("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": "n1", "labels": {"nvidia.com/gpu.memory": "40000"}}})
    for q in (queue("root", gpu=4), queue("leaf-a", "root", 2, "Team A"),
              queue("leaf-b", "root", 2)):
        CLIENT.post(QUEUES, q)
    for g in (pod_group("train-a", "leaf-a", "train"), pod_group("infer-a", "leaf-a", "inference"),
              pod_group("frac-b", "leaf-b", "train"), pod_group("mem-b", "leaf-b", "inference"),
              pod_group("build-b", "leaf-b", "train", "non-preemptible")):
        CLIENT.post(PG, g)
    pods = [("ta-0", "train-a", {"cpu": "500m", "memory": "1Gi"}, None, "Running", True),
            ("ta-1", "train-a", {"cpu": "500m", "memory": "1Gi"}, None, "Pending", False),
            ("ta-2", "train-a", {"cpu": "4"}, None, "Succeeded", True),
            ("ia-0", "infer-a", {"cpu": "1", "nvidia.com/gpu": "1"}, None, "Running", True),
            ("fb-0", "frac-b", {"cpu": "100m"}, FRACTION, "Running", True),
            ("mb-0", "mem-b", {"cpu": "100m"}, MEMORY, "Running", True),
            ("bb-0", "build-b", {"cpu": "2"}, None, "Pending", True)]
    for name, group, requests, annotations, phase, scheduled in pods:
        CLIENT.post(f"/api/v1/namespaces/{NS}/pods", pod(name, group, requests, annotations))
        set_phase(name, phase, scheduled)


# What KAI's controllers write for that cluster (ResourceLists in apimachinery's canonical form).
def rs(requested: dict, allocated: dict, non_preemptible: dict | None = None) -> dict:
    out = {"requested": requested, "allocated": allocated}
    if non_preemptible:
        out["allocatedNonPreemptible"] = non_preemptible
    return out


GROUPS = {
    # Pending counts as requested only; Succeeded nowhere; preemptible (train, 50).
    "train-a": rs({"cpu": "1", "memory": "2Gi"}, {"cpu": "500m", "memory": "1Gi"}),
    "infer-a": rs({"cpu": "1", "nvidia.com/gpu": "1"}, {"cpu": "1", "nvidia.com/gpu": "1"},
                  {"cpu": "1", "nvidia.com/gpu": "1"}),
    "frac-b": rs({"cpu": "100m", "nvidia.com/gpu": "500m"}, {"cpu": "100m", "nvidia.com/gpu": "500m"}),
    # 10000 MiB of a 40000 MiB GPU.
    "mem-b": rs({"cpu": "100m", "run.ai/gpu.memory": "10k"}, {"cpu": "100m", "nvidia.com/gpu": "250m"},
                {"cpu": "100m", "nvidia.com/gpu": "250m"}),
    # A scheduled Pending pod is allocated; explicitly non-preemptible at priority 50.
    "build-b": rs({"cpu": "2"}, {"cpu": "2"}, {"cpu": "2"}),
}


def qs(requested: dict, allocated: dict, non_preemptible: dict, children=None) -> dict:
    out = {"requested": requested, "allocated": allocated, "allocatedNonPreemptible": non_preemptible}
    if children:
        out["childQueues"] = children
    return out


QUEUE_STATUS = {
    "leaf-a": qs({"cpu": "2", "memory": "2Gi", "nvidia.com/gpu": "1"},
                 {"cpu": "1500m", "memory": "1Gi", "nvidia.com/gpu": "1"},
                 {"cpu": "1", "nvidia.com/gpu": "1"}),
    "leaf-b": qs({"cpu": "2200m", "nvidia.com/gpu": "500m", "run.ai/gpu.memory": "10k"},
                 {"cpu": "2200m", "nvidia.com/gpu": "750m"}, {"cpu": "2100m", "nvidia.com/gpu": "250m"}),
    "root": qs({"cpu": "4200m", "memory": "2Gi", "nvidia.com/gpu": "1500m", "run.ai/gpu.memory": "10k"},
               {"cpu": "3700m", "memory": "1Gi", "nvidia.com/gpu": "1750m"},
               {"cpu": "3100m", "nvidia.com/gpu": "1250m"}, ["leaf-a", "leaf-b"]),
}


def group_statuses() -> dict:
    return {g["metadata"]["name"]: (g.get("status") or {}).get("resourcesStatus") or {}
            for g in CLIENT.get(PG)["items"]}


def queue_statuses() -> dict:
    keys = ("requested", "allocated", "allocatedNonPreemptible", "childQueues")
    return {q["metadata"]["name"]: {k: v for k, v in (q.get("status") or {}).items() if k in keys}
            for q in CLIENT.get(QUEUES)["items"]}


def versions() -> dict:
    return {o["metadata"]["name"]: o["metadata"]["resourceVersion"]
            for o in CLIENT.get(PG)["items"] + CLIENT.get(QUEUES)["items"]}


class Controllers(unittest.TestCase):
    def start(self, log: pathlib.Path, kai_names: bool = False) -> subprocess.Popen:
        """kai controllers; with `kai_names`, as KAI's operator starts its controllers: KAI's
        metrics flag, a client-side rate limit, and flags kai takes without an effect."""
        self.metrics_port, self.health_port = free_port(), free_port()
        metrics = "--metrics-listen-address" if kai_names else "--metrics-bind-address"
        kai_args = (["--qps", "20", "--burst", "5", "--enable-webhook=true",
                     "--max-concurrent-reconciles", "10", "--zap-devel=true"] if kai_names else [])
        with log.open("w") as f:
            p = subprocess.Popen(
                [str(KAI_BIN), "controllers", "--kubeconfig", KUBECONFIG, "--leader-elect",
                 "--leader-elect-identity", "e2e-controllers",
                 metrics, f"127.0.0.1:{self.metrics_port}",
                 "--health-probe-bind-address", f"127.0.0.1:{self.health_port}"] + kai_args,
                stdout=subprocess.DEVNULL, stderr=f)
        self.addCleanup(kube_server.stop_process, p)
        kube_server.wait_until("/readyz", lambda: self.get(self.health_port, "/readyz").strip() == "ok",
                               30, (OSError,), log)
        return p

    @staticmethod
    def get(port: int, path: str) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.read().decode()

    def converge(self, groups: dict, queues: dict, log: pathlib.Path) -> None:
        kube_server.wait_until("the PodGroup statuses", lambda: group_statuses() == groups, 30,
                               (OSError, sl.ApiError), log)
        kube_server.wait_until("the Queue statuses", lambda: queue_statuses() == queues, 30,
                               (OSError, sl.ApiError), log)

    def stop(self, p: subprocess.Popen, log: pathlib.Path) -> str:
        kube_server.stop_process(p)
        text = log.read_text()
        self.assertNotRegex(text, FORBIDDEN, f"a call was refused:\n{text[-3000:]}")
        return text

    def test_statuses_metrics_restart_and_catch_up(self):
        tmp = pathlib.Path(TMP.name)
        log1 = tmp / "run1.log"
        p = self.start(log1)
        self.converge(GROUPS, QUEUE_STATUS, log1)
        self.check_metrics()
        lease = CLIENT.get("/apis/coordination.k8s.io/v1/namespaces/kai-scheduler/leases/"
                           "kai-controllers")
        self.assertEqual(lease["spec"]["holderIdentity"], "e2e-controllers")
        self.stop(p, log1)

        # A restart on an unchanged cluster writes nothing; it runs with KAI's flags, rate-limited.
        before = versions()
        log2 = tmp / "run2.log"
        p = self.start(log2, kai_names=True)
        time.sleep(3)
        self.assertEqual(versions(), before)
        self.check_metrics()  # the restarted controller reports the same metrics
        text = self.stop(p, log2)
        self.assertNotIn("updated the status", text)
        self.assertIn("--enable-webhook has no effect in kai", text)

        # A change while it is down is caught up after the next start: ta-1 starts running.
        set_phase("ta-1", "Running", True)
        groups = dict(GROUPS)
        groups["train-a"] = rs({"cpu": "1", "memory": "2Gi"}, {"cpu": "1", "memory": "2Gi"})
        queues = json.loads(json.dumps(QUEUE_STATUS))
        queues["leaf-a"]["allocated"] = {"cpu": "2", "memory": "2Gi", "nvidia.com/gpu": "1"}
        queues["root"]["allocated"] = {"cpu": "4200m", "memory": "2Gi", "nvidia.com/gpu": "1750m"}
        log3 = tmp / "run3.log"
        p = self.start(log3)
        self.converge(groups, queues, log3)
        text = self.stop(p, log3)
        # Only what changed was written: train-a, leaf-a, root.
        written = set(re.findall(r"updated the status of (?:PodGroup|Queue) (\S+):", text))
        self.assertEqual(written, {"team/train-a", "leaf-a", "root"})

    def check_metrics(self):
        text = kube_server.wait_until(
            "the queue metrics", lambda: (lambda t: 'queue_name="root"} 1.75' in t and t)(
                self.get(self.metrics_port, "/metrics")), 30)
        lbl = {q: f'{{queue_display_name="{d}",queue_metadata_name="{q}",queue_name="{q}"}}'
               for q, d in (("root", ""), ("leaf-a", "Team A"), ("leaf-b", ""))}
        values = {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
                  for line in text.splitlines() if line and not line.startswith("#")}
        for series, want in [(f"kai_queue_info{lbl['root']}", 1),
                             (f"kai_queue_deserved_gpus{lbl['leaf-a']}", 2),
                             (f"kai_queue_quota_cpu_cores{lbl['leaf-b']}", 8),
                             (f"kai_queue_quota_memory_bytes{lbl['root']}", -1),
                             (f"kai_queue_allocated_gpus{lbl['leaf-b']}", 0.75),
                             (f"kai_queue_allocated_gpus{lbl['root']}", 1.75),
                             (f"kai_queue_allocated_cpu_cores{lbl['root']}", 3.7),
                             (f"kai_queue_allocated_memory_bytes{lbl['leaf-a']}", 1073741824)]:
            self.assertIn(series, values, text[-3000:])
            self.assertAlmostEqual(values[series], want, msg=series)
        for name in ("workqueue_adds_total", "controller_runtime_reconcile_total",
                     "process_resident_memory_bytes"):
            self.assertRegex(text, rf"(?m)^{name}\b", name)


class Rbac(unittest.TestCase):
    def test_the_service_account_may_do_only_that(self):
        def can_i(verb: str, res: str, ns: str, subresource: str = "") -> str:
            extra = ["--subresource", subresource] if subresource else []
            return SERVER.kubectl("auth", "can-i", verb, res, "--as", SA, "-n", ns, *extra,
                                  check=False).stdout.strip()
        for verb, res, sub, ns, allowed in [
                ("patch", "podgroups.scheduling.run.ai", "status", NS, "yes"),
                ("patch", "podgroups.scheduling.run.ai", "", NS, "no"),
                ("patch", "queues.scheduling.run.ai", "status", "default", "yes"),
                ("update", "queues.scheduling.run.ai", "status", "default", "no"),
                ("list", "pods", "", NS, "yes"),
                ("get", "pods", "", NS, "no"),
                ("update", "leases", "", "kai-scheduler", "yes"),
                ("update", "leases", "", NS, "no")]:
            self.assertEqual(can_i(verb, res, ns, sub), allowed, f"can-i {verb} {res} {sub} -n {ns}")

    def test_role_is_exactly_what_the_controllers_call(self):
        by = kube_server.rbac_objects(RBAC)
        watched = [("", "pods"), ("", "nodes"), ("scheduling.k8s.io", "priorityclasses"),
                   ("scheduling.run.ai", "podgroups"), ("scheduling.run.ai", "queues")]
        want = {(g, r, v) for g, r in watched for v in ("list", "watch")} | {
            ("scheduling.run.ai", "podgroups/status", "patch"),
            ("scheduling.run.ai", "queues/status", "patch")} | {
            (g, r, v) for g, r in (("scheduling.run.ai", "queues"), ("kai.scheduler", "schedulingshards"))
            for v in ("get", "create")}
        self.assertEqual(kube_server.rbac_rules(by[("ClusterRole", "kai-controllers")]), want)
        self.assertEqual(kube_server.rbac_rules(by[("Role", "kai-controllers-leader-election")]),
                         {("coordination.k8s.io", "leases", v) for v in ("get", "create", "update")})


if __name__ == "__main__":
    unittest.main()
