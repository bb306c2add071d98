#!/usr/bin/env python3
"""`kai scale-adjuster` on a real kube-apiserver with RBAC on, run as its installed
ServiceAccount (deploy/rbac/scale-adjuster.yaml).

    python3 tests/e2e/scaleadjuster_test.py [-v]
    KAI_BIN=/path/to/kai python3 tests/e2e/scaleadjuster_test.py

No scheduler and no kubelet run there: the test marks a fractional pod unschedulable as the
scheduler would (PodScheduled=False, reason Unschedulable, patched as the admin), schedules it by
a binding or by the condition turning True, and deletes it.

- Scaling: unschedulable fractions get whole-GPU scaling pods in kai-scale-adjust, as many as the
  fractions need (KAI's counting), named <ns>-<name>, labelled with their pod, asking whole
  GPUs plus the pod's cpu and memory, with its affinity, tolerations and node selector; pods that
  are not unschedulable, not fractional or of another scheduler get none. They go when their pod
  is bound, turns schedulable or is deleted; a deletion holds creations for the cool-down. The
  Lease is taken (--leader-elect) and /readyz answers.
- Restart: scaling pods a stopped run left are adopted (kept, same uid) when still needed and
  deleted when their pod is gone.
- Rbac: no call of any run is refused (no 403 in its log); the roles hold exactly its calls.

Skips when /opt/kube-test/bin/kube-apiserver is not built.
"""

from __future__ import annotations

import calendar
import os
import pathlib
import re
import signal
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
RBAC = REPO / "deploy" / "rbac" / "scale-adjuster.yaml"
SCALE_NS = "kai-scale-adjust"
SA = "system:serviceaccount:kai-scheduler:kai-scale-adjuster"
FORBIDDEN = re.compile(r"\b403\b|Forbidden", re.I)
LEASE = "/apis/coordination.k8s.io/v1/namespaces/kai-scheduler/leases/7n7h49uc.kai.scheduler"

SERVER: kube_server.Server | None = None
CLIENT: sl.Client | None = None
TMP: tempfile.TemporaryDirectory | None = None
KUBECONFIG: str = ""


def setUpModule():
    global SERVER, CLIENT, TMP, KUBECONFIG
    kube_server.require_apiserver()
    if not KAI_BIN.is_file():
        raise unittest.SkipTest(f"{KAI_BIN} not built")
    TMP = tempfile.TemporaryDirectory(prefix="kai-scale-adjuster-e2e-")
    SERVER = kube_server.Server.start()
    try:
        CLIENT = sl.Client(SERVER.kubeconfig)
        SERVER.kubectl("apply", "-f", str(RBAC))
        KUBECONFIG = SERVER.token_kubeconfig("kai-scheduler", "kai-scale-adjuster",
                                             pathlib.Path(TMP.name) / "sa.kc")
    except BaseException:
        SERVER.stop()
        raise


def tearDownModule():
    kube_server.release(CLIENT, SERVER, TMP)


def ensure_namespace(ns: str) -> None:
    try:
        CLIENT.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                           "metadata": {"name": ns}})
    except sl.ApiError as e:
        if e.status != 409:
            raise


AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
            "matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [{
            "weight": 50, "preference": {"matchExpressions": [
                {"key": "gpu", "operator": "In", "values": ["h100"]}]}}]},
    "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
        "weight": 100, "podAffinityTerm": {
            "labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}}]},
}
TOLERATIONS = [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"},
               {"key": "spot", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}]
NODE_SELECTOR = {"pool": "gpu"}


def pod(ns: str, name: str, annotations: dict, scheduler: str = "kai-scheduler",
        constraints: bool = False) -> dict:
    containers = [{"name": "main", "image": "busybox",
                   "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}}},
                  {"name": "side", "image": "busybox",
                   "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}}}]
    spec = {"schedulerName": scheduler, "containers": containers}
    if constraints:
        spec.update(affinity=AFFINITY, tolerations=TOLERATIONS, nodeSelector=NODE_SELECTOR)
    return CLIENT.post(f"/api/v1/namespaces/{ns}/pods", {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "annotations": annotations}, "spec": spec})


def set_scheduled(ns: str, name: str, status: str) -> None:
    """The PodScheduled condition, patched as the scheduler would."""
    cond = {"type": "PodScheduled", "status": status,
            "reason": "Unschedulable" if status == "False" else "",
            "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    CLIENT.request("PATCH", f"/api/v1/namespaces/{ns}/pods/{name}/status",
                   {"status": {"conditions": [cond]}},
                   content_type="application/strategic-merge-patch+json")


def unschedulable(ns: str, name: str, annotations: dict, **kw) -> dict:
    p = pod(ns, name, annotations, **kw)
    set_scheduled(ns, name, "False")
    return p


def bind(ns: str, name: str, node: str) -> None:
    CLIENT.post(f"/api/v1/namespaces/{ns}/pods/{name}/binding",
                {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
                 "target": {"apiVersion": "v1", "kind": "Node", "name": node}})


def scaling_pods() -> dict[str, dict]:
    items = CLIENT.get(f"/api/v1/namespaces/{SCALE_NS}/pods").get("items") or []
    return {p["metadata"]["name"]: p for p in items if not p["metadata"].get("deletionTimestamp")}


def condition(p: dict, kind: str) -> dict | None:
    for c in (p.get("status") or {}).get("conditions") or []:
        if c.get("type") == kind:
            return c
    return None


free_port = kube_server.free_port


def rfc3339(t: str) -> int:
    return calendar.timegm(time.strptime(t, "%Y-%m-%dT%H:%M:%SZ"))


class Case(unittest.TestCase):
    def setUp(self):
        self.ns = f"sa-{self._testMethodName.lower().replace('_', '-')}"[:60]
        ensure_namespace(self.ns)
        self.procs: list[subprocess.Popen] = []
        self.logs: list[pathlib.Path] = []

    def tearDown(self):
        for p in self.procs:
            kube_server.stop_process(p)
        # The next test's adjuster must not see this test's pods (namespaces are not emptied:
        # no controller manager runs).
        CLIENT.request("DELETE", f"/api/v1/namespaces/{self.ns}/pods",
                       query={"gracePeriodSeconds": "0"})
        for name in scaling_pods():
            CLIENT.request("DELETE", f"/api/v1/namespaces/{SCALE_NS}/pods/{name}",
                           query={"gracePeriodSeconds": "0"})
        for log in self.logs:
            text = log.read_text()
            if not getattr(self._outcome, "success", True) or os.environ.get("KAI_E2E_VERBOSE"):
                sys.stderr.write(f"--- {log}\n{text[-4000:]}\n")
            self.assertNotRegex(text, FORBIDDEN, f"{log.name}: the ServiceAccount lacks a right")

    def start(self, *args: str) -> subprocess.Popen:
        log = pathlib.Path(TMP.name) / f"{self.ns}-{len(self.logs)}.log"
        self.logs.append(log)
        with log.open("w") as f:
            p = subprocess.Popen([str(KAI_BIN), "scale-adjuster", "--kubeconfig", KUBECONFIG,
                                  *args], stdout=subprocess.DEVNULL, stderr=f)
        self.procs.append(p)
        return p

    def wait(self, what: str, fn, timeout: float = 20.0):
        return kube_server.wait_until(what, fn, timeout=timeout, errors=(OSError, sl.ApiError),
                                      log=self.logs[-1] if self.logs else None, interval=0.1)

    def scaling_name(self, name: str) -> str:
        return f"{self.ns}-{name}"


class Scaling(Case):
    def test_scaling_pods_follow_the_unschedulable_fractions(self):
        ns = self.ns
        unschedulable(ns, "a", {"gpu-fraction": "0.7"}, constraints=True)
        unschedulable(ns, "b", {"gpu-fraction": "0.7"})
        unschedulable(ns, "c", {"gpu-fraction": "0.5", "gpu-fraction-num-devices": "2"})
        unschedulable(ns, "z", {"gpu-memory": "4096"})  # counts as 0.1 with the ratio below
        pod(ns, "pending", {"gpu-fraction": "0.5"})  # no PodScheduled condition yet
        unschedulable(ns, "whole", {})  # not fractional
        unschedulable(ns, "other", {"gpu-fraction": "0.5"}, scheduler="default-scheduler")
        port = free_port()
        self.start("--cool-down-seconds", "3", "--gpu-memory-to-fraction-ratio", "0.1",
                   "--leader-elect", "--health-probe-bind-address", f"127.0.0.1:{port}")
        # 0.7 + 0.7 + 2 x 0.5 + 0.1 = 2.5 -> 3 GPUs: a and b get one each, c two (on one node);
        # z then fits on those 4 GPUs.
        want = {self.scaling_name(n) for n in ("a", "b", "c")}
        self.wait("three scaling pods", lambda: set(scaling_pods()) == want or None)
        time.sleep(1.5)  # and no more come
        self.assertEqual(set(scaling_pods()), want)
        sp = self.wait("a's scaling pod with its status",
                       lambda: condition(scaling_pods()[self.scaling_name("a")], "PodScheduled")
                       and scaling_pods()[self.scaling_name("a")])
        self.assert_scaling_pod(sp, "a", 1)
        self.assertEqual(scaling_pods()[self.scaling_name("c")]["spec"]["containers"][0][
            "resources"]["requests"]["nvidia.com/gpu"], "2")
        lease = CLIENT.get(LEASE)
        self.assertTrue(lease["spec"].get("holderIdentity"))
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as r:
            self.assertEqual(r.status, 200)

        # a is bound: its scaling pod goes, and the cool-down starts.
        bind(ns, "a", "node-1")
        self.wait("a's scaling pod deleted",
                  lambda: self.scaling_name("a") not in scaling_pods() or None)
        deleted_at = time.time()
        # e needs 3 devices on one node, more than any scaling pod has: held back for the
        # cool-down, then created.
        unschedulable(ns, "e", {"gpu-fraction": "0.5", "gpu-fraction-num-devices": "3"})
        time.sleep(1.5)
        self.assertNotIn(self.scaling_name("e"), scaling_pods(), "created during the cool-down")
        self.wait("e's scaling pod after the cool-down",
                  lambda: self.scaling_name("e") in scaling_pods() or None, timeout=15)
        self.assertGreaterEqual(time.time() - deleted_at, 2.5)
        self.assertEqual(set(scaling_pods()), {self.scaling_name(n) for n in ("b", "c", "e")})

        # b turns schedulable, c is deleted: their scaling pods go too.
        set_scheduled(ns, "b", "True")
        CLIENT.request("DELETE", f"/api/v1/namespaces/{ns}/pods/c")
        self.wait("b's and c's scaling pods deleted", lambda: not (
            {self.scaling_name("b"), self.scaling_name("c")} & set(scaling_pods())) or None)

    def assert_scaling_pod(self, sp: dict, name: str, gpus: int) -> None:
        md, spec = sp["metadata"], sp["spec"]
        self.assertEqual(md["labels"], {"app": "scaling-pod", "shared-gpu-pod-name": name,
                                        "shared-gpu-pod-namespace": self.ns})
        self.assertEqual(spec["affinity"], AFFINITY)
        # The pod's as stored (admission added the default not-ready/unreachable ones).
        stored = CLIENT.get(f"/api/v1/namespaces/{self.ns}/pods/{name}")["spec"]["tolerations"]
        self.assertEqual(stored[:2], TOLERATIONS)
        self.assertEqual(spec["tolerations"], stored)
        self.assertEqual(spec["nodeSelector"], NODE_SELECTOR)
        self.assertEqual(spec["serviceAccountName"], "scaling-pod")
        self.assertEqual(spec["restartPolicy"], "OnFailure")
        self.assertEqual(len(spec["containers"]), 1)
        res = spec["containers"][0]["resources"]
        self.assertEqual(res["requests"], {"nvidia.com/gpu": str(gpus), "cpu": "500m",
                                           "memory": str(128 * 1024 * 1024)})
        self.assertEqual(res["limits"], {"nvidia.com/gpu": str(gpus)})
        cond = condition(sp, "PodScheduled")
        self.assertEqual((cond["status"], cond["reason"]), ("False", "Unschedulable"))


# What the `restricted` Pod Security level of kai-scale-adjust asks of a pod created there.
RESTRICTED_POD = {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
RESTRICTED_CONTAINER = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


class Restart(Case):
    def leftover(self, for_ns: str, for_name: str) -> dict:
        return CLIENT.post(f"/api/v1/namespaces/{SCALE_NS}/pods", {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{for_ns}-{for_name}", "namespace": SCALE_NS,
                         "labels": {"app": "scaling-pod", "shared-gpu-pod-name": for_name,
                                    "shared-gpu-pod-namespace": for_ns}},
            "spec": {"securityContext": RESTRICTED_POD,
                     "containers": [{"name": "scaling-pod", "image": "x",
                                     "securityContext": RESTRICTED_CONTAINER, "resources": {
                                         "requests": {"nvidia.com/gpu": "1"},
                                         "limits": {"nvidia.com/gpu": "1"}}}]}})

    def test_leftover_scaling_pods_are_adopted_or_deleted(self):
        ns = self.ns
        unschedulable(ns, "kept", {"gpu-fraction": "0.5"})
        kept = self.leftover(ns, "kept")
        self.leftover(ns, "ghost")  # its pod is gone: an orphan of a run that stopped
        self.start()
        self.wait("the orphan deleted", lambda: self.scaling_name("ghost") not in scaling_pods() or None)
        sp = self.wait("the adopted one's status", lambda: condition(
            scaling_pods()[self.scaling_name("kept")], "PodScheduled")
            and scaling_pods()[self.scaling_name("kept")])
        self.assertEqual(sp["metadata"]["uid"], kept["metadata"]["uid"], "recreated, not adopted")
        self.assertEqual(set(scaling_pods()), {self.scaling_name("kept")})

    def test_a_restart_converges(self):
        ns = self.ns
        unschedulable(ns, "p", {"gpu-fraction": "0.5"})
        p = self.start()
        self.wait("p's scaling pod", lambda: self.scaling_name("p") in scaling_pods() or None)
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=20)
        self.assertEqual(p.returncode, 0)
        CLIENT.request("DELETE", f"/api/v1/namespaces/{ns}/pods/p")  # while nothing runs
        self.start()
        self.wait("the scaling pod of the deleted pod gone",
                  lambda: self.scaling_name("p") not in scaling_pods() or None)


class Rbac(unittest.TestCase):
    def test_service_account_rights(self):
        for verb, res, ns, allowed in [("list", "pods", "default", "yes"),
                                       ("watch", "pods", "default", "yes"),
                                       ("create", "pods", SCALE_NS, "yes"),
                                       ("delete", "pods", SCALE_NS, "yes"),
                                       ("create", "pods", "default", "no"),
                                       ("delete", "pods", "default", "no"),
                                       ("patch", "pods", SCALE_NS, "no"),
                                       ("get", "pods", "default", "no"),
                                       ("update", "leases", "kai-scheduler", "yes"),
                                       ("update", "leases", "default", "no")]:
            self.assertEqual(SERVER.can_i(verb, res, SA, ns), allowed, f"can-i {verb} {res} -n {ns}")

    def test_roles_are_exactly_the_calls_made(self):
        by = kube_server.rbac_objects(RBAC)
        self.assertEqual(kube_server.rbac_rules(by[("ClusterRole", "kai-scale-adjuster")]),
                         {("", "pods", "list"), ("", "pods", "watch")})
        role = by[("Role", "kai-scale-adjuster")]
        self.assertEqual(role["metadata"]["namespace"], SCALE_NS)
        self.assertEqual(kube_server.rbac_rules(role), {("", "pods", "create"), ("", "pods", "delete"),
                                                        ("", "pods/status", "patch")})
        self.assertEqual(kube_server.rbac_rules(by[("Role", "kai-scale-adjuster-leader-election")]),
                         {("coordination.k8s.io", "leases", v) for v in ("get", "create", "update")})
        sa = {"kind": "ServiceAccount", "name": "kai-scale-adjuster", "namespace": "kai-scheduler"}
        for kind, name in [("ClusterRoleBinding", "kai-scale-adjuster"),
                           ("RoleBinding", "kai-scale-adjuster"),
                           ("RoleBinding", "kai-scale-adjuster-leader-election")]:
            self.assertEqual(by[(kind, name)]["subjects"], [sa], f"{kind} {name}")
        self.assertIn(("ServiceAccount", "scaling-pod"), by)
        self.assertIn(("Namespace", SCALE_NS), by)


if __name__ == "__main__":
    unittest.main()
