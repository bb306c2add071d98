#!/usr/bin/env python3
"""`kai numa-exporter` on a real kube-apiserver with RBAC on, run as its installed
ServiceAccount (deploy/rbac/numa-exporter.yaml), against a fake kubelet pod-resources server
(tests/fakepodresources: gRPC on a unix socket, answering a protobuf text file the test rewrites)
and a fake sysfs tree (devices/system/node/node<N>/cpulist).

    python3 tests/e2e/numaexporter_test.py [-v]
    KAI_BIN=/path/to/kai KAI_FAKE_PODRESOURCES=/path/to/kai_fake_podresources python3 ...

No kubelet runs: the pods are created with spec.nodeName set.

- Publish: the pods of the node that hold devices, exclusive CPUs or pinned memory get
  kai.scheduler/numa-placement-observed, exactly as KAI writes it; a pod holding none gets nothing;
  a pod the kubelet reports but the API server does not have is skipped; a pod whose placement
  changes is written again.
- Drift: an annotation removed or edited by someone else is written again by the drift pass; with
  --drift-resync-interval=0 it is not.
- Kubelet: a socket that is not there yet is retried; the annotations come once it answers.
- Start: a missing sysfs tree or node name is exit status 2 with the reason.
- Manifest: the DaemonSet docs/commands/numa-exporter.md shows is valid; its pods are refused in
  the restricted kai-scheduler namespace and admitted in a privileged one.
- Rbac: no call is refused (no 403 in any log); the role holds exactly its calls.

Skips when /opt/kube-test/bin/kube-apiserver is not built.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time
import unittest

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kube_server  # noqa: E402
import scenario_loader as sl  # noqa: E402

REPO = kube_server.REPO_ROOT
KAI_BIN = pathlib.Path(os.environ.get("KAI_BIN", REPO / "build" / "kai"))
FAKE = pathlib.Path(os.environ.get("KAI_FAKE_PODRESOURCES",
                                   REPO / "build" / "kai_fake_podresources"))
RBAC = REPO / "deploy" / "rbac" / "numa-exporter.yaml"
SA = "system:serviceaccount:kai-scheduler:kai-numa-exporter"
KEY = "kai.scheduler/numa-placement-observed"
NODE = "numa-node-1"
FORBIDDEN = re.compile(r"\b403\b|Forbidden", re.I)

SERVER: kube_server.Server | None = None
CLIENT: sl.Client | None = None
TMP: tempfile.TemporaryDirectory | None = None
KUBECONFIG: str = ""
SYSFS: pathlib.Path = pathlib.Path()


def setUpModule():
    global SERVER, CLIENT, TMP, KUBECONFIG, SYSFS
    kube_server.require_apiserver()
    for binary in (KAI_BIN, FAKE):
        if not binary.is_file():
            raise unittest.SkipTest(f"{binary} not built")
    # Unix socket paths are short: the temporary folder goes under /tmp.
    TMP = tempfile.TemporaryDirectory(prefix="kai-npe-", dir="/tmp")
    SYSFS = pathlib.Path(TMP.name) / "sys"
    for node, cpus in (("node0", "0-3\n"), ("node1", "4-7\n")):
        d = SYSFS / "devices" / "system" / "node" / node
        d.mkdir(parents=True)
        (d / "cpulist").write_text(cpus)
    (SYSFS / "devices" / "system" / "node" / "possible").write_text("0-1\n")
    SERVER = kube_server.Server.start()
    try:
        CLIENT = sl.Client(SERVER.kubeconfig)
        SERVER.kubectl("apply", "-f", str(RBAC))
        KUBECONFIG = SERVER.token_kubeconfig("kai-scheduler", "kai-numa-exporter",
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


def make_pod(ns: str, name: str, node: str = NODE) -> dict:
    return CLIENT.post(f"/api/v1/namespaces/{ns}/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
        "spec": {"nodeName": node, "containers": [{"name": "main", "image": "busybox"}]}})


def annotation(ns: str, name: str) -> str | None:
    p = CLIENT.get(f"/api/v1/namespaces/{ns}/pods/{name}")
    return (p["metadata"].get("annotations") or {}).get(KEY)


def set_annotation(ns: str, name: str, value: str | None) -> None:
    CLIENT.merge_patch(f"/api/v1/namespaces/{ns}/pods/{name}",
                       {"metadata": {"annotations": {KEY: value}}})


def topology(*nodes: int) -> str:
    return "topology { " + " ".join(f"nodes {{ ID: {n} }}" for n in nodes) + " }"


def gpu_pod(ns: str, name: str, gpu_node: int, cpus: list[int], memory_node: int = 0) -> str:
    """A pod-resources entry: two GPUs on `gpu_node`, `cpus`, 1 GiB of memory on `memory_node`."""
    cpu_ids = " ".join(f"cpu_ids: {c}" for c in cpus)
    return (f'pod_resources {{ name: "{name}" namespace: "{ns}" containers {{ name: "main" '
            f'devices {{ resource_name: "nvidia.com/gpu" device_ids: "GPU-0" device_ids: "GPU-1" '
            f'{topology(gpu_node)} }} {cpu_ids} '
            f'memory {{ memory_type: "memory" size: 1073741824 {topology(memory_node)} }} }} }}\n')


def plain_pod(ns: str, name: str) -> str:
    return f'pod_resources {{ name: "{name}" namespace: "{ns}" containers {{ name: "main" }} }}\n'


def expected(gpu_node: int, cpus_by_node: dict[int, int], memory_node: int = 0) -> str:
    zones: dict[int, dict[str, str]] = {}
    for node, n in cpus_by_node.items():
        zones.setdefault(node, {})["cpu"] = str(n)
    zones.setdefault(memory_node, {})["memory"] = "1073741824"
    zones.setdefault(gpu_node, {})["nvidia.com/gpu"] = "2"
    out = [{"zone": f"node-{z}", "amount": dict(sorted(a.items()))}
           for z, a in sorted(zones.items())]
    return json.dumps(out, separators=(",", ":"))


class Case(unittest.TestCase):
    def setUp(self):
        self.ns = f"npe-{self._testMethodName.lower().replace('_', '-')}"[:60]
        ensure_namespace(self.ns)
        self.dir = pathlib.Path(tempfile.mkdtemp(dir=TMP.name))
        self.socket = self.dir / "kubelet.sock"
        self.answer = self.dir / "answer.txtpb"
        self.answer.write_text("")
        self.procs: list[subprocess.Popen] = []
        self.logs: list[pathlib.Path] = []

    def tearDown(self):
        for p in self.procs:
            kube_server.stop_process(p)
        CLIENT.request("DELETE", f"/api/v1/namespaces/{self.ns}/pods",
                       query={"gracePeriodSeconds": "0"})
        for log in self.logs:
            text = log.read_text()
            if not getattr(self._outcome, "success", True) or os.environ.get("KAI_E2E_VERBOSE"):
                sys.stderr.write(f"--- {log}\n{text[-4000:]}\n")
            self.assertNotRegex(text, FORBIDDEN, f"{log.name}: the ServiceAccount lacks a right")

    def kubelet(self) -> subprocess.Popen:
        log = self.dir / "fake-kubelet.log"
        with log.open("w") as f:
            p = subprocess.Popen([str(FAKE), str(self.socket), str(self.answer)],
                                 stdout=f, stderr=subprocess.STDOUT)
        self.procs.append(p)
        kube_server.wait_until("the fake pod-resources server", self.socket.exists, timeout=10)
        return p

    def exporter(self, *args: str) -> subprocess.Popen:
        log = self.dir / f"exporter-{len(self.logs)}.log"
        self.logs.append(log)
        with log.open("w") as f:
            p = subprocess.Popen([str(KAI_BIN), "numa-exporter", "--kubeconfig", KUBECONFIG,
                                  f"--node-name={NODE}", f"--podresources-socket={self.socket}",
                                  f"--sysfs-root={SYSFS}", "--poll-interval=200ms", *args],
                                 stdout=subprocess.DEVNULL, stderr=f)
        self.procs.append(p)
        return p

    def wait(self, what: str, fn, timeout: float = 20.0):
        return kube_server.wait_until(what, fn, timeout=timeout, errors=(OSError, sl.ApiError),
                                      log=self.logs[-1] if self.logs else None, interval=0.1)

    def wait_annotation(self, name: str, value: str, timeout: float = 20.0) -> None:
        self.wait(f"{self.ns}/{name}'s placement {value}",
                  lambda: annotation(self.ns, name) == value, timeout=timeout)


class Publish(Case):
    def test_pods_of_the_node_get_their_placement(self):
        for name in ("trainer", "plain"):
            make_pod(self.ns, name)
        self.answer.write_text(gpu_pod(self.ns, "trainer", 1, [0, 1, 4]) +
                               plain_pod(self.ns, "plain") +
                               gpu_pod(self.ns, "ghost", 0, [2]))  # not on the API server
        self.kubelet()
        self.exporter("--drift-resync-interval=0")
        value = expected(1, {0: 2, 1: 1})
        self.assertEqual(value, '[{"zone":"node-0","amount":{"cpu":"2","memory":"1073741824"}},'
                                '{"zone":"node-1","amount":{"cpu":"1","nvidia.com/gpu":"2"}}]')
        self.wait_annotation("trainer", value)
        time.sleep(0.6)  # a few more polls
        self.assertIsNone(annotation(self.ns, "plain"))
        # The placement changes (the kubelet restarted the pod's containers elsewhere).
        self.answer.write_text(gpu_pod(self.ns, "trainer", 0, [5, 6]))
        self.wait_annotation("trainer", expected(0, {1: 2}))
        self.assertEqual(self.procs[-1].poll(), None, "the exporter exited")


class Drift(Case):
    def test_drifted_annotations_are_repaired(self):
        make_pod(self.ns, "trainer")
        self.answer.write_text(gpu_pod(self.ns, "trainer", 1, [0]))
        self.kubelet()
        self.exporter("--drift-resync-interval=1s")
        value = expected(1, {0: 1})
        self.wait_annotation("trainer", value)
        set_annotation(self.ns, "trainer", None)  # removed out of band
        self.wait_annotation("trainer", value, timeout=10)
        set_annotation(self.ns, "trainer", '[{"zone":"node-7","amount":{"cpu":"64"}}]')  # edited
        self.wait_annotation("trainer", value, timeout=10)
        self.assertIn("repaired the NUMA placement of " + self.ns + "/trainer",
                      self.logs[-1].read_text())

    def test_no_drift_pass_when_disabled(self):
        make_pod(self.ns, "trainer")
        self.answer.write_text(gpu_pod(self.ns, "trainer", 1, [0]))
        self.kubelet()
        self.exporter("--drift-resync-interval=0")
        self.wait_annotation("trainer", expected(1, {0: 1}))
        set_annotation(self.ns, "trainer", None)
        time.sleep(2.5)  # the poll pass trusts what it wrote
        self.assertIsNone(annotation(self.ns, "trainer"))


class Kubelet(Case):
    def test_a_kubelet_that_comes_later_is_used(self):
        make_pod(self.ns, "trainer")
        self.answer.write_text(gpu_pod(self.ns, "trainer", 0, [1]))
        self.exporter("--drift-resync-interval=0")
        self.wait("the failed pod-resources call logged",
                  lambda: "listing pod resources on" in self.logs[-1].read_text())
        self.assertEqual(self.procs[-1].poll(), None, "the exporter exited")
        time.sleep(1)  # five polls more, each failing alike: logged once
        self.assertEqual(self.logs[-1].read_text().count("listing pod resources on"), 1)
        self.kubelet()
        self.wait_annotation("trainer", expected(0, {0: 1}))
        self.assertIn("pod resources answer again", self.logs[-1].read_text())


class Start(unittest.TestCase):
    def run_exporter(self, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([str(KAI_BIN), "numa-exporter", "--kubeconfig", KUBECONFIG, *args],
                              capture_output=True, text=True, timeout=30,
                              env=env if env is not None else dict(os.environ))

    def test_a_missing_sysfs_tree_is_exit_2(self):
        r = self.run_exporter(f"--node-name={NODE}", f"--sysfs-root={TMP.name}/nowhere")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(f"{TMP.name}/nowhere/devices/system/node", r.stderr)

    def test_the_node_name_is_required(self):
        env = {k: v for k, v in os.environ.items() if k != "NODE_NAME"}
        r = self.run_exporter(f"--sysfs-root={SYSFS}", env=env)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("NODE_NAME", r.stderr)


def documented_daemonset() -> dict:
    """The DaemonSet of docs/commands/numa-exporter.md's ```yaml block."""
    text = (REPO / "docs" / "commands" / "numa-exporter.md").read_text()
    block = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    return yaml.safe_load(block)


class Manifest(unittest.TestCase):
    """The documented DaemonSet is valid, and its pods are refused where Pod Security is
    restricted (kai-scheduler) and admitted where it is privileged."""

    def pod_of(self, ds: dict, ns: str) -> dict:
        t = ds["spec"]["template"]
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "numa-exporter", "namespace": ns,
                             "labels": t["metadata"]["labels"]},
                "spec": dict(t["spec"], nodeName=NODE)}

    def test_the_documented_daemonset(self):
        ds = documented_daemonset()
        ns = ds["metadata"]["namespace"]
        CLIENT.post("/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": ns, "labels": {"pod-security.kubernetes.io/enforce": "privileged"}}})
        CLIENT.request("POST", f"/apis/apps/v1/namespaces/{ns}/daemonsets", ds,
                       query={"dryRun": "All"})
        with self.assertRaises(sl.ApiError) as refused:
            CLIENT.post("/api/v1/namespaces/kai-scheduler/pods", self.pod_of(ds, "kai-scheduler"))
        self.assertEqual(refused.exception.status, 403)
        self.assertIn("PodSecurity", str(refused.exception))
        CLIENT.request("POST", f"/api/v1/namespaces/{ns}/pods", self.pod_of(ds, ns),
                       query={"dryRun": "All"})


class Rbac(unittest.TestCase):
    def test_service_account_rights(self):
        for verb, res, ns, allowed in [("list", "pods", "default", "yes"),
                                       ("patch", "pods", "default", "yes"),
                                       ("watch", "pods", "default", "no"),
                                       ("get", "pods", "default", "no"),
                                       ("create", "pods", "default", "no"),
                                       ("delete", "pods", "default", "no"),
                                       ("update", "pods", "default", "no"),
                                       ("get", "nodes", "", "no")]:
            self.assertEqual(SERVER.can_i(verb, res, SA, ns or "default"), allowed,
                             f"can-i {verb} {res} -n {ns}")

    def test_roles_are_exactly_the_calls_made(self):
        by = kube_server.rbac_objects(RBAC)
        self.assertEqual(kube_server.rbac_rules(by[("ClusterRole", "kai-numa-exporter")]),
                         {("", "pods", "list"), ("", "pods", "patch")})
        sa = {"kind": "ServiceAccount", "name": "kai-numa-exporter", "namespace": "kai-scheduler"}
        self.assertEqual(by[("ClusterRoleBinding", "kai-numa-exporter")]["subjects"], [sa])
        self.assertIn(("ServiceAccount", "kai-numa-exporter"), by)


if __name__ == "__main__":
    unittest.main()
